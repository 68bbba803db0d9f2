// Fuzz target: the device's Client (sdk/client/client.h) driven through one whole session by a
// server whose every message comes from the fuzzer: the input is a stream of frames (the wire's
// framing, sdk/wire/envelope_codec.h) that the channel hands over one per receive(); a malformed
// frame is the channel's error, and the end of the input closes the stream (kUnavailable).
// Each input starts from a fresh device: empty storage, a fresh privacy ledger (ε budget 10), a
// sparse histogram of 60 items, the same seeded randomness. Invariants beyond "no crash":
//   - the ledger never records more than its budget, whatever the server asks;
//   - the Client never reveals both kinds of secret (SecAggReveal self_mask true and false)
//     about the same peer in a session (Bonawitz et al.: that would unmask the peer's input);
//   - after the session, a second one on an empty stream ends cleanly (an error or an outcome;
//     the Client is still usable).
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "platform/platform.h"
#include "platform/posix/posix_platform.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/client.h"
#include "sdk/client/client_data.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using namespace fedstat;  // NOLINT: test code

constexpr uint64_t kNow = 1800000000;  // a plausible wall clock for the ledger
uint64_t fixed_clock() {
  return kNow;
}
constexpr uint64_t kDeviceId = 7;
constexpr double kBudget = 10;

// The server's side of the stream: frames taken from the fuzzer's bytes, in order.
class ScriptedChannel : public client::FrameChannel {
 public:
  ScriptedChannel(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  Status send(const wire::Envelope& message) override {
    if (message.which_body == fedstat_v1_Envelope_secagg_reveal_tag) {
      const fedstat_v1_SecAggReveal& r = message.body.secagg_reveal;
      revealed_.insert({r.about_id, r.self_mask});
      FUZZ_CHECK(revealed_.count({r.about_id, !r.self_mask}) == 0);
    }
    return Status();
  }
  Status receive(wire::Envelope& out, uint32_t) override {
    if (broken_ || offset_ == size_) return unavailable("fuzz: the stream ended");
    auto frame = wire::decode_frame(ByteSpan(data_ + offset_, size_ - offset_), out);
    if (!frame.ok()) {
      broken_ = true;
      return frame.status();
    }
    if (!frame->complete) {
      broken_ = true;
      return unavailable("fuzz: the stream ended inside a frame");
    }
    offset_ += frame->consumed;
    return Status();
  }
  void close() override {}

 private:
  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
  bool broken_ = false;
  std::set<std::pair<uint32_t, bool>> revealed_;
};

class HistogramData : public client::ClientData {
 public:
  explicit HistogramData(const histogram::SparseHistogram* h) : h_(h) {}
  const histogram::SparseHistogram* histogram() override { return h_; }

 private:
  const histogram::SparseHistogram* h_;
};

Seed256 seed_of(uint8_t salt) {
  Seed256 s;
  for (int i = 0; i < 32; ++i) s.bytes[i] = static_cast<uint8_t>(i * 7 + salt);
  return s;
}

// One device, fresh for every input.
struct Device {
  std::vector<histogram::SparseEntry> table = std::vector<histogram::SparseEntry>(256);
  histogram::SparseHistogram histogram;
  HistogramData data{&histogram};
  std::vector<privacy::PrivacySpend> entries = std::vector<privacy::PrivacySpend>(16);
  std::vector<uint8_t> scratch = std::vector<uint8_t>(privacy::BudgetLedger::blob_bytes(16));
  privacy::BudgetLedger ledger;
  std::vector<uint64_t> memory = std::vector<uint64_t>(64 * 1024);
  SeededStream random{seed_of(99), kDeviceId};
  client::Client client;

  Device() {
    FUZZ_CHECK(histogram.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok());
    for (uint32_t i = 0; i < 60; ++i) FUZZ_CHECK(histogram.add((i * i + 13) % 300, 1 + i % 7).ok());
    privacy::LedgerConfig lc;
    lc.epsilon_budget = kBudget;
    lc.delta_budget = 1e-3;
    lc.blob_name = "fuzz-ledger";
    FUZZ_CHECK(ledger
                   .init(lc, Span<privacy::PrivacySpend>(entries.data(), entries.size()),
                         MutableByteSpan(scratch.data(), scratch.size()))
                   .ok());
    FUZZ_CHECK(ledger.load().ok());
    client::ClientConfig config;
    config.device_id = kDeviceId;
    config.receive_timeout_ms = 1000;
    config.wall_clock_seconds = fixed_clock;
    config.round_blob_name = "fuzz-round";
    // Every trust model: a trust-NONE task goes as deep as a TRUSTED one (the default policy
    // would decline it at once).
    config.task_policy.accepted_trust = client::kAcceptAll;
    FUZZ_CHECK(client
                   .init(config,
                         MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()),
                                         memory.size() * sizeof(uint64_t)),
                         data, ledger, random)
                   .ok());
  }
};

