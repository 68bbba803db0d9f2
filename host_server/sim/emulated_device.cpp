// An emulated device: a real Client over real TLS-PSK (emulated_device.h).
#include "host_server/sim/emulated_device.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <stdexcept>
#include <thread>

#include "host_server/estimate/host_common.h"
#include "sdk/base/csprng.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/client.h"
#include "sdk/client/contribution.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/tls/tls_channel.h"

namespace fedstat {
namespace host {
namespace {

uint64_t wall_clock_seconds() {
  return static_cast<uint64_t>(std::time(nullptr));
}

// Closes the connection just before the first message of one kind would go out; counts the
// frame bytes it lets through.
class DroppingChannel final : public client::FrameChannel {
 public:
  DroppingChannel(client::FrameChannel& inner, pb_size_t drop_before)
      : inner_(inner), drop_before_(drop_before) {}
  Status send(const wire::Envelope& message) override {
    if (dropped_) return unavailable("emulated dropout");
    if (drop_before_ != 0 && message.which_body == drop_before_) {
      dropped_ = true;
      inner_.close();
      return unavailable("emulated dropout");
    }
    uint8_t frame[wire::kMaxFrameBytes];
    const Result<size_t> size = wire::encode_frame(message, MutableByteSpan(frame, sizeof(frame)));
    if (size.ok()) bytes_ += size.value();
    if (message.which_body == fedstat_v1_Envelope_task_reply_tag) replied_ = true;
    return inner_.send(message);
  }
  Status receive(wire::Envelope& out, uint32_t timeout_ms) override {
    if (dropped_) return unavailable("emulated dropout");
    const Status received = inner_.receive(out, timeout_ms);
    if (received.ok() && out.which_body == fedstat_v1_Envelope_task_tag) {
      task_id_ = out.body.task.task_id;
    }
    return received;
  }
  void close() override { inner_.close(); }
  bool dropped() const { return dropped_; }
  bool replied() const { return replied_; }
  uint32_t task_id() const { return task_id_; }  // the Task offered on this channel (0: none)
  uint64_t bytes() const { return bytes_; }

 private:
  client::FrameChannel& inner_;
  pb_size_t drop_before_;
  bool dropped_ = false;
  bool replied_ = false;
  uint32_t task_id_ = 0;
  uint64_t bytes_ = 0;
};

const char* outcome_name(client::SessionResult result) {
  switch (result) {
    case client::SessionResult::kNoTask:
      return "no-task";
    case client::SessionResult::kVersionTooOld:
      return "version-too-old";
    case client::SessionResult::kDeclinedInterrupted:
      return "declined-interrupted";
    case client::SessionResult::kDeclinedNoData:
      return "declined-no-data";
    case client::SessionResult::kDeclinedMemory:
      return "declined-memory";
    case client::SessionResult::kDeclinedBudget:
      return "declined-budget";
    case client::SessionResult::kCompleted:
      return "completed";
    case client::SessionResult::kAborted:
      return "aborted";
    case client::SessionResult::kDeclinedPolicy:
      return "declined-policy";
    case client::SessionResult::kDeclinedAlreadyCharged:
      return "declined-already-charged";
  }
  return "unknown";
}

}  // namespace

pb_size_t drop_point_tag(const std::string& name) {
  if (name == "keys") return fedstat_v1_Envelope_secagg_keys_tag;
  if (name == "shares") return fedstat_v1_Envelope_secagg_share_tag;
  if (name == "masking") return fedstat_v1_Envelope_secagg_masked_chunk_tag;
  if (name == "consistency") return fedstat_v1_Envelope_secagg_consistency_tag;
  if (name == "reveals") return fedstat_v1_Envelope_secagg_reveal_tag;
  if (name == "report") return fedstat_v1_Envelope_report_tag;
  throw std::invalid_argument(
      "drop point must be keys, shares, masking, consistency, reveals or report, not '" + name +
      "'");
}

uint64_t device_stream(uint64_t id, uint32_t task_index) {
  return id + (uint64_t{task_index} << 32);
}

namespace {

// One task: check-ins until one ends with a task outcome (or max_sessions found none), with a
// Client of its own drawing from the task's stream.
// The device's channel: PSK (resumable, kept by the caller across calls) or certificates.
struct DeviceChannels {
  tls::TlsPskChannel* psk = nullptr;
  tls::TlsCertificateChannel* certificate = nullptr;
};

ByteSpan pem_span(const std::string& pem) {  // with its NUL, as mbedTLS wants
  return ByteSpan(reinterpret_cast<const uint8_t*>(pem.c_str()), pem.size() + 1);
}

DeviceTaskReport run_one_task(const DeviceSetup& setup, DeviceChannels channels, uint32_t index,
                              privacy::BudgetLedger& ledger, Span<uint64_t> memory,
                              EmulatedData& app_data, const std::string& round_blob,
                              DeviceReport& report) {
  DeviceTaskReport task;
  task.index = index;
  std::unique_ptr<SeededStream> seeded;
  std::unique_ptr<Csprng> csprng;
  RandomSource* random = nullptr;
  if (setup.seed != 0) {
    seeded =
        std::make_unique<SeededStream>(seed_from_u64(setup.seed), device_stream(setup.id, index));
    random = seeded.get();
  } else {
    csprng = std::make_unique<Csprng>();
    check(csprng->init(), "device entropy");
    random = csprng.get();
  }
  client::ClientConfig config;
  config.device_id = setup.id;
  config.receive_timeout_ms = setup.receive_timeout_ms;
  config.report_window = setup.report_window;
  config.task_policy.accepted_trust = setup.accepted_trust;
  config.task_policy.answered_kinds = setup.answered_kinds;
  config.wall_clock_seconds = wall_clock_seconds;
  config.round_blob_name = round_blob.c_str();
  config.credential = setup.credential;
  client::Client client;
  check(client.init(config,
                    MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()), memory.size() * 8),
                    app_data, ledger, *random),
        "the device's Client");
  const pb_size_t drop_before = index < setup.drop_before.size() ? setup.drop_before[index] : 0;
  // Waiting for a later task (the follow-up of a chained one) polls at its own interval.
  const uint32_t retry_millis = index == 0 ? setup.retry_millis : setup.next_task_retry_millis;

