// The privacy audit of every released mechanism (label `privacy`): for each, audit.h's
// distinguishing experiment on WORST-CASE neighbouring inputs, with fixed seeds, must not find
// an ε lower bound above the ε the code claims; and for each, a NEGATIVE CONTROL (the same
// harness on a deliberately mis-calibrated variant: noise a third of what the claim needs) must
// find one, which proves the audit can fail.
//
// Thresholds. Every audit fails a correct mechanism with probability ≤ 1e-6 over the choice of
// seed (audit::kConfidence, Bonferroni over its rejection sets, see audit.h); the seeds are
// fixed, so a build always passes or always fails. The negative controls' margins and the
// tightness checks below (lower bound close to a claim known to be exact) are derived from the
// exact output distributions at these sample sizes, as each comment says.
//
// Sample counts are multiplied by FEDSTAT_AUDIT_SCALE (scripts/privacy_audit.sh --long uses 10).
// Each audit prints "audit <mechanism>: epsilon lower bound X (claimed Y), N samples; ..." and
// records epsilon_lower_bound, claimed_epsilon and samples as test properties.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "host_server/estimate/gaussian_noise.h"
#include "host_server/estimate/hashed_tv.h"
#include "sdk/base/arena.h"
#include "sdk/client/contribution.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/discrete_gaussian.h"
#include "sdk/noise/discrete_laplace.h"
#include "sdk/noise/tabulated_poisson.h"
#include "sdk/privacy/accountants.h"
#include "sdk/quantise/quantise.h"
#include "sdk/secagg/graph_parameters.h"
#include "sdk/sketch/hashed_histogram.h"
#include "sdk/sketch/stability_histogram.h"
#include "sdk/tasks/model_update_task.h"
#include "tests/privacy_audit/audit.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace {

using noise::testing_util::SeededBits;
using testing::audit::AuditResult;
using testing::audit::Sampler;

// Streams of the fixed test seed: one per sampler, none shared with another test.
constexpr uint64_t kStreamBase = 0xA0D17000;

double scale_or_fail() {
  const double scale = testing::audit::audit_scale();
  EXPECT_GT(scale, 0) << "FEDSTAT_AUDIT_SCALE must be a number in [1, 10000]";
  return scale > 0 ? scale : 1;
}

uint64_t scaled(uint64_t samples) {
  return testing::audit::scaled(samples, scale_or_fail());
}

void report(const std::string& mechanism, const AuditResult& r) {
  std::printf("%s\n", r.summary(mechanism).c_str());
  std::fflush(stdout);
  ::testing::Test::RecordProperty("epsilon_lower_bound", std::to_string(r.epsilon_lower_bound));
  ::testing::Test::RecordProperty("claimed_epsilon", std::to_string(r.claimed_epsilon));
  ::testing::Test::RecordProperty("delta_lower_bound", std::to_string(r.delta_lower_bound));
  ::testing::Test::RecordProperty("samples", std::to_string(r.samples));
}

// The audit's verdict, printed either way: the lower bound stays within the claim (a mechanism) or
// exceeds it (a negative control, proving the audit has the power to see a broken mechanism).
void expect_within_claim(const std::string& mechanism, const AuditResult& r) {
  report(mechanism, r);
  EXPECT_FALSE(r.exceeds_claim()) << r.summary(mechanism);
}
void expect_exceeds_claim(const std::string& mechanism, const AuditResult& r) {
  report(mechanism, r);
  EXPECT_TRUE(r.exceeds_claim()) << r.summary(mechanism);
}

double failed_draw(const Status& s) {
  ADD_FAILURE() << "sampler failed: " << s.message();
  return std::nan("");
}

// ---- 1. Discrete Laplace on a count ------------------------------------------------------
// M(c) = c + Z, Z = noise::discrete_laplace(T): neighbours c and c + 1 (a count's sensitivity).
// Claimed ε = privacy::discrete_laplace_epsilon(T, 1) = 1/T.

Sampler laplace_count(int64_t count, noise::Rational scale, uint64_t stream) {
  auto bits = std::make_shared<SeededBits>(kStreamBase + stream);
  return [bits, count, scale]() -> double {
    const Result<int64_t> z = noise::discrete_laplace(bits->bits, scale);
    if (!z.ok()) return failed_draw(z.status());
    return static_cast<double>(count + z.value());
  };
}

constexpr noise::Rational kLaplaceScale{5, 4};  // T = 1.25: ε = 0.8
constexpr uint64_t kLaplaceCalibration = 20000;
constexpr uint64_t kLaplaceSamples = 200000;

AuditResult audit_laplace(noise::Rational scale, uint64_t stream) {
  const double claimed = privacy::discrete_laplace_epsilon(kLaplaceScale.to_double(), 1).value();
  return testing::audit::audit_calibrated(laplace_count(10, scale, stream),
                                          laplace_count(11, scale, stream + 1), claimed, 0,
                                          scaled(kLaplaceCalibration), scaled(kLaplaceSamples));
}

TEST(PrivacyAudit, DiscreteLaplaceCount) {
  const AuditResult r = audit_laplace(kLaplaceScale, 10);
  expect_within_claim("discrete Laplace (T = 5/4, count 10 vs 11)", r);
  // The claim is exact: P[c + 1 + Z ≥ c + 1] / P[c + Z ≥ c + 1] = e^(1/T). At 2·10^5 samples per
  // input the Clopper–Pearson bounds (α = 1.25e-7 each) sit within ~0.02 of it (0.775 expected),
  // so a bound below 0.9·ε would mean the harness (or the sampler) lost power.
  EXPECT_GT(r.epsilon_lower_bound, 0.9 * r.claimed_epsilon) << r.summary("discrete Laplace");
}

