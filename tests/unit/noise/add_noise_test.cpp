#include "sdk/noise/add_noise.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sdk/noise/discrete_gaussian.h"
#include "sdk/noise/discrete_laplace.h"
#include "tests/common/golden_vectors.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace noise {
namespace {

using testing_util::SeededBits;

NoiseSampler skellam(uint64_t lambda) {
  NoiseSampler sampler;
  EXPECT_TRUE(sampler.init(NoiseSpec{NoiseKind::kSkellam, Rational{lambda, 1}, 1}).ok());
  return sampler;
}

TEST(AddNoiseTest, ModularNoiseIsTheSameDrawsWrapped) {
  const NoiseSampler noise = skellam(1000);
  std::vector<uint32_t> values = {0, 1, 0xFFFFFFFFu, 12345, 0x80000000u};
  std::vector<uint32_t> out(values.size());
  SeededBits a(50), b(50);
  ASSERT_TRUE(add_noise_mod(Span<const uint32_t>(values.data(), values.size()),
                            Span<uint32_t>(out.data(), out.size()), 32, noise, a.bits)
                  .ok());
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t z = noise.sample(b.bits).value();  // the same stream: the same noise
    EXPECT_EQ(out[i], static_cast<uint32_t>(values[i] + static_cast<uint32_t>(z)));
  }
}

TEST(AddNoiseTest, SmallerModulusMasksAndInPlaceWorks) {
  const NoiseSampler noise = skellam(100);
  std::vector<uint64_t> values(1000, 5);
  SeededBits a(51);
  Span<uint64_t> span(values.data(), values.size());
  ASSERT_TRUE(add_noise_mod(Span<const uint64_t>(span), span, 12, noise, a.bits).ok());
  bool some_wrapped = false;
  for (uint64_t v : values) {
    EXPECT_LT(v, 4096u);
    some_wrapped |= v > 2048;  // noise below -5 wraps to the top of [0, 4096)
  }
  EXPECT_TRUE(some_wrapped);
}

TEST(AddNoiseTest, PlainAdditionRefusesOverflow) {
  const NoiseSampler noise = skellam(100);
  SeededBits a(52);
  std::vector<int64_t> in = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
  std::vector<int64_t> out(4, 0);
  EXPECT_EQ(
      add_noise(Span<const int64_t>(in.data(), 4), Span<int64_t>(out.data(), 4), noise, a.bits)
          .code(),
      StatusCode::kOutOfRange);
  std::vector<int64_t> ok_in = {1, 2, 3};
  std::vector<int64_t> ok_out(3);
  ASSERT_TRUE(add_noise(Span<const int64_t>(ok_in.data(), 3), Span<int64_t>(ok_out.data(), 3),
                        noise, a.bits)
                  .ok());
}

TEST(AddNoiseTest, Int32AdditionAddsTheDrawsAndRefusesOverflow) {
  const NoiseSampler noise = skellam(100);
  std::vector<int32_t> in = {0, -5, 1000000};
  std::vector<int32_t> out(3);
  SeededBits a(55), b(55);
  ASSERT_TRUE(
      add_noise(Span<const int32_t>(in.data(), 3), Span<int32_t>(out.data(), 3), noise, a.bits)
          .ok());
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(out[i], in[i] + noise.sample(b.bits).value());
  std::vector<int32_t> top = {INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX};
  EXPECT_EQ(
      add_noise(Span<const int32_t>(top.data(), 4), Span<int32_t>(out.data(), 3), noise, a.bits)
          .code(),
      StatusCode::kInvalidArgument);
  std::vector<int32_t> top_out(4);
  EXPECT_EQ(
      add_noise(Span<const int32_t>(top.data(), 4), Span<int32_t>(top_out.data(), 4), noise, a.bits)
          .code(),
      StatusCode::kOutOfRange);
}

