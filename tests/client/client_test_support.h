// Shared pieces of the Client's tests: a temporary storage directory and a ledger per device,
// tasks of each kind, the app's data, and the expected contributions computed directly from the
// SDK routines (independently of sdk/client/contribution.cpp). Paper: none.
#ifndef FEDSTAT_TESTS_CLIENT_CLIENT_TEST_SUPPORT_H_
#define FEDSTAT_TESTS_CLIENT_CLIENT_TEST_SUPPORT_H_

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <cmath>
#include "platform/posix/posix_platform.h"
#include "sdk/base/arena.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/client/client.h"
#include "sdk/client/contribution.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/polya.h"
#include "sdk/noise/rational.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/quantise/quantise.h"
#include "sdk/sketch/hashed_histogram.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/sketch/stability_histogram.h"
#include "sdk/tasks/heterogeneity_task.h"
#include "sdk/tasks/kl_answer_task.h"
#include "sdk/tasks/model_update_task.h"

namespace fedstat {
namespace client_test {

constexpr uint64_t kNow = 1800000000;  // 2027-01-15: a plausible wall clock for the ledger
inline uint64_t fixed_clock() {
  return kNow;
}

inline Seed256 test_seed(uint8_t salt) {
  Seed256 s;
  for (int i = 0; i < 32; ++i) s.bytes[i] = static_cast<uint8_t>(i * 7 + salt);
  return s;
}

inline void set_seed(fedstat_v1_Task& task, uint8_t salt) {
  const Seed256 s = test_seed(salt);
  task.seed.size = 32;
  std::memcpy(task.seed.bytes, s.bytes, 32);
}

// The fields every test task shares: id, kind, trust, (ε, δ = 1e-8), the DIST Skellam share λ
// (0 in the other models), the seed and the word size.
inline fedstat_v1_Task task_header(uint32_t id, fedstat_v1_TaskKind kind,
                                   fedstat_v1_TrustModel trust, double epsilon, double dist_lambda,
                                   uint8_t seed_salt, uint32_t bits) {
  fedstat_v1_Task t = fedstat_v1_Task_init_zero;
  t.task_id = id;
  t.kind = kind;
  t.trust = trust;
  t.epsilon = epsilon;
  t.delta = 1e-8;
  t.device_noise_lambda = trust == fedstat_v1_TrustModel_DIST ? dist_lambda : 0;
  set_seed(t, seed_salt);
  t.bits = bits;
  return t;
}

// A DATA_SHIFT task whose sketch goes through the stability histogram at `local_epsilon` (0: the
// exact counters, which only trust NONE may ask for: nothing else noises a sketch).
inline fedstat_v1_Task data_shift_task(fedstat_v1_TrustModel trust, double local_epsilon) {
  fedstat_v1_Task t = task_header(11, fedstat_v1_TaskKind_DATA_SHIFT, trust, 0.5, 0, 3, 64);
  t.which_parameters = fedstat_v1_Task_data_shift_tag;
  t.parameters.data_shift.rows = 3;
  t.parameters.data_shift.width = 50;  // 151 words: three Report chunks
  t.parameters.data_shift.heap_capacity = 16;
  t.parameters.data_shift.k = 64;
  t.parameters.data_shift.domain = 1000;
  t.parameters.data_shift.local_epsilon = local_epsilon;
  t.vector_length = 3 * 50 + 1;
  return t;
}

// ... as the server declares one: a private trust model with local noise at the task's ε
// (host_server/tasks/task_plan.cpp wants ε = local_epsilon), trust NONE exact with ε = δ = 0.
inline fedstat_v1_Task data_shift_task(fedstat_v1_TrustModel trust) {
  if (trust != fedstat_v1_TrustModel_NONE) return data_shift_task(trust, 0.5);  // ε = 0.5
  fedstat_v1_Task t = data_shift_task(trust, 0);
  t.epsilon = 0;
  t.delta = 0;
  return t;
}

inline fedstat_v1_Task kl_task(fedstat_v1_TrustModel trust, std::vector<uint64_t>& points) {
  fedstat_v1_Task t = task_header(12, fedstat_v1_TaskKind_KL_ANSWERS, trust, 1, 3.5, 5, 64);
  points = {1, 4, 9, 16, 25, 36, 49, 64, 81, 100};
  for (uint64_t p = 200; p < 270; ++p) points.push_back(p);  // 80 points: two TaskData chunks
  t.which_parameters = fedstat_v1_Task_kl_tag;
  t.parameters.kl.points = static_cast<uint32_t>(points.size());
  t.data_words = t.parameters.kl.points;
  t.vector_length = t.parameters.kl.points + 1;
  return t;
}

// `t` as a trust-NONE task: exact words, ε = δ = 0, no Skellam share. A Client answers it only
// when its task policy accepts NONE (Device::accept_none). Model-update and heterogeneity tasks
// are NONE or DIST only (no server noises them centrally: contribution.h, validate_task).
inline fedstat_v1_Task as_none(fedstat_v1_Task t) {
  t.trust = fedstat_v1_TrustModel_NONE;
  t.epsilon = 0;
  t.delta = 0;
  t.device_noise_lambda = 0;
  return t;
}

inline void make_dist(fedstat_v1_Task& t, uint32_t max_clients, uint32_t threshold) {
  t.trust = fedstat_v1_TrustModel_DIST;
  t.max_clients = max_clients;
  t.min_clients = threshold;
  t.threshold = threshold;
  t.secagg_session = 0x5eca99;
}

// A histogram the test owns (table and object).
struct OwnedHistogram {
  std::vector<histogram::SparseEntry> table;
  histogram::SparseHistogram histogram;
  explicit OwnedHistogram(uint32_t salt, size_t capacity = 256) : table(capacity) {
    EXPECT_TRUE(histogram.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok());
    for (uint32_t i = 0; i < 60; ++i) {
      const uint32_t id = (i * i + salt * 13) % 300;
      EXPECT_TRUE(histogram.add(id, 1 + (i + salt) % 7).ok());
    }
  }
};

class HistogramData : public client::ClientData {
 public:
  explicit HistogramData(const histogram::SparseHistogram* h) : h_(h) {}
  const histogram::SparseHistogram* histogram() override { return h_; }

