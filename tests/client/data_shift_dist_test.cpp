// The DIST data-shift task on the device (issue 41; contribution.h "DATA_SHIFT DIST"): its
// checks (every hostile field refused, naming it), its vector (the bucket counts, bounded to
// max_events and clamped per bucket, plus one Pólya share per bucket, mod 2^bits — compared word
// for word with the by-hand vector of client_test_support.h; that s shares sum to one discrete
// Laplace is tests/unit/sketch/hashed_histogram_test.cpp's chi-square), its ledger charge
// Δ·(1/T + ln(1/r)) (Δ = 1 item level, 2m user level) and the task policy's ε ceiling on it. The
// whole DIST round is secagg_session_test.cpp's (Kind::kDataShift). Paper: none (001 §4.7's
// setting).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "sdk/client/contribution.h"
#include "sdk/client/task_kinds.h"
#include "sdk/client/task_policy.h"
#include "sdk/sketch/hashed_histogram.h"
#include "tests/client/client_test_support.h"
#include "tests/client/scripted_server.h"

namespace fedstat {
namespace client_test {
namespace {

using client::PolicyRefusal;
using client::SessionResult;

Span<uint64_t> words(std::vector<uint64_t>& v) {
  return Span<uint64_t>(v.data(), v.size());
}

// `status` is kInvalidArgument and its message names `field`.
void expect_refused(const Status& status, const std::string& field, const std::string& what) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << what << ": " << status.message();
  EXPECT_NE(std::string(status.message()).find(field), std::string::npos)
      << what << ": '" << status.message() << "' does not name " << field;
}

TEST(DataShiftDist, AValidTaskNeedsItsBucketsAndNoScratch) {
  const fedstat_v1_Task t = data_shift_dist_task(5, 3);
  ASSERT_TRUE(client::validate_task(t).ok()) << client::validate_task(t).message();
  EXPECT_EQ(client::contribution_length(t).value(), 97u);
  EXPECT_EQ(client::scratch_bytes(t, 256).value(), 0u);
  // The Client's memory: the B words of the contribution and the roster, nothing for the data.
  EXPECT_EQ(client::Client::memory_bytes(t, 256).value(),
            8 * 97 + secagg::secagg_client_memory_bytes(5));
  fedstat_v1_Task wide = t;
  wide.bits = 64;
  EXPECT_TRUE(client::validate_task(wide).ok());
  fedstat_v1_Task largest = t;
  largest.parameters.data_shift.buckets = largest.vector_length = sketch::kMaxHashedBuckets;
  largest.parameters.data_shift.noise_scale = noise::kMaxPolyaScale;
  EXPECT_TRUE(client::validate_task(largest).ok());
}

TEST(DataShiftDist, EveryHostileFieldIsRefusedNamingIt) {
  const fedstat_v1_Task good = data_shift_dist_task(5, 3);
  struct Case {
    const char* what;
    const char* field;
    void (*spoil)(fedstat_v1_Task&);
  };
  const Case cases[] = {
      {"noise_scale NaN", "noise_scale",
       [](fedstat_v1_Task& t) {
         t.parameters.data_shift.noise_scale = std::numeric_limits<double>::quiet_NaN();
       }},
      {"noise_scale -1", "noise_scale",
       [](fedstat_v1_Task& t) { t.parameters.data_shift.noise_scale = -1; }},
      {"noise_scale 0", "noise_scale",
       [](fedstat_v1_Task& t) { t.parameters.data_shift.noise_scale = 0; }},
      {"noise_scale +inf", "noise_scale",
       [](fedstat_v1_Task& t) {
         t.parameters.data_shift.noise_scale = std::numeric_limits<double>::infinity();
       }},
      {"noise_scale 10^4 + 1", "noise_scale",
       [](fedstat_v1_Task& t) { t.parameters.data_shift.noise_scale = 10001; }},
      {"noise_scale 1e300", "noise_scale",
       [](fedstat_v1_Task& t) { t.parameters.data_shift.noise_scale = 1e300; }},
      {"noise_shares 0", "noise_shares",
       [](fedstat_v1_Task& t) { t.parameters.data_shift.noise_shares = 0; }},
      {"buckets 0", "buckets", [](fedstat_v1_Task& t) { t.parameters.data_shift.buckets = 0; }},
      {"buckets 2^22 + 1", "buckets",
       [](fedstat_v1_Task& t) {
         t.parameters.data_shift.buckets = t.vector_length = (1u << 22) + 1;
       }},
      {"rows", "rows", [](fedstat_v1_Task& t) { t.parameters.data_shift.rows = 3; }},
      {"width", "width", [](fedstat_v1_Task& t) { t.parameters.data_shift.width = 50; }},
      {"heap_capacity", "heap_capacity",
       [](fedstat_v1_Task& t) { t.parameters.data_shift.heap_capacity = 16; }},
      {"k", "k", [](fedstat_v1_Task& t) { t.parameters.data_shift.k = 64; }},
      {"domain", "domain", [](fedstat_v1_Task& t) { t.parameters.data_shift.domain = 1000; }},
      {"local_epsilon", "local_epsilon",
       [](fedstat_v1_Task& t) { t.parameters.data_shift.local_epsilon = 1; }},
      {"local_epsilon NaN", "local_epsilon",
       [](fedstat_v1_Task& t) {
         t.parameters.data_shift.local_epsilon = std::numeric_limits<double>::quiet_NaN();
       }},
      {"bits 16", "bits", [](fedstat_v1_Task& t) { t.bits = 16; }},
      {"bits 33", "bits", [](fedstat_v1_Task& t) { t.bits = 33; }},
      {"vector_length != buckets", "vector_length",
       [](fedstat_v1_Task& t) { t.vector_length = 98; }},
      {"data_words 1", "data_words", [](fedstat_v1_Task& t) { t.data_words = 1; }},
      {"device_noise_lambda", "device_noise_lambda",
       [](fedstat_v1_Task& t) { t.device_noise_lambda = 1; }},
      {"no data_shift parameters", "parameters",
       [](fedstat_v1_Task& t) { t.which_parameters = fedstat_v1_Task_kl_tag; }},
  };
  for (const Case& c : cases) {
    fedstat_v1_Task t = good;
    c.spoil(t);
    expect_refused(client::validate_task(t), c.field, c.what);
    // The builder checks the same before it touches anything.
    std::vector<uint64_t> out(t.vector_length > 1000 ? 1 : t.vector_length, 7);
    OwnedHistogram h(1);
    SeededStream stream(test_seed(5), 1);
    RandomBits bits(stream);
    EXPECT_EQ(client::build_data_shift_dist(t, h.histogram, bits, words(out)).code(),
              StatusCode::kInvalidArgument)
        << c.what;
  }
}

TEST(DataShiftDist, TheSketchPathNeitherTakesNorBuildsADistTask) {
  const fedstat_v1_Task dist = data_shift_dist_task(5, 3);
  OwnedHistogram h(1);
  SeededStream stream(test_seed(5), 1);
  RandomBits bits(stream);
  std::vector<uint64_t> out(dist.vector_length);
  std::vector<uint64_t> scratch(1024);
  expect_refused(
      client::build_data_shift(
          dist, h.histogram, bits,
          MutableByteSpan(reinterpret_cast<uint8_t*>(scratch.data()), 8 * 1024), words(out)),
      "DIST", "the sketch builder on a DIST task");
  // ... and the hashed builder no task of another trust model.
  fedstat_v1_Task trusted = dist;
  trusted.trust = fedstat_v1_TrustModel_TRUSTED;
  trusted.secagg_session = 0;
  expect_refused(client::build_data_shift_dist(trusted, h.histogram, bits, words(out)), "trust",
                 "the hashed builder on a TRUSTED task");
  // A sketch task of a DIST server (local ε, no buckets): refused, the hashed histogram is DIST's.
  fedstat_v1_Task sketch_dist = data_shift_task(fedstat_v1_TrustModel_DIST, 1.0);
  make_dist(sketch_dist, 5, 3);
  EXPECT_EQ(client::validate_task(sketch_dist).code(), StatusCode::kInvalidArgument);
  // A Client built without secure aggregation declines DIST before reading any field.
  const client::TaskKindSupport* const shift_only[] = {&client::kDataShiftKind};
  EXPECT_EQ(client::validate_task(dist, client::TaskKinds{shift_only, nullptr}).code(),
            StatusCode::kUnimplemented);
  // The sketch path is unchanged for the other trust models.
  EXPECT_TRUE(client::validate_task(data_shift_task(fedstat_v1_TrustModel_TRUSTED, 1.0)).ok());
}

// build_contribution (the Client's path) and build_data_shift_dist give the by-hand vector: the
// clamped bucket counts plus polya_share(T, s) per bucket in order, mod 2^32; the same stream
// gives the same words, another stream other shares.
TEST(DataShiftDist, TheVectorIsTheBucketCountsPlusOnePolyaSharePerBucket) {
  const fedstat_v1_Task t = data_shift_dist_task(5, 3);
  OwnedHistogram h(4);
  HistogramData app(&h.histogram);
  std::vector<uint64_t> built(t.vector_length), direct(t.vector_length), again(t.vector_length);
  {
    SeededStream stream(test_seed(9), 2);
    RandomBits bits(stream);
    ASSERT_TRUE(client::build_contribution(t, app, Span<const uint64_t>(), bits, MutableByteSpan(),
                                           words(built))
                    .ok());
  }
  {
    SeededStream stream(test_seed(9), 2);
    RandomBits bits(stream);
    ASSERT_TRUE(client::build_data_shift_dist(t, h.histogram, bits, words(direct)).ok());
  }
  CountingSource same(test_seed(9), 2);
  EXPECT_EQ(built, expected_hashed(t, h.histogram, same));
  EXPECT_EQ(built, direct);
  {
    SeededStream other(test_seed(9), 3);
    RandomBits bits(other);
    ASSERT_TRUE(client::build_data_shift_dist(t, h.histogram, bits, words(again)).ok());
  }
  EXPECT_NE(built, again);
  // Every word is a 32-bit word, and the exact part is the histogram's 60 items' events.
  const std::vector<uint64_t> counts = expected_bucket_counts(t, h.histogram);
  uint64_t events = 0;
  for (uint64_t c : counts) events += c;
  EXPECT_EQ(events, h.histogram.total());
  for (uint64_t w : built) EXPECT_LT(w, uint64_t{1} << 32);
  // The noise is there: the words are not the counts (97 independent shares all 0 is
  // impossible in practice: P(share = 0) < 0.6 each at T = 2, s = 3).
  EXPECT_NE(built, counts);
}

// A device holding N > m events adds exactly m, each drawn uniformly with replacement (the same
// stream reproduces the vector by hand). Over 200 streams the heavy bucket's kept share is
// m·K/N on average: a z-test at |z| < 5.3 (p ≈ 1e-7) on the binomial mean and variance.
TEST(DataShiftDist, MaxEventsKeepsMEventsDrawnUniformly) {
  fedstat_v1_Task t = data_shift_dist_task(5, 3);
  t.parameters.data_shift.max_events = 100;
  t.parameters.data_shift.noise_scale = 400;  // T = 2m/ε at ε = 0.5
  t.epsilon = 0.5;
  OwnedHistogram h(2);
  ASSERT_TRUE(h.histogram.add(12345, 5000).ok());
  const uint64_t n = h.histogram.total();
  ASSERT_GT(n, 100u);
  const sketch::BucketMap map(seed_of(t), t.parameters.data_shift.buckets);
  std::vector<uint64_t> out(t.vector_length);
  double sum = 0;
  const int runs = 200;
  for (int run = 0; run < runs; ++run) {
    SeededStream stream(test_seed(9), 100 + run);
    RandomBits bits(stream);
    ASSERT_TRUE(client::build_data_shift_dist(t, h.histogram, bits, words(out)).ok());
    CountingSource same(test_seed(9), 100 + run);
    ASSERT_EQ(out, expected_hashed(t, h.histogram, same));
    SeededStream again(test_seed(9), 100 + run);
    RandomBits again_bits(again);
    const std::vector<uint64_t> counts = expected_bucket_counts(t, h.histogram, &again_bits);
    uint64_t events = 0;
    for (uint64_t c : counts) events += c;
    ASSERT_EQ(events, 100u);
    sum += static_cast<double>(counts[map.bucket_of(12345)]);
  }
  // The bucket's kept events are binomial: m = 100 draws, each in the bucket with probability
  // K/N (K: item 12345's 5000 events and those of any item that shares its bucket).
  uint64_t bucket_total = 0;
  for (const auto& e : h.histogram.slots()) {
    if (e.count != 0 && map.bucket_of(e.id) == map.bucket_of(12345)) bucket_total += e.count;
  }
  const double p = static_cast<double>(bucket_total) / static_cast<double>(n);
  const double mean = 100 * p;
  const double var = 100 * p * (1 - p);
  const double z = (sum / runs - mean) / std::sqrt(var / runs);
  EXPECT_LT(std::fabs(z), 5.3) << "mean kept " << sum / runs << " expected " << mean;
  // Item level (m = 0): every event counts.
  t.parameters.data_shift.max_events = 0;
  uint64_t all = 0;
  for (uint64_t c : expected_bucket_counts(t, h.histogram)) all += c;
  EXPECT_EQ(all, n);
}

// One device's bucket never exceeds ⌊(2^(bits−1) − 1)/max_clients⌋, so max_clients devices' exact
// sums stay a positive signed word.
TEST(DataShiftDist, EachBucketIsClampedSoTheFleetsSumCannotWrap) {
  fedstat_v1_Task t = data_shift_dist_task(1024, 513);
  EXPECT_EQ(client::data_shift_dist_bucket_limit(t), ((uint64_t{1} << 31) - 1) / 1024);
  EXPECT_EQ(client::data_shift_dist_bucket_limit(t), 2097151u);
  fedstat_v1_Task wide = t;
  wide.bits = 64;
  EXPECT_EQ(client::data_shift_dist_bucket_limit(wide), uint64_t{0x7fffffffffffffff} / 1024);
  ASSERT_TRUE(client::validate_task(t).ok());
  OwnedHistogram h(3);
  ASSERT_TRUE(h.histogram.add(777, 3000000).ok());  // past the limit on its own
  std::vector<uint64_t> out(t.vector_length);
  SeededStream stream(test_seed(9), 5);
  RandomBits bits(stream);
  ASSERT_TRUE(client::build_data_shift_dist(t, h.histogram, bits, words(out)).ok());
  CountingSource same(test_seed(9), 5);
  EXPECT_EQ(out, expected_hashed(t, h.histogram, same));
  const std::vector<uint64_t> counts = expected_bucket_counts(t, h.histogram);
  const sketch::BucketMap map(seed_of(t), t.parameters.data_shift.buckets);
  EXPECT_EQ(counts[map.bucket_of(777)], 2097151u);
  // 1024 devices at the limit, and each bucket's exact sum is still below 2^31.
  EXPECT_LT(1024 * client::data_shift_dist_bucket_limit(t), uint64_t{1} << 31);
}

// ε = Δ·(1/T + ln(1/r)), r = min(1, h/s); δ the task's (pure DP).
TEST(DataShiftDist, TheDeviceIsChargedDeltaOverTPlusLnOfTheMissingShares) {
  fedstat_v1_Task t = data_shift_dist_task(5, 3);
  t.epsilon = 0.1;  // declared below what the noise gives: the device charges the noise's
  t.delta = 1e-7;
  const client::TaskKinds all = client::all_task_kinds();
  // h = threshold = s: exactly 1/T.
  client::DeviceSpend spend = client::device_spend(t).value();
  EXPECT_EQ(spend.epsilon, 0.5);
  EXPECT_EQ(spend.delta, 1e-7);
  EXPECT_FALSE(spend.has_rdp);
  // h ≥ s (fewer shares than honest devices) adds nothing.
  fedstat_v1_Task fewer = t;
  fewer.parameters.data_shift.noise_shares = 2;
  EXPECT_EQ(client::device_spend(fewer).value().epsilon, 0.5);
  // h = 1 < s = 3: 1/T + ln 3, the portable ln within an ulp of libm's.
  spend = client::device_spend(t, all, 1).value();
  EXPECT_NEAR(spend.epsilon, 0.5 + std::log(3.0), 1e-15);
  EXPECT_EQ(spend.epsilon, sketch::hashed_histogram_epsilon(0, 2, 3, 1));
  EXPECT_EQ(spend.delta, 1e-7);
  // h = 2: ln(3/2).
  EXPECT_NEAR(client::device_spend(t, all, 2).value().epsilon, 0.5 + std::log(1.5), 1e-15);
  // User level: Δ = 2m = 200 (any two histograms of the device), T = 400: 200/400 with every
  // share honest, 200·(1/400 + ln 3) not.
  fedstat_v1_Task user = t;
  user.parameters.data_shift.max_events = 100;
  user.parameters.data_shift.noise_scale = 400;
  EXPECT_EQ(client::device_spend(user).value().epsilon, 0.5);
  EXPECT_NEAR(client::device_spend(user, all, 1).value().epsilon, 200 * (0.0025 + std::log(3.0)),
              1e-12);
  // A subnormal T passes the field checks (finite, > 0) but gives no finite ε: refused.
  fedstat_v1_Task tiny = t;
  tiny.parameters.data_shift.noise_scale = std::numeric_limits<double>::denorm_min();
  expect_refused(client::device_spend(tiny).status(), "noise_scale", "a subnormal T");
  // Declared above the noise's ε: the declaration is charged.
  fedstat_v1_Task declared = t;
  declared.epsilon = 2;
  EXPECT_EQ(client::device_spend(declared).value().epsilon, 2);
}

// A device's user-level charge covers ANY two histograms it might hold (the server sees that it
// took part in the round; what the charge protects is what it held), the relation the SDK's other
// device-level charges use (a model update's min(‖x − x′‖, 2c), quantise.h; KL's substitution,
// kl_answer_task.h). Two histograms of more than m events, each bounded to m events in one
// bucket, are 2m apart in L1 — one device's m events moved from one bucket to another — and
// with every share honest the sum's privacy loss between them is exactly 2m/T (the discrete
// Laplace's; tight). Every bounded output holds exactly m events, so any two inputs — one event
// added, or all of them replaced — and any two outcomes of the bound's draws are at most 2m apart.
TEST(DataShiftDist, TheUserLevelChargeCoversAnyTwoHistogramsOfOneDevice) {
  constexpr uint32_t kM = 4;
  constexpr double kT = 8;
  fedstat_v1_Task t = data_shift_dist_task(5, 3);
  t.parameters.data_shift.max_events = kM;
  t.parameters.data_shift.noise_scale = kT;
  t.epsilon = 0.01;  // below the noise's: the device charges the noise's ε
  const double charged = client::device_spend(t).value().epsilon;
  const sketch::BucketMap map(seed_of(t), t.parameters.data_shift.buckets);
  uint64_t other = 2;
  while (map.bucket_of(other) == map.bucket_of(1)) ++other;
  // The bounded vector's words without noise (the by-hand exact part, checked against the
  // builder's whole vector on the same stream), for two draws of the bound's coins each.
  auto vector_of = [&](const std::vector<std::pair<uint64_t, uint32_t>>& items, uint64_t coins) {
    std::vector<histogram::SparseEntry> table(16);
    histogram::SparseHistogram h;
    EXPECT_TRUE(h.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok());
    for (const auto& item : items) EXPECT_TRUE(h.add(item.first, item.second).ok());
    std::vector<uint64_t> out(t.vector_length);
    SeededStream stream(test_seed(9), coins);
    RandomBits bits(stream);
    EXPECT_TRUE(client::build_data_shift_dist(t, h, bits, words(out)).ok());
    CountingSource same(test_seed(9), coins);
    EXPECT_EQ(out, expected_hashed(t, h, same));
    SeededStream again(test_seed(9), coins);
    RandomBits again_bits(again);
    return expected_bucket_counts(t, h, &again_bits);
  };
  auto l1 = [](const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
    uint64_t d = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      const int32_t w = static_cast<int32_t>(static_cast<uint32_t>(a[i] - b[i]));
      d += static_cast<uint64_t>(w < 0 ? -int64_t{w} : int64_t{w});
    }
    return d;
  };
  // One event added: at most 2m, whatever the draws (20 pairs of coin streams).
  for (uint64_t coins = 0; coins < 20; ++coins) {
    const uint64_t added = l1(vector_of({{1, 2}, {2, 2}, {3, 2}, {4, 2}}, 6 + coins),
                              vector_of({{1, 2}, {2, 2}, {3, 2}, {4, 2}, {5, 1}}, 60 + coins));
    EXPECT_LE(added, 2 * kM);
    EXPECT_LE(added / kT, charged * (1 + 1e-12)) << "one event added";
  }
  // Another histogram of the same device: 2m.
  const uint64_t replaced = l1(vector_of({{1, 10}}, 6), vector_of({{other, 10}}, 6));
  EXPECT_EQ(replaced, 2 * kM);
  EXPECT_LE(replaced / kT, charged * (1 + 1e-12))
      << "the device's m events moved to another bucket cost 2m/T = " << replaced / kT
      << ", charged " << charged;
}

class DataShiftDistPolicyTest : public StorageTest {};

// The entropy source fails half-way through the Pólya shares (after the charge): the session
// fails, and the contribution — exact bucket counts in every bucket not yet noised — does not
// stay in the device's memory (as drop_pending wipes a pending report; the builders' scratch is
// wiped too). A distinctive count in the last bucket is looked for in the whole caller memory.
TEST_F(DataShiftDistPolicyTest, AFailedBuildLeavesNoExactCountsInMemory) {
  const fedstat_v1_Task t = data_shift_dist_task(5, 3);
  const sketch::BucketMap map(seed_of(t), t.parameters.data_shift.buckets);
  uint64_t last = 1;
  while (map.bucket_of(last) != t.parameters.data_shift.buckets - 1) ++last;
  constexpr uint32_t kMarked = 0x13579BDF;  // below the clamp ⌊(2^31 − 1)/5⌋ = 0x19999999
  std::vector<histogram::SparseEntry> table(8);
  histogram::SparseHistogram h;
  ASSERT_TRUE(h.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok());
  ASSERT_TRUE(h.add(last, kMarked).ok());
  HistogramData data(&h);
  Device device(32, 1 << 16, data, /*budget=*/1000);
  device.random->fail_after = 256;  // the shares of the first buckets, not all 97
  const Session s = run(device, t, {});
  EXPECT_FALSE(s.outcome.ok());
  EXPECT_EQ(s.outcome.status().code(), StatusCode::kUnavailable) << s.outcome.status().message();
  EXPECT_EQ(device.spent(), 0.5);  // charged before the build: the build did start
  size_t found = 0;
  for (uint64_t word : device.memory) found += word == kMarked ? 1 : 0;
  EXPECT_EQ(found, 0u) << "the un-noised count of the last bucket is still in the device's memory";
}

// A DIST data-shift task declared within the ceiling whose noise gives more (T = 0.05: ε = 20) is
// declined POLICY before anything is charged, drawn or sent.
TEST_F(DataShiftDistPolicyTest, TheEpsilonCeilingRefusesAnOverBudgetTask) {
  OwnedHistogram h(1);
  HistogramData data(&h.histogram);
  Device device(31, 1 << 16, data, /*budget=*/1000);
  fedstat_v1_Task t = data_shift_dist_task(5, 3);
  t.parameters.data_shift.noise_scale = 0.05;
  ASSERT_LT(t.epsilon, client::TaskPolicy().max_epsilon);
  ASSERT_GT(client::device_spend(t).value().epsilon, client::TaskPolicy().max_epsilon);
  const Session s = run(device, t, {});
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kDeclinedPolicy);
  EXPECT_EQ(s.outcome.value().policy_refusal, PolicyRefusal::kEpsilonAboveMax);
  EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_POLICY);
  EXPECT_TRUE(s.seen.report.empty());
  EXPECT_EQ(device.spent(), 0);
  EXPECT_EQ(device.random->drawn, 0u);
  // At the assumed-honest floor of one share the same ceiling refuses a task that is fine at s.
  client::TaskPolicy policy;
  policy.max_epsilon = 1;
  policy.assumed_honest_shares = 1;
  const fedstat_v1_Task fine = data_shift_dist_task(5, 3);  // ε = 0.5 at h = s, 0.5 + ln 3 at h = 1
  const client::PolicyCharge charge = client::policy_charge(
      client::device_spend(fine, client::all_task_kinds(), 1).value(), fine.delta);
  EXPECT_EQ(client::check_task_policy(policy, fedstat_v1_TrustModel_DIST, charge),
            PolicyRefusal::kEpsilonAboveMax);
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
