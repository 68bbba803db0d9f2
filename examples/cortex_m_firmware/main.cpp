// The Cortex-M4 firmware: a microcontroller that takes part in fedstat rounds (README.md).
//
// It counts its simulated sensor's events into a histogram, then checks in with fedstat-server
// through the SDK's Client over TLS 1.2 (ECDHE-PSK, its own credential) on UART0, answers the
// task it is offered (a data-shift sketch report, a KL answer, secure aggregation when the task
// is Dist; signed secure aggregation when provisioned with a fleet-CA credential, issue 42) and
// keeps checking in until a task's round ends. It prints what happened and its footprint
// (sections, stack high-water mark by stack painting, board time and how much of it was waiting)
// over semihosting and exits 0 when its round completed.
//
// Built with FEDSTAT_FIRMWARE_CORE=1 (the core images), the Client computes data-shift and KL
// tasks only, without secure aggregation (sdk/client/task_kinds.h): the trainer, secure
// aggregation and their crypto are not linked, and the image declines every other task. With
// FEDSTAT_FIRMWARE_TRAINER=1 (the trainer image) it adds the model-update and heterogeneity
// kinds, still without secure aggregation. The footprint per feature set is measured on these
// images (docs/footprint.md).
#include <stdio.h>
#include <string.h>

#include "examples/cortex_m_firmware/cmsdk_uart_transport.h"
#include "examples/cortex_m_firmware/ledger_clock.h"
#include "examples/cortex_m_firmware/provisioning.h"
#include "examples/cortex_m_firmware/stack_paint.h"
#include "platform/baremetal/hooks.h"
#include "platform/platform.h"
#include "sdk/base/csprng.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/client.h"
#include "sdk/credential/device_credential.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/tls/tls_channel.h"

#ifndef FEDSTAT_FIRMWARE_TRAINER
#define FEDSTAT_FIRMWARE_TRAINER 0
#endif

namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::Span;
using fedstat::Status;

// What this image gives the SDK (the README's RAM table is these plus the stack).
constexpr size_t kHistogramSlots = 256;       // the largest capacity a provisioning may ask for
constexpr size_t kExamples = 64;              // training examples (model updates)
constexpr size_t kExampleValues = 512;        // their features: 64 examples of dimension 8
constexpr size_t kLedgerEntries = 8;          // tasks remembered in the privacy window
constexpr size_t kClientMemoryBytes = 18432;  // the Client's arena (Client::memory_bytes)
constexpr uint32_t kRetryMillis = 500;        // between check-ins that found no task
// A refused handshake (a fatal alert, a Finished that does not verify) may be a forged alert on
// the way, so it never stops the device: it backs off, doubling up to this (a real device would
// cap it nearer an hour), within the provisioned check-ins (Provisioning::max_sessions).
constexpr uint32_t kMaxBackoffMillis = 8000;
constexpr uint32_t kConnectTimeoutMs = 60000;
constexpr uint32_t kReceiveTimeoutMs = 300000;

fedstat::histogram::SparseEntry g_table[kHistogramSlots];
fedstat::privacy::PrivacySpend g_spends[kLedgerEntries];
uint8_t g_ledger_scratch[fedstat::privacy::BudgetLedger::blob_bytes(kLedgerEntries)];
alignas(8) uint8_t g_client_memory[kClientMemoryBytes];
// Static rather than on the 8 KiB stack: the Client (its Envelopes, Task and SecAggClient) and
// the TLS channel (mbedTLS's contexts and two frame buffers), reused session after session.
fedstat::client::Client g_client;
fedstat::tls::TlsPskChannel g_channel;

float g_features[kExampleValues];
int8_t g_labels[kExamples];

// The app's data as the Client reads it: the sensor's histogram, the training examples, or both.
class SensorData final : public fedstat::client::ClientData {
 public:
  SensorData(const fedstat::histogram::SparseHistogram* histogram,
             const fedstat::tasks::Examples& examples)
      : histogram_(histogram), examples_(examples) {}
  const fedstat::histogram::SparseHistogram* histogram() override { return histogram_; }
  fedstat::Result<fedstat::tasks::Examples> examples() override {
    if (examples_.count() == 0) return fedstat::not_found("the firmware holds no examples");
    return examples_;
  }