 private:
  const histogram::SparseHistogram* h_;
};

// A RandomSource that counts the bytes drawn (to assert nothing was computed).
class CountingSource : public RandomSource {
 public:
  explicit CountingSource(const Seed256& seed, uint64_t stream) : inner_(seed, stream) {}
  Status fill(MutableByteSpan out) override {
    if (fail_after != 0 && drawn + out.size() > fail_after) {
      return unavailable("test entropy source: failing on purpose");
    }
    drawn += out.size();
    return inner_.fill(out);
  }
  size_t drawn = 0;
  size_t fail_after = 0;  // > 0: refuse a fill that would take `drawn` past it

 private:
  SeededStream inner_;
};

// A device: its ledger, its memory, its randomness, its Client.
struct Device {
  std::vector<privacy::PrivacySpend> entries;
  std::vector<uint8_t> scratch;
  privacy::BudgetLedger ledger;
  std::vector<uint64_t> memory;
  std::unique_ptr<CountingSource> random;
  client::Client client;
  std::string ledger_name, round_name;

  // `kinds`: a Client built with those kinds only (null: every kind, Client::init's default).
  // `report_window`: ClientConfig::report_window.
  // `credential`: ClientConfig::credential (signed DIST rounds; null: none).
  Device(uint64_t id, size_t memory_bytes, client::ClientData& data, double budget = 10,
         const client::TaskKinds* kinds = nullptr, uint8_t report_window = 1,
         const credential::DeviceCredential* credential = nullptr)
      : entries(16),
        scratch(privacy::BudgetLedger::blob_bytes(16)),
        memory((memory_bytes + 7) / 8) {
    ledger_name = "ledger-" + std::to_string(id);
    round_name = "round-" + std::to_string(id);
    privacy::LedgerConfig lc;
    lc.epsilon_budget = budget;
    lc.delta_budget = 1e-3;
    lc.blob_name = ledger_name.c_str();
    EXPECT_TRUE(ledger
                    .init(lc, Span<privacy::PrivacySpend>(entries.data(), entries.size()),
                          MutableByteSpan(scratch.data(), scratch.size()))
                    .ok());
    EXPECT_TRUE(ledger.load().ok());
    random = std::make_unique<CountingSource>(test_seed(99), id);
    client::ClientConfig config;
    config.device_id = id;
    config.receive_timeout_ms = 20000;
    config.wall_clock_seconds = fixed_clock;
    config.round_blob_name = round_name.c_str();
    config.report_window = report_window;
    config.credential = credential;
    const MutableByteSpan bytes(reinterpret_cast<uint8_t*>(memory.data()), memory_bytes);
    init_status = kinds == nullptr ? client.init(config, bytes, data, ledger, *random)
                                   : client.init(config, *kinds, bytes, data, ledger, *random);
  }
  double spent() const { return ledger.spent(kNow).value().epsilon; }
  // The app opts in to trust-NONE tasks too (ClientConfig::task_policy: the default declines them).
  void accept_none() {
    client::TaskPolicy policy;
    policy.accepted_trust = client::kAcceptAll;
    EXPECT_TRUE(client.set_task_policy(policy).ok());
  }
  Status init_status;
};

// A temporary storage directory per test (ledgers and round markers).
class StorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fedstat-client-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    ASSERT_TRUE(platform::posix::set_storage_directory(directory_.c_str()).ok());
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf '" + directory_ + "'").c_str()), 0); }
  std::string directory_;
};

inline Seed256 seed_of(const fedstat_v1_Task& t) {
  Seed256 s;
  std::memcpy(s.bytes, t.seed.bytes, 32);
  return s;
}

// DATA_SHIFT by hand: the sketch of the (optionally stability-noised) histogram.
inline std::vector<uint64_t> expected_sketch(const fedstat_v1_Task& t,
                                             const histogram::SparseHistogram& h,
                                             RandomSource& noise_source) {
  sketch::ShiftSketchParams p;
  p.rows = t.parameters.data_shift.rows;
  p.width = t.parameters.data_shift.width;
  p.heap_capacity = t.parameters.data_shift.heap_capacity;
  p.k = t.parameters.data_shift.k;
  p.seed = seed_of(t);
  std::vector<uint64_t> mem((sketch::shift_sketch_memory_bytes(p) + 7) / 8);
  sketch::ShiftSketch sk;
  EXPECT_TRUE(sk.init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(mem.data()),
                                         sketch::shift_sketch_memory_bytes(p)))
                  .ok());
  const histogram::SparseHistogram* source = &h;
  std::vector<histogram::SparseEntry> table(h.capacity());
  histogram::SparseHistogram noisy;
  RandomBits bits(noise_source);
  if (t.parameters.data_shift.local_epsilon > 0) {
    EXPECT_TRUE(noisy.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok());
    auto params = sketch::stability_params(t.parameters.data_shift.local_epsilon, 1e-6);
    EXPECT_TRUE(params.ok());
    EXPECT_TRUE(sketch::stability_histogram(h, params.value(), bits, noisy).ok());
    source = &noisy;
  }
  for (const auto& e : source->slots()) {
    if (e.count > 0) {
      EXPECT_TRUE(sk.add(e.id, e.count).ok());
    }
  }
  std::vector<uint64_t> out;
  for (uint32_t r = 0; r < p.rows; ++r) {
    for (uint32_t b = 0; b < p.width; ++b) out.push_back(static_cast<uint64_t>(sk.counter(r, b)));
  }
  out.push_back(static_cast<uint64_t>(sk.total()));
  return out;
}