TEST(AddNoiseTest, BadArgumentsAreRefused) {
  const NoiseSampler noise = skellam(10);
  SeededBits a(53);
  std::vector<uint32_t> v(3), w(4);
  EXPECT_EQ(add_noise_mod(Span<const uint32_t>(v.data(), 3), Span<uint32_t>(w.data(), 4), 32, noise,
                          a.bits)
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(add_noise_mod(Span<const uint32_t>(v.data(), 3), Span<uint32_t>(v.data(), 3), 33, noise,
                          a.bits)
                .code(),
            StatusCode::kInvalidArgument);
  NoiseSampler unready;
  EXPECT_EQ(unready.sample(a.bits).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(unready.init(NoiseSpec{NoiseKind::kPolyaShare, Rational{2, 1}, 0}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(unready.init(NoiseSpec{NoiseKind::kDiscreteGaussian, Rational{0, 1}, 1}).code(),
            StatusCode::kInvalidArgument);
}

TEST(AddNoiseTest, EveryKindDraws) {
  SeededBits a(54);
  for (NoiseKind kind : {NoiseKind::kDiscreteLaplace, NoiseKind::kDiscreteGaussian,
                         NoiseKind::kSkellam, NoiseKind::kPolyaShare}) {
    NoiseSampler sampler;
    ASSERT_TRUE(sampler.init(NoiseSpec{kind, Rational{3, 1}, 4}).ok());
    int nonzero = 0;
    for (int i = 0; i < 200; ++i) nonzero += sampler.sample(a.bits).value() != 0;
    EXPECT_GT(nonzero, 20) << static_cast<int>(kind);
  }
}

TEST(SamplerDeterminismTest, PinnedDrawsAreReproducedOnEveryArchitecture) {
  Seed256 seed;
  for (int i = 0; i < 32; ++i) seed.bytes[i] = static_cast<uint8_t>(i);
  SeededStream stream(seed, 7);
  RandomBits bits(stream);
  SkellamSampler skellam;
  ASSERT_TRUE(skellam.init(Rational{100, 1}).ok());
  for (int64_t expected : golden::kSkellam100) EXPECT_EQ(skellam.sample(bits).value(), expected);
  for (int64_t expected : golden::kDiscreteGaussian10) {
    EXPECT_EQ(discrete_gaussian(bits, Rational{10, 1}).value(), expected);
  }
  for (int64_t expected : golden::kDiscreteLaplace3) {
    EXPECT_EQ(discrete_laplace(bits, Rational{3, 1}).value(), expected);
  }
}

// Issue 11 item 7: a Skellam λ of 0 was accepted, so "noise" added nothing.
TEST(AddNoiseTest, InitRefusesZeroAndInvalidParametersForEveryKind) {
  SeededBits a(55);
  for (NoiseKind kind : {NoiseKind::kDiscreteLaplace, NoiseKind::kDiscreteGaussian,
                         NoiseKind::kSkellam, NoiseKind::kPolyaShare}) {
    for (Rational bad : {Rational{0, 1}, Rational{0, 9}, Rational{1, 0}, Rational{0, 0}}) {
      NoiseSampler sampler;
      const Status s = sampler.init(NoiseSpec{kind, bad, 2});
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument)
          << static_cast<int>(kind) << " " << bad.num << "/" << bad.den;
      EXPECT_NE(std::string(s.message()).find("must be"), std::string::npos) << s.message();
      EXPECT_EQ(sampler.sample(a.bits).status().code(), StatusCode::kFailedPrecondition);
    }
  }
  NoiseSampler polya;
  EXPECT_EQ(polya.init(NoiseSpec{NoiseKind::kPolyaShare, Rational{2, 1}, 0}).code(),
            StatusCode::kInvalidArgument);
}

TEST(AddNoiseTest, InitRefusesParametersBeyondEachKindsLimits) {
  const uint64_t big = uint64_t{1} << 32;
  for (NoiseKind kind : {NoiseKind::kDiscreteLaplace, NoiseKind::kDiscreteGaussian,
                         NoiseKind::kSkellam, NoiseKind::kPolyaShare}) {
    NoiseSampler sampler;
    EXPECT_EQ(sampler.init(NoiseSpec{kind, Rational{big, 1}, 2}).code(), StatusCode::kOutOfRange)
        << static_cast<int>(kind);
    EXPECT_EQ(sampler.init(NoiseSpec{kind, Rational{1, big}, 2}).code(), StatusCode::kOutOfRange)
        << static_cast<int>(kind);
    // The same value in lowest terms is within every limit.
    EXPECT_TRUE(sampler.init(NoiseSpec{kind, Rational{3 * big, big}, 2}).ok())
        << static_cast<int>(kind);
  }
  NoiseSampler sampler;
  EXPECT_EQ(
      sampler.init(NoiseSpec{NoiseKind::kSkellam, Rational{(uint64_t{1} << 31) + 1, 1}, 1}).code(),
      StatusCode::kOutOfRange);
  EXPECT_EQ(sampler.init(NoiseSpec{NoiseKind::kPolyaShare, Rational{10001, 1}, 4}).code(),
            StatusCode::kOutOfRange);
  EXPECT_TRUE(sampler.init(NoiseSpec{NoiseKind::kPolyaShare, Rational{10000, 1}, 4}).ok());
}

TEST(AddNoiseTest, ParameterIsUsedInLowestTerms) {
  // 6/2 draws exactly as 3/1 does: the limits checked are those of the parameter in use.
  NoiseSampler unreduced;
  ASSERT_TRUE(unreduced.init(NoiseSpec{NoiseKind::kDiscreteLaplace, Rational{6, 2}, 1}).ok());
  SeededBits a(56), b(56);
  for (int i = 0; i < 50; ++i) {
    const Result<int64_t> draw = unreduced.sample(a.bits);
    ASSERT_TRUE(draw.ok()) << draw.status().message();
    ASSERT_EQ(draw.value(), discrete_laplace(b.bits, Rational{3, 1}).value());
  }
}

TEST(AddNoiseTest, RefusedInitLeavesTheSamplerAsItWas) {
  NoiseSampler sampler;
  ASSERT_TRUE(sampler.init(NoiseSpec{NoiseKind::kSkellam, Rational{100, 1}, 1}).ok());
  EXPECT_EQ(sampler.init(NoiseSpec{NoiseKind::kSkellam, Rational{0, 1}, 1}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(sampler.init(NoiseSpec{NoiseKind::kPolyaShare, Rational{2, 1}, 0}).code(),
            StatusCode::kInvalidArgument);
  const NoiseSampler fresh = skellam(100);
  SeededBits a(57), b(57);
  for (int i = 0; i < 50; ++i) {
    const Result<int64_t> draw = sampler.sample(a.bits);
    ASSERT_TRUE(draw.ok()) << draw.status().message();
    ASSERT_EQ(draw.value(), fresh.sample(b.bits).value());
  }
}

}  // namespace
}  // namespace noise
}  // namespace fedstat
