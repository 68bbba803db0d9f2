// The C ABI's Client (c/client.h): a client::Client in the caller's memory with the app's data
// (pointers it set), its frame buffers and its blob name in the handle, and its work memory
// after it; each session runs over the app's callbacks (capi/channel.h).
#include <new>

#include "capi/channel.h"
#include "capi/client_session.h"
#include "capi/handle.h"
#include "capi/objects.h"
#include "sdk/base/crypto.h"
#include "sdk/client/client.h"

namespace fedstat {
namespace capi {

static_assert(FEDSTAT_MAX_FRAME_BYTES == wire::kMaxFrameBytes, "frame size drifted");
static_assert(FEDSTAT_SESSION_ABORTED == static_cast<int>(client::SessionResult::kAborted) &&
                  FEDSTAT_SESSION_COMPLETED ==
                      static_cast<int>(client::SessionResult::kCompleted) &&
                  FEDSTAT_SESSION_DECLINED_BUDGET ==
                      static_cast<int>(client::SessionResult::kDeclinedBudget) &&
                  FEDSTAT_SESSION_NO_TASK == static_cast<int>(client::SessionResult::kNoTask) &&
                  FEDSTAT_SESSION_DECLINED_POLICY ==
                      static_cast<int>(client::SessionResult::kDeclinedPolicy) &&
                  FEDSTAT_SESSION_DECLINED_ALREADY_CHARGED ==
                      static_cast<int>(client::SessionResult::kDeclinedAlreadyCharged),
              "session results drifted");
static_assert(FEDSTAT_KIND_DATA_SHIFT == client::kAnswerDataShift &&
                  FEDSTAT_KIND_KL_ANSWERS == client::kAnswerKlAnswers &&
                  FEDSTAT_KIND_HETEROGENEITY == client::kAnswerHeterogeneity &&
                  FEDSTAT_KIND_MODEL_UPDATE == client::kAnswerModelUpdate,
              "task kind bits drifted");
static_assert(FEDSTAT_TRUST_TRUSTED == client::kAcceptTrusted &&
                  FEDSTAT_TRUST_TAGG == client::kAcceptTagg &&
                  FEDSTAT_TRUST_DIST == client::kAcceptDist &&
                  FEDSTAT_TRUST_NONE == client::kAcceptNone,
              "trust bits drifted");
static_assert(FEDSTAT_POLICY_NOT_REFUSED == static_cast<int>(client::PolicyRefusal::kNotRefused) &&
                  FEDSTAT_POLICY_TRUST_MODEL ==
                      static_cast<int>(client::PolicyRefusal::kTrustModel) &&
                  FEDSTAT_POLICY_EPSILON_ABOVE_MAX ==
                      static_cast<int>(client::PolicyRefusal::kEpsilonAboveMax) &&
                  FEDSTAT_POLICY_DELTA_ABOVE_MAX ==
                      static_cast<int>(client::PolicyRefusal::kDeltaAboveMax) &&
                  FEDSTAT_POLICY_EXACT_EPSILON_BELOW ==
                      static_cast<int>(client::PolicyRefusal::kExactEpsilonBelow) &&
                  FEDSTAT_POLICY_TASK_KIND == static_cast<int>(client::PolicyRefusal::kTaskKind),
              "policy refusals drifted");

// fedstat_task_policy.made_by_default of a policy fedstat_task_policy_default made ("FTP3"; the
// last digit a layout version: 2 added answered_kinds, 3 min_assumed_dropout_ppm and
// min_assumed_corrupt_ppm). Not in the header: an app copies a made policy, never the value.
constexpr uint32_t kTaskPolicyMadeByDefault = 0x46545033u;

// The app's data as the Client reads it: what the fedstat_client_set_* calls last gave.
class AppData final : public client::ClientData {
 public:
  const histogram::SparseHistogram* histogram() override { return histogram_; }
  Result<tasks::Examples> examples() override {
    if (!has_examples_) return not_found("the app gave no examples (fedstat_client_set_examples)");
    return examples_;
  }
  Result<Span<const double>> unit_vector() override {
    if (unit_vector_.empty()) {
      return not_found("the app gave no vector (fedstat_client_set_unit_vector)");
    }
    return unit_vector_;
  }