// A DIST data-shift task (the hashed histogram, contribution.h): 97 buckets of 32-bit words (two
// masked chunks), T = 2 (ε = 1/T = 0.5 item level), s = threshold shares, over `max_clients`
// devices of which `threshold` must survive.
inline fedstat_v1_Task data_shift_dist_task(uint32_t max_clients, uint32_t threshold) {
  fedstat_v1_Task t =
      task_header(13, fedstat_v1_TaskKind_DATA_SHIFT, fedstat_v1_TrustModel_DIST, 0.5, 0, 4, 32);
  t.delta = 0;
  make_dist(t, max_clients, threshold);
  t.which_parameters = fedstat_v1_Task_data_shift_tag;
  t.parameters.data_shift.buckets = 97;
  t.parameters.data_shift.noise_scale = 2;
  t.parameters.data_shift.noise_shares = threshold;
  t.vector_length = 97;
  return t;
}

// The exact part of a DIST data-shift vector, by hand: each item's count added to its bucket —
// when the histogram holds N > m = max_events events, only m events instead, each the event
// uniform_below(N) points at in table order (m draws from `bits`, also made and discarded when
// N ≤ m) — each bucket clamped to ⌊(2^(bits−1) − 1)/max_clients⌋.
inline std::vector<uint64_t> expected_bucket_counts(const fedstat_v1_Task& t,
                                                    const histogram::SparseHistogram& h,
                                                    RandomBits* bits = nullptr) {
  const fedstat_v1_DataShiftParameters& d = t.parameters.data_shift;
  const sketch::BucketMap map(seed_of(t), d.buckets);
  uint64_t held = 0;
  for (const auto& e : h.slots()) held += e.count;
  const bool bounded = d.max_events > 0 && held > d.max_events;
  EXPECT_TRUE(d.max_events == 0 || bits != nullptr) << "a bound needs the noise stream";
  std::vector<uint64_t> out(d.buckets, 0);
  if (!bounded) {
    for (const auto& e : h.slots()) {
      if (e.count != 0) out[map.bucket_of(e.id)] += e.count;
    }
  }
  for (uint32_t k = 0; k < d.max_events && bits != nullptr; ++k) {
    uint64_t r = bits->uniform_below(held > 0 ? held : 1).value();
    for (const auto& e : h.slots()) {
      if (r < e.count) {
        if (bounded) out[map.bucket_of(e.id)] += 1;
        break;
      }
      r -= e.count;
    }
  }
  const uint64_t limit = ((uint64_t{1} << (t.bits - 1)) - 1) / t.max_clients;
  for (uint64_t& v : out) v = std::min(v, limit);
  return out;
}

