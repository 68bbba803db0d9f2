// Poisson, Skellam and Pólya shares against their exact pmfs: chi-square at p = 1e-6 (bins of
// expected count ≥ 10), means and variances at 5.3 standard errors; fixed seeds.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sdk/noise/poisson.h"
#include "sdk/noise/polya.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace noise {
namespace {

using testing_util::SeededBits;

// cache: 0 = none, 1 = full (cache_groups_wanted()), 2 = a third of it (partial coverage).
void check_poisson(Rational lambda, size_t n, uint64_t salt, int cache_mode = 0) {
  SeededBits s(salt);
  PoissonSampler sampler;
  ASSERT_TRUE(sampler.init(lambda).ok());
  std::vector<FactorGroup> cache(cache_mode == 0   ? 0
                                 : cache_mode == 1 ? sampler.cache_groups_wanted()
                                                   : sampler.cache_groups_wanted() / 3);
  ASSERT_TRUE(sampler.init(lambda, Span<FactorGroup>(cache.data(), cache.size())).ok());
  testing_util::expect_poisson(
      lambda.to_double(), n, [&] { return sampler.sample(s.bits); }, "Poisson");
}

TEST(PoissonTest, SmallMeans) {
  check_poisson(Rational{1, 3}, 300000, 20);
  check_poisson(Rational{1, 1}, 300000, 21);
  check_poisson(Rational{7, 2}, 300000, 22);
}
TEST(PoissonTest, MediumMeans) {
  check_poisson(Rational{10, 1}, 300000, 23);
  check_poisson(Rational{1001, 10}, 300000, 24);
}
TEST(PoissonTest, LargeMeans) {
  check_poisson(Rational{10000, 1}, 200000, 25);
  check_poisson(Rational{1000000, 1}, 100000, 26);
}

TEST(PoissonTest, CachedFactorsKeepTheDistribution) {
  check_poisson(Rational{7, 2}, 200000, 60, 1);
  check_poisson(Rational{100, 1}, 200000, 61, 1);
  check_poisson(Rational{100, 1}, 200000, 62, 2);
  check_poisson(Rational{10000, 1}, 200000, 63, 1);
  check_poisson(Rational{10000, 1}, 200000, 64, 2);
  check_poisson(Rational{123457, 7}, 100000, 65, 1);  // a non-integer λ
}

TEST(PoissonTest, ZeroAndInvalidParameters) {
  SeededBits s(27);
  // λ = 0 is no noise: Sk(0) would release the exact value (issue 11 item 7).
  PoissonSampler zero;
  EXPECT_EQ(zero.init(Rational{0, 1}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(zero.init(Rational{0, 7}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(zero.sample(s.bits).status().code(), StatusCode::kFailedPrecondition);
  SkellamSampler no_noise;
  EXPECT_EQ(no_noise.init(Rational{0, 1}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(no_noise.sample(s.bits).status().code(), StatusCode::kFailedPrecondition);
  PoissonSampler bad;
  EXPECT_EQ(bad.init(Rational{1, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.init(Rational{uint64_t{1} << 33, 1}).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(bad.sample(s.bits).status().code(), StatusCode::kFailedPrecondition);
}

TEST(PoissonTest, RefusedInitLeavesTheSamplerAsItWas) {
  SkellamSampler sampler, fresh;
  ASSERT_TRUE(sampler.init(Rational{100, 1}).ok());
  ASSERT_TRUE(fresh.init(Rational{100, 1}).ok());
  EXPECT_EQ(sampler.init(Rational{0, 1}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sampler.init(Rational{1, 0}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sampler.init(Rational{uint64_t{1} << 33, 1}).code(), StatusCode::kOutOfRange);
  SeededBits a(28), b(28);
  for (int i = 0; i < 50; ++i) {
    const Result<int64_t> draw = sampler.sample(a.bits);
    ASSERT_TRUE(draw.ok()) << draw.status().message();
    ASSERT_EQ(draw.value(), fresh.sample(b.bits).value());
  }
}

TEST(SkellamTest, MatchesDifferenceOfPoissons) {
  for (Rational lambda : {Rational{1, 2}, Rational{50, 1}, Rational{10000, 1}}) {
    SeededBits s(30 + lambda.num);
    SkellamSampler sampler;
    ASSERT_TRUE(sampler.init(lambda).ok());
    const double l = lambda.to_double();
    auto h = testing_util::histogram(200000, [&] { return sampler.sample(s.bits).value(); });
    const int64_t span = static_cast<int64_t>(12 * std::sqrt(2 * l) + 10);
    testing_util::expect_fits(
        h, [l](int64_t d) { return testing_util::skellam_pmf(l, d); }, -span, span, "Skellam");
    testing_util::expect_moments(h, 0, 2 * l, 1 / (2 * l), "Skellam");
  }
}

TEST(SkellamTest, SumOfTenSk5IsSk50) {
  SeededBits s(40);
  SkellamSampler sampler;
  ASSERT_TRUE(sampler.init(Rational{5, 1}).ok());
  auto h = testing_util::histogram(100000, [&] {
    int64_t sum = 0;
    for (int i = 0; i < 10; ++i) sum += sampler.sample(s.bits).value();
    return sum;
  });
  testing_util::expect_fits(
      h, [](int64_t d) { return testing_util::skellam_pmf(50, d); }, -120, 120, "sum of 10 Sk(5)");
}

TEST(PolyaTest, SharesOfFiveClientsSumToDiscreteLaplace) {
  SeededBits s(41);
  const Rational scale{2, 1};
  auto h = testing_util::histogram(100000, [&] {
    int64_t sum = 0;
    for (int i = 0; i < 5; ++i) sum += polya_share(s.bits, scale, 5).value();
    return sum;
  });
  testing_util::expect_fits(
      h, [](int64_t k) { return testing_util::discrete_laplace_pmf(2, k); }, -80, 80,
      "sum of 5 Polya shares");
}

TEST(PolyaTest, OneShareIsNegativeBinomialDifference) {
  // NB(1/n, q): P(k) = Γ(k + r)/(Γ(r) k!) (1 − q)^r q^k with r = 1/n, q = e^{−1/T}.
  SeededBits s(42);
  const double r = 1.0 / 4, q = std::exp(-1.0 / 3);
  auto h = testing_util::histogram(200000, [&] {
    return static_cast<int64_t>(negative_binomial_fraction(s.bits, Rational{3, 1}, 4).value());
  });
  testing_util::expect_fits(
      h,
      [r, q](int64_t k) {
        const double kk = static_cast<double>(k);
        return std::exp(std::lgamma(kk + r) - std::lgamma(r) - std::lgamma(kk + 1) +
                        r * std::log(1 - q) + kk * std::log(q));
      },
      0, 200, "NB(1/4)");
  EXPECT_EQ(polya_share(s.bits, Rational{3, 1}, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(polya_share(s.bits, Rational{0, 1}, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(polya_share(s.bits, Rational{3, 0}, 3).status().code(), StatusCode::kInvalidArgument);
  // Beyond kMaxPolyaScale a share costs ~T proposals: refused rather than hang.
  EXPECT_EQ(polya_share(s.bits, Rational{10001, 1}, 3).status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(polya_share(s.bits, Rational{20000, 2}, 3).ok());  // exactly 10^4
}

}  // namespace
}  // namespace noise
}  // namespace fedstat
