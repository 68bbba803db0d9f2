#include "sdk/noise/add_noise.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace noise
}  // namespace fedstat
