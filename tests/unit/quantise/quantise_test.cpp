#include "sdk/quantise/quantise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sdk/noise/bernoulli.h"
#include "sdk/quantise/rotation.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace quantise {
namespace {

using noise::testing_util::SeededBits;

Seed256 task_seed() {
  Seed256 s;
  s.bytes[0] = 42;
  return s;
}

TEST(RotationTest, OrthonormalAndInvertible) {
  constexpr size_t kD = 8;
  // Columns of R: rotate each basis vector; they must be orthonormal.
  std::vector<std::vector<float>> columns;
  for (size_t i = 0; i < kD; ++i) {
    std::vector<float> e(kD, 0.0f);
    e[i] = 1;
    ASSERT_TRUE(rotate(Span<float>(e.data(), kD), task_seed(), 3).ok());
    columns.push_back(e);
  }
  for (size_t i = 0; i < kD; ++i) {
    for (size_t j = 0; j < kD; ++j) {
      double dot = 0;
      for (size_t k = 0; k < kD; ++k) dot += columns[i][k] * columns[j][k];
      EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-6) << i << "," << j;
    }
  }
  std::vector<float> x(1024);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 3;
  const std::vector<float> original = x;
  double before = 0, after = 0;
  for (float v : x) before += v * v;
  ASSERT_TRUE(rotate(Span<float>(x.data(), x.size()), task_seed(), 0).ok());
  for (float v : x) after += v * v;
  EXPECT_NEAR(after, before, 1e-5 * before);
  ASSERT_TRUE(unrotate(Span<float>(x.data(), x.size()), task_seed(), 0).ok());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], original[i], 1e-5);
  std::vector<float> odd(6);
  EXPECT_EQ(rotate(Span<float>(odd.data(), 6), task_seed(), 0).code(),
            StatusCode::kInvalidArgument);
}

