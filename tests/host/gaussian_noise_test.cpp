#include "host_server/estimate/gaussian_noise.h"

#include <gtest/gtest.h>

#include <cmath>

#include "host_server/estimate/host_common.h"
#include "sdk/privacy/accountants.h"
#include "tests/common/chi_square.h"
#include "tests/common/grid_offset_attack.h"

namespace fedstat {
namespace host {
namespace {

using testing::chance_limit_p1e6;
using testing::grid_offset;

GridGaussian noise_for(double sigma, double sensitivity, size_t values = 1) {
  return make_grid_gaussian(sigma, sensitivity, values).value();
}

// The released values have mean 0 and variance (g·s)²: the sample mean lies within 5.3 standard
// errors of 0 (two-sided p ≈ 1e-7); (n−1)s²/σ² lies below the chi-square critical value at
// p = 1e-6 and above the lower 5.3-s.d. point of its normal approximation (n = 40,000 draws).
void expect_gaussian(double sigma, uint64_t seed) {
  const GridGaussian noise = noise_for(sigma, sigma / 3);
  SeededBits source(seed, 9);
  const int n = 40000;
  double sum = 0, sum_squares = 0;
  for (int i = 0; i < n; ++i) {
    const double z = release_on_grid(noise, 0, source.bits()).value();
    sum += z;
    sum_squares += z * z;
  }
  const double mean = sum / n;
  const double variance = (sum_squares - n * mean * mean) / (n - 1);
  EXPECT_LT(std::fabs(mean), 5.3 * noise.sigma / std::sqrt(double{n})) << sigma;
  const double statistic = (n - 1) * variance / (noise.sigma * noise.sigma);
  EXPECT_LT(statistic, fedstat::testing::chi_square_critical_p1e6(n - 1)) << sigma;
  EXPECT_GT(statistic, (n - 1) - 5.3 * std::sqrt(2.0 * (n - 1))) << sigma;
}

TEST(GaussianNoise, MomentsMatchSigmaAcrossScales) {
  expect_gaussian(1.0, 1);
  expect_gaussian(3.7e-4, 2);
  expect_gaussian(1546.07, 3);
}

TEST(GaussianNoise, GridAndVarianceCarryTheRoundingInsideTheCalibratedRatio) {
  for (double sigma : {1e-9, 0.37, 1.0, 2.5, 1546.07, 3e12}) {
    for (size_t values : {size_t{1}, size_t{7}, size_t{10000}}) {
      const double sensitivity = sigma / 4.2;
      const GridGaussian noise = noise_for(sigma, sensitivity, values);
      // g is a power of two with σ/g in [2^25, 2^26).
      int exponent = 0;
      EXPECT_EQ(std::frexp(noise.grid, &exponent), 0.5);
      EXPECT_GE(sigma / noise.grid, std::ldexp(1.0, 25));
      EXPECT_LT(sigma / noise.grid, std::ldexp(1.0, 26));
      // s² is an integer with s/K ≥ σ/Δ for K = Δ/g + √D (proof steps 1–2).
      EXPECT_EQ(noise.variance.den, 1u);
      const double s = std::sqrt(static_cast<double>(noise.variance.num));
      const double k = sensitivity / noise.grid + std::sqrt(static_cast<double>(values));
      EXPECT_GE(s / k, sigma / sensitivity * (1 - 1e-15)) << sigma << " " << values;
      EXPECT_LT(s / k, sigma / sensitivity * (1 + 1e-9)) << sigma << " " << values;
      EXPECT_DOUBLE_EQ(noise.sigma, s * noise.grid);
    }
  }
}

// The defect this mechanism replaces: adding g·Y to f(D) put the output on f(D) + gℤ, and the
// offset from the grid named the dataset. Now every output is a multiple of the public g, and
// two statistics that round to the same grid point give bit-identical outputs from the same bits.
TEST(GaussianNoise, OutputsLieOnThePublicGridAndDependOnlyOnTheRoundedStatistic) {
  const GridGaussian noise = noise_for(0.8, 0.2);
  // Two statistics 0.37 grid steps apart that round to the same grid point.
  const double f = (std::floor(0.1254312 / noise.grid) + 0.1) * noise.grid;
  const double f_neighbour = f + 0.37 * noise.grid;
  ASSERT_EQ(std::nearbyint(f / noise.grid), std::nearbyint(f_neighbour / noise.grid));
  for (uint64_t seed = 0; seed < 200; ++seed) {
    SeededBits a(seed, 4), b(seed, 4);
    const double out = release_on_grid(noise, f, a.bits()).value();
    EXPECT_EQ(out, release_on_grid(noise, f_neighbour, b.bits()).value());
    const double steps = out / noise.grid;
    EXPECT_EQ(steps, std::nearbyint(steps)) << out;
  }
}

// The review's attack, against the new mechanism: the adversary knows both candidate values of
// the statistic and guesses the one whose offset from the grid the output matches best. The
// truth alternates between the neighbours over 400 fixed seeds; the guesses must be at chance.
TEST(GaussianNoise, GridOffsetAttackIsAtChance) {
  const double sensitivity = 0.693, sigma = 3.7;
  const GridGaussian noise = noise_for(sigma, sensitivity);
  const double f[2] = {0.1254312, 0.1254312 + 0.0131};  // neighbours' statistics
  const int n = 400;
  int correct = 0;
  for (int run = 0; run < n; ++run) {
    const int truth = run % 2;
    SeededBits bits(1000 + run, 0);
    const double out = release_on_grid(noise, f[truth], bits.bits()).value();
    const int guess =
        grid_offset(out, f[0], noise.grid) <= grid_offset(out, f[1], noise.grid) ? 0 : 1;
    correct += guess == truth;
  }
  EXPECT_LE(correct, chance_limit_p1e6(n));
}

// Proof step 3, checked numerically where it can be summed exactly enough: the total variation
// between N_ℤ(0, s²) and a rounded N(0, s²) stays below 1/(32 s²) (and the bound is not vacuous:
// it is within a factor 2 of the true value).
TEST(GaussianNoise, DiscreteGaussianIsWithinTheTvBoundOfARoundedGaussian) {
  for (double s : {16.0, 23.5, 64.0, 200.0}) {
    long double z = 0;
    const long double ss = static_cast<long double>(s) * s;
    const int64_t range = static_cast<int64_t>(40 * s);
    for (int64_t y = -range; y <= range; ++y) z += std::exp(-(y * y) / (2 * ss));
    long double tv = 0;
    const long double root2 = std::sqrt(2.0L);
    for (int64_t y = -range; y <= range; ++y) {
      const long double discrete = std::exp(-(y * y) / (2 * ss)) / z;
      const long double rounded =
          0.5L * (std::erfc((y - 0.5L) / (root2 * s)) - std::erfc((y + 0.5L) / (root2 * s)));
      tv += std::fabs(discrete - rounded);
    }
    tv /= 2;
    EXPECT_LE(static_cast<double>(tv), grid_tv_bound(s)) << s;
    EXPECT_GE(static_cast<double>(tv), grid_tv_bound(s) / 2) << s;
  }
  EXPECT_TRUE(std::isinf(grid_tv_bound(15.9)));
  EXPECT_LE(grid_tv_bound(std::ldexp(1.0, 25)), kGridTvPerCoordinate);
}

TEST(GaussianNoise, CalibrationDeltaLeavesRoomForTheGridTerm) {
  const double delta = grid_calibration_delta(1, 1e-6, 10).value();
  EXPECT_DOUBLE_EQ(delta, 1e-6 - (1 + std::exp(1.0)) * 10 * kGridTvPerCoordinate);
  EXPECT_LT(delta, 1e-6);
  // The calibrated σ then meets (ε, δ) with the grid term added (proof step 4).
  const double sigma = gaussian_sigma(GaussianCalibration::kAnalytic, 1, delta, 0.5).value();
  const double achieved = privacy::gaussian_delta(1, sigma, 0.5).value();
  EXPECT_LE(achieved + (1 + std::exp(1.0)) * 10 * kGridTvPerCoordinate, 1e-6);
  // Too many values for the δ: refused, not silently weaker.
  EXPECT_EQ(grid_calibration_delta(30, 1e-12, 1 << 20).status().code(), StatusCode::kOutOfRange);
  for (double bad : {0.0, -1.0, double{NAN}, double{INFINITY}}) {
    EXPECT_EQ(grid_calibration_delta(bad, 1e-6, 1).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(grid_calibration_delta(1, bad, 1).status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(grid_calibration_delta(1, 1e-6, 0).status().code(), StatusCode::kInvalidArgument);
}

TEST(GaussianNoise, RefusesBadParametersAndClampsRatherThanRefusingLargeValues) {
  for (double bad : {0.0, -2.0, double{NAN}, double{INFINITY}}) {
    EXPECT_EQ(make_grid_gaussian(bad, 1, 1).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(make_grid_gaussian(1, bad, 1).status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(make_grid_gaussian(1, 1, 0).status().code(), StatusCode::kInvalidArgument);
  // √D·σ/Δ beyond 2^28 grid steps cannot be sampled exactly: refused (public inputs only).
  EXPECT_EQ(make_grid_gaussian(1e6, 1e-6, 1u << 20).status().code(), StatusCode::kOutOfRange);

  const GridGaussian noise = noise_for(1, 0.25);
  SeededBits bits(5, 0);
  EXPECT_EQ(release_on_grid(noise, NAN, bits.bits()).status().code(), StatusCode::kInternal);
  EXPECT_EQ(release_on_grid(GridGaussian{}, 0, bits.bits()).status().code(),
            StatusCode::kFailedPrecondition);
  // A value beyond ±2^60 grid steps is clamped there: the same output as the clamp point.
  SeededBits a(6, 0), b(6, 0);
  EXPECT_EQ(release_on_grid(noise, 1e300, a.bits()).value(),
            release_on_grid(noise, std::ldexp(noise.grid, 60), b.bits()).value());
}

TEST(GaussianNoise, IsDeterministicGivenTheBits) {
  const GridGaussian noise = noise_for(2.5, 1);
  SeededBits a(5, 0), b(5, 0);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(release_on_grid(noise, 0.3, a.bits()).value(),
              release_on_grid(noise, 0.3, b.bits()).value());
  }
}

}  // namespace
}  // namespace host
}  // namespace fedstat
