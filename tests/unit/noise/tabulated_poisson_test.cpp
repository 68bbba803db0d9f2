// The tabulated exact Poisson and Skellam samplers: chi-square against the exact pmfs (p = 1e-6,
// fixed seeds) for every path (the alias-block proposal with its tails, the difference of two
// draws, the Poisson(2λ) draw split by a popcount), and the exactness of the fast decision: with
// the table's known bits cut to a few (or none), the big-integer path decides most draws, and the
// samples AND the bits used must be IDENTICAL to the fast path's (both read U up to its first
// difference from A(j)'s exact expansion). sample_many() must equal sample() calls in a row.
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

using Method = TabulatedSkellamSampler::Method;
using testing_util::SeededBits;

struct Memory {
  explicit Memory(TabulatedPoissonSampler::Sizes sizes)
      : table(sizes.table_entries), scratch(sizes.scratch_limbs) {}
  static Memory poisson(Rational lambda) {
    auto sizes = TabulatedPoissonSampler::sizes_for(lambda);
    EXPECT_TRUE(sizes.ok()) << sizes.status().message();
    return Memory(sizes.value());
  }
  static Memory skellam(Rational lambda, Method method) {
    auto sizes = TabulatedSkellamSampler::sizes_for(lambda, method);
    EXPECT_TRUE(sizes.ok()) << sizes.status().message();
    return Memory(sizes.value());
  }
  Span<PoissonThreshold> table_span() { return Span<PoissonThreshold>(table.data(), table.size()); }
  Span<uint64_t> scratch_span() { return Span<uint64_t>(scratch.data(), scratch.size()); }
  std::vector<PoissonThreshold> table;
  std::vector<uint64_t> scratch;
};

// The next 64 bits of two readers agree: both used the same number of bits so far.
void expect_same_position(RandomBits& a, RandomBits& b, const char* what) {
  EXPECT_EQ(a.bits(64).value(), b.bits(64).value()) << what << ": different numbers of bits used";
}

void check_poisson(Rational lambda, size_t n, uint64_t salt) {
  Memory memory = Memory::poisson(lambda);
  TabulatedPoissonSampler sampler;
  ASSERT_TRUE(sampler.init(lambda, memory.table_span(), memory.scratch_span()).ok());
  SeededBits s(salt);
  testing_util::expect_poisson(
      lambda.to_double(), n, [&] { return sampler.sample(s.bits); }, "tabulated Poisson");
}

TEST(TabulatedPoissonTest, MatchesThePmf) {
  check_poisson(Rational{1, 3}, 300000, 70);
  check_poisson(Rational{7, 2}, 300000, 71);
  check_poisson(Rational{10, 1}, 300000, 76);
  check_poisson(Rational{20, 1}, 300000, 77);
  check_poisson(Rational{100, 1}, 300000, 72);
  check_poisson(Rational{10000, 1}, 300000, 73);
  check_poisson(Rational{123457, 7}, 200000, 74);
  check_poisson(Rational{1000000, 1}, 200000, 75);
}

// Sk(λ) from `method` against e^−2λ·I_d(2λ) (chi-square and moments), drawn with sample_many.
void check_skellam(Rational lambda, Method method, bool expect_split, size_t n, uint64_t salt) {
  Memory memory = Memory::skellam(lambda, method);
  TabulatedSkellamSampler sampler;
  ASSERT_TRUE(sampler.init(lambda, memory.table_span(), memory.scratch_span(), method).ok());
  EXPECT_EQ(sampler.splits(), expect_split);
  SeededBits s(salt);
  std::vector<int64_t> draws(n);
  ASSERT_TRUE(sampler.sample_many(s.bits, Span<int64_t>(draws.data(), draws.size())).ok());
  std::map<int64_t, uint64_t> h;
  for (int64_t d : draws) ++h[d];
  const double l = lambda.to_double();
  const int64_t span = static_cast<int64_t>(12 * std::sqrt(2 * l) + 10);
  const std::vector<double> pmf = testing_util::skellam_pmf_table(l, span);
  testing_util::expect_fits(
      h, [&pmf](int64_t d) { return pmf[static_cast<size_t>(d < 0 ? -d : d)]; }, -span, span,
      expect_split ? "Skellam, split" : "Skellam, difference");
  testing_util::expect_moments(h, 0, 2 * l, 1 / (2 * l), "tabulated Skellam");
}

