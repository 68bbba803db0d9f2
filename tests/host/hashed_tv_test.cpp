// The DIST data-shift task's host side: the hashed-domain TV estimator (hashed_tv.h) and the
// device emulation the tools run (dist_shift.h).
#include "host_server/estimate/hashed_tv.h"

#include <gtest/gtest.h>

#include <random>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/dist_shift.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/noise_bits.h"

namespace fedstat {
namespace host {
namespace {

ItemCounts counts_of(const std::string& text) {
  std::istringstream in(text);
  return parse_item_counts(in, "test");
}

TEST(HashedTv, ExactDistanceOfHandMadeHistograms) {
  // Same totals: ½(|.5 − .1| + |0 − .4| + 0 + 0) = 0.4.
  HashedTvEstimate e = estimate_hashed_tv({5, 0, 3, 2}, {1, 4, 3, 2});
  EXPECT_DOUBLE_EQ(e.tv, 0.4);
  EXPECT_DOUBLE_EQ(e.total_p, 10);
  EXPECT_DOUBLE_EQ(e.total_q, 10);
  EXPECT_EQ(e.buckets, 4u);
  EXPECT_EQ(e.negative_p, 0u);
  // Different totals (normalised each): ½(|.5 − .25| + |.5 − .75|) = 0.25.
  EXPECT_DOUBLE_EQ(estimate_hashed_tv({2, 2}, {1, 3}).tv, 0.25);
  // Disjoint supports: 1; equal shapes at different scales: 0.
  EXPECT_DOUBLE_EQ(estimate_hashed_tv({7, 0}, {0, 3}).tv, 1.0);
  EXPECT_DOUBLE_EQ(estimate_hashed_tv({1, 2, 3}, {10, 20, 30}).tv, 0.0);
}

TEST(HashedTv, NegativeNoisedCountsAreClampedToZeroAndLeaveTheTotals) {
  // P's −5 is noise: clamped, P is Q's shape exactly. Without the clamp N_p would be 5 and the
  // distance ½(1 + 0.8 − 0.4 + 1.2 − 0.6) = 1 (capped), not 0.
  const HashedTvEstimate e = estimate_hashed_tv({-5, 4, 6}, {0, 4, 6});
  EXPECT_DOUBLE_EQ(e.tv, 0.0);
  EXPECT_DOUBLE_EQ(e.total_p, 10);
  EXPECT_EQ(e.negative_p, 1u);
  // Q's negatives are clamped too: ½(|.5 − 1| + |.5 − 0|) = 0.5.
  EXPECT_DOUBLE_EQ(estimate_hashed_tv({3, 3}, {4, -9}).tv, 0.5);
}

// Large noise (T = 100/3, user level): 1,000 empty buckets each hold a discrete Laplace draw. The
// clamp keeps their positive halves (≈ 1,000·16.7 phantom events against 10⁴ real ones: more than
// half the clamped total) and the distance of two identical fleets comes out far from 0; reading
// buckets below τ = ⌈max(T·ln B, σ·√(2 ln B))⌉ = ⌈T·ln B⌉ here as 0 removes them. At T = 1/3 the
// phantom mass is about 0.5 % and the clamp alone is used (τ = 0). With 40 Laplaces per bucket the
// phantom mass passes half even at T = 1/3, and τ = ⌈σ·√(2 ln B)⌉.
// The draws are a fixed-seed std::mt19937_64 two-sided geometric (a test fixture, not a device
// sampler).
TEST(HashedTv, LargeNoiseIsThresholdedAtTLnBWhileSmallNoiseIsOnlyClamped) {
  const size_t buckets = 1002;
  std::mt19937_64 rng(41);
  auto noised = [&](double scale) {
    std::geometric_distribution<int64_t> geometric(1 - std::exp(-1 / scale));
    std::vector<int64_t> v(buckets);
    for (int64_t& c : v) c = geometric(rng) - geometric(rng);
    v[0] += 5000;
    v[1] += 5000;
    return v;
  };
  const double big = 100.0 / 3;
  const std::vector<int64_t> p = noised(big), q = noised(big);
  const HashedTvEstimate clamped = estimate_hashed_tv(p, q);
  const HashedTvEstimate thresholded = estimate_hashed_tv(p, q, big);
  EXPECT_EQ(clamped.threshold, 0);
  EXPECT_EQ(thresholded.threshold,
            static_cast<int64_t>(std::ceil(big * std::log(static_cast<double>(buckets)))));
  EXPECT_GT(clamped.tv, 0.3);  // the phantom events of 1,000 empty buckets
  // Two equal fleets: only the two heavy buckets' noise is left, σ ≈ 47 each on 5,000, so the
  // distance is ≈ |η₀ − η₀′|/10⁴ ≈ 0.005 on average; 0.05 is beyond 5 σ of it.
  EXPECT_LT(thresholded.tv, 0.05);
  const std::vector<int64_t> small_p = noised(1.0 / 3), small_q = noised(1.0 / 3);
  const HashedTvEstimate small = estimate_hashed_tv(small_p, small_q, 1.0 / 3);
  EXPECT_EQ(small.threshold, 0);
  EXPECT_DOUBLE_EQ(small.tv, estimate_hashed_tv(small_p, small_q).tv);
  const HashedTvEstimate wide = estimate_hashed_tv(small_p, small_q, 1.0 / 3, 400);
  const double rho = std::exp(-3.0), sigma = std::sqrt(400 * 2 * rho) / (1 - rho);
  EXPECT_EQ(wide.threshold, static_cast<int64_t>(std::ceil(
                                sigma * std::sqrt(2 * std::log(static_cast<double>(buckets))))));
  EXPECT_THROW(estimate_hashed_tv(p, q, 1, 0.5), std::invalid_argument);
  EXPECT_THROW(estimate_hashed_tv(p, q, -1), std::invalid_argument);
  EXPECT_THROW(estimate_hashed_tv(p, q, std::nan("")), std::invalid_argument);
}

TEST(HashedTv, SignedSumSignExtendsTheWordsBits) {
  const std::vector<uint64_t> words = {0xFFFFFFFFull, 0x80000000ull, 0x7FFFFFFFull,
                                       0x100000005ull /* bits above 32 are the modulus's */, 0};
  EXPECT_EQ(signed_sum(words, 32),
            (std::vector<int64_t>{-1, INT64_C(-2147483648), 2147483647, 5, 0}));
  EXPECT_EQ(signed_sum({~uint64_t{0}, uint64_t{1} << 63}, 64),
            (std::vector<int64_t>{-1, INT64_MIN}));
  EXPECT_EQ(signed_sum({0x3}, 2), (std::vector<int64_t>{-1}));
  EXPECT_THROW(signed_sum({1}, 0), std::invalid_argument);
  EXPECT_THROW(signed_sum({1}, 65), std::invalid_argument);
}

TEST(HashedTv, RefusesMismatchedLengthsAndAnEmptySide) {
  auto message = [](const std::vector<int64_t>& p, const std::vector<int64_t>& q) {
    try {
      estimate_hashed_tv(p, q);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({1, 2}, {1, 2, 3}).find("different bucket counts"), std::string::npos);
  EXPECT_NE(message({0, -3}, {1, 2}).find("no positive bucket"), std::string::npos);
  EXPECT_NE(message({1, 2}, {-1, 0}).find("no positive bucket"), std::string::npos);
  EXPECT_NE(message({}, {}).find("no positive bucket"), std::string::npos);
}

TEST(HashedTv, BucketCountsFoldEveryItemWithTheSdksMap) {
  const ItemCounts items = counts_of("1 10\n2 20\n77 5\n4000000 1\n");
  const sketch::BucketMap map(seed_from_u64(9), 16);
  const std::vector<int64_t> b = bucket_counts(items, map);
  ASSERT_EQ(b.size(), 16u);
  std::vector<int64_t> expected(16, 0);
  for (const auto& i : items.items) expected[map.bucket_of(i.id)] += i.count;
  EXPECT_EQ(b, expected);
  EXPECT_THROW(bucket_counts(items, sketch::BucketMap(seed_from_u64(9), 0)), std::invalid_argument);
}

// Emulated devices with a negligible noise scale (T = 1/20: a share is non-zero with probability
// < 10^-8 per bucket, fixed seeds) sum to the exact bucket counts; the per-device clamp and the
// event bound apply before the noise.
TEST(DistShiftEmulation, FleetSumIsTheExactBucketsClampedAndBounded) {
  std::ostringstream text;
  for (int i = 1; i <= 300; ++i) text << i << " " << 1 + 3000 / i << "\n";
  const ItemCounts data = counts_of(text.str());
  SeededBits split(4, 7);
  const EmulatedClients clients = split_across_clients(data, 5, split.bits());
  DistShiftConfig c;
  c.buckets = 512;
  c.max_clients = 5;
  c.shares = 5;
  c.noise_scale = 0.05;
  const Seed256 seed = seed_from_u64(3);
  NoiseBits noise = NoiseBits::seeded(2);
  const std::vector<uint64_t> sum = dist_shift_fleet_sum(clients, seed, c, noise, false);
  EXPECT_EQ(signed_sum(sum, 32), bucket_counts(data, sketch::BucketMap(seed, 512)));
  // Through a real secure-aggregation session: the same sum.
  NoiseBits again = NoiseBits::seeded(2);
  EXPECT_EQ(dist_shift_fleet_sum(clients, seed, c, again, true), sum);

  // One device, 100 of item 1 and 300 of item 2 (in different buckets): m = 40 keeps exactly 40
  // of its 400 events, a random subset (hypergeometric: item 1's share 10 ± 2.5, so 10 ± 9 holds
  // for any fixed seed with certainty beyond 3.5 standard deviations);
  // max_clients 2^23 clamps each bucket to ⌊(2^31 − 1)/2^23⌋ = 255.
  const ItemCounts two = counts_of("1 100\n2 300\n");
  SeededBits one_split(1, 1);
  const EmulatedClients one = split_across_clients(two, 1, one_split.bits());
  const sketch::BucketMap map(seed, 512);
  ASSERT_NE(map.bucket_of(1), map.bucket_of(2));
  c.max_events = 40;
  c.max_clients = 1;
  NoiseBits n1 = NoiseBits::seeded(5);
  std::vector<uint64_t> v =
      dist_shift_device_vector(*one[0], dist_shift_task(c, seed), n1.stream(1));
  EXPECT_EQ(v[map.bucket_of(1)] + v[map.bucket_of(2)], 40u);
  EXPECT_NEAR(static_cast<double>(v[map.bucket_of(1)]), 10, 9);
  c.max_events = 0;
  c.max_clients = 1u << 23;
  EXPECT_EQ(dist_shift_bucket_clamp(32, 1u << 23), 255u);
  v = dist_shift_device_vector(*one[0], dist_shift_task(c, seed), n1.stream(1));
  EXPECT_EQ(v[map.bucket_of(1)], 100u);
  EXPECT_EQ(v[map.bucket_of(2)], 255u);
}

// s devices' shares sum to one discrete Laplace(T) per bucket: variance 2ρ/(1 − ρ)², ρ = e^(−1/T).
// Over 8,000 empty buckets the sample variance's relative standard error is √((κ − 1)/n) with
// κ = 6 (Laplace-like kurtosis): 0.025; the bound 0.15 is 6 of them. Negative control: shares
// declared for 8 devices but only 4 sending leave half the variance, far outside the bound.
TEST(DistShiftEmulation, SharesOfTheFleetSumToOneDiscreteLaplace) {
  EmulatedClients empty;
  for (int i = 0; i < 4; ++i) empty.push_back(std::make_unique<EmulatedClient>());
  DistShiftConfig c;
  c.buckets = 8000;
  c.max_clients = 4;
  c.noise_scale = 3;
  const double rho = std::exp(-1 / 3.0), variance = 2 * rho / ((1 - rho) * (1 - rho));
  auto relative_variance = [&](uint32_t shares) {
    c.shares = shares;
    NoiseBits noise = NoiseBits::seeded(11);
    const std::vector<int64_t> s =
        signed_sum(dist_shift_fleet_sum(empty, seed_from_u64(1), c, noise, false), 32);
    double sq = 0;
    for (int64_t x : s) sq += static_cast<double>(x) * static_cast<double>(x);
    return sq / static_cast<double>(s.size()) / variance;
  };
  EXPECT_NEAR(relative_variance(4), 1.0, 0.15);
  EXPECT_LT(relative_variance(8), 0.7);  // half the shares: NB(1/2) − NB(1/2), half the variance
}

TEST(DistShiftEmulation, RefusesParametersNoDeviceTakes) {
  DistShiftConfig c;
  c.noise_scale = 1;
  EXPECT_NO_THROW(check_dist_shift(c));
  using Edit = void (*)(DistShiftConfig&);
  for (Edit bad : std::vector<Edit>{
           +[](DistShiftConfig& x) { x.buckets = 0; },
           +[](DistShiftConfig& x) { x.buckets = sketch::kMaxHashedBuckets + 1; },
           +[](DistShiftConfig& x) { x.bits = 16; }, +[](DistShiftConfig& x) { x.shares = 0; },
           +[](DistShiftConfig& x) { x.max_clients = 0; },
           +[](DistShiftConfig& x) { x.noise_scale = NAN; },
           +[](DistShiftConfig& x) { x.noise_scale = 0; },
           +[](DistShiftConfig& x) { x.noise_scale = 1e5; }}) {
    DistShiftConfig d = c;
    bad(d);
    EXPECT_THROW(check_dist_shift(d), std::invalid_argument);
  }
  EXPECT_DOUBLE_EQ(dist_shift_noise_scale(3, 0), 1.0 / 3);
  EXPECT_DOUBLE_EQ(dist_shift_noise_scale(3, 100), 200.0 / 3);  // Δ = 2m at user level
  EXPECT_THROW(dist_shift_noise_scale(0, 0), std::invalid_argument);
  EXPECT_THROW(dist_shift_noise_scale(NAN, 0), std::invalid_argument);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
