// The scale benchmark's devices: ScaleFleet (scale_fleet.h).
#include "tests/bench/scale_fleet.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <random>
#include <stdexcept>
#include <thread>

#include "host_server/estimate/host_common.h"
#include "host_server/net/credentials.h"
#include "host_server/sim/device_threads.h"
#include "host_server/sim/emulated_device.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/client.h"
#include "sdk/privacy/budget_ledger.h"

namespace fedstat {
namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t wall_clock_seconds() {
  return static_cast<uint64_t>(std::time(nullptr));
}

// Times the report's acknowledgement, then ends the session: once the Ack for the whole report
// is decoded, the next receive reads as a lost connection (the device leaves; scale_fleet.h).
class LeaveAfterAckChannel final : public client::FrameChannel {
 public:
  explicit LeaveAfterAckChannel(client::FrameChannel& inner) : inner_(inner) {}
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
    if (acknowledged_) return unavailable("the device left after its report's Ack");
    const Status received = inner_.receive(out, timeout_ms);
    if (!received.ok()) return received;
    if (out.which_body == fedstat_v1_Envelope_task_tag) length_ = out.body.task.vector_length;
    if (waiting_ && out.which_body == fedstat_v1_Envelope_ack_tag &&
        out.body.ack.offset == length_) {
      const auto us =
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - last_chunk_sent_);
      latency_us_ = static_cast<uint32_t>(std::min<int64_t>(us.count(), UINT32_MAX));
      acknowledged_ = true;
    }
    return received;
  }
  void close() override { inner_.close(); }
  bool acknowledged() const { return acknowledged_; }
  uint32_t latency_us() const { return latency_us_; }

 private:
  client::FrameChannel& inner_;
  uint32_t length_ = 0;
  bool waiting_ = false;
  bool acknowledged_ = false;
  uint32_t latency_us_ = 0;
  Clock::time_point last_chunk_sent_;
};

// Runs body(w, i) for i in [0, count) on `workers` threads (w: the thread's index), each taking
// the next index.
template <typename Body>
void share_workers(size_t count, size_t workers, const Body& body) {
  std::atomic<size_t> next{0};
  host::DeviceThreads threads;
  threads.start(std::min(workers, count), [&](size_t w) {
    for (size_t i = next++; i < count; i = next++) body(w, i);
  });
  threads.join();
}

}  // namespace

uint32_t percentile(std::vector<uint32_t> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(samples.size())));
  return samples[std::max<size_t>(rank, 1) - 1];
}

ScaleFleet::ScaleFleet(FleetOptions options, host::EmulatedClients& devices)
    : options_(std::move(options)), devices_(devices) {
  if (options_.endpoints.empty()) throw std::invalid_argument("ScaleFleet: no endpoint");
  if (options_.memory_bytes == 0) throw std::invalid_argument("ScaleFleet: memory_bytes is 0");
  std::mt19937_64 draw(options_.seed);  // device i's endpoint: the i-th draw
  endpoint_index_.resize(devices_.size());
  for (uint32_t& index : endpoint_index_) {
    index = static_cast<uint32_t>(draw() % options_.endpoints.size());
  }
}

std::map<std::string, uint32_t> ScaleFleet::warm_up() {
  channels_.resize(devices_.size());
  std::vector<std::string> errors(devices_.size());
  share_workers(devices_.size(), options_.workers, [&](size_t, size_t i) {
    channels_[i] = std::make_unique<tls::TlsPskChannel>();
    const uint64_t id = i + 1;
    const std::string identity = std::to_string(id);
    const net::DevicePsk psk = net::derive_device_psk(options_.fleet_secret, id);
    const Status connected = channels_[i]->connect(
        options_.endpoints[endpoint_index_[i]].c_str(),
        ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
        ByteSpan(psk.data(), psk.size()), 60000);
    if (!connected.ok()) errors[i] = std::string("warm-up connect: ") + connected.message();
    channels_[i]->close();
  });
  std::map<std::string, uint32_t> tally;
  for (const std::string& e : errors) {
    if (!e.empty()) ++tally[e];
  }
  return tally;
}