TEST(PrivacyAudit, NegativeControlDiscreteLaplaceThirdOfTheScale) {
  // T/3 = 5/12 has true ε = 2.4 against the claimed 0.8; the expected bound is ~2.36.
  const AuditResult r = audit_laplace(noise::Rational{5, 12}, 20);
  expect_exceeds_claim("negative control: discrete Laplace at T/3 = 5/12", r);
}

// ---- 2. Stability-based local-DP histogram ------------------------------------------------
// sketch::stability_histogram with sketch::stability_params(ε, δ). The output is the whole noisy
// histogram; the audit looks at one item's released count (0 when the item is not released), a
// post-processing, so its bound is valid for the histogram. Neighbours differ by one in that
// item's count: c vs c + 1 far above the bound B (the ε-part), absent vs present once (the
// δ-part: the item is released only if its noise is +B, the event a neighbour cannot produce),
// and B vs B + 1 (at the cut, where the dropping matters).

constexpr double kStabilityEpsilon = 1.0;
constexpr double kStabilityDelta = 1e-2;  // large enough to measure: B = 4, δ = 0.0085
constexpr uint64_t kStabilityCalibration = 20000;
constexpr uint64_t kStabilitySamples = 200000;
constexpr uint32_t kItem = 7;

// count 0: the item is absent from the client's histogram.
Sampler stability_item(uint32_t count, sketch::StabilityParams params, uint64_t stream) {
  struct State {
    explicit State(uint64_t s) : bits(s) {}
    SeededBits bits;
    histogram::SparseEntry in_table[4], out_table[4];
    histogram::SparseHistogram in, out;
  };
  auto state = std::make_shared<State>(kStreamBase + stream);
  EXPECT_TRUE(state->in.init(Span<histogram::SparseEntry>(state->in_table)).ok());
  EXPECT_TRUE(state->out.init(Span<histogram::SparseEntry>(state->out_table)).ok());
  if (count > 0) {
    EXPECT_TRUE(state->in.add(kItem, count).ok());
  }
  return [state, params]() -> double {
    const Status s = sketch::stability_histogram(state->in, params, state->bits.bits, state->out);
    if (!s.ok()) return failed_draw(s);
    return static_cast<double>(state->out.count(kItem));
  };
}

sketch::StabilityParams claimed_stability_params() {
  const Result<sketch::StabilityParams> p =
      sketch::stability_params(kStabilityEpsilon, kStabilityDelta);
  EXPECT_TRUE(p.ok());
  return p.value();
}

AuditResult audit_stability(uint32_t count_d, uint32_t count_d_prime,
                            const sketch::StabilityParams& used, uint64_t stream) {
  const sketch::StabilityParams claim = claimed_stability_params();
  // The ε the parameters claim is 1/T of the claimed scale (T ≥ 1/ε after rounding up).
  const double claimed_epsilon =
      privacy::discrete_laplace_epsilon(claim.scale.to_double(), 1).value();
  return testing::audit::audit_calibrated(
      stability_item(count_d, used, stream), stability_item(count_d_prime, used, stream + 1),
      claimed_epsilon, claim.delta, scaled(kStabilityCalibration), scaled(kStabilitySamples));
}

TEST(PrivacyAudit, StabilityHistogramCountsAboveTheBound) {
  const sketch::StabilityParams p = claimed_stability_params();
  const AuditResult r = audit_stability(100, 101, p, 30);
  expect_within_claim("stability histogram (eps 1, delta 1e-2: count 100 vs 101)", r);
  // Exact here too: (P[101 + Z ≥ 101] − δ) / P[100 + Z ≥ 101] = e^(1/T) for the truncated Z;
  // expected bound ~0.974 at 2·10^5 samples.
  EXPECT_GT(r.epsilon_lower_bound, 0.9 * r.claimed_epsilon) << r.summary("stability histogram");
}

TEST(PrivacyAudit, StabilityHistogramAbsentVersusPresentOnce) {
  const sketch::StabilityParams p = claimed_stability_params();
  const AuditResult r = audit_stability(1, 0, p, 40);
  expect_within_claim("stability histogram (eps 1, delta 1e-2: item absent vs present once)", r);
  // The δ claim is exact as well: P[released | present once] = P[Z = B] = δ. At 2·10^5 samples
  // the proven δ is ~0.0073 of the claimed 0.0085; below half of it the harness lost power.
  EXPECT_GT(r.delta_lower_bound, 0.5 * r.claimed_delta) << r.summary("stability histogram");
}

TEST(PrivacyAudit, StabilityHistogramAtTheCut) {
  const sketch::StabilityParams p = claimed_stability_params();
  const AuditResult r =
      audit_stability(static_cast<uint32_t>(p.bound), static_cast<uint32_t>(p.bound + 1), p, 50);
  expect_within_claim("stability histogram (eps 1, delta 1e-2: count B vs B + 1)", r);
}