  const std::string identity = std::to_string(setup.id);
  for (uint32_t session = 0; session < setup.max_sessions; ++session) {
    ++report.sessions;
    Status connected;
    client::FrameChannel* link = nullptr;
    bool resumed = false;
    if (channels.certificate != nullptr) {
      connected = channels.certificate->connect(
          setup.endpoint.c_str(), setup.tls_server_name.c_str(), pem_span(*setup.tls_ca),
          pem_span(*setup.tls_certificate),
          ByteSpan(setup.tls_key->private_key, sizeof(setup.tls_key->private_key)), 10000);
      link = channels.certificate;
    } else {
      connected = channels.psk->connect(
          setup.endpoint.c_str(),
          ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
          ByteSpan(setup.psk.data(), setup.psk.size()), 10000);
      resumed = channels.psk->resumed();
      link = channels.psk;
    }
    client::FrameChannel& channel = *link;
    if (!connected.ok()) {
      task.outcome = "error";
      task.detail = "could not connect to " + setup.endpoint + ": " + connected.message();
      // Refused (a wrong key) or an endpoint no connection can reach: another try ends the same.
      if (connected.code() == StatusCode::kPermissionDenied ||
          connected.code() == StatusCode::kInvalidArgument) {
        return task;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(retry_millis));
      continue;
    }
    if (resumed) ++report.resumed;
    DroppingChannel dropping(channel, drop_before);
    const uint32_t resuming = client.pending_report_task();
    const Result<client::SessionOutcome> outcome = client.run_session(dropping);
    report.frame_bytes_sent += dropping.bytes();
    channel.close();
    if (dropping.dropped()) {
      task.task_id = dropping.task_id();
      task.outcome = "dropped";
      return task;
    }
    if (!outcome.ok()) {
      // A lost connection (the server restarted): check in again, as an app would, when the
      // Client holds a round to resume (any trust model: client.h) or had not yet answered a
      // task.
      const StatusCode code = outcome.status().code();
      const bool lost = code == StatusCode::kUnavailable || code == StatusCode::kDeadlineExceeded;
      if (lost && (client.pending_report_task() != 0 || !dropping.replied())) {
        ++report.reconnects;
        std::this_thread::sleep_for(std::chrono::milliseconds(retry_millis));
        continue;
      }
      task.outcome = "error";
      task.detail = outcome.status().message();
      if (client.last_server_detail()[0] != '\0') {
        task.detail += std::string(" (server: ") + client.last_server_detail() + ")";
      }
      return task;
    }
    if (resuming != 0 && outcome.value().result == client::SessionResult::kNoTask) {
      // The round ended while the device was away: its report may or may not have been summed.
      task.task_id = resuming;
      task.outcome = "unconfirmed";
      task.detail = client.last_server_detail();
      return task;
    }
    task.task_id = outcome.value().task_id;
    task.outcome = outcome_name(outcome.value().result);
    task.detail = outcome.value().result == client::SessionResult::kDeclinedPolicy
                      ? client::policy_refusal_text(outcome.value().policy_refusal)
                      : client.last_server_detail();
    if (outcome.value().result != client::SessionResult::kNoTask) return task;
    // Polling for a task: the server has none open for us yet (a device's check-in interval).
    std::this_thread::sleep_for(std::chrono::milliseconds(retry_millis));
  }
  return task;
}

}  // namespace