// The whole DIST data-shift vector, by hand: expected_bucket_counts plus one Pólya share per
// bucket (noise::polya_share of T rounded up, s ways, in bucket order from `noise_source`, after
// the bound's draws), mod 2^bits.
inline std::vector<uint64_t> expected_hashed(const fedstat_v1_Task& t,
                                             const histogram::SparseHistogram& h,
                                             RandomSource& noise_source) {
  RandomBits bits(noise_source);
  std::vector<uint64_t> out = expected_bucket_counts(t, h, &bits);
  const noise::Rational scale =
      noise::rational_at_least(t.parameters.data_shift.noise_scale).value();
  const uint64_t mask = t.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << t.bits) - 1;
  for (uint64_t& v : out) {
    const Result<int64_t> share =
        noise::polya_share(bits, scale, t.parameters.data_shift.noise_shares);
    EXPECT_TRUE(share.ok());
    v = (v + static_cast<uint64_t>(share.value())) & mask;
  }
  return out;
}

// The Skellam share a DIST task asks each device for: Sk(λ), λ = device_noise_lambda rounded up
// to the sampler's rational grid (as the device does).
inline void init_share(noise::NoiseSampler& share, const fedstat_v1_Task& t) {
  EXPECT_TRUE(
      share
          .init(noise::NoiseSpec{noise::NoiseKind::kSkellam,
                                 noise::rational_at_least(t.device_noise_lambda).value(), 1})
          .ok());
}

