#include "sdk/tasks/heterogeneity_task.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace fedstat {
namespace tasks {
namespace {

// x = (0.2, 0.4, 0.6): mean 0.4, s² = (0.04 + 0 + 0.04)/3 = 0.08/3, w = 1/s² = 37.5.
const double kX[] = {0.2, 0.4, 0.6};
constexpr double kWeight = 37.5;

TEST(HeterogeneityTask, RoundOneIsVectorWeightedVectorWeightAndInverse) {
  double out[8];
  ASSERT_TRUE(
      heterogeneity_round1(Span<const double>(kX, 3), HeterogeneityConfig{}, Span<double>(out, 8))
          .ok());
  EXPECT_NEAR(within_vector_variance(Span<const double>(kX, 3)).value(), 0.08 / 3, 1e-15);
  for (int j = 0; j < 3; ++j) {
    EXPECT_DOUBLE_EQ(out[j], kX[j]);
    EXPECT_NEAR(out[3 + j], kWeight * kX[j], 1e-12);
  }
  EXPECT_NEAR(out[6], kWeight, 1e-12);
  EXPECT_NEAR(out[7], 1 / kWeight, 1e-15);
}

TEST(HeterogeneityTask, RoundTwoClampsTheMeansItIsGiven) {
  // mean (0.5, −0.1, 1.3) is clamped to (0.5, 0, 1): gaps 0.3, 0.4, 0.4.
  const double mean[] = {0.5, -0.1, 1.3};
  const double weighted_mean[] = {0, 0, 0};  // gaps 0.2, 0.4, 0.6 → 0.56, × w = 21
  double out[2];
  HeterogeneityConfig config;
  ASSERT_TRUE(heterogeneity_round2(Span<const double>(kX, 3), Span<const double>(mean, 3),
                                   Span<const double>(weighted_mean, 3), config,
                                   Span<double>(out, 2))
                  .ok());
  EXPECT_NEAR(out[0], 0.09 + 0.16 + 0.16, 1e-12);
  EXPECT_NEAR(out[1], 21, 1e-10);
  config.p = 1;
  ASSERT_TRUE(heterogeneity_round2(Span<const double>(kX, 3), Span<const double>(mean, 3),
                                   Span<const double>(weighted_mean, 3), config,
                                   Span<double>(out, 2))
                  .ok());
  EXPECT_NEAR(out[0], 1.1, 1e-12);
}

TEST(HeterogeneityTask, ConstantVectorGetsTheClipWeight) {
  const double flat[] = {0.3, 0.3, 0.3, 0.3};
  double out[10];
  HeterogeneityConfig config;
  config.max_weight = 64;
  ASSERT_TRUE(
      heterogeneity_round1(Span<const double>(flat, 4), config, Span<double>(out, 10)).ok());
  EXPECT_EQ(out[8], 64);
  EXPECT_EQ(clipped_weight(0.001, 64), 64);  // 1/s² = 1000 > W
  EXPECT_EQ(clipped_weight(0.25, 64), 4);
}

TEST(HeterogeneityTask, RefusesBadInput) {
  double out[8];
  const double outside[] = {0.2, 1.5, 0.1};
  const double nan[] = {0.2, std::numeric_limits<double>::quiet_NaN(), 0.1};
  EXPECT_EQ(heterogeneity_round1(Span<const double>(outside, 3), {}, Span<double>(out, 8)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(heterogeneity_round1(Span<const double>(nan, 3), {}, Span<double>(out, 8)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(heterogeneity_round1(Span<const double>(kX, 3), {}, Span<double>(out, 7)).code(),
            StatusCode::kInvalidArgument);
  HeterogeneityConfig bad_p;
  bad_p.p = 0.5;
  EXPECT_EQ(heterogeneity_round1(Span<const double>(kX, 3), bad_p, Span<double>(out, 8)).code(),
            StatusCode::kInvalidArgument);
  HeterogeneityConfig bad_w;
  bad_w.max_weight = 3;
  EXPECT_EQ(heterogeneity_round1(Span<const double>(kX, 3), bad_w, Span<double>(out, 8)).code(),
            StatusCode::kInvalidArgument);
  const double mean[] = {0.1, 0.1};
  EXPECT_EQ(heterogeneity_round2(Span<const double>(kX, 3), Span<const double>(mean, 2),
                                 Span<const double>(mean, 2), {}, Span<double>(out, 2))
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(HeterogeneityTask, SensitivitiesBoundWhatOneClientCanMove) {
  HeterogeneityConfig config;
  config.max_weight = 100;
  const HeterogeneitySensitivities s = heterogeneity_sensitivities(10, config);
  EXPECT_DOUBLE_EQ(s.l2[0], std::sqrt(10.0));
  EXPECT_DOUBLE_EQ(s.l2[1], std::sqrt(100.0 * 100 * 10 + 96.0 * 96 + 0.24 * 0.24));
  EXPECT_DOUBLE_EQ(s.l2[2], 10);
  EXPECT_DOUBLE_EQ(s.l2[3], 1000);
  // The extremes: a constant vector at 0 (w = W) replaced by one at 1 moves Σw·x by W per
  // coordinate; its round-2 Q term against a mean at the far corner is W·d.
  const double zeros[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  const double ones[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  double out[2];
  ASSERT_TRUE(heterogeneity_round2(Span<const double>(zeros, 10), Span<const double>(ones, 10),
                                   Span<const double>(ones, 10), config, Span<double>(out, 2))
                  .ok());
  EXPECT_DOUBLE_EQ(out[0], s.l2[2]);
  EXPECT_DOUBLE_EQ(out[1], s.l2[3]);
}

TEST(HeterogeneityTask, FixedPointRoundsToNearestAndBoundsTheSensitivity) {
  const double values[] = {0.1, -2.5, 3.49, 1e-9};
  int64_t out[4];
  ASSERT_TRUE(encode_fixed_point(Span<const double>(values, 4), 10, Span<int64_t>(out, 4)).ok());
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], -25);
  EXPECT_EQ(out[2], 35);  // 34.9 rounds up
  EXPECT_EQ(out[3], 0);
  const double huge[] = {1e300};
  EXPECT_EQ(encode_fixed_point(Span<const double>(huge, 1), 1, Span<int64_t>(out, 1)).code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(encode_fixed_point(Span<const double>(values, 4), 0, Span<int64_t>(out, 4)).code(),
            StatusCode::kInvalidArgument);
  // A refusal writes nothing, not even the entries before the one that does not fit.
  const double last_too_big[] = {1, 2, 3, 1e300};
  int64_t untouched[4] = {7, 7, 7, 7};
  EXPECT_EQ(encode_fixed_point(Span<const double>(last_too_big, 4), 1, Span<int64_t>(untouched, 4))
                .code(),
            StatusCode::kOutOfRange);
  for (int64_t v : untouched) EXPECT_EQ(v, 7);
  // Two inputs Δ2 apart in L2 encode at most scale·Δ2 + √k apart: (0.04, 0.04) vs (0.16, 0.16)
  // at scale 10 are 0.17 apart (scaled 1.70) but encode to (0, 0) and (2, 2), 2.83 apart.
  const privacy::Sensitivity s = fixed_point_sensitivity(0.12 * std::sqrt(2.0), 10, 2);
  EXPECT_NEAR(s.l2, 1.2 * std::sqrt(2.0) + std::sqrt(2.0), 1e-12);
  EXPECT_GE(s.l2, std::sqrt(8.0));
  EXPECT_NEAR(s.l1, std::sqrt(2.0) * s.l2, 1e-12);
}

// The skellam mechanism's sensitivities: release k at its own scale, the fixed-point bound of
// Δ2_k, plus one client's double-arithmetic slack (a hair above, never below).
TEST(HeterogeneityTask, EncodedSensitivitiesAreTheFixedPointBoundsAtEachScale) {
  HeterogeneityConfig config;
  config.max_weight = 8;
  const HeterogeneitySensitivities s = heterogeneity_sensitivities(3, config);
  const double scales[4] = {70, 70, 40, 40};
  privacy::Sensitivity out[4];
  heterogeneity_encoded_sensitivities(3, config, scales, out);
  const size_t entries[4] = {3, 5, 1, 1};
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(heterogeneity_release_entries(3, k), entries[k]);
    const privacy::Sensitivity bound = fixed_point_sensitivity(s.l2[k], scales[k], entries[k]);
    EXPECT_GT(out[k].l2, bound.l2) << k;
    EXPECT_NEAR(out[k].l2, bound.l2, 1e-11 * bound.l2) << k;
    EXPECT_NEAR(out[k].l1, std::sqrt(static_cast<double>(entries[k])) * out[k].l2, 1e-9) << k;
  }
}

}  // namespace
}  // namespace tasks
}  // namespace fedstat
