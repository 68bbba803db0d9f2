// fedstat-loadgen's devices: run_load (load_fleet.h).
#include "host_server/tools/load_fleet.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "host_server/estimate/host_common.h"
#include "host_server/net/credentials.h"
#include "host_server/sim/device_threads.h"
#include "host_server/sim/emulated_device.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/client.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/tls/tls_channel.h"

namespace fedstat {
namespace host {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t wall_clock_seconds() {
  return static_cast<uint64_t>(std::time(nullptr));
}

// Times each report's acknowledgement (load_fleet.h): the last Report chunk's send to the Ack
// whose offset is the task's vector_length.
class TimingChannel final : public client::FrameChannel {
 public:
  TimingChannel(client::FrameChannel& inner, std::vector<uint32_t>& latency_us)
      : inner_(inner), latency_us_(latency_us) {}
  Status send(const wire::Envelope& message) override {
    const Status sent = inner_.send(message);
    if (sent.ok() && message.which_body == fedstat_v1_Envelope_report_tag &&
        message.body.report.offset + message.body.report.words_count == length_) {
      last_chunk_sent_ = Clock::now();
      waiting_ = true;
    }
    return sent;
  }
  Status receive(wire::Envelope& out, uint32_t timeout_ms) override {
    const Status received = inner_.receive(out, timeout_ms);
    if (!received.ok()) return received;
    if (out.which_body == fedstat_v1_Envelope_task_tag) length_ = out.body.task.vector_length;
    if (waiting_ && out.which_body == fedstat_v1_Envelope_ack_tag &&
        out.body.ack.offset == length_) {
      waiting_ = false;
      const auto us =
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - last_chunk_sent_);
      latency_us_.push_back(static_cast<uint32_t>(std::min<int64_t>(us.count(), UINT32_MAX)));
    }
    return received;
  }
  void close() override { inner_.close(); }

 private:
  client::FrameChannel& inner_;
  std::vector<uint32_t>& latency_us_;
  uint32_t length_ = 0;
  bool waiting_ = false;
  Clock::time_point last_chunk_sent_;
};

struct DeviceTally {
  std::vector<uint32_t> latency_us;
  uint32_t rounds = 0, aborted = 0, sessions = 0, resumed = 0;
  bool out_of_tasks = false;
  std::string error;
};

// The fleet's shared stop rule (load_fleet.h): rounds are numbered per device from 0, and in
// lockstep every device's k-th round is the same task.
class StopRule {
 public:
  explicit StopRule(Clock::time_point deadline) : deadline_(deadline) {}
  // Called after a device finished its round `k`: true if it takes part in round k + 1.
  bool go_on_after(uint32_t k) {
    if (Clock::now() >= deadline_) {
      uint32_t unset = kUnset;
      last_.compare_exchange_strong(unset, k + 1);
    }
    return k + 1 <= last_.load();
  }