// KL by hand: counts (+ a Skellam share of λ in DIST), then the total.
inline std::vector<uint64_t> expected_kl(const fedstat_v1_Task& t,
                                         const std::vector<uint64_t>& points,
                                         const histogram::SparseHistogram& h,
                                         RandomSource& noise_source) {
  std::vector<uint32_t> ids(points.begin(), points.end());
  std::vector<int64_t> counts(ids.size());
  uint64_t total = 0;
  if (t.trust == fedstat_v1_TrustModel_DIST) {
    noise::NoiseSampler share;
    init_share(share, t);
    RandomBits bits(noise_source);
    EXPECT_TRUE(tasks::answer_kl_points_noised(h, Span<const uint32_t>(ids.data(), ids.size()),
                                               share, bits,
                                               Span<int64_t>(counts.data(), counts.size()), &total)
                    .ok());
  } else {
    for (size_t i = 0; i < ids.size(); ++i) counts[i] = h.count(ids[i]);
    total = h.total();
  }
  std::vector<uint64_t> out(counts.begin(), counts.end());
  out.push_back(total);
  return out;
}

inline wire::Envelope envelope_of(pb_size_t tag) {
  wire::Envelope e = wire::make_envelope();
  e.which_body = tag;
  return e;
}

// Task + its TaskData chunks (≤ 64 words each); stops when the device has closed (a device may
// decline as soon as it has read the Task).
inline void send_task(client::FrameChannel& server, const fedstat_v1_Task& task,
                      const std::vector<uint64_t>& data) {
  wire::Envelope e = envelope_of(fedstat_v1_Envelope_task_tag);
  e.body.task = task;
  ASSERT_TRUE(server.send(e).ok());
  for (size_t offset = 0; offset < data.size(); offset += 64) {
    wire::Envelope d = envelope_of(fedstat_v1_Envelope_task_data_tag);
    d.body.task_data.task_id = task.task_id;
    d.body.task_data.offset = static_cast<uint32_t>(offset);
    const size_t n = std::min<size_t>(64, data.size() - offset);
    d.body.task_data.words_count = static_cast<pb_size_t>(n);
    for (size_t i = 0; i < n; ++i) d.body.task_data.words[i] = data[offset + i];
    if (!server.send(d).ok()) return;
  }
}

// MODEL_UPDATE: a small logistic-regression task.
struct ModelData : client::ClientData {
  std::vector<float> features;
  std::vector<int8_t> labels;
  size_t d = 4;
  ModelData() {
    for (int i = 0; i < 40; ++i) {
      float row[4] = {0.3f * std::sin(i * 1.f), 0.3f * std::cos(i * 2.f), 0.2f, 0.1f * (i % 3)};
      features.insert(features.end(), row, row + 4);
      labels.push_back(static_cast<int8_t>(row[0] + row[1] > 0 ? 1 : -1));
    }
  }
  Result<tasks::Examples> examples() override {
    return tasks::Examples{Span<const float>(features.data(), features.size()),
                           Span<const int8_t>(labels.data(), labels.size()), d};
  }
};