 private:
  const fedstat::histogram::SparseHistogram* histogram_;
  fedstat::tasks::Examples examples_;
};

void wait_millis(uint32_t millis) {
  const uint32_t started = firmware::board_ticks();
  const uint64_t until = fedstat::platform::monotonic_micros() + uint64_t{millis} * 1000;
  while (fedstat::platform::monotonic_micros() < until) {
  }
  firmware::add_waiting_since(started);
}

const char* result_name(fedstat::client::SessionResult r) {
  using fedstat::client::SessionResult;
  switch (r) {
    case SessionResult::kNoTask:
      return "no-task";
    case SessionResult::kVersionTooOld:
      return "version-too-old";
    case SessionResult::kDeclinedInterrupted:
      return "declined-interrupted";
    case SessionResult::kDeclinedNoData:
      return "declined-no-data";
    case SessionResult::kDeclinedMemory:
      return "declined-memory";
    case SessionResult::kDeclinedBudget:
      return "declined-budget";
    case SessionResult::kCompleted:
      return "completed";
    case SessionResult::kAborted:
      return "aborted";
    case SessionResult::kDeclinedPolicy:
      return "declined-policy";
    case SessionResult::kDeclinedAlreadyCharged:
      return "declined-already-charged";
  }
  return "unknown";
}

// A status as "<code>: <message>": the code says it in a build without messages too (the
// cortex-m4 preset builds with FEDSTAT_STATUS_MESSAGES=OFF).
int fail(const char* what, const Status& status) {
  printf("firmware: %s: %s: %s\n", what, fedstat::status_code_name(status.code()),
         status.message());
  return 1;
}

// The firmware's own refusals, printed whatever the SDK's build keeps of messages.
int refuse(const char* what, const char* why) {
  printf("firmware: %s: %s\n", what, why);
  return 1;
}

// Check-ins until one ends with the task's outcome. Returns the process's exit status.
int take_part(const firmware::Provisioning& device, fedstat::client::Client& client,
              fedstat::tls::TlsPskChannel& channel) {
  char identity[24];
  snprintf(identity, sizeof(identity), "%lu", static_cast<unsigned long>(device.id));
  uint32_t backoff = kRetryMillis;
  for (uint32_t session = 1; session <= device.max_sessions; ++session) {
    const Status connected = channel.connect(
        "uart0", ByteSpan(reinterpret_cast<const uint8_t*>(identity), strlen(identity)),
        ByteSpan(device.psk, sizeof(device.psk)), kConnectTimeoutMs);
    if (!connected.ok()) {
      printf("firmware: session %lu: connect: %s: %s\n", static_cast<unsigned long>(session),
             fedstat::status_code_name(connected.code()), connected.message());
      if (connected.code() == fedstat::StatusCode::kPermissionDenied) {
        wait_millis(backoff);
        backoff = backoff >= kMaxBackoffMillis / 2 ? kMaxBackoffMillis : 2 * backoff;
      }
      continue;
    }
    backoff = kRetryMillis;
    const fedstat::Result<fedstat::client::SessionOutcome> outcome = client.run_session(channel);
    channel.close();
    if (!outcome.ok()) {
      printf("firmware: session %lu: %s: %s (server: %s)\n", static_cast<unsigned long>(session),
             fedstat::status_code_name(outcome.status().code()), outcome.status().message(),
             client.last_server_detail());
      const fedstat::StatusCode code = outcome.status().code();
      const bool lost = code == fedstat::StatusCode::kUnavailable ||
                        code == fedstat::StatusCode::kDeadlineExceeded;
      if (lost) continue;  // check in again: the Client resumes a pending round
      return 1;
    }
    const fedstat::client::SessionOutcome o = outcome.value();
    if (o.result == fedstat::client::SessionResult::kNoTask) {
      wait_millis(kRetryMillis);
      continue;
    }
    printf("firmware: device %lu: task %lu %s after %lu sessions\n",
           static_cast<unsigned long>(device.id), static_cast<unsigned long>(o.task_id),
           result_name(o.result), static_cast<unsigned long>(session));
    return o.result == fedstat::client::SessionResult::kCompleted ? 0 : 1;
  }
  printf("firmware: no task's outcome in %lu check-ins\n",
         static_cast<unsigned long>(device.max_sessions));
  return 1;
}