void use_fresh_storage() {
  static const bool set =
      platform::posix::set_storage_directory(fedstat::fuzz::scratch_directory().c_str()).ok();
  FUZZ_CHECK(set);
  (void)platform::remove_blob("fuzz-ledger");
  (void)platform::remove_blob("fuzz-round");
}

// ---- Seeds: what an honest server sends, framed ----------------------------------------------
fedstat_v1_Task data_shift_task(fedstat_v1_TrustModel trust) {
  fedstat_v1_Task t = fedstat_v1_Task_init_zero;
  t.task_id = 11;
  t.kind = fedstat_v1_TaskKind_DATA_SHIFT;
  t.trust = trust;
  t.epsilon = 0.5;
  t.delta = 1e-8;
  const Seed256 s = seed_of(3);
  t.seed.size = 32;
  std::memcpy(t.seed.bytes, s.bytes, 32);
  t.bits = 64;
  t.which_parameters = fedstat_v1_Task_data_shift_tag;
  t.parameters.data_shift.rows = 3;
  t.parameters.data_shift.width = 50;
  t.parameters.data_shift.heap_capacity = 16;
  t.parameters.data_shift.k = 64;
  t.parameters.data_shift.domain = 1000;
  t.vector_length = 3 * 50 + 1;
  return t;
}

void append(std::vector<uint8_t>& out, const wire::Envelope& e) {
  uint8_t frame[wire::kMaxFrameBytes];
  auto n = wire::encode_frame(e, MutableByteSpan(frame, sizeof frame));
  FUZZ_CHECK(n.ok());
  out.insert(out.end(), frame, frame + n.value());
}

wire::Envelope task_message(const fedstat_v1_Task& t) {
  wire::Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_task_tag;
  e.body.task = t;
  return e;
}

wire::Envelope ack(uint32_t task, uint32_t offset) {
  wire::Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_ack_tag;
  e.body.ack.task_id = task;
  e.body.ack.offset = offset;
  return e;
}

wire::Envelope outcome(uint32_t task, bool completed) {
  wire::Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_round_outcome_tag;
  e.body.round_outcome.task_id = task;
  e.body.round_outcome.completed = completed;
  return e;
}

void write_seeds(fuzz::SeedWriter& out) {
  for (fedstat_v1_TrustModel trust : {fedstat_v1_TrustModel_TRUSTED, fedstat_v1_TrustModel_NONE}) {
    fedstat_v1_Task t = data_shift_task(trust);
    if (trust == fedstat_v1_TrustModel_NONE) t.epsilon = t.delta = 0;
    // A private sketch needs local noise (nothing else noises it).
    if (trust == fedstat_v1_TrustModel_TRUSTED) t.parameters.data_shift.local_epsilon = 1;
    std::vector<uint8_t> s;
    append(s, task_message(t));
    out.add(s);
    for (uint32_t offset : {64u, 128u, 151u}) append(s, ack(t.task_id, offset));
    append(s, outcome(t.task_id, true));
    out.add(s);
  }
  {  // DIST: the task (the hashed histogram, 151 buckets of 32 bits: no sketch), then the start
     // of secure aggregation.
    fedstat_v1_Task t = data_shift_task(fedstat_v1_TrustModel_DIST);
    t.max_clients = 3;
    t.min_clients = 2;
    t.threshold = 2;
    t.secagg_session = 0x5eca99;
    t.bits = 32;
    t.parameters.data_shift = fedstat_v1_DataShiftParameters_init_zero;
    t.parameters.data_shift.buckets = 151;
    t.parameters.data_shift.noise_scale = 2;
    t.parameters.data_shift.noise_shares = 2;
    std::vector<uint8_t> s;
    append(s, task_message(t));
    wire::Envelope start = wire::make_envelope();
    start.which_body = fedstat_v1_Envelope_secagg_start_tag;
    start.body.secagg_start.session = t.secagg_session;
    start.body.secagg_start.threshold = 2;
    start.body.secagg_start.vector_length = t.vector_length;
    start.body.secagg_start.bits = t.bits;
    start.body.secagg_start.max_clients = 3;
    append(s, start);
    out.add(s);
  }
  {  // The server has no task.
    wire::Envelope e = wire::make_envelope();
    e.which_body = fedstat_v1_Envelope_server_error_tag;
    e.body.server_error.action = fedstat_v1_ErrorAction_RETRY_LATER;
    std::vector<uint8_t> s;
    append(s, e);
    out.add(s);
  }
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  use_fresh_storage();
  Device device;
  ScriptedChannel channel(data, size);
  const auto result = device.client.run_session(channel);
  if (std::getenv("FEDSTAT_FUZZ_VERBOSE") != nullptr) {  // to see where a seed's session ends
    std::fprintf(stderr, "session: %s, outcome %d\n", result.status().message(),
                 result.ok() ? static_cast<int>(result->result) : -1);
  }
  auto spent = device.ledger.spent(kNow);
  if (spent.ok()) FUZZ_CHECK(spent.value().epsilon <= kBudget);
  ScriptedChannel empty(nullptr, 0);
  (void)device.client.run_session(empty);
  return 0;
}