DeviceReport run_emulated_device(const DeviceSetup& setup, EmulatedClient& data) {
  DeviceReport report;
  report.id = setup.id;
  const std::string blob = "ledger-" + std::to_string(setup.id);
  const std::string round_blob = "round-" + std::to_string(setup.id);
  privacy::LedgerConfig ledger_config;
  ledger_config.epsilon_budget = setup.epsilon_budget;
  ledger_config.delta_budget = setup.delta_budget;
  ledger_config.blob_name = blob.c_str();
  std::vector<privacy::PrivacySpend> entries(64);
  std::vector<uint8_t> scratch(privacy::BudgetLedger::blob_bytes(entries.size()));
  privacy::BudgetLedger ledger;
  check(ledger.init(ledger_config, Span<privacy::PrivacySpend>(entries.data(), entries.size()),
                    MutableByteSpan(scratch.data(), scratch.size())),
        "the device's privacy ledger");
  check(ledger.load(), "the device's privacy ledger");
  // Left uninitialised (the Client writes before it reads): 200 devices' 4 MiB defaults are not
  // paged in, only what their Clients use.
  const size_t words = (setup.memory_bytes + 7) / 8;
  std::unique_ptr<uint64_t[]> memory_words(new uint64_t[words]);
  const Span<uint64_t> memory(memory_words.get(), words);
  EmulatedData app_data(data);
  // Heap, not the device thread's small stack (~3 KiB).
  std::unique_ptr<tls::TlsPskChannel> own_channel;
  std::unique_ptr<tls::TlsCertificateChannel> certificate_channel;
  DeviceChannels channels;
  if (setup.tls_certificate != nullptr) {
    if (setup.tls_ca == nullptr || setup.tls_key == nullptr || setup.tls_server_name.empty()) {
      throw std::runtime_error("device " + std::to_string(setup.id) +
                               ": a certificate needs the CA certificate, the key and the "
                               "server name");
    }
    certificate_channel = std::make_unique<tls::TlsCertificateChannel>();
    channels.certificate = certificate_channel.get();
  } else {
    if (setup.channel == nullptr) own_channel = std::make_unique<tls::TlsPskChannel>();
    channels.psk = setup.channel != nullptr ? setup.channel : own_channel.get();
  }
  for (uint32_t index = 0; index < std::max<uint32_t>(1, setup.tasks); ++index) {
    const DeviceTaskReport task =
        run_one_task(setup, channels, index, ledger, memory, app_data, round_blob, report);
    report.tasks.push_back(task);
    report.task_id = task.task_id;
    report.outcome = task.outcome;
    report.detail = task.detail;
    // A device that failed, or found no task, does not look for the next one.
    if (task.outcome == "error" || task.outcome == "no-task") break;
  }
  report.epsilon_spent = value_or_throw(ledger.spent(wall_clock_seconds()), "ledger").epsilon;
  return report;
}

size_t local_size(const fedstat_v1_Task& task, const EmulatedClient& data) {
  if (task.kind == fedstat_v1_TaskKind_MODEL_UPDATE) return data.examples.count();
  if (task.kind == fedstat_v1_TaskKind_DATA_SHIFT && !data.table.empty()) {
    return data.histogram.capacity();
  }
  return 0;
}

std::vector<uint64_t> expected_contribution(const fedstat_v1_Task& task,
                                            const std::vector<uint64_t>& task_data,
                                            EmulatedClient& data, uint64_t seed, uint64_t id,
                                            uint32_t task_index) {
  SeededStream stream(seed_from_u64(seed), device_stream(id, task_index));
  RandomBits bits(stream);
  const size_t length = value_or_throw(client::contribution_length(task), "contribution length");
  const size_t scratch_size =
      value_or_throw(client::scratch_bytes(task, local_size(task, data)), "contribution scratch");
  std::vector<uint64_t> scratch((scratch_size + 7) / 8 + 1);
  const MutableByteSpan scratch_bytes(reinterpret_cast<uint8_t*>(scratch.data()), scratch_size);
  std::vector<uint64_t> out(length);
  EmulatedData app_data(data);
  check(client::build_contribution(task, app_data,
                                   Span<const uint64_t>(task_data.data(), task_data.size()), bits,
                                   scratch_bytes, Span<uint64_t>(out.data(), out.size())),
        "device " + std::to_string(id) + " contribution");
  return out;
}

}  // namespace host
}  // namespace fedstat
