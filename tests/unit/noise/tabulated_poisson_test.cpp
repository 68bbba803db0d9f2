// The tabulated exact Poisson sampler: chi-square against the exact pmf (p = 1e-6, fixed seeds),
// and the exactness of its fast path: with every margin widened so that the big-integer
// fallback decides a large share of draws, the samples must be IDENTICAL to the fast path's
// (both compute the same event [U < A(j)] from the same bits).
#include "sdk/noise/tabulated_poisson.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sdk/noise/big_uint.h"
#include "tests/common/golden_vectors.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace noise {
namespace {

using testing_util::SeededBits;

struct Memory {
  explicit Memory(Rational lambda) {
    auto sizes = TabulatedPoissonSampler::sizes_for(lambda);
    EXPECT_TRUE(sizes.ok()) << sizes.status().message();
    table.resize(sizes->table_entries);
    scratch.resize(sizes->scratch_limbs);
  }
  Span<PoissonThreshold> table_span() { return Span<PoissonThreshold>(table.data(), table.size()); }
  Span<uint64_t> scratch_span() { return Span<uint64_t>(scratch.data(), scratch.size()); }
  std::vector<PoissonThreshold> table;
  std::vector<uint64_t> scratch;
};

void check(Rational lambda, size_t n, uint64_t salt) {
  Memory memory(lambda);
  TabulatedPoissonSampler sampler;
  ASSERT_TRUE(sampler.init(lambda, memory.table_span(), memory.scratch_span()).ok());
  SeededBits s(salt);
  testing_util::expect_poisson(
      lambda.to_double(), n, [&] { return sampler.sample(s.bits); }, "tabulated Poisson");
}

TEST(TabulatedPoissonTest, MatchesThePmf) {
  check(Rational{1, 3}, 300000, 70);
  check(Rational{7, 2}, 300000, 71);
  check(Rational{100, 1}, 300000, 72);
  check(Rational{10000, 1}, 300000, 73);
  check(Rational{123457, 7}, 200000, 74);
  check(Rational{1000000, 1}, 200000, 75);
}

TEST(TabulatedPoissonTest, ExactFallbackGivesTheSameSamplesAsTheFastPath) {
  for (Rational lambda : {Rational{7, 2}, Rational{100, 1}, Rational{10000, 1}}) {
    Memory fast_memory(lambda), slow_memory(lambda);
    TabulatedPoissonSampler fast, slow;
    ASSERT_TRUE(fast.init(lambda, fast_memory.table_span(), fast_memory.scratch_span()).ok());
    ASSERT_TRUE(slow.init(lambda, slow_memory.table_span(), slow_memory.scratch_span()).ok());
    slow.widen_margins_for_testing(uint64_t{1} << 62);  // a quarter of [0, 2^64) each side
    SeededBits a(80), b(80);
    for (int i = 0; i < 20000; ++i) {
      const auto x = fast.sample(a.bits);
      const auto y = slow.sample(b.bits);
      ASSERT_TRUE(x.ok() && y.ok());
      ASSERT_EQ(x.value(), y.value()) << "draw " << i << " lambda " << lambda.to_double();
    }
    EXPECT_GT(slow.exact_fallbacks(), 2000u);  // the big-integer path really decided many
    EXPECT_LT(fast.exact_fallbacks(), 5u);     // and the fast path almost never needs it
  }
}

TEST(TabulatedPoissonTest, SizesAndErrors) {
  auto sizes = TabulatedPoissonSampler::sizes_for(Rational{10000, 1});
  ASSERT_TRUE(sizes.ok());
  EXPECT_GT(sizes->table_entries, 1000u);
  EXPECT_LT(sizes->table_entries, 3000u);
  std::vector<PoissonThreshold> small(10);
  std::vector<uint64_t> scratch(sizes->scratch_limbs);
  TabulatedPoissonSampler sampler;
  EXPECT_EQ(sampler
                .init(Rational{10000, 1}, Span<PoissonThreshold>(small.data(), small.size()),
                      Span<uint64_t>(scratch.data(), scratch.size()))
                .code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(TabulatedPoissonSampler::sizes_for(Rational{1, 0}).status().code(),
            StatusCode::kInvalidArgument);
  // λ = 0 is no noise (issue 11 item 7).
  EXPECT_EQ(TabulatedPoissonSampler::sizes_for(Rational{0, 1}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(sampler
                .init(Rational{0, 1}, Span<PoissonThreshold>(small.data(), small.size()),
                      Span<uint64_t>(scratch.data(), scratch.size()))
                .code(),
            StatusCode::kInvalidArgument);
  SeededBits s(81);
  EXPECT_EQ(sampler.sample(s.bits).status().code(), StatusCode::kFailedPrecondition);
}

TEST(TabulatedPoissonTest, PinnedDrawsAreReproducedOnEveryArchitecture) {
  Seed256 seed;
  for (int i = 0; i < 32; ++i) seed.bytes[i] = static_cast<uint8_t>(i);
  SeededStream stream(seed, 8);
  RandomBits bits(stream);
  Memory memory(Rational{100, 1});
  TabulatedSkellamSampler skellam;
  ASSERT_TRUE(skellam.init(Rational{100, 1}, memory.table_span(), memory.scratch_span()).ok());
  for (int64_t expected : golden::kTabulatedSkellam100) {
    EXPECT_EQ(skellam.sample(bits).value(), expected);
  }
}

TEST(BigUintTest, ArithmeticMatchesWordArithmetic) {
  uint64_t a_limbs[8], b_limbs[8], c_limbs[8];
  BigUint a(Span<uint64_t>(a_limbs, 8)), b(Span<uint64_t>(b_limbs, 8)),
      c(Span<uint64_t>(c_limbs, 8));
  ASSERT_TRUE(a.assign(0xFFFFFFFFFFFFFFFFull).ok());
  ASSERT_TRUE(a.multiply_word(0xFFFFFFFFFFFFFFFFull).ok());  // (2^64−1)^2 = 2^128 − 2^65 + 1
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(a_limbs[0], 1u);
  EXPECT_EQ(a_limbs[1], 0xFFFFFFFFFFFFFFFEull);
  ASSERT_TRUE(b.assign(3).ok());
  ASSERT_TRUE(b.shift_left(130).ok());  // 3·2^130
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(b_limbs[2], 12u);
  ASSERT_TRUE(c.assign_product(a, b).ok());
  EXPECT_EQ(c.compare(a), 1);
  ASSERT_TRUE(b.add_word(1).ok());
  EXPECT_EQ(b_limbs[0], 1u);
  uint64_t tiny_limbs[1];
  BigUint tiny(Span<uint64_t>(tiny_limbs, 1));
  ASSERT_TRUE(tiny.assign(1).ok());
  EXPECT_EQ(tiny.shift_left(64).code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace noise
}  // namespace fedstat