FleetResult ScaleFleet::run() {
  const size_t count = devices_.size();
  std::vector<uint32_t> latency(count, 0);
  std::vector<uint8_t> acknowledged(count, 0), resumed(count, 0);
  std::vector<std::string> errors(count);
  std::vector<std::unique_ptr<uint64_t[]>> memories;  // one Client memory per worker thread
  for (size_t w = 0; w < std::min(options_.workers, count); ++w) {
    memories.emplace_back(new uint64_t[(options_.memory_bytes + 7) / 8]);
  }
  const auto start = Clock::now();
  share_workers(count, options_.workers, [&](size_t w, size_t i) {
    uint64_t* memory = memories[w].get();
    const uint64_t id = i + 1;
    try {
      const std::string ledger_blob = "ledger-" + std::to_string(id);
      const std::string round_blob = "round-" + std::to_string(id);
      privacy::LedgerConfig ledger_config;
      ledger_config.blob_name = ledger_blob.c_str();
      ledger_config.epsilon_budget = 10;  // as fedstat-sim's devices (emulated_device.h)
      ledger_config.delta_budget = 1e-3;
      std::array<privacy::PrivacySpend, 4> entries{};
      std::vector<uint8_t> scratch(privacy::BudgetLedger::blob_bytes(entries.size()));
      privacy::BudgetLedger ledger;
      host::check(ledger.init(ledger_config, Span<privacy::PrivacySpend>(entries.data(), 4),
                              MutableByteSpan(scratch.data(), scratch.size())),
                  "ledger");
      host::check(ledger.load(), "ledger");
      host::EmulatedData data(*devices_[i]);
      SeededStream random(host::seed_from_u64(options_.seed), host::device_stream(id, 0));
      client::ClientConfig config;
      config.device_id = id;
      config.receive_timeout_ms = options_.receive_timeout_ms;
      config.report_window = options_.report_window;
      config.wall_clock_seconds = wall_clock_seconds;
      config.round_blob_name = round_blob.c_str();
      config.task_policy.accepted_trust = client::kAcceptAll;  // trust none or trusted tasks
      auto client = std::make_unique<client::Client>();
      host::check(
          client->init(config,
                       MutableByteSpan(reinterpret_cast<uint8_t*>(memory), options_.memory_bytes),
                       data, ledger, random),
          "client");
      std::unique_ptr<tls::TlsPskChannel> own;
      tls::TlsPskChannel* channel = i < channels_.size() ? channels_[i].get() : nullptr;
      if (channel == nullptr) {
        own = std::make_unique<tls::TlsPskChannel>();
        channel = own.get();
      }
      const std::string identity = std::to_string(id);
      const net::DevicePsk psk = net::derive_device_psk(options_.fleet_secret, id);
      const Status connected = channel->connect(
          options_.endpoints[endpoint_index_[i]].c_str(),
          ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
          ByteSpan(psk.data(), psk.size()), 60000);
      if (!connected.ok()) {
        errors[i] = std::string("connect: ") + connected.message();
        return;
      }
      resumed[i] = channel->resumed() ? 1 : 0;
      LeaveAfterAckChannel timing(*channel);
      const Result<client::SessionOutcome> outcome = client->run_session(timing);
      channel->close();
      if (timing.acknowledged()) {
        acknowledged[i] = 1;
        latency[i] = timing.latency_us();
      } else if (!outcome.ok()) {
        errors[i] = outcome.status().message();
        if (client->last_server_detail()[0] != '\0') {
          errors[i] += std::string(" (server: ") + client->last_server_detail() + ")";
        }
      } else {
        errors[i] = "the session ended without the report's Ack (outcome " +
                    std::to_string(static_cast<int>(outcome.value().result)) + ")";
      }
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  });
  FleetResult result;
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.per_endpoint.assign(options_.endpoints.size(), 0);
  for (size_t i = 0; i < count; ++i) {
    ++result.per_endpoint[endpoint_index_[i]];
    if (acknowledged[i]) {
      ++result.reports;
      result.latency_us.push_back(latency[i]);
    }
    result.resumed += resumed[i];
    if (!errors[i].empty()) ++result.errors[errors[i]];
  }
  return result;
}

}  // namespace bench
}  // namespace fedstat