TEST(PrivacyAudit, NegativeControlStabilityHistogramThirdOfTheScale) {
  // Scale T/3 with the claimed bound: true ε = 3 against the claimed 1 (expected bound ~2.94).
  sketch::StabilityParams wrong = claimed_stability_params();
  wrong.scale = noise::reduced(noise::Rational{wrong.scale.num, 3 * wrong.scale.den});
  const AuditResult r = audit_stability(100, 101, wrong, 60);
  expect_exceeds_claim("negative control: stability histogram at T/3, count 100 vs 101", r);
}

TEST(PrivacyAudit, NegativeControlStabilityHistogramBoundOneTooSmall) {
  // B − 1 (an off-by-one in the bound) releases a single occurrence with probability
  // P[Z = B − 1] = 0.024 at B − 1, against the claimed δ = 0.0085; the other input never
  // releases it, so the expected bound is ~5. (The SDK refuses params whose δ is below what
  // their bound gives, so the wrong params state their own δ honestly; the audit holds them to
  // the claim the caller wanted.)
  sketch::StabilityParams wrong = claimed_stability_params();
  wrong.bound -= 1;
  wrong.delta =
      privacy::truncated_discrete_laplace_delta(wrong.scale.to_double(), wrong.bound, 1).value();
  const AuditResult r = audit_stability(1, 0, wrong, 70);
  expect_exceeds_claim(
      "negative control: stability histogram with bound B - 1, absent vs present once", r);
}

// ---- 3. Skellam shares, summed (distributed DP) ---------------------------------------------
// n clients each add Sk(λ) (noise::NoiseSampler, kSkellam, through noise::add_noise) to their
// counts; only the sum is released (secure aggregation). Neighbours: client 0's count differs by
// one. Claimed ε = privacy::skellam_epsilon(λ, n, {1, 1}, δ) = 0.924 for n = 10, λ = 1, δ = 1e-5
// (a Rényi-DP bound: the exact ε of Sk(10) at that δ is 0.76, and a threshold test with 2·10^5
// samples proves ~0.4, so no tightness check here; the negative controls show the power).

constexpr uint32_t kClients = 10;
constexpr noise::Rational kSkellamLambda{1, 1};  // per client: the sum carries Sk(10)
constexpr double kSkellamDelta = 1e-5;
constexpr uint64_t kSkellamCalibration = 20000;
constexpr uint64_t kSkellamSamples = 200000;

// Client i's share comes from noise::NoiseSampler (integer PoissonSampler) through
// noise::add_noise, or, with `tabulated`, from noise::TabulatedSkellamSampler (fedstat-noise's
// default sampler).
Sampler skellam_sum(int64_t first_count, noise::Rational lambda, bool tabulated, uint64_t stream,
                    uint32_t clients = kClients) {
  struct Client {
    explicit Client(uint64_t s) : bits(s) {}
    SeededBits bits;  // each client's own random source
    int64_t count = 2;
    noise::TabulatedSkellamSampler table_sampler;
    std::vector<noise::PoissonThreshold> table;
    std::vector<uint64_t> scratch;
  };
  struct State {
    noise::NoiseSampler noise;
    std::vector<std::unique_ptr<Client>> clients;
  };
  auto state = std::make_shared<State>();
  EXPECT_TRUE(state->noise.init(noise::NoiseSpec{noise::NoiseKind::kSkellam, lambda, 1}).ok());
  const auto sizes = noise::TabulatedSkellamSampler::sizes_for(lambda);
  EXPECT_TRUE(sizes.ok());
  for (uint32_t i = 0; i < clients; ++i) {
    state->clients.push_back(std::make_unique<Client>(kStreamBase + stream + 1000 * i));
    Client& c = *state->clients.back();
    if (i == 0) c.count = first_count;
    if (tabulated) {
      c.table.resize(sizes.value().table_entries);
      c.scratch.resize(sizes.value().scratch_limbs);
      EXPECT_TRUE(c.table_sampler
                      .init(lambda, Span<noise::PoissonThreshold>(c.table.data(), c.table.size()),
                            Span<uint64_t>(c.scratch.data(), c.scratch.size()))
                      .ok());
    }
  }
  return [state, tabulated]() -> double {
    int64_t sum = 0;
    for (const std::unique_ptr<Client>& c : state->clients) {
      int64_t noised = 0;
      if (tabulated) {
        const Result<int64_t> z = c->table_sampler.sample(c->bits.bits);
        if (!z.ok()) return failed_draw(z.status());
        noised = c->count + z.value();
      } else {
        const Status s = noise::add_noise(Span<const int64_t>(&c->count, 1),
                                          Span<int64_t>(&noised, 1), state->noise, c->bits.bits);
        if (!s.ok()) return failed_draw(s);
      }
      sum += noised;
    }
    return static_cast<double>(sum);
  };
}

AuditResult audit_skellam(noise::Rational lambda, bool tabulated, uint64_t stream) {
  const double claimed = privacy::skellam_epsilon(kSkellamLambda.to_double(), kClients,
                                                  privacy::Sensitivity{1, 1}, kSkellamDelta)
                             .value()
                             .epsilon;
  return testing::audit::audit_calibrated(
      skellam_sum(3, lambda, tabulated, stream), skellam_sum(4, lambda, tabulated, stream + 1),
      claimed, kSkellamDelta, scaled(kSkellamCalibration), scaled(kSkellamSamples));
}

TEST(PrivacyAudit, SkellamSharesSummed) {
  const AuditResult r = audit_skellam(kSkellamLambda, false, 80);
  expect_within_claim("Skellam shares summed (10 clients, lambda 1, delta 1e-5: count 3 vs 4)", r);
}