 private:
  static constexpr uint32_t kUnset = UINT32_MAX;
  Clock::time_point deadline_;
  std::atomic<uint32_t> last_{kUnset};
};

void run_device(const LoadOptions& options, uint64_t id, EmulatedClient& data, StopRule& stop,
                DeviceTally& tally) {
  const std::string ledger_blob = "ledger-" + std::to_string(id);
  const std::string round_blob = "round-" + std::to_string(id);
  privacy::LedgerConfig ledger_config;
  ledger_config.blob_name = ledger_blob.c_str();
  std::vector<privacy::PrivacySpend> entries(8);
  std::vector<uint8_t> scratch(privacy::BudgetLedger::blob_bytes(entries.size()));
  privacy::BudgetLedger ledger;
  check(ledger.init(ledger_config, Span<privacy::PrivacySpend>(entries.data(), entries.size()),
                    MutableByteSpan(scratch.data(), scratch.size())),
        "device " + std::to_string(id) + " ledger");
  check(ledger.load(), "device " + std::to_string(id) + " ledger");
  std::unique_ptr<uint64_t[]> memory(new uint64_t[(options.memory_bytes + 7) / 8]);
  EmulatedData app_data(data);
  const net::DevicePsk psk = net::derive_device_psk(options.fleet_secret, id);
  const std::string identity = std::to_string(id);
  // Heap, not the thread's small stack: the Client and the channel (~3 KiB each).
  auto channel = std::make_unique<tls::TlsPskChannel>();
  for (uint32_t round = 0;; ++round) {
    SeededStream random(seed_from_u64(options.seed), device_stream(id, round));
    client::ClientConfig config;
    config.device_id = id;
    config.receive_timeout_ms = options.receive_timeout_ms;
    config.report_window = options.report_window;
    config.wall_clock_seconds = wall_clock_seconds;
    config.round_blob_name = round_blob.c_str();
    // The load generator's tasks are trust "none" only (fedstat-loadgen refuses others): its
    // devices opt in to them, and to nothing else (sdk/client/task_policy.h).
    config.task_policy.accepted_trust = client::kAcceptNone;
    auto client = std::make_unique<client::Client>();
    check(
        client->init(
            config, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.get()), options.memory_bytes),
            app_data, ledger, random),
        "device " + identity + " client");
    const Status connected = channel->connect(
        options.endpoint.c_str(),
        ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
        ByteSpan(psk.data(), psk.size()), 10000);
    if (!connected.ok()) {
      tally.error = std::string("connect: ") + connected.message();
      return;
    }
    ++tally.sessions;
    if (channel->resumed()) ++tally.resumed;
    TimingChannel timing(*channel, tally.latency_us);
    const Result<client::SessionOutcome> outcome = client->run_session(timing);
    channel->close();
    if (!outcome.ok()) {
      tally.error = outcome.status().message();
      if (client->last_server_detail()[0] != '\0') {
        tally.error += std::string(" (server: ") + client->last_server_detail() + ")";
      }
      return;
    }
    switch (outcome.value().result) {
      case client::SessionResult::kCompleted:
        ++tally.rounds;
        break;
      case client::SessionResult::kAborted:
        ++tally.rounds;
        ++tally.aborted;
        break;
      case client::SessionResult::kNoTask:
        tally.out_of_tasks = true;
        return;
      case client::SessionResult::kDeclinedPolicy:
        tally.error = std::string("the device declined the task: ") +
                      client::policy_refusal_text(outcome.value().policy_refusal);
        return;
      default:
        tally.error = std::string("the device declined the task: ") + client->last_server_detail();
        return;
    }
    if (!stop.go_on_after(round)) return;
  }
}

}  // namespace

LoadResult run_load(const LoadOptions& options, EmulatedClients& devices) {
  if (options.memory_bytes == 0) throw std::invalid_argument("run_load: memory_bytes is 0");
  std::vector<DeviceTally> tallies(devices.size());
  const Clock::time_point start = Clock::now();
  StopRule stop(start + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(options.seconds)));
  {
    DeviceThreads threads;
    threads.start(devices.size(), [&](size_t i) {
      try {
        run_device(options, options.first_id + i, *devices[i], stop, tallies[i]);
      } catch (const std::exception& e) {
        tallies[i].error = e.what();
      }
    });
    threads.join();
  }
  LoadResult result;
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (DeviceTally& t : tallies) {
    result.reports += t.latency_us.size();
    result.rounds += t.rounds;
    result.aborted += t.aborted;
    result.sessions += t.sessions;
    result.resumed += t.resumed;
    result.rounds_per_device = std::max(result.rounds_per_device, t.rounds);
    result.out_of_tasks = result.out_of_tasks || t.out_of_tasks;
    if (!t.error.empty()) ++result.errors[t.error];
    result.latency_us.insert(result.latency_us.end(), t.latency_us.begin(), t.latency_us.end());
  }
  return result;
}

}  // namespace host
}  // namespace fedstat