inline fedstat_v1_Task model_task(fedstat_v1_TrustModel trust) {
  fedstat_v1_Task t = task_header(13, fedstat_v1_TaskKind_MODEL_UPDATE, trust, 1, 40, 9, 32);
  t.which_parameters = fedstat_v1_Task_model_update_tag;
  auto& m = t.parameters.model_update;
  m.dimension = 4;
  m.epochs = 3;
  m.batches = 2;
  m.averaging_interval = 3;
  m.eta0 = 1;
  m.mu = 0.001;
  m.clip_norm = 1;
  m.rotate = true;
  m.gamma = 1024;
  m.beta = 0.6065306597;
  m.examples_per_client = 40;
  t.data_words = 4;
  tasks::ModelUpdateConfig c;  // only the quantiser's shape matters for D
  c.quantise.rotate = m.rotate;
  t.vector_length = static_cast<uint32_t>(quantise::encoded_length(4, c.quantise));
  return t;
}

// A DIST model-update task (3 clients, threshold 2) numbered `id` and declared at ε `epsilon`,
// its per-device Skellam λ raised until the noise of threshold shares gives at most that ε (what
// an honest server's calibration does): the device is charged exactly the declared ε.
inline fedstat_v1_Task dist_model_task(uint32_t id, double epsilon) {
  fedstat_v1_Task t = model_task(fedstat_v1_TrustModel_DIST);
  make_dist(t, 3, 2);
  t.task_id = id;
  t.epsilon = epsilon;
  while (client::device_spend(t).value().epsilon > epsilon) t.device_noise_lambda *= 2;
  return t;
}

inline tasks::ModelUpdateConfig config_of(const fedstat_v1_Task& t) {
  tasks::ModelUpdateConfig c;
  const auto& m = t.parameters.model_update;
  c.trainer = tasks::TrainerConfig{m.epochs, m.batches, m.averaging_interval, m.eta0, m.mu};
  c.quantise.clip_norm = m.clip_norm;
  c.quantise.rotate = m.rotate;
  c.quantise.rotation_seed = seed_of(t);
  c.quantise.gamma = m.gamma;
  c.quantise.beta = m.beta;
  c.quantise.modulus_bits = t.bits;
  c.examples_per_client = m.examples_per_client;
  return c;
}

inline std::vector<uint64_t> model_bits(const std::vector<double>& model) {
  std::vector<uint64_t> bits(model.size());
  std::memcpy(bits.data(), model.data(), 8 * model.size());
  return bits;
}

// MODEL_UPDATE by hand: tasks::model_update_report in 32-bit words (+ the Skellam share in DIST).
inline std::vector<uint64_t> expected_model(const fedstat_v1_Task& t,
                                            const std::vector<double>& model, ModelData& data,
                                            RandomSource& private_source) {
  std::vector<uint8_t> scratch(tasks::model_update_memory_bytes(data.labels.size(), 4) + 64);
  Arena arena(MutableByteSpan(scratch.data(), scratch.size()));
  std::vector<uint32_t> report(t.vector_length);
  noise::NoiseSampler share;
  const noise::NoiseSampler* share_ptr = nullptr;
  if (t.trust == fedstat_v1_TrustModel_DIST) {
    init_share(share, t);
    share_ptr = &share;
  }
  RandomBits bits(private_source);
  EXPECT_TRUE(tasks::model_update_report(data.examples().value(),
                                         Span<const double>(model.data(), model.size()),
                                         config_of(t), share_ptr, bits, arena,
                                         Span<uint32_t>(report.data(), report.size()))
                  .ok());
  return std::vector<uint64_t>(report.begin(), report.end());
}

// HETEROGENEITY: the app's vector x ∈ [0,1]^4, different per salt.
struct VectorData : client::ClientData {
  std::vector<double> x;
  explicit VectorData(int salt) : x{0.1 + 0.05 * salt, 0.5, 0.9 - 0.1 * salt, 0.3} {}
  Result<Span<const double>> unit_vector() override {
    return Span<const double>(x.data(), x.size());
  }
};