TEST(PrivacyAudit, NegativeControlSkellamThirdOfTheNoise) {
  // λ/9 per client (a third of the standard deviation): the claim of λ stays ~0.92, the
  // distinguishing bound at 2·10^5 samples is ~1.24 (computed from the exact Sk(10/9) pmf).
  const AuditResult r = audit_skellam(noise::Rational{1, 9}, false, 90);
  expect_exceeds_claim("negative control: Skellam shares at lambda/9", r);
}

TEST(PrivacyAudit, SkellamSharesSummedTabulated) {
  const AuditResult r = audit_skellam(kSkellamLambda, true, 100);
  expect_within_claim("Skellam shares summed, tabulated sampler (10 clients, lambda 1, delta 1e-5)",
                      r);
}

TEST(PrivacyAudit, NegativeControlSkellamTabulatedThirdOfTheNoise) {
  const AuditResult r = audit_skellam(noise::Rational{1, 9}, true, 110);
  expect_exceeds_claim("negative control: Skellam shares, tabulated sampler at lambda/9", r);
}

// ---- 3b. The sparse graph (SecAgg+): what a device of a sparse DIST task is charged ----------
// A KL task of one query point in a round of 100 devices with SecAgg+'s sparse graph: (k, t) =
// (16, 11) from the bound at 5 % / 5 % (sdk/secagg/graph_parameters.h). The device is charged
// (contribution.h, device_spend) for t honest Skellam shares in the released sum — t of its own
// neighbourhood are in U3 whenever it reveals — at the task's δ plus 2^−40 (the graph's failure
// probability). The audit runs exactly what that guarantees: t devices' counts with their
// Sk(λ) shares, summed; neighbours: the first device's count 3 vs 4 (one point's sensitivity 1).
// The negative control charges the same noise as a complete graph of 300 devices would be
// charged (threshold 151 shares in the sum): a claim for 13.7× the variance the sum has, which
// the audit must catch (the accountant's ε at 151 shares is below the task's declared ε = 1, so
// the charge is 1; the threshold test on 11 shares proves about 1.2 at 10^5 samples). Each
// audit draws 10^5 samples a side (11 shares each): half the other Skellam audits' count, for
// CI time; the Clopper–Pearson bounds hold at any count.

constexpr uint32_t kSparseFleet = 100;
constexpr noise::Rational kSparseLambda{1, 11};  // the t = 11 shares carry Sk(1)

// What a device is charged for a sparse (degree ≠ 0) or complete KL task at kSparseLambda.
client::DeviceSpend sparse_kl_charge(uint32_t degree, uint32_t threshold,
                                     uint32_t fleet = kSparseFleet) {
  fedstat_v1_Task t = fedstat_v1_Task_init_zero;
  t.task_id = 40;
  t.kind = fedstat_v1_TaskKind_KL_ANSWERS;
  t.trust = fedstat_v1_TrustModel_DIST;
  t.epsilon = 1;
  t.delta = kSkellamDelta;
  t.device_noise_lambda = kSparseLambda.to_double();
  t.seed.size = 32;
  t.bits = 64;
  t.min_clients = threshold;
  t.max_clients = fleet;
  t.threshold = threshold;
  t.secagg_session = 0x5eca99;
  t.secagg_degree = degree;
  t.secagg_dropout_ppm = degree == 0 ? 0 : 50000;
  t.secagg_corrupt_ppm = degree == 0 ? 0 : 50000;
  t.which_parameters = fedstat_v1_Task_kl_tag;
  t.parameters.kl.points = 1;
  t.data_words = 1;
  t.vector_length = 2;
  const Result<client::DeviceSpend> spend = client::device_spend(t);
  EXPECT_TRUE(spend.ok()) << spend.status().message();
  return spend.ok() ? spend.value() : client::DeviceSpend();
}

AuditResult audit_sparse_charge(const client::DeviceSpend& claim, uint64_t stream) {
  const auto graph = secagg::choose_sparse_graph(kSparseFleet, secagg::SecAggThreatModel());
  EXPECT_TRUE(graph.ok());
  const uint32_t t = graph.ok() ? graph.value().threshold : 0;
  return testing::audit::audit_calibrated(skellam_sum(3, kSparseLambda, false, stream, t),
                                          skellam_sum(4, kSparseLambda, false, stream + 1, t),
                                          claim.epsilon, claim.delta, scaled(kSkellamCalibration),
                                          scaled(kSkellamSamples / 2));
}

TEST(PrivacyAudit, SparseGraphChargeHoldsForItsThresholdsShares) {
  const auto graph = secagg::choose_sparse_graph(kSparseFleet, secagg::SecAggThreatModel());
  ASSERT_TRUE(graph.ok());
  ASSERT_EQ(graph.value().degree, 16u);
  ASSERT_EQ(graph.value().threshold, 11u);
  const client::DeviceSpend charged = sparse_kl_charge(16, 11);
  EXPECT_EQ(charged.delta, kSkellamDelta + client::kSparseGraphFailureDelta);
  const AuditResult r = audit_sparse_charge(charged, 120);
  expect_within_claim("sparse graph: 11 Skellam shares at the charge of a (k 16, t 11) task", r);
}