// A refused rotation changes nothing (the random signs were applied before the length check).
TEST(RotationTest, ARefusedLengthLeavesTheValuesAsTheyWere) {
  std::vector<float> f = {1, 2, 3, 4, 5, 6};
  std::vector<double> d = {1, 2, 3, 4, 5, 6};
  const std::vector<float> f0 = f;
  const std::vector<double> d0 = d;
  for (uint64_t stream = 0; stream < 8; ++stream) {  // some stream negates some of six values
    EXPECT_EQ(rotate(Span<float>(f.data(), f.size()), task_seed(), stream).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(rotate(Span<double>(d.data(), d.size()), task_seed(), stream).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(unrotate(Span<double>(d.data(), d.size()), task_seed(), stream).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(f, f0);
    EXPECT_EQ(d, d0);
  }
}

// Above the largest power of two in a size_t there is no padded dimension: the answer is
// kSizeOverflow at once (doubling once wrapped to 0 and looped forever).
TEST(RotationTest, PaddedDimensionSaturates) {
  const size_t top = ~(SIZE_MAX >> 1);
  EXPECT_EQ(padded_dimension(1), 1u);
  EXPECT_EQ(padded_dimension(5), 8u);
  EXPECT_EQ(padded_dimension(top), top);
  EXPECT_EQ(padded_dimension(top + 1), SIZE_MAX);
  EXPECT_EQ(padded_dimension(SIZE_MAX), SIZE_MAX);
  QuantiseConfig config;
  config.rotate = true;
  EXPECT_EQ(encoded_length(top + 1, config), SIZE_MAX);
}

TEST(BernoulliDyadicTest, DoubleProbabilitiesAreExact) {
  SeededBits s(90);
  for (double p : {0.3, 0.5, 0.875, 1.0 / 3, 1e-3}) {
    std::map<int64_t, uint64_t> counts;
    for (int i = 0; i < 300000; ++i) ++counts[noise::bernoulli_dyadic(s.bits, p).value() ? 1 : 0];
    noise::testing_util::expect_fits(
        counts, [p](int64_t k) { return k == 1 ? p : 1 - p; }, 0, 1, "bernoulli_dyadic");
  }
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(noise::bernoulli_dyadic(s.bits, 1e-300).value());
  EXPECT_EQ(noise::bernoulli_dyadic(s.bits, 1.5).status().code(), StatusCode::kInvalidArgument);
}

QuantiseConfig plain_config() {
  QuantiseConfig c;
  c.rotate = false;
  c.gamma = 1;
  c.beta = 1;  // ‖v* − v̂‖² < D always holds: plain (unbiased) stochastic rounding
  c.clip_norm = 100;
  return c;
}

TEST(QuantiseTest, StochasticRoundingIsUnbiasedWhenTheBoundNeverBinds) {
  // Mean of 20000 roundings per coordinate within 5.3 standard errors of the value (two-sided
  // p ≈ 1e-7 per coordinate; s.e. = √(f(1−f)/n) for fractional part f).
  const float values[4] = {0.3f, -1.7f, 2.25f, 0.999f};
  SeededBits s(91);
  std::vector<double> sums(4, 0);
  constexpr int kRuns = 20000;
  for (int run = 0; run < kRuns; ++run) {
    float update[4] = {values[0], values[1], values[2], values[3]};
    uint32_t out[4];
    ASSERT_TRUE(
        quantise(Span<float>(update), 4, plain_config(), nullptr, s.bits, Span<uint32_t>(out))
            .ok());
    for (int i = 0; i < 4; ++i) sums[i] += static_cast<int32_t>(out[i]);
  }
  for (int i = 0; i < 4; ++i) {
    const double v = values[i], f = v - std::floor(v);
    EXPECT_LT(std::fabs(sums[i] / kRuns - v), 5.3 * std::sqrt(f * (1 - f) / kRuns) + 1e-9) << i;
  }
}

// Every outcome meets ‖v* − γx‖ ≤ β√D: stochastic tries first, then nearest rounding (error ≤ ½
// per value, enough for β ≥ ½). With one try, values whose fractional parts make a stochastic miss
// likely (0.6: 0.4 or 0.6 away) still give a report, every time.
TEST(QuantiseTest, ConditionalRoundingAlwaysMeetsTheBetaBound) {
  QuantiseConfig c = plain_config();
  c.beta = 0.5;
  c.max_rounding_tries = 1;
  SeededBits s(92);
  std::vector<float> values(64);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 3.6f + static_cast<float>(i % 7);
  int nearest = 0;
  for (int run = 0; run < 200; ++run) {
    std::vector<float> update = values;
    std::vector<uint32_t> out(64);
    ASSERT_TRUE(quantise(Span<float>(update.data(), 64), 64, c, nullptr, s.bits,
                         Span<uint32_t>(out.data(), 64))
                    .ok());
    double error2 = 0;
    bool all_nearest = true;
    for (size_t i = 0; i < 64; ++i) {
      const double e = static_cast<int32_t>(out[i]) - static_cast<double>(values[i]);
      EXPECT_LE(std::fabs(e), 1.0);
      error2 += e * e;
      all_nearest = all_nearest && std::fabs(e) < 0.5;
    }
    EXPECT_LE(error2, c.beta * c.beta * 64 + 1e-9);
    nearest += all_nearest;
  }
  EXPECT_GT(nearest, 0);  // the fallback was taken (a miss has probability ≈ 0.4 per try)
}

// A refusal would be an output that depends on the data: β below ½ (no rounding is sure to meet
// it) and a γ·c beyond the modulus are refused from the configuration alone, for every update.
TEST(QuantiseTest, NoReportFailsBecauseOfItsData) {
  SeededBits s(93);
  QuantiseConfig c = plain_config();
  c.beta = 0.4;
  EXPECT_EQ(validate_config(64, c).code(), StatusCode::kInvalidArgument);
  c.beta = 0.5;
  c.max_rounding_tries = 1;
  // Fractional parts ½ (every value ½ away) against integers: both always give a report.
  for (float offset : {0.5f, 0.0f}) {
    for (int run = 0; run < 50; ++run) {
      std::vector<float> update(64);
      for (size_t i = 0; i < 64; ++i) update[i] = offset + static_cast<float>(i % 5);
      std::vector<uint32_t> out(64);
      EXPECT_TRUE(quantise(Span<float>(update.data(), 64), 64, c, nullptr, s.bits,
                           Span<uint32_t>(out.data(), 64))
                      .ok());
    }
  }
  // γ·(c + e) must fit 2^31 − 2: refused for any update, even a zero one.
  QuantiseConfig wide;
  wide.clip_norm = 1;
  wide.gamma = std::ldexp(1.0, 31);
  std::vector<float> zero(8, 0.0f);
  std::vector<uint32_t> out(8);
  EXPECT_EQ(
      quantise(Span<float>(zero.data(), 8), 8, wide, nullptr, s.bits, Span<uint32_t>(out.data(), 8))
          .code(),
      StatusCode::kInvalidArgument);
  wide.modulus_bits = 64;
  std::vector<uint64_t> out64(8);
  EXPECT_TRUE(quantise(Span<float>(zero.data(), 8), 8, wide, nullptr, s.bits,
                       Span<uint64_t>(out64.data(), 8))
                  .ok());
}

// The float pipeline's output y stays within rounding_bound of the exact R·P_c(x) (computed in
// double), for updates far above, just above and below the clip norm, at several dimensions; so
// neighbours' vectors differ by at most min(‖x − x′‖, 2c) + 2e.
TEST(QuantiseTest, FloatPipelineStaysWithinTheRoundingBound) {
  for (size_t d : {size_t{3}, size_t{100}, size_t{1000}}) {
    QuantiseConfig c;
    c.rotation_seed = task_seed();
    c.clip_norm = 0.75;
    const size_t length = encoded_length(d, c);
    const double e = rounding_bound(d, c);
    SeededBits s(94 + d);
    for (double scale : {1000.0, 1.0000001, 0.999999, 0.3}) {
      std::vector<double> x(d);
      double norm2 = 0;
      for (double& v : x) {
        v = static_cast<double>(s.bits.uniform_below(1u << 30).value()) / (1u << 29) - 1;
        norm2 += v * v;
      }
      for (double& v : x) v *= scale * c.clip_norm / std::sqrt(norm2);
      // The float pipeline: clip_to_float, then quantise's clip and rotation.
      std::vector<float> y(length, 0.0f);
      ASSERT_TRUE(
          clip_to_float(Span<const double>(x.data(), d), c.clip_norm, Span<float>(y.data(), length))
              .ok());
      ASSERT_TRUE(clip_and_rotate(Span<float>(y.data(), length), d, c).ok());
      // The exact pipeline, in double: P_c then R.
      std::vector<double> reference(length, 0.0);
      const double shrink = std::min(1.0, scale <= 1 ? 1.0 : 1 / scale);
      for (size_t i = 0; i < d; ++i) reference[i] = x[i] * shrink;
      ASSERT_TRUE(rotate(Span<double>(reference.data(), length), c.rotation_seed, 0).ok());
      double distance2 = 0;
      for (size_t i = 0; i < length; ++i) {
        distance2 += (y[i] - reference[i]) * (y[i] - reference[i]);
      }
      EXPECT_LE(std::sqrt(distance2), e) << d << " " << scale;
    }
  }
}

TEST(QuantiseTest, DiscretisedSensitivityAddsTheRoundingToTheBound) {
  QuantiseConfig c;
  c.clip_norm = 2;
  c.gamma = 1000;
  c.beta = 0.6;
  const double root = std::sqrt(16.0);
  const double l2 = discretised_l2_sensitivity(0.5, 16, c);
  EXPECT_GT(l2, 1000 * 0.5 + 2 * 0.6 * root);  // 002's γ·Δ + 2β√D, plus rounding
  EXPECT_LT(l2, 1000 * (0.5 + 2 * rounding_bound(16, c)) + 2 * 0.6 * root * (1 + 1e-12) +
                    1000 * 2 * std::ldexp(1.0, -51) + 1e-9);
  // Clipping caps the change at 2c.
  EXPECT_EQ(discretised_l2_sensitivity(100, 16, c), discretised_l2_sensitivity(4, 16, c));
  // e = (log2 D + 7)·2^−24·c (+ a subnormal term): D = 16 with rotation, K = 4.
  EXPECT_NEAR(rounding_bound(16, c), 11 * std::ldexp(2.0, -24), 1e-40);
}

template <typename Word>
void round_trip(unsigned bits, uint64_t salt) {
  QuantiseConfig c;
  c.rotation_seed = task_seed();
  c.gamma = 4096;
  c.clip_norm = 2;
  c.modulus_bits = bits;
  constexpr size_t kD = 100, kClients = 10;
  const size_t length = encoded_length(kD, c);
  ASSERT_EQ(length, 128u);
  SeededBits s(salt);
  std::vector<uint64_t> sum(length, 0);
  std::vector<double> expected(kD, 0);
  for (size_t client = 0; client < kClients; ++client) {
    std::vector<float> update(length);
    double norm2 = 0;
    for (size_t i = 0; i < kD; ++i) {
      update[i] = std::cos(static_cast<float>(client * 31 + i)) * 0.3f;
      norm2 += update[i] * update[i];
    }
    const double clip = std::min(1.0, c.clip_norm / std::sqrt(norm2));
    for (size_t i = 0; i < kD; ++i) expected[i] += update[i] * clip;
    std::vector<Word> out(length);
    ASSERT_TRUE(quantise(Span<float>(update.data(), length), kD, c, nullptr, s.bits,
                         Span<Word>(out.data(), length))
                    .ok());
    std::vector<uint64_t> words(out.begin(), out.end());
    ASSERT_TRUE(add_mod(Span<uint64_t>(sum.data(), length),
                        Span<const uint64_t>(words.data(), length), bits)
                    .ok());
  }
  std::vector<double> work(length), decoded(kD);
  ASSERT_TRUE(dequantise(Span<const uint64_t>(sum.data(), length), kD, c,
                         Span<double>(work.data(), length), Span<double>(decoded.data(), kD))
                  .ok());
  // Each client's rounding error is at most β·√D/γ in L2; the sum's at most kClients times that.
  double error2 = 0;
  for (size_t i = 0; i < kD; ++i) error2 += (decoded[i] - expected[i]) * (decoded[i] - expected[i]);
  EXPECT_LE(std::sqrt(error2), kClients * c.beta * std::sqrt(128.0) / c.gamma + 1e-4);
}

TEST(QuantiseTest, ModularSumOfTenClientsDecodesToTheSumOfUpdates) {
  round_trip<uint32_t>(32, 93);
  round_trip<uint64_t>(64, 94);
  round_trip<uint32_t>(20, 95);  // a small modulus with room for the sum
}

TEST(QuantiseTest, NoiseIsAddedInsideTheModulus) {
  QuantiseConfig c = plain_config();
  c.gamma = 1;
  noise::NoiseSampler skellam;
  ASSERT_TRUE(skellam.init({noise::NoiseKind::kSkellam, noise::Rational{50, 1}, 1}).ok());
  SeededBits s(96);
  std::vector<float> zeros(1000, 0.0f);
  std::vector<uint32_t> out(1000);
  ASSERT_TRUE(quantise(Span<float>(zeros.data(), 1000), 1000, c, &skellam, s.bits,
                       Span<uint32_t>(out.data(), 1000))
                  .ok());
  double sum2 = 0;
  for (uint32_t w : out)
    sum2 += static_cast<double>(static_cast<int32_t>(w)) * static_cast<int32_t>(w);
  EXPECT_NEAR(sum2 / 1000, 100, 5.3 * 100 * std::sqrt(2.0 / 1000));  // Var Sk(50) = 100
}

TEST(QuantiseTest, BadInputsAreRefused) {
  SeededBits s(97);
  QuantiseConfig c;
  c.gamma = 1e12;  // γ·c far beyond 2^31: refused from the configuration
  std::vector<float> update(8, 0.5f);
  std::vector<uint32_t> out(8);
  EXPECT_EQ(
      quantise(Span<float>(update.data(), 8), 8, c, nullptr, s.bits, Span<uint32_t>(out.data(), 8))
          .code(),
      StatusCode::kInvalidArgument);
  c = QuantiseConfig();
  c.modulus_bits = 40;  // does not fit uint32 words
  EXPECT_EQ(
      quantise(Span<float>(update.data(), 8), 8, c, nullptr, s.bits, Span<uint32_t>(out.data(), 8))
          .code(),
      StatusCode::kInvalidArgument);
  c = QuantiseConfig();
  update[3] = NAN;
  EXPECT_EQ(
      quantise(Span<float>(update.data(), 8), 8, c, nullptr, s.bits, Span<uint32_t>(out.data(), 8))
          .code(),
      StatusCode::kInvalidArgument);
  std::vector<uint32_t> wrong(5);
  update[3] = 0;
  EXPECT_EQ(quantise(Span<float>(update.data(), 8), 8, c, nullptr, s.bits,
                     Span<uint32_t>(wrong.data(), 5))
                .code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace quantise
}  // namespace fedstat