inline fedstat_v1_Task heterogeneity_task(fedstat_v1_TrustModel trust, uint32_t stage) {
  fedstat_v1_Task t = task_header(14, fedstat_v1_TaskKind_HETEROGENEITY, trust, 1, 25, 4, 64);
  t.which_parameters = fedstat_v1_Task_heterogeneity_tag;
  auto& h = t.parameters.heterogeneity;
  h.dimension = 4;
  h.p = 2;
  h.max_weight = 100;
  h.scale = 1000;
  h.stage = stage;
  t.vector_length = stage == 1 ? 10 : 2;
  t.data_words = stage == 1 ? 0 : 8;
  return t;
}

// The four releases' encoded sensitivities at the task's one scale.
inline std::array<privacy::Sensitivity, 4> heterogeneity_releases(const fedstat_v1_Task& t) {
  tasks::HeterogeneityConfig c;
  c.p = t.parameters.heterogeneity.p;
  c.max_weight = t.parameters.heterogeneity.max_weight;
  const double s = t.parameters.heterogeneity.scale;
  const double scales[4] = {s, s, s, s};
  std::array<privacy::Sensitivity, 4> out;
  tasks::heterogeneity_encoded_sensitivities(t.parameters.heterogeneity.dimension, c, scales,
                                             out.data());
  return out;
}

// What a ledger with δ budget `delta_budget` makes of a DIST HETEROGENEITY stage alone: the RDP
// of Sk(λ·threshold) on the stage's two releases, summed, converted at the ledger's orders.
inline double heterogeneity_stage_epsilon(const fedstat_v1_Task& t, double delta_budget) {
  const auto releases = heterogeneity_releases(t);
  const size_t first = t.parameters.heterogeneity.stage == 1 ? 0 : 2;
  double best = INFINITY;
  for (uint32_t alpha : privacy::kLedgerOrders) {
    double rdp = 0;
    for (size_t k = first; k < first + 2; ++k) {
      rdp += privacy::skellam_rdp(alpha, releases[k], t.device_noise_lambda * t.threshold).value();
    }
    best = std::min(best, privacy::rdp_to_dp(alpha, rdp, delta_budget).value());
  }
  return best;
}

// HETEROGENEITY by hand: the round's values in fixed point (+ a Skellam share each in DIST).
inline std::vector<uint64_t> expected_heterogeneity(const fedstat_v1_Task& t,
                                                    const std::vector<double>& x,
                                                    const std::vector<double>& means,
                                                    RandomSource& noise_source) {
  tasks::HeterogeneityConfig c;
  c.p = t.parameters.heterogeneity.p;
  c.max_weight = t.parameters.heterogeneity.max_weight;
  std::vector<double> values(t.vector_length);
  const Span<const double> xs(x.data(), x.size());
  if (t.parameters.heterogeneity.stage == 1) {
    EXPECT_TRUE(
        tasks::heterogeneity_round1(xs, c, Span<double>(values.data(), values.size())).ok());
  } else {
    EXPECT_TRUE(tasks::heterogeneity_round2(xs, Span<const double>(means.data(), 4),
                                            Span<const double>(means.data() + 4, 4), c,
                                            Span<double>(values.data(), values.size()))
                    .ok());
  }
  std::vector<int64_t> words(values.size());
  EXPECT_TRUE(tasks::encode_fixed_point(Span<const double>(values.data(), values.size()),
                                        t.parameters.heterogeneity.scale,
                                        Span<int64_t>(words.data(), words.size()))
                  .ok());
  if (t.trust == fedstat_v1_TrustModel_DIST) {
    noise::NoiseSampler share;
    init_share(share, t);
    RandomBits bits(noise_source);
    const std::vector<int64_t> exact = words;
    EXPECT_TRUE(noise::add_noise(Span<const int64_t>(exact.data(), exact.size()),
                                 Span<int64_t>(words.data(), words.size()), share, bits)
                    .ok());
  }
  return std::vector<uint64_t>(words.begin(), words.end());
}

}  // namespace client_test
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_CLIENT_CLIENT_TEST_SUPPORT_H_