TEST(PrivacyAudit, NegativeControlSparseGraphChargedAsTheCompleteGraph) {
  const client::DeviceSpend complete = sparse_kl_charge(0, 151, 300);
  const AuditResult r = audit_sparse_charge(complete, 130);
  expect_exceeds_claim(
      "negative control: the sparse graph's 11 shares charged as a complete "
      "graph's 151",
      r);
}

// ---- 3c. The DIST data-shift histogram: Pólya shares summed ---------------------------------
// s devices each fold their items into B public buckets (sketch::add_bucket_counts, with the
// user-level bound max_events = m when m > 0), add one Pólya share per bucket
// (sketch::add_polya_shares: NB(1/s, e^{−1/T}) − NB(1/s, e^{−1/T})) and reduce each word modulo
// 2^32 (the task's bits); the server sums the words modulo 2^32 and reads them as signed
// (host::signed_sum). The audit reads the bucket of the item the neighbours differ in (a
// post-processing of the released vector; the other buckets' noise is independent of it).
// Claim (docs/data_shift_dp.md): with all s shares in the sum the bucket carries exactly one
// discrete Laplace(T), so ε = Δ/T — privacy::discrete_laplace_epsilon(T, Δ) — with Δ = 1 for
// one event (item level: count 3 vs 4) and Δ = m for one device's events bounded to m moving one
// observed bucket (user level, group privacy: device 0 holds no events vs 3 of the item, of which
// the bound m = 2 keeps exactly 2, the released bucket moving by m). The device charges 2m/T at
// user level (hashed_histogram_epsilon: two histograms of a bounded device are 2m apart, m events
// leaving one bucket for another); this audit observes one bucket, whose step of m is half of
// that, so its claim is the one bucket's m/T. Both claims are exact (the test {y ≥ c + Δ}),
// so the audits are also checked for tightness. With fewer honest shares than the split (r = h/s
// < 1) the claim is Δ·(1/T + ln(1/r)): one of the s shares, held to r = 1/s, must stay within it
// (and close to it). Negative controls: one of the s shares in the sum held to the all-shares
// claim 1/T (NB(1/s) − NB(1/s): true ε up to 1/T + ln s, approached at {y ≥ c + 1}), and the device
// skipping the bound (max_events 0: 3 events, true ε = 3/T = 4.5 against the claimed m/T = 3).
// Cost: every sample draws 2·s·B negative binomials, so s = 4 devices, B = 2 buckets and 10^5
// samples (half the other audits') keep each audit to 2–25 s in ASan (~55 s of CPU for the five).

constexpr uint32_t kDsDevices = 4;
constexpr uint32_t kDsBuckets = 2;
constexpr uint32_t kDsItem = 12345;
constexpr uint64_t kDsCalibration = 10000;
constexpr uint64_t kDsSamples = 100000;
constexpr uint32_t kDsBits = 32;

struct DataShiftCase {
  noise::Rational scale;     // T of every share
  uint32_t shares = 0;       // s: the split each device's share assumes
  uint32_t devices = 0;      // devices whose shares are summed
  uint32_t max_events = 0;   // m (0: item level, no bound)
  uint32_t first_count = 0;  // device 0's count of kDsItem (its other item: 10 events)
};

Sampler data_shift_bucket(const DataShiftCase& c, uint64_t stream) {
  struct Device {
    explicit Device(uint64_t s) : bits(s) {}
    SeededBits bits;
    histogram::SparseEntry table[4];
    histogram::SparseHistogram local;
  };
  struct State {
    explicit State(const Seed256& seed) : map(seed, kDsBuckets) {}
    sketch::BucketMap map;
    std::vector<std::unique_ptr<Device>> devices;
    std::vector<uint64_t> vector, sum;
    uint32_t bucket = 0;
  };
  Seed256 task_seed;
  for (int i = 0; i < 32; ++i) task_seed.bytes[i] = static_cast<uint8_t>(0x3C + 7 * i);
  auto state = std::make_shared<State>(task_seed);
  state->bucket = state->map.bucket_of(kDsItem);
  state->vector.resize(kDsBuckets);
  state->sum.resize(kDsBuckets);
  for (uint32_t i = 0; i < c.devices; ++i) {
    state->devices.push_back(std::make_unique<Device>(kStreamBase + stream + 1000 * i));
    Device& d = *state->devices.back();
    EXPECT_TRUE(d.local.init(Span<histogram::SparseEntry>(d.table)).ok());
    // Device 0 holds first_count events of kDsItem and nothing else (so a bound cuts them to
    // exactly m); the others 2 of it and 10 of another item (whichever bucket that hashes to).
    if (i == 0) {
      if (c.first_count > 0) {
        EXPECT_TRUE(d.local.add(kDsItem, c.first_count).ok());
      }
    } else {
      EXPECT_TRUE(d.local.add(kDsItem, 2).ok());
      EXPECT_TRUE(d.local.add(kDsItem + 1, 10).ok());
    }
  }
  return [state, c]() -> double {
    std::fill(state->sum.begin(), state->sum.end(), 0);
    const uint64_t mask = (uint64_t{1} << kDsBits) - 1;
    for (const std::unique_ptr<Device>& d : state->devices) {
      std::fill(state->vector.begin(), state->vector.end(), 0);
      Span<uint64_t> out(state->vector.data(), state->vector.size());
      const Status counted =
          sketch::add_bucket_counts(state->map, d->local, c.max_events, d->bits.bits, out);
      if (!counted.ok()) return failed_draw(counted);
      const Status noised = sketch::add_polya_shares(c.scale, c.shares, d->bits.bits, out);
      if (!noised.ok()) return failed_draw(noised);
      for (size_t b = 0; b < kDsBuckets; ++b) {
        state->sum[b] = (state->sum[b] + (state->vector[b] & mask)) & mask;
      }
    }
    return static_cast<double>(host::signed_sum(state->sum, kDsBits)[state->bucket]);
  };
}