TEST(TabulatedSkellamTest, MatchesThePmfByEveryMethod) {
  check_skellam(Rational{1, 3}, Method::kAuto, true, 300000, 90);
  check_skellam(Rational{10, 1}, Method::kAuto, true, 300000, 91);
  check_skellam(Rational{10, 1}, Method::kDifference, false, 300000, 92);
  check_skellam(Rational{24, 1}, Method::kAuto, true, 300000, 93);
  check_skellam(Rational{25, 1}, Method::kAuto, false, 300000, 99);
  check_skellam(Rational{100, 1}, Method::kSplit, true, 200000, 94);
  check_skellam(Rational{100, 1}, Method::kAuto, false, 300000, 95);
  check_skellam(Rational{10000, 1}, Method::kAuto, false, 300000, 96);
  check_skellam(Rational{1000000, 1}, Method::kAuto, false, 200000, 97);
}

TEST(TabulatedSkellamTest, SumOfTenSk5IsSk50) {
  Memory memory = Memory::skellam(Rational{5, 1}, Method::kAuto);
  TabulatedSkellamSampler sampler;
  ASSERT_TRUE(sampler.init(Rational{5, 1}, memory.table_span(), memory.scratch_span()).ok());
  SeededBits s(98);
  auto h = testing_util::histogram(100000, [&] {
    int64_t sum = 0;
    for (int i = 0; i < 10; ++i) sum += sampler.sample(s.bits).value();
    return sum;
  });
  const std::vector<double> pmf = testing_util::skellam_pmf_table(50, 120);
  testing_util::expect_fits(
      h, [&pmf](int64_t d) { return pmf[static_cast<size_t>(d < 0 ? -d : d)]; }, -120, 120,
      "sum of 10 Sk(5)");
}

// With at most `known` table bits per decision, the big integers decide ~2^−known of them; the
// draws and the bits used must not change.
void check_exact_path(Rational lambda, unsigned known, int draws, uint64_t min_fallbacks) {
  Memory fast_memory = Memory::poisson(lambda), slow_memory = Memory::poisson(lambda);
  TabulatedPoissonSampler fast, slow;
  ASSERT_TRUE(fast.init(lambda, fast_memory.table_span(), fast_memory.scratch_span()).ok());
  ASSERT_TRUE(slow.init(lambda, slow_memory.table_span(), slow_memory.scratch_span()).ok());
  slow.limit_known_bits_for_testing(known);
  SeededBits a(80), b(80);
  for (int i = 0; i < draws; ++i) {
    const auto x = fast.sample(a.bits);
    const auto y = slow.sample(b.bits);
    ASSERT_TRUE(x.ok() && y.ok()) << (x.ok() ? y.status().message() : x.status().message());
    ASSERT_EQ(x.value(), y.value()) << "draw " << i << " lambda " << lambda.to_double();
  }
  expect_same_position(a.bits, b.bits, "exact path");
  EXPECT_GE(slow.exact_fallbacks(), min_fallbacks) << "lambda " << lambda.to_double();
  EXPECT_LT(fast.exact_fallbacks(), 5u);  // and the fast path almost never needs it
}

