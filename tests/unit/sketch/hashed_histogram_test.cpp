// The DIST data-shift histogram (sdk/sketch/hashed_histogram.h): buckets, the event bound, and
// the Pólya shares' sum. Statistical tests are chi-square tests at p = 1e-6 with fixed seeds
// (tests/common/chi_square.h).
#include "sdk/sketch/hashed_histogram.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "tests/common/chi_square.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace sketch {
namespace {

Seed256 seed_of(uint8_t first) {
  Seed256 seed;
  for (int i = 0; i < 32; ++i) seed.bytes[i] = static_cast<uint8_t>(first + 7 * i);
  return seed;
}

TEST(HashedHistogram, BucketsAreUniformOverConsecutiveIds) {
  const BucketMap map(seed_of(3), 97);
  ASSERT_TRUE(map.check().ok());
  std::vector<uint64_t> counts(97);
  for (uint32_t id = 0; id < 97 * 1000; ++id) {
    const uint32_t b = map.bucket_of(id);
    ASSERT_LT(b, 97u);
    ++counts[b];
  }
  EXPECT_LT(testing::chi_square_uniform(counts), testing::chi_square_critical_p1e6(96));
}

TEST(HashedHistogram, TheMapDependsOnTheSeedAndRefusesBadSizes) {
  const BucketMap a(seed_of(3), 1 << 16), b(seed_of(4), 1 << 16);
  int same = 0;
  for (uint32_t id = 0; id < 1000; ++id) same += a.bucket_of(id) == b.bucket_of(id);
  EXPECT_LT(same, 5);  // 1000 ids agree by chance ~0.015 times on average
  EXPECT_EQ(BucketMap(seed_of(3), 0).check().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BucketMap(seed_of(3), kMaxHashedBuckets + 1).check().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(BucketMap(seed_of(3), kMaxHashedBuckets).check().ok());
}

struct Local {
  std::vector<histogram::SparseEntry> table = std::vector<histogram::SparseEntry>(64);
  histogram::SparseHistogram histogram;
  Local() { EXPECT_TRUE(histogram.init(Span<histogram::SparseEntry>(table.data(), 64)).ok()); }
};

TEST(HashedHistogram, CountsLandInTheirBucketsAndAWrongLengthChangesNothing) {
  noise::testing_util::SeededBits no_bits(1);  // not read: nothing is bounded
  Local local;
  ASSERT_TRUE(local.histogram.add(10, 5).ok());
  ASSERT_TRUE(local.histogram.add(20, 7).ok());
  const BucketMap map(seed_of(1), 1024);
  std::vector<uint64_t> out(1024, 0);
  ASSERT_TRUE(add_bucket_counts(map, local.histogram, 0, no_bits.bits,
                                Span<uint64_t>(out.data(), out.size()))
                  .ok());
  std::vector<uint64_t> expected(1024, 0);
  expected[map.bucket_of(10)] += 5;
  expected[map.bucket_of(20)] += 7;
  EXPECT_EQ(out, expected);
  std::vector<uint64_t> short_out(1023, 9);
  EXPECT_EQ(add_bucket_counts(map, local.histogram, 0, no_bits.bits,
                              Span<uint64_t>(short_out.data(), short_out.size()))
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(short_out, std::vector<uint64_t>(1023, 9));
}

// A device above its bound m adds exactly m events, each an event drawn uniformly with
// replacement: over 400 streams the four items' kept counts are multinomial(400·m, c_i/N) in sum,
// checked by a chi-square test at p = 1e-6 with 3 degrees of freedom. Keeping the first m events
// in table order, or ⌊c·m/N⌋ = (60, 30, 9, 0) (400·(0.9²/9.9 + 0.1²/0.1) ≈ 73 against ≈ 33),
// fails it.
TEST(HashedHistogram, TheEventBoundKeepsMEventsDrawnUniformly) {
  Local local;
  ASSERT_TRUE(local.histogram.add(1, 600).ok());
  ASSERT_TRUE(local.histogram.add(2, 300).ok());
  ASSERT_TRUE(local.histogram.add(3, 99).ok());
  ASSERT_TRUE(local.histogram.add(4, 1).ok());
  const BucketMap map(seed_of(1), 1 << 20);  // no collisions among these four at this size
  std::vector<uint64_t> out(size_t{1} << 20, 0);
  const uint32_t ids[4] = {1, 2, 3, 4};
  const double share[4] = {0.6, 0.3, 0.099, 0.001};
  std::vector<double> kept(4, 0);
  const int runs = 400;
  for (int run = 0; run < runs; ++run) {
    noise::testing_util::SeededBits bits(1000 + run);
    std::fill(out.begin(), out.end(), 0);
    ASSERT_TRUE(add_bucket_counts(map, local.histogram, 100, bits.bits,
                                  Span<uint64_t>(out.data(), out.size()))
                    .ok());
    uint64_t sum = 0;
    for (int i = 0; i < 4; ++i) {
      kept[i] += static_cast<double>(out[map.bucket_of(ids[i])]);
      sum += out[map.bucket_of(ids[i])];
    }
    ASSERT_EQ(sum, 100u);
  }
  double statistic = 0;
  for (int i = 0; i < 4; ++i) {
    const double expected = runs * 100 * share[i];
    statistic += (kept[i] - expected) * (kept[i] - expected) / expected;
  }
  EXPECT_LT(statistic, testing::chi_square_critical_p1e6(3)) << statistic;
  // At or below the bound every event counts (the draws are still made, and discarded).
  noise::testing_util::SeededBits unused(1);
  std::fill(out.begin(), out.end(), 0);
  ASSERT_TRUE(add_bucket_counts(map, local.histogram, 1000, unused.bits,
                                Span<uint64_t>(out.data(), out.size()))
                  .ok());
  EXPECT_EQ(out[map.bucket_of(1)], 600u);
  EXPECT_EQ(out[map.bucket_of(4)], 1u);
}

// s devices' shares sum to one discrete Laplace of scale T: the sum over s = 7 share vectors,
// bucket by bucket, against P(k) ∝ exp(−|k|/T), T = 1/3 (ε = 3 per event), chi-square at p = 1e-6.
TEST(HashedHistogram, SharesOfSDevicesSumToOneDiscreteLaplace) {
  const noise::Rational scale{1, 3};
  const uint32_t shares = 7, buckets = 20000;
  std::vector<uint64_t> sum(buckets, 0);
  for (uint32_t device = 0; device < shares; ++device) {
    noise::testing_util::SeededBits bits(100 + device);
    ASSERT_TRUE(
        add_polya_shares(scale, shares, bits.bits, Span<uint64_t>(sum.data(), sum.size())).ok());
  }
  std::map<int64_t, uint64_t> observed;
  for (uint64_t v : sum) ++observed[static_cast<int64_t>(v)];
  const double rho = std::exp(-3.0);
  const auto pmf = [rho](int64_t k) {
    return (1 - rho) / (1 + rho) * std::pow(rho, static_cast<double>(std::llabs(k)));
  };
  const testing::GoodnessOfFit fit = testing::chi_square_against_pmf(observed, pmf, -12, 12);
  EXPECT_TRUE(fit.passes()) << fit.statistic << " vs " << fit.critical;
  // A negative control: the same vectors from only s − 3 devices are too narrow and fail.
  std::vector<uint64_t> partial(buckets, 0);
  for (uint32_t device = 0; device < shares - 3; ++device) {
    noise::testing_util::SeededBits bits(100 + device);
    ASSERT_TRUE(
        add_polya_shares(scale, shares, bits.bits, Span<uint64_t>(partial.data(), partial.size()))
            .ok());
  }
  std::map<int64_t, uint64_t> narrow;
  for (uint64_t v : partial) ++narrow[static_cast<int64_t>(v)];
  EXPECT_FALSE(testing::chi_square_against_pmf(narrow, pmf, -12, 12).passes());
}

TEST(HashedHistogram, SharesRefuseAZeroScaleOrNoDevices) {
  noise::testing_util::SeededBits bits(1);
  std::vector<uint64_t> out(4, 5);
  EXPECT_EQ(
      add_polya_shares(noise::Rational{0, 1}, 3, bits.bits, Span<uint64_t>(out.data(), out.size()))
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      add_polya_shares(noise::Rational{1, 3}, 0, bits.bits, Span<uint64_t>(out.data(), out.size()))
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(out, std::vector<uint64_t>(4, 5));
}

}  // namespace
}  // namespace sketch
}  // namespace fedstat