constexpr noise::Rational kDsItemScale{1, 3};  // T = 1/3: ε = 3, the item level
constexpr noise::Rational kDsUserScale{2, 3};  // T = m/ε with m = 2, ε = 3

// The claim ε = Δ·(1/T + ln(1/r)) with r = min(1, h/s) of the h honest shares the claim assumes
// (honest_fraction = r; 1: all s shares).
AuditResult audit_data_shift(DataShiftCase d, DataShiftCase d_prime, double delta_events,
                             noise::Rational claimed_scale, uint64_t stream,
                             double honest_fraction = 1) {
  const double claimed =
      privacy::discrete_laplace_epsilon(claimed_scale.to_double(), delta_events).value() +
      delta_events * std::log(1 / honest_fraction);
  return testing::audit::audit_calibrated(data_shift_bucket(d, stream),
                                          data_shift_bucket(d_prime, stream + 1), claimed, 0,
                                          scaled(kDsCalibration), scaled(kDsSamples));
}

DataShiftCase item_case(uint32_t count, uint32_t devices = kDsDevices) {
  return DataShiftCase{kDsItemScale, kDsDevices, devices, 0, count};
}

TEST(PrivacyAudit, DataShiftPolyaSharesItemLevel) {
  const AuditResult r = audit_data_shift(item_case(3), item_case(4), 1, kDsItemScale, 180);
  expect_within_claim("data shift DIST, 4 Polya shares summed (T = 1/3, count 3 vs 4)", r);
  // Exact claim: P[Z ≥ 0]/P[Z ≥ 1] = 1/ρ = e^3 for the discrete Laplace; P[Z ≥ 1] = 0.047
  // gives ~4,700 hits at 10^5 samples, so the bound sits within ~0.1 of 3 (expected ~2.9).
  EXPECT_GT(r.epsilon_lower_bound, 0.9 * r.claimed_epsilon) << r.summary("data shift DIST");
}

TEST(PrivacyAudit, NegativeControlDataShiftOneOfTheShares) {
  // One of the 4 shares (NB(1/4) − NB(1/4)) in the sum: true ε 3 + ln 4 = 4.39 by the design's
  // bound, attained at {y ≥ c + 1}: P = 0.0122 vs 0.988; the expected bound at 10^5 samples is
  // ~4.25.
  const AuditResult r = audit_data_shift(item_case(3, kDsDevices / 4), item_case(4, kDsDevices / 4),
                                         1, kDsItemScale, 190);
  expect_exceeds_claim("negative control: data shift DIST with 1 of the 4 Polya shares", r);
}

TEST(PrivacyAudit, DataShiftPolyaSharesFewerHonestThanSplit) {
  // The same sum of 1 of the 4 shares, held to the claim for r = 1/4 honest shares: 1/T + ln 4 =
  // 4.39 (the ln(1/r) term of the design's bound). Expected bound ~4.25: within the claim, and
  // close to it (the bound is approached when ρ is small, docs/data_shift_dp.md).
  const AuditResult r = audit_data_shift(item_case(3, kDsDevices / 4), item_case(4, kDsDevices / 4),
                                         1, kDsItemScale, 220, 1.0 / kDsDevices);
  expect_within_claim("data shift DIST, 1 of 4 shares claimed as r = 1/4 (T = 1/3, 3 vs 4)", r);
  EXPECT_GT(r.epsilon_lower_bound, 0.9 * r.claimed_epsilon) << r.summary("data shift DIST r");
}

DataShiftCase user_case(uint32_t count, uint32_t max_events) {
  return DataShiftCase{kDsUserScale, kDsDevices, kDsDevices, max_events, count};
}

TEST(PrivacyAudit, DataShiftPolyaSharesUserLevel) {
  // Device 0 holds no events vs 3 of kDsItem, of which the bound m = 2 keeps 2: the released
  // bucket moves by m, the most one bucket can. Exact claim again: P[Z ≥ 0]/P[Z ≥ 2] = e^{2/T};
  // P[Z ≥ 2] = 0.041 (~4,100 hits), expected bound ~2.9.
  const AuditResult r = audit_data_shift(user_case(0, 2), user_case(3, 2), 2, kDsUserScale, 200);
  expect_within_claim("data shift DIST user level (m = 2, T = 2/3: device 0 holds 0 vs 3 events)",
                      r);
  EXPECT_GT(r.epsilon_lower_bound, 0.9 * r.claimed_epsilon) << r.summary("data shift DIST user");
}

TEST(PrivacyAudit, NegativeControlDataShiftUserLevelWithoutTheBound) {
  // max_events 0: all 3 events land, true ε = 3/T = 4.5 against the claimed m/T = 3; at
  // {y ≥ c + 3}, P = 0.0091 vs 0.82, the expected bound at 10^5 samples is ~4.3.
  const AuditResult r = audit_data_shift(user_case(0, 0), user_case(3, 0), 2, kDsUserScale, 210);
  expect_exceeds_claim("negative control: data shift DIST user level without the bound", r);
}

