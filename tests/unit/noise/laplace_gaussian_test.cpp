// Geometric, discrete Laplace, truncated discrete Laplace and discrete Gaussian against their
// exact pmfs: chi-square at p = 1e-6 (bins of expected count ≥ 10), plus mean and variance at
// 5.3 standard errors; fixed seeds.
#include <gtest/gtest.h>

#include <cmath>

#include "sdk/noise/discrete_gaussian.h"
#include "sdk/noise/discrete_laplace.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace noise {
namespace {

using testing_util::SeededBits;
constexpr size_t kSamples = 300000;

TEST(GeometricTest, MatchesExpMinusKOverT) {
  SeededBits s(10);
  for (Rational t : {Rational{1, 3}, Rational{1, 1}, Rational{7, 2}, Rational{100, 1}}) {
    const double q = std::exp(-1 / t.to_double());
    auto h = testing_util::histogram(kSamples, [&] {
      auto r = geometric(s.bits, t);
      EXPECT_TRUE(r.ok());
      return static_cast<int64_t>(r.value());
    });
    const int64_t hi = static_cast<int64_t>(40 * t.to_double()) + 10;
    testing_util::expect_fits(
        h, [q](int64_t k) { return k < 0 ? 0 : (1 - q) * std::pow(q, k); }, 0, hi, "geometric");
    // Geometric: mean q/(1-q), variance q/(1-q)^2, excess kurtosis 6 + (1-q)^2/q.
    testing_util::expect_moments(h, q / (1 - q), q / ((1 - q) * (1 - q)), 6 + (1 - q) * (1 - q) / q,
                                 "geometric");
  }
}

TEST(DiscreteLaplaceTest, MatchesTwoSidedGeometric) {
  SeededBits s(11);
  for (Rational t : {Rational{1, 2}, Rational{3, 1}, Rational{50, 1}, Rational{22, 7}}) {
    auto h = testing_util::histogram(kSamples, [&] { return discrete_laplace(s.bits, t).value(); });
    const double scale = t.to_double();
    const int64_t span = static_cast<int64_t>(40 * scale) + 10;
    testing_util::expect_fits(
        h, [scale](int64_t k) { return testing_util::discrete_laplace_pmf(scale, k); }, -span, span,
        "discrete Laplace");
    const double q = std::exp(-1 / scale);
    testing_util::expect_moments(h, 0, 2 * q / ((1 - q) * (1 - q)), 3, "discrete Laplace");
  }
}

TEST(DiscreteLaplaceTest, TruncatedStaysInsideAndKeepsShape) {
  SeededBits s(12);
  const Rational t{5, 1};
  const uint64_t bound = 3;
  auto h = testing_util::histogram(
      kSamples, [&] { return truncated_discrete_laplace(s.bits, t, bound).value(); });
  EXPECT_GE(h.begin()->first, -3);
  EXPECT_LE(h.rbegin()->first, 3);
  double z = 0;
  for (int k = -3; k <= 3; ++k) z += testing_util::discrete_laplace_pmf(5, k);
  testing_util::expect_fits(
      h,
      [z](int64_t k) { return k < -3 || k > 3 ? 0 : testing_util::discrete_laplace_pmf(5, k) / z; },
      -3, 3, "truncated discrete Laplace");
}

TEST(DiscreteLaplaceTest, RejectsNonPositiveScale) {
  SeededBits s(13);
  EXPECT_EQ(discrete_laplace(s.bits, Rational{0, 1}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(geometric(s.bits, Rational{1, 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(truncated_discrete_laplace(s.bits, Rational{0, 1}, 5).status().code(),
            StatusCode::kInvalidArgument);
  // Bound 0 would always return 0: no noise (issue 11 item 7).
  EXPECT_EQ(truncated_discrete_laplace(s.bits, Rational{3, 1}, 0).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(DiscreteGaussianTest, MatchesExpMinusKSquaredOverTwoSigmaSquared) {
  SeededBits s(14);
  for (Rational v :
       {Rational{1, 4}, Rational{1, 1}, Rational{7, 3}, Rational{10, 1}, Rational{1000, 1}}) {
    const double sigma2 = v.to_double();
    const int64_t span = static_cast<int64_t>(12 * std::sqrt(sigma2)) + 5;
    double z = 0, second = 0, fourth = 0;
    for (int64_t k = -span; k <= span; ++k) {
      const double w = std::exp(-static_cast<double>(k * k) / (2 * sigma2));
      z += w;
      second += w * static_cast<double>(k * k);
      fourth += w * std::pow(static_cast<double>(k), 4);
    }
    auto h =
        testing_util::histogram(kSamples, [&] { return discrete_gaussian(s.bits, v).value(); });
    testing_util::expect_fits(
        h,
        [z, sigma2](int64_t k) { return std::exp(-static_cast<double>(k * k) / (2 * sigma2)) / z; },
        -span, span, "discrete Gaussian");
    const double variance = second / z;
    testing_util::expect_moments(h, 0, variance, fourth / z / (variance * variance) - 3,
                                 "discrete Gaussian");
  }
}

TEST(DiscreteGaussianTest, RejectsZeroVariance) {
  SeededBits s(15);
  EXPECT_EQ(discrete_gaussian(s.bits, Rational{0, 1}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(discrete_gaussian(s.bits, Rational{1, 0}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace noise
}  // namespace fedstat
