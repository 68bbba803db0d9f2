// The float pipeline's rounding at the largest dimension quantise supports (D = 2^24), where the
// rotation has the most stages: the device's y stays within rounding_bound of the exact R·P_c(x),
// so the sensitivity model_update_lambda uses holds there too. (Host only: 2^24 values of float
// and double work are too slow for the emulated architectures; the unit tests cover small D.)
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sdk/quantise/quantise.h"
#include "sdk/quantise/rotation.h"

namespace fedstat {
namespace quantise {
namespace {

TEST(QuantiseRounding, LargestDimensionStaysWithinTheRoundingBound) {
  const size_t d = kMaxDimension;
  QuantiseConfig c;
  c.clip_norm = 3;
  c.rotation_seed.bytes[0] = 9;
  ASSERT_EQ(encoded_length(d, c), d);
  // A deterministic spread of magnitudes (several binades), just above the clip norm.
  std::vector<double> x(d);
  double norm2 = 0;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (double& v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = std::ldexp(static_cast<double>(state >> 11), -53 - static_cast<int>(state & 7)) - 0.004;
    norm2 += v * v;
  }
  for (double& v : x) v *= 1.0000001 * c.clip_norm / std::sqrt(norm2);

  std::vector<float> y(d);
  ASSERT_TRUE(
      clip_to_float(Span<const double>(x.data(), d), c.clip_norm, Span<float>(y.data(), d)).ok());
  ASSERT_TRUE(clip_and_rotate(Span<float>(y.data(), d), d, c).ok());
  std::vector<double> exact(x);
  for (double& v : exact) v /= 1.0000001;  // P_c(x)
  ASSERT_TRUE(rotate(Span<double>(exact.data(), d), c.rotation_seed, 0).ok());
  double distance2 = 0, y_norm2 = 0;
  for (size_t i = 0; i < d; ++i) {
    distance2 += (y[i] - exact[i]) * (y[i] - exact[i]);
    y_norm2 += static_cast<double>(y[i]) * y[i];
  }
  const double e = rounding_bound(d, c);
  EXPECT_GT(std::sqrt(distance2), 0);  // the rounding is real: a zero slack would be wrong
  EXPECT_LE(std::sqrt(distance2), e);
  EXPECT_LE(std::sqrt(y_norm2), c.clip_norm + e);
  std::printf("D = 2^24: |y - R P_c(x)| = %.3g, bound %.3g (%.2f%% of it); |y| - c = %.3g\n",
              std::sqrt(distance2), e, 100 * std::sqrt(distance2) / e,
              std::sqrt(y_norm2) - c.clip_norm);
}

}  // namespace
}  // namespace quantise
}  // namespace fedstat