// ---- 4. The host's central Gaussian mechanism --------------------------------------------
// host::release_on_grid (gaussian_noise.h): the statistic rounded to the public grid g, then an
// exact discrete Gaussian of the calibrated scale. Claimed (ε, δ) = (1, 1e-6) for sensitivity Δ;
// σ from the analytic calibration at grid_calibration_delta's δ, as the KL trusted model does.
// Two audits:
//  (a) the ε-part: neighbours f and f + Δ (the whole sensitivity), threshold tests on the output;
//  (b) the review's attack: the output's offset from the grid f(D) + g_old·ℤ that the OLD mechanism
//      (f + g_old·Y, g_old = 2^(ilogb σ − 20)) put it on — a post-processing, so its bound is
//      valid for the mechanism. The negative control is that old mechanism: under D the offset is
//      0 (up to rounding), under D′ a constant, and the audit proves an ε far above the claim.

constexpr double kGaussianEpsilon = 1, kGaussianDelta = 1e-6, kGaussianSensitivity = 0.693;
constexpr double kStatistic = 0.1254312;  // f(D); f(D′) = f(D) + Δ, or + 0.37·Δ for the offset
constexpr uint64_t kGaussianCalibration = 20000;
constexpr uint64_t kGaussianSamples = 200000;

host::GridGaussian claimed_gaussian(double sigma_factor) {
  const double delta = host::grid_calibration_delta(kGaussianEpsilon, kGaussianDelta, 1).value();
  const double sigma = host::gaussian_sigma(host::GaussianCalibration::kAnalytic, kGaussianEpsilon,
                                            delta, kGaussianSensitivity)
                           .value();
  return host::make_grid_gaussian(sigma * sigma_factor, kGaussianSensitivity, 1).value();
}

// The released value, or (offset_of_grid) its offset from f(D) + g_old·ℤ, in g_old units.
Sampler central_gaussian(double statistic, double sigma_factor, bool old_mechanism,
                         bool offset_of_grid, uint64_t stream) {
  auto bits = std::make_shared<SeededBits>(kStreamBase + stream);
  const host::GridGaussian noise = claimed_gaussian(sigma_factor);
  const double old_grid = std::ldexp(1.0, std::ilogb(noise.sigma) - 20);
  const noise::Rational old_variance{
      static_cast<uint64_t>(std::ceil(noise.sigma / old_grid * noise.sigma / old_grid)), 1};
  return [=]() -> double {
    double out = 0;
    if (old_mechanism) {  // the pre-fix mechanism: f + g_old·Y
      const Result<int64_t> y = noise::discrete_gaussian(bits->bits, old_variance);
      if (!y.ok()) return failed_draw(y.status());
      out = statistic + static_cast<double>(y.value()) * old_grid;
    } else {
      const Result<double> released = host::release_on_grid(noise, statistic, bits->bits);
      if (!released.ok()) return failed_draw(released.status());
      out = released.value();
    }
    if (!offset_of_grid) return out;
    const double steps = (out - kStatistic) / old_grid;
    return std::fabs(steps - std::nearbyint(steps));
  };
}

AuditResult audit_gaussian(double shift, double sigma_factor, bool old_mechanism, bool offset,
                           uint64_t stream) {
  return testing::audit::audit_calibrated(
      central_gaussian(kStatistic, sigma_factor, old_mechanism, offset, stream),
      central_gaussian(kStatistic + shift, sigma_factor, old_mechanism, offset, stream + 1),
      kGaussianEpsilon, kGaussianDelta, scaled(kGaussianCalibration), scaled(kGaussianSamples));
}

TEST(PrivacyAudit, CentralGaussianOnTheGrid) {
  const AuditResult r = audit_gaussian(kGaussianSensitivity, 1, false, false, 120);
  expect_within_claim("central Gaussian on the grid (eps 1, delta 1e-6, f vs f + Delta)", r);
  EXPECT_GT(r.epsilon_lower_bound, 0.2) << r.summary("central Gaussian");  // the audit has power
}

TEST(PrivacyAudit, NegativeControlCentralGaussianThirdOfSigma) {
  // σ/3: μ = 3Δ/σ ≈ 0.78; the threshold test at 2·10^5 samples proves ~1.5 (normal tails).
  const AuditResult r = audit_gaussian(kGaussianSensitivity, 1.0 / 3, false, false, 130);
  expect_exceeds_claim("negative control: central Gaussian at sigma/3", r);
}

TEST(PrivacyAudit, CentralGaussianGridOffsetAttack) {
  const AuditResult r = audit_gaussian(0.37 * kGaussianSensitivity, 1, false, true, 140);
  expect_within_claim("central Gaussian, the grid-offset attack (eps 1, delta 1e-6)", r);
}

TEST(PrivacyAudit, NegativeControlGridOffsetAttackOnTheOldMechanism) {
  // f + g_old·Y: the offset is ~0 under D and 0.37·Δ/g_old mod 1 under D′, every time.
  const AuditResult r = audit_gaussian(0.37 * kGaussianSensitivity, 1, true, true, 150);
  expect_exceeds_claim("negative control: the grid-offset attack on the pre-fix mechanism", r);
  EXPECT_GT(r.epsilon_lower_bound, 5);
}