TEST(TabulatedPoissonTest, ExactPathGivesTheSameSamplesAndBitsAsTheFastPath) {
  for (Rational lambda : {Rational{1, 3}, Rational{7, 2}, Rational{10, 1}, Rational{100, 1}}) {
    check_exact_path(lambda, 0, 3000, 3000);  // every decision by big integers
    check_exact_path(lambda, 2, 20000, 4000);
  }
  check_exact_path(Rational{1000, 1}, 0, 1000, 1000);  // blocks of 2: A(j) < 1 − ε in earnest
  check_exact_path(Rational{10000, 1}, 0, 300, 300);
  check_exact_path(Rational{10000, 1}, 3, 5000, 300);
  check_exact_path(Rational{1000000, 1}, 4, 1000, 20);
}

TEST(TabulatedSkellamTest, SampleManyGivesTheSamplesAndBitsOfSampleCalls) {
  for (Rational lambda : {Rational{10, 1}, Rational{10000, 1}, Rational{1000000, 1}}) {
    for (Method method : {Method::kAuto, Method::kDifference, Method::kSplit}) {
      if (method == Method::kSplit && lambda.num > 10) continue;  // ~2λ bits a sample
      Memory one_memory = Memory::skellam(lambda, method);
      Memory many_memory = Memory::skellam(lambda, method);
      TabulatedSkellamSampler one, many;
      ASSERT_TRUE(
          one.init(lambda, one_memory.table_span(), one_memory.scratch_span(), method).ok());
      ASSERT_TRUE(
          many.init(lambda, many_memory.table_span(), many_memory.scratch_span(), method).ok());
      SeededBits a(85), b(85);
      std::vector<int64_t> batch(1000);
      ASSERT_TRUE(many.sample_many(b.bits, Span<int64_t>(batch.data(), 600)).ok());
      ASSERT_TRUE(many.sample_many(b.bits, Span<int64_t>(batch.data() + 600, 400)).ok());
      for (size_t i = 0; i < batch.size(); ++i) {
        ASSERT_EQ(one.sample(a.bits).value(), batch[i]) << "draw " << i;
      }
      expect_same_position(a.bits, b.bits, "sample_many");
    }
    // And the Poisson sampler's own batch.
    Memory one_memory = Memory::poisson(lambda), many_memory = Memory::poisson(lambda);
    TabulatedPoissonSampler one, many;
    ASSERT_TRUE(one.init(lambda, one_memory.table_span(), one_memory.scratch_span()).ok());
    ASSERT_TRUE(many.init(lambda, many_memory.table_span(), many_memory.scratch_span()).ok());
    SeededBits a(86), b(86);
    std::vector<uint64_t> batch(1000);
    ASSERT_TRUE(many.sample_many(b.bits, Span<uint64_t>(batch.data(), batch.size())).ok());
    for (size_t i = 0; i < batch.size(); ++i) ASSERT_EQ(one.sample(a.bits).value(), batch[i]);
    expect_same_position(a.bits, b.bits, "Poisson sample_many");
  }
}

TEST(TabulatedPoissonTest, SizesAndErrors) {
  auto sizes = TabulatedPoissonSampler::sizes_for(Rational{10000, 1});
  ASSERT_TRUE(sizes.ok());
  EXPECT_GT(sizes->table_entries, 1000u);
  EXPECT_LT(sizes->table_entries, 3000u);
  // The Cortex-M4 budget: λ = 100 in at most 3 KiB of table and 2 KiB of scratch.
  auto small_sizes = TabulatedSkellamSampler::sizes_for(Rational{100, 1});
  ASSERT_TRUE(small_sizes.ok());
  EXPECT_LE(small_sizes->table_entries * sizeof(PoissonThreshold), 3072u);
  EXPECT_LE(small_sizes->scratch_limbs * sizeof(uint64_t), 2048u);
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
  TabulatedSkellamSampler skellam;
  EXPECT_EQ(skellam.sample(s.bits).status().code(), StatusCode::kFailedPrecondition);
  int64_t out[2];
  EXPECT_EQ(skellam.sample_many(s.bits, Span<int64_t>(out)).code(),
            StatusCode::kFailedPrecondition);
  // Splitting needs 2λ within the limits: 2p must stay below 2^32 in lowest terms.
  const Rational odd_large{4294967291u, 214748365u};  // λ ≈ 20, p prime, q odd
  EXPECT_EQ(TabulatedSkellamSampler::sizes_for(odd_large, Method::kSplit).status().code(),
            StatusCode::kOutOfRange);
  Memory memory = Memory::skellam(odd_large, Method::kAuto);  // kAuto: the difference instead
  TabulatedSkellamSampler fallback;
  ASSERT_TRUE(fallback.init(odd_large, memory.table_span(), memory.scratch_span()).ok());
  EXPECT_FALSE(fallback.splits());
}

