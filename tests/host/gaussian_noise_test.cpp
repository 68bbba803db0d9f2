#include "host_server/estimate/gaussian_noise.h"

#include <gtest/gtest.h>

#include <cmath>

#include "host_server/estimate/host_common.h"
#include "tests/common/chi_square.h"

namespace fedstat {
namespace host {
namespace {

// The sample mean lies within 5.3 standard errors of 0 (two-sided p ≈ 1e-7); (n−1)s²/σ² lies
// below the chi-square critical value at p = 1e-6 and above the lower 5.3-s.d. point of its
// normal approximation (n = 40,000 draws, fixed seeds).
void expect_gaussian(double sigma, uint64_t seed) {
  SeededBits source(seed, 9);
  const int n = 40000;
  double sum = 0, sum_squares = 0;
  for (int i = 0; i < n; ++i) {
    const double z = sample_gaussian(source.bits(), sigma).value();
    sum += z;
    sum_squares += z * z;
  }
  const double mean = sum / n;
  const double variance = (sum_squares - n * mean * mean) / (n - 1);
  EXPECT_LT(std::fabs(mean), 5.3 * sigma / std::sqrt(double{n})) << sigma;
  const double statistic = (n - 1) * variance / (sigma * sigma);
  EXPECT_LT(statistic, fedstat::testing::chi_square_critical_p1e6(n - 1)) << sigma;
  EXPECT_GT(statistic, (n - 1) - 5.3 * std::sqrt(2.0 * (n - 1))) << sigma;
}

TEST(GaussianNoise, MomentsMatchSigmaAcrossScales) {
  expect_gaussian(1.0, 1);
  expect_gaussian(3.7e-4, 2);
  expect_gaussian(1546.07, 3);
}

TEST(GaussianNoise, IsDeterministicGivenTheBitsAndRefusesBadSigma) {
  SeededBits a(5, 0), b(5, 0);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(sample_gaussian(a.bits(), 2.5).value(), sample_gaussian(b.bits(), 2.5).value());
  }
  EXPECT_EQ(sample_gaussian(a.bits(), 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sample_gaussian(a.bits(), NAN).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