  const histogram::SparseHistogram* histogram_ = nullptr;
  tasks::Examples examples_;
  bool has_examples_ = false;
  Span<const double> unit_vector_;
};

}  // namespace capi
}  // namespace fedstat

struct fedstat_client {
  uint32_t magic = fedstat::capi::kClientMagic;
  const char* last_error = "";
  char round_blob_name[fedstat::capi::kNameBytes] = {};
  fedstat::capi::AppData data;
  int32_t last_policy_refusal = FEDSTAT_POLICY_NOT_REFUSED;  // the last session's
  uint64_t device_id = 0;  // fedstat_client_config.device_id (the TLS channel's must match)
  // fedstat_client_set_credential's, checked (the Client points at it while has_credential).
  fedstat::credential::DeviceCredential credential;
  bool has_credential = false;
  uint8_t send_buffer[fedstat::wire::kMaxFrameBytes] = {};
  uint8_t receive_buffer[fedstat::wire::kMaxFrameBytes] = {};
  fedstat::client::Client client;
};

namespace fedstat {
namespace capi {
namespace {

constexpr size_t kHandle = handle_bytes<fedstat_client>();
constexpr const char* kDefaultRoundBlob = "fedstat-client-round";

bool live(const fedstat_client* c) {
  return valid(c, kClientMagic);
}

// fedstat_client_create(_with_kinds): a Client for `kinds` in `memory`.
fedstat_status create_client(void* memory, size_t memory_bytes, const fedstat_client_config* config,
                             const client::TaskKinds& kinds, fedstat_ledger* ledger,
                             fedstat_random* random, fedstat_client** out) {
  if (config == nullptr || !valid(ledger, kLedgerMagic) || !valid(random, kRandomMagic)) {
    return FEDSTAT_INVALID_ARGUMENT;
  }
  const char* name =
      config->round_blob_name != nullptr ? config->round_blob_name : kDefaultRoundBlob;
  const size_t length = name_length(name);
  if (length == 0) return FEDSTAT_INVALID_ARGUMENT;
  const fedstat_status checked = check_memory(memory, memory_bytes, kHandle, out);
  if (checked != FEDSTAT_OK) return checked;
  fedstat_client* c = new (handle_address<fedstat_client>(memory)) fedstat_client();
  for (size_t i = 0; i <= length; ++i) c->round_blob_name[i] = name[i];
  client::ClientConfig cc;
  cc.device_id = config->device_id;
  cc.receive_timeout_ms = config->receive_timeout_ms != 0 ? config->receive_timeout_ms : 30000;
  cc.wall_clock_seconds = config->wall_clock_seconds;
  cc.round_blob_name = c->round_blob_name;
  const Status status = c->client.init(
      cc, kinds, MutableByteSpan(after_handle<fedstat_client>(memory), memory_bytes - kHandle),
      c->data, ledger->ledger, *random->source);
  if (!status.ok()) {
    c->magic = 0;
    return code_of(status);
  }
  c->device_id = config->device_id;
  *out = c;
  return FEDSTAT_OK;
}

}  // namespace

bool client_live(const fedstat_client* client) {
  return live(client);
}

uint64_t client_device_id(const fedstat_client* client) {
  return client->device_id;
}

fedstat_status client_finish(fedstat_client* client, const Status& status) {
  return finish(client, status);
}

fedstat_status client_set_credential(fedstat_client* client,
                                     const credential::DeviceCredential* credential) {
  // Refused while a round is pending, before the held credential is touched: it may still be
  // read by the round's resume.
  const Status status = client->client.set_credential(nullptr);
  if (!status.ok()) return finish(client, status);
  crypto::wipe(client->credential.private_key, sizeof(client->credential.private_key));
  client->has_credential = credential != nullptr;
  if (credential != nullptr) {
    client->credential = *credential;
    return finish(client, client->client.set_credential(&client->credential));
  }
  client->credential = fedstat::credential::DeviceCredential();
  return FEDSTAT_OK;
}

bool client_has_credential(const fedstat_client* client) {
  return client->has_credential;
}

fedstat_status run_client_session(fedstat_client* client, client::FrameChannel& frames,
                                  fedstat_session_outcome* outcome) {
  const Result<client::SessionOutcome> result = client->client.run_session(frames);
  client->last_policy_refusal = result.ok() ? static_cast<int32_t>(result->policy_refusal)
                                            : int32_t{FEDSTAT_POLICY_NOT_REFUSED};
  if (result.ok()) {
    outcome->result = static_cast<int32_t>(result->result);
    outcome->task_id = result->task_id;
  }
  return finish(client, result.status());
}
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

fedstat_status fedstat_client_size(size_t work_bytes, size_t* bytes) {
  return size_status(size_add(kHandle, work_bytes), bytes);
}

// The C handles of the kinds are the SDK's TaskKindSupport and SecureAggregationSupport objects.
const fedstat_task_kind* fedstat_task_kind_data_shift(void) {
  return reinterpret_cast<const fedstat_task_kind*>(&client::kDataShiftKind);
}

const fedstat_task_kind* fedstat_task_kind_kl_answers(void) {
  return reinterpret_cast<const fedstat_task_kind*>(&client::kKlAnswersKind);
}

const fedstat_task_kind* fedstat_task_kind_model_update(void) {
  return reinterpret_cast<const fedstat_task_kind*>(&client::kModelUpdateKind);
}

const fedstat_task_kind* fedstat_task_kind_heterogeneity(void) {
  return reinterpret_cast<const fedstat_task_kind*>(&client::kHeterogeneityKind);
}

const fedstat_secure_aggregation* fedstat_secure_aggregation_support(void) {
  return reinterpret_cast<const fedstat_secure_aggregation*>(&client::kSecureAggregation);
}

fedstat_status fedstat_client_create(void* memory, size_t memory_bytes,
                                     const fedstat_client_config* config, fedstat_ledger* ledger,
                                     fedstat_random* random, fedstat_client** out) {
  return create_client(memory, memory_bytes, config, client::all_task_kinds(), ledger, random, out);
}

fedstat_status fedstat_client_create_with_kinds(
    void* memory, size_t memory_bytes, const fedstat_client_config* config,
    const fedstat_task_kind* const* kinds, size_t kind_count,
    const fedstat_secure_aggregation* secure_aggregation, fedstat_ledger* ledger,
    fedstat_random* random, fedstat_client** out) {
  if (kinds == nullptr && kind_count > 0) return FEDSTAT_INVALID_ARGUMENT;
  const client::TaskKinds task_kinds{
      Span<const client::TaskKindSupport* const>(
          reinterpret_cast<const client::TaskKindSupport* const*>(kinds), kind_count),
      reinterpret_cast<const client::SecureAggregationSupport*>(secure_aggregation)};
  return create_client(memory, memory_bytes, config, task_kinds, ledger, random, out);
}

fedstat_status fedstat_client_set_histogram(fedstat_client* client,
                                            const fedstat_histogram* histogram) {
  if (!live(client)) return FEDSTAT_INVALID_ARGUMENT;
  if (histogram == nullptr) {
    client->data.histogram_ = nullptr;
    return FEDSTAT_OK;
  }
  if (!valid(histogram, kHistogramMagic) || histogram->kind != FEDSTAT_HISTOGRAM_SPARSE) {
    return finish(client, invalid_argument("set_histogram: the Client reads a sparse histogram"));
  }
  client->data.histogram_ = &histogram->sparse;
  return FEDSTAT_OK;
}

fedstat_status fedstat_client_set_report_window(fedstat_client* client, uint8_t window) {
  if (!live(client)) return FEDSTAT_INVALID_ARGUMENT;
  return finish(client, client->client.set_report_window(window));
}

fedstat_status fedstat_task_policy_default(fedstat_task_policy* policy) {
  if (policy == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  const client::TaskPolicy defaults;
  *policy = fedstat_task_policy{defaults.accepted_trust,
                                defaults.max_epsilon,
                                defaults.max_delta,
                                defaults.min_exact_epsilon,
                                defaults.assumed_honest_shares,
                                defaults.answered_kinds,
                                defaults.min_assumed_dropout_ppm,
                                defaults.min_assumed_corrupt_ppm,
                                kTaskPolicyMadeByDefault};
  return FEDSTAT_OK;
}

fedstat_status fedstat_client_set_task_policy(fedstat_client* client,
                                              const fedstat_task_policy* policy) {
  if (!live(client)) return FEDSTAT_INVALID_ARGUMENT;
  if (policy == nullptr) return finish(client, invalid_argument("set_task_policy: policy is NULL"));
  if (policy->made_by_default != kTaskPolicyMadeByDefault) {
    return finish(
        client, invalid_argument("set_task_policy: the policy was not made by "
                                 "fedstat_task_policy_default (a field left at 0 would weaken it): "
                                 "start from it and change the fields you need"));
  }
  client::TaskPolicy p;
  p.accepted_trust = policy->accepted_trust;
  p.max_epsilon = policy->max_epsilon;
  p.max_delta = policy->max_delta;
  p.min_exact_epsilon = policy->min_exact_epsilon;
  p.assumed_honest_shares = policy->assumed_honest_shares;
  p.answered_kinds = policy->answered_kinds;
  p.min_assumed_dropout_ppm = policy->min_assumed_dropout_ppm;
  p.min_assumed_corrupt_ppm = policy->min_assumed_corrupt_ppm;
  return finish(client, client->client.set_task_policy(p));
}

fedstat_status fedstat_client_last_policy_refusal(const fedstat_client* client, int32_t* refusal) {
  if (!live(client) || refusal == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  *refusal = client->last_policy_refusal;
  return FEDSTAT_OK;
}

fedstat_status fedstat_client_set_examples(fedstat_client* client, const float* features,
                                           const int8_t* labels, size_t n, size_t d) {
  if (!live(client)) return FEDSTAT_INVALID_ARGUMENT;
  if (n == 0) {
    client->data.has_examples_ = false;
    return FEDSTAT_OK;
  }
  const size_t count = size_mul(n, d);
  if (features == nullptr || labels == nullptr || d == 0 || count == kSizeOverflow) {
    return finish(client, invalid_argument("set_examples: NULL arrays, d = 0 or n x d overflows"));
  }
  client->data.examples_ =
      tasks::Examples{Span<const float>(features, count), Span<const int8_t>(labels, n), d};
  client->data.has_examples_ = true;
  return FEDSTAT_OK;
}

fedstat_status fedstat_client_set_unit_vector(fedstat_client* client, const double* x, size_t d) {
  if (!live(client)) return FEDSTAT_INVALID_ARGUMENT;
  if (x == nullptr && d != 0) return finish(client, invalid_argument("set_unit_vector: x is NULL"));
  client->data.unit_vector_ = Span<const double>(x, d);
  return FEDSTAT_OK;
}

fedstat_status fedstat_client_run_session(fedstat_client* client, const fedstat_channel* channel,
                                          fedstat_session_outcome* outcome) {
  if (!live(client)) return FEDSTAT_INVALID_ARGUMENT;
  if (channel == nullptr || channel->send == nullptr || channel->receive == nullptr ||
      outcome == nullptr) {
    return finish(client, invalid_argument("run_session: no channel, callbacks or outcome"));
  }
  CallbackChannel frames(*channel, MutableByteSpan(client->send_buffer),
                         MutableByteSpan(client->receive_buffer));
  return run_client_session(client, frames, outcome);
}

const char* fedstat_client_last_server_detail(const fedstat_client* client) {
  return live(client) ? client->client.last_server_detail() : kNotAHandle;
}

fedstat_status fedstat_client_get_state(const fedstat_client* client, fedstat_client_state* state) {
  if (!live(client) || state == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  fedstat_client_state s = {};
  s.interrupted_task = client->client.interrupted_task();
  s.pending_report_task = client->client.pending_report_task();
  *state = s;
  return FEDSTAT_OK;
}

fedstat_status fedstat_client_forget_interrupted_round(const char* round_blob_name) {
  const char* name = round_blob_name != nullptr ? round_blob_name : kDefaultRoundBlob;
  return code_of(client::Client::forget_interrupted_round(name));
}

const char* fedstat_client_last_error(const fedstat_client* client) {
  return live(client) ? client->last_error : kNotAHandle;
}

}  // extern "C"