TEST(TabulatedPoissonTest, PinnedDrawsAreReproducedOnEveryArchitecture) {
  Seed256 seed;
  for (int i = 0; i < 32; ++i) seed.bytes[i] = static_cast<uint8_t>(i);
  SeededStream stream(seed, 8);
  RandomBits bits(stream);
  Memory memory = Memory::skellam(Rational{100, 1}, Method::kAuto);
  TabulatedSkellamSampler skellam;
  ASSERT_TRUE(skellam.init(Rational{100, 1}, memory.table_span(), memory.scratch_span()).ok());
  for (int64_t expected : golden::kTabulatedSkellam100) {
    EXPECT_EQ(skellam.sample(bits).value(), expected);
  }
  Memory split_memory = Memory::skellam(Rational{10, 1}, Method::kAuto);
  TabulatedSkellamSampler split;
  ASSERT_TRUE(
      split.init(Rational{10, 1}, split_memory.table_span(), split_memory.scratch_span()).ok());
  for (int64_t expected : golden::kTabulatedSkellam10) {
    EXPECT_EQ(split.sample(bits).value(), expected);
  }
}

TEST(RandomBitsTest, LookaheadAndCallerBufferReadTheSameBitsAsBit) {
  Seed256 seed;
  SeededStream s1(seed, 3), s2(seed, 3), s3(seed, 3);
  uint8_t big[1000];  // used as 1000 − 1000 % 8 = 1000 bytes
  RandomBits plain(s1), looking(s2), buffered(s3, MutableByteSpan(big));
  std::vector<bool> expected;
  for (int i = 0; i < 20000; ++i) expected.push_back(plain.bit().value());
  size_t at = 0;
  unsigned step = 1;
  while (at + 64 <= expected.size()) {
    ASSERT_TRUE(looking.ensure_lookahead().ok());
    const uint64_t v = looking.peek64();
    for (unsigned i = 0; i < 64; ++i) ASSERT_EQ(((v >> i) & 1) != 0, expected[at + i]) << at;
    step = (step + 29) % 65;  // 0..64, every value (29 is coprime to 65)
    looking.skip(step);
    at += step;
    if (step % 5 == 0) {  // interleave the other readers
      ASSERT_EQ(looking.bit().value(), expected[at]);
      ++at;
    }
  }
  for (size_t i = 0; i < expected.size(); ++i) ASSERT_EQ(buffered.bit().value(), expected[i]);
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
  // (3·2^130 + 1) − (2^128 − 2^65 + 1) = 11·2^128 + 2^65, and subtracting past zero is refused.
  ASSERT_TRUE(b.subtract(a).ok());
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(b_limbs[0], 0u);
  EXPECT_EQ(b_limbs[1], 2u);
  EXPECT_EQ(b_limbs[2], 11u);
  EXPECT_EQ(a.subtract(b).code(), StatusCode::kInvalidArgument);
  uint64_t tiny_limbs[1];
  BigUint tiny(Span<uint64_t>(tiny_limbs, 1));
  ASSERT_TRUE(tiny.assign(1).ok());
  EXPECT_EQ(tiny.shift_left(64).code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace noise
}  // namespace fedstat