// ---- 5. The model update (Sk-RSGD-AR, one client) -----------------------------------------
// tasks::model_update_report: train (RSGD-AR with a secret shuffle), clip, rotate, round, add
// Skellam noise with the λ of tasks::model_update_lambda (one client), wrap. The host's
// dequantised update is released; the audit reads its first coordinate (a post-processing), the
// direction in which the worst-case neighbours differ: record 0 is (e1, +1) in D and (−e1, +1)
// in D′. Schedule: τ = 1 (a step-size reset and a window average every epoch, where 002's
// Algorithm 4 as printed understates the sensitivity), one batch (no mixture to hide in). The
// logistic gradients of these neighbours differ by at most ‖x‖ (the bound charges 2‖x‖) and
// the noise is a Skellam of the accountant's λ, so a correct calibration leaves the audit far
// below the claim; the negative control has λ/100 (a tenth of the standard deviation: the
// neighbours' shift is then ~5× what a correct λ allows), where the threshold test proves more
// than the claim (1.15 at 4·10^4 samples). (The pre-fix λ — Algorithm 4 as printed — is ~2× too
// small in σ only for the WORST neighbours: tests/unit/tasks/trainer_sensitivity_test.cpp is what
// catches that defect.)

constexpr size_t kExamples = 4, kDimension = 2;
constexpr double kUpdateEpsilon = 1, kUpdateDelta = 1e-6;
constexpr uint64_t kUpdateCalibration = 4000;
constexpr uint64_t kUpdateSamples = 40000;

tasks::ModelUpdateConfig update_config() {
  tasks::ModelUpdateConfig config;
  config.trainer.epochs = 2;
  config.trainer.batches = 1;
  config.trainer.averaging_interval = 1;
  config.trainer.eta0 = 7.5;  // the largest step the trainer accepts: η0·(1/4 + μ) ≤ 2
  config.trainer.mu = 0.01;
  config.quantise.gamma = 8;
  config.quantise.clip_norm = 8;
  config.quantise.rotation_seed.bytes[0] = 3;
  config.examples_per_client = kExamples;
  return config;
}

Sampler model_update(bool neighbour, double lambda_divisor, uint64_t stream) {
  struct State {
    explicit State(uint64_t s) : bits(s) {}
    SeededBits bits;
    tasks::ModelUpdateConfig config = update_config();
    noise::NoiseSampler noise;
    std::vector<float> features;
    std::vector<int8_t> labels;
    std::vector<uint8_t> memory;
  };
  auto state = std::make_shared<State>(kStreamBase + stream);
  const double lambda =
      tasks::model_update_lambda(state->config, kDimension, 1, kUpdateEpsilon, kUpdateDelta)
          .value() /
      lambda_divisor;
  EXPECT_TRUE(state->noise
                  .init(noise::NoiseSpec{noise::NoiseKind::kSkellam,
                                         noise::rational_at_least(lambda).value(), 1})
                  .ok());
  for (size_t i = 0; i < kExamples; ++i) {  // unit-norm features, a fixed separator
    const double angle = 1.3 * static_cast<double>(i);
    state->features.push_back(static_cast<float>(std::cos(angle)));
    state->features.push_back(static_cast<float>(std::sin(angle)));
    state->labels.push_back(static_cast<int8_t>(std::cos(angle) >= 0 ? 1 : -1));
  }
  state->features[0] = neighbour ? -1.0f : 1.0f;
  state->features[1] = 0;
  state->labels[0] = 1;
  state->memory.resize(tasks::model_update_memory_bytes(kExamples, kDimension));
  return [state]() -> double {
    const tasks::Examples examples{
        Span<const float>(state->features.data(), state->features.size()),
        Span<const int8_t>(state->labels.data(), state->labels.size()), kDimension};
    const double global[kDimension] = {0.1, -0.2};
    const size_t length = quantise::encoded_length(kDimension, state->config.quantise);
    uint64_t report[8] = {};
    Arena arena{MutableByteSpan(state->memory.data(), state->memory.size())};
    const Status s = tasks::model_update_report(examples, Span<const double>(global), state->config,
                                                &state->noise, state->bits.bits, arena,
                                                Span<uint64_t>(report, length));
    if (!s.ok()) return failed_draw(s);
    double work[8], change[kDimension];
    const Status d = quantise::dequantise(Span<const uint64_t>(report, length), kDimension,
                                          state->config.quantise, Span<double>(work, length),
                                          Span<double>(change, kDimension));
    if (!d.ok()) return failed_draw(d);
    return change[0];
  };
}

AuditResult audit_model_update(double lambda_divisor, uint64_t stream) {
  return testing::audit::audit_calibrated(
      model_update(false, lambda_divisor, stream), model_update(true, lambda_divisor, stream + 1),
      kUpdateEpsilon, kUpdateDelta, scaled(kUpdateCalibration), scaled(kUpdateSamples));
}

TEST(PrivacyAudit, ModelUpdate) {
  const AuditResult r = audit_model_update(1, 160);
  expect_within_claim(
      "model update (one client, T 2, tau 1, n 4, eps 1, delta 1e-6: (e1,+1) vs (-e1,+1))", r);
}

TEST(PrivacyAudit, NegativeControlModelUpdateTenthOfTheNoise) {
  const AuditResult r = audit_model_update(100, 170);
  expect_exceeds_claim("negative control: model update at lambda/100", r);
}

}  // namespace
}  // namespace fedstat