int run() {
  fedstat::platform::baremetal::Hooks hooks = fedstat::platform::baremetal::semihosting_hooks();
  firmware::install_uart_transport(hooks);
  fedstat::platform::baremetal::install_hooks(hooks);

  const fedstat::Result<firmware::Provisioning> provisioned = firmware::read_provisioning();
  if (!provisioned.ok()) return fail("provisioning", provisioned.status());
  const firmware::Provisioning& device = provisioned.value();  // no copy: it holds the keys

  // Its data: sensor events, training examples, or both (a missing file: none of that kind).
  fedstat::histogram::SparseHistogram histogram;
  Status status = firmware::count_sensor_events(
      device.id, Span<fedstat::histogram::SparseEntry>(g_table, kHistogramSlots), histogram);
  const bool counted = status.ok();
  if (!counted && status.code() != fedstat::StatusCode::kNotFound) {
    return fail("sensor events", status);
  }
  fedstat::tasks::Examples examples;
  status = firmware::read_examples(device.id, Span<float>(g_features, kExampleValues),
                                   Span<int8_t>(g_labels, kExamples), examples);
  if (!status.ok() && status.code() != fedstat::StatusCode::kNotFound) {
    return fail("training examples", status);
  }
  if (!counted && examples.count() == 0) {
    return refuse("data", "neither sensor events nor training examples");
  }
  printf("firmware: device %lu counted %lu events of %lu items; %lu training examples\n",
         static_cast<unsigned long>(device.id),
         static_cast<unsigned long>(counted ? histogram.total() : 0),
         static_cast<unsigned long>(counted ? histogram.size() : 0),
         static_cast<unsigned long>(examples.count()));

  char ledger_name[24];
  snprintf(ledger_name, sizeof(ledger_name), "ledger-%lu", static_cast<unsigned long>(device.id));
  fedstat::privacy::LedgerConfig ledger_config;
  ledger_config.epsilon_budget = 10;
  ledger_config.delta_budget = 1e-3;
  ledger_config.blob_name = ledger_name;
  fedstat::privacy::BudgetLedger ledger;
  status =
      ledger.init(ledger_config, Span<fedstat::privacy::PrivacySpend>(g_spends, kLedgerEntries),
                  MutableByteSpan(g_ledger_scratch, sizeof(g_ledger_scratch)));
  if (status.ok()) status = ledger.load();
  if (!status.ok()) return fail("privacy ledger", status);

  status = firmware::start_ledger_clock(ledger.ledger_time());
  if (!status.ok()) return fail("ledger clock", status);

  // The device's randomness: its CSPRNG (noise, secure aggregation's keys and masks). Only the
  // test build may replace it by a seeded stream the host reproduces (fedstat-sim's
  // device_stream(id, 0) = id): whoever knows that seed knows every secret of the device.
  fedstat::Csprng csprng;
  fedstat::RandomSource* random = &csprng;
#if FEDSTAT_FIRMWARE_SEEDED_FOR_TESTS
  fedstat::Seed256 key;
  for (int i = 0; i < 8; ++i) key.bytes[i] = static_cast<uint8_t>(device.seed >> (8 * i));
  fedstat::SeededStream seeded(key, device.id);
  if (device.seed != 0) random = &seeded;
#else
  if (device.seed != 0) {
    return refuse("provisioning",
                  "device.txt: a seed makes the device's noise and keys public; only the test "
                  "build (fedstat_m4_firmware_seeded) takes one");
  }
#endif
  // The Csprng also blinds the credential's check below (not the seeded stream: that check must
  // not shift the stream the host reproduces).
  if (random == &csprng || device.has_credential) {
    status =
        csprng.init(ByteSpan(reinterpret_cast<const uint8_t*>(ledger_name), strlen(ledger_name)));
    if (!status.ok()) return fail("entropy", status);
  }

  char round_name[24];
  snprintf(round_name, sizeof(round_name), "round-%lu", static_cast<unsigned long>(device.id));
  fedstat::client::ClientConfig config;
  config.device_id = device.id;
  config.receive_timeout_ms = kReceiveTimeoutMs;
  config.wall_clock_seconds = firmware::ledger_clock_seconds;
  config.round_blob_name = round_name;
  // Its task policy, explicit (sdk/client/task_policy.h): the trust models provisioned (device.txt
  // "trust"; by default trusted, tagg and dist: a trust-none task sends the exact counts, so the
  // device answers one only when provisioned to); no task charged more than the ledger's whole
  // budget (ε = 10: one it could never pay), δ at most 1e-5, and TRUSTED/TAGG tasks charged at
  // least ε = 0.1 (the SDK's floor: at most 100 exact reports per window from this budget).
  config.task_policy.accepted_trust = device.accepted_trust;
  config.task_policy.max_epsilon = ledger_config.epsilon_budget;
  config.task_policy.max_delta = 1e-5;
  config.task_policy.min_exact_epsilon = 0.1;
  // The kinds its data can answer (a histogram; examples): never heterogeneity (SensorData holds
  // no unit vector), declined free before any charge (task_policy.h rule 0). A fixed choice of
  // the app, not of what it holds now: a free decline must not depend on the data.
  config.task_policy.answered_kinds = fedstat::client::kAnswerDataShift |
                                      fedstat::client::kAnswerKlAnswers |
                                      fedstat::client::kAnswerModelUpdate;
  // Its credential (device.txt), checked once before it is used: the certificate under the CA
  // key and the private key against it. With one the device joins signed DIST rounds only
  // (ClientConfig::credential); `device` outlives the Client's rounds (take_part below).
#if FEDSTAT_FIRMWARE_CORE || FEDSTAT_FIRMWARE_TRAINER
  if (device.has_credential) {
    printf("firmware: no secure aggregation in this image: its credential is not used\n");
  }
#else
  if (device.has_credential) {
    status = fedstat::credential::check_credential(device.credential, csprng);
    if (!status.ok()) return fail("credential", status);
    config.credential = &device.credential;
    printf("firmware: device %lu: credential checked (signed DIST rounds only)\n",
           static_cast<unsigned long>(device.id));
  }
#endif
  SensorData data(counted ? &histogram : nullptr, examples);
  const MutableByteSpan client_memory(g_client_memory, sizeof(g_client_memory));
#if FEDSTAT_FIRMWARE_CORE || FEDSTAT_FIRMWARE_TRAINER
  static const fedstat::client::TaskKindSupport* const kKinds[] = {
    &fedstat::client::kDataShiftKind,
    &fedstat::client::kKlAnswersKind,
#if FEDSTAT_FIRMWARE_TRAINER
    &fedstat::client::kModelUpdateKind,
    &fedstat::client::kHeterogeneityKind,
#endif
  };
  status = g_client.init(config, fedstat::client::TaskKinds{kKinds, nullptr}, client_memory, data,
                         ledger, *random);
  printf("firmware: task kinds data_shift kl%s, no secure aggregation\n",
         FEDSTAT_FIRMWARE_TRAINER ? " model_update heterogeneity" : "");
#else
  status = g_client.init(config, client_memory, data, ledger, *random);
  printf("firmware: task kinds: every kind, with secure aggregation\n");
#endif
  if (!status.ok()) return fail("client", status);
  return take_part(device, g_client, g_channel);
}

}  // namespace

int main() {
  firmware::paint_stack();
  firmware::start_board_timer();
  const int rc = run();
  firmware::print_footprint();
  return rc;
}
