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

// The TabulatedSkellamSampler helpers (chunks of kNoiseChunk): element i gets the i-th draw.
struct Tabulated {
  explicit Tabulated(uint64_t lambda) {
    const Rational l{lambda, 1};
    auto sizes = TabulatedSkellamSampler::sizes_for(l);
    EXPECT_TRUE(sizes.ok());
    table.resize(sizes->table_entries);
    scratch.resize(sizes->scratch_limbs);
    EXPECT_TRUE(one.init(l, Span<PoissonThreshold>(table.data(), table.size()),
                         Span<uint64_t>(scratch.data(), scratch.size()))
                    .ok());
    many_table = table;
    many_scratch = scratch;
    EXPECT_TRUE(many.init(l, Span<PoissonThreshold>(many_table.data(), many_table.size()),
                          Span<uint64_t>(many_scratch.data(), many_scratch.size()))
                    .ok());
  }
  std::vector<PoissonThreshold> table, many_table;
  std::vector<uint64_t> scratch, many_scratch;
  TabulatedSkellamSampler one, many;
};

TEST(AddNoiseTest, TabulatedHelpersAddTheDrawsInOrder) {
  for (uint64_t lambda : {10u, 10000u}) {
    Tabulated t(lambda);
    const size_t n = 3 * kNoiseChunk + 5;
    std::vector<int64_t> in64(n), out64(n);
    std::vector<int32_t> in32(n), out32(n);
    std::vector<uint32_t> inm32(n), outm32(n);
    std::vector<uint64_t> inm64(n), outm64(n);
    for (size_t i = 0; i < n; ++i) {
      in64[i] = static_cast<int64_t>(i) * 1000 - 7;
      in32[i] = static_cast<int32_t>(i) * 3;
      inm32[i] = static_cast<uint32_t>(i) * 0x9E3779B9u;
      inm64[i] = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15u;
    }
    SeededBits a(51), b(51);
    ASSERT_TRUE(add_noise(Span<const int64_t>(in64.data(), n), Span<int64_t>(out64.data(), n),
                          t.many, a.bits)
                    .ok());
    ASSERT_TRUE(add_noise(Span<const int32_t>(in32.data(), n), Span<int32_t>(out32.data(), n),
                          t.many, a.bits)
                    .ok());
    ASSERT_TRUE(add_noise_mod(Span<const uint32_t>(inm32.data(), n),
                              Span<uint32_t>(outm32.data(), n), 20, t.many, a.bits)
                    .ok());
    ASSERT_TRUE(add_noise_mod(Span<const uint64_t>(inm64.data(), n),
                              Span<uint64_t>(outm64.data(), n), 64, t.many, a.bits)
                    .ok());
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(out64[i], in64[i] + t.one.sample(b.bits).value());
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(out32[i], in32[i] + t.one.sample(b.bits).value());
    for (size_t i = 0; i < n; ++i) {
      const uint64_t z = static_cast<uint64_t>(t.one.sample(b.bits).value());
      EXPECT_EQ(outm32[i], static_cast<uint32_t>((inm32[i] + z) & 0xFFFFFu));
    }
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(outm64[i], inm64[i] + static_cast<uint64_t>(t.one.sample(b.bits).value()));
    }
    EXPECT_EQ(a.bits.bits(64).value(), b.bits.bits(64).value());  // the same bits used
  }
  Tabulated t(100);
  SeededBits c(52);
  std::vector<int32_t> top(40, INT32_MAX), out(40);
  EXPECT_EQ(add_noise(Span<const int32_t>(top.data(), top.size()),
                      Span<int32_t>(out.data(), out.size()), t.many, c.bits)
                .code(),
            StatusCode::kOutOfRange);  // some draw is positive
  EXPECT_EQ(
      add_noise(Span<const int32_t>(top.data(), 3), Span<int32_t>(out.data(), 4), t.many, c.bits)
          .code(),
      StatusCode::kInvalidArgument);
  std::vector<uint64_t> words(5), words_out(5);
  EXPECT_EQ(add_noise_mod(Span<const uint64_t>(words.data(), 5),
                          Span<uint64_t>(words_out.data(), 5), 65, t.many, c.bits)
                .code(),
            StatusCode::kInvalidArgument);
  std::vector<int64_t> in_place = {1, 2, 3};
  ASSERT_TRUE(add_noise(Span<const int64_t>(in_place.data(), 3), Span<int64_t>(in_place.data(), 3),
                        t.many, c.bits)
                  .ok());
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
