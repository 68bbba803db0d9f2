#include "sdk/base/seeded_stream.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/common/chi_square.h"
#include "tests/common/golden_vectors.h"

namespace fedstat {
namespace {

Seed256 counting_seed() {
  Seed256 seed;
  for (int i = 0; i < 32; ++i) seed.bytes[i] = static_cast<uint8_t>(i);
  return seed;
}

TEST(SeededStreamTest, MatchesOpenSslAes256CtrForStreamsZeroAndOne) {
  SeededStream s0(counting_seed(), 0);
  SeededStream s1(counting_seed(), 1);
  uint8_t out[32];
  ASSERT_TRUE(s0.fill(MutableByteSpan(out)).ok());
  EXPECT_EQ(std::memcmp(out, golden::kSeededStream0, 32), 0);
  ASSERT_TRUE(s1.fill(MutableByteSpan(out)).ok());
  EXPECT_EQ(std::memcmp(out, golden::kSeededStream1, 32), 0);
}

TEST(SeededStreamTest, ByteStreamDoesNotDependOnRequestSizes) {
  SeededStream whole(counting_seed(), 9);
  SeededStream pieces(counting_seed(), 9);
  uint8_t a[1000], b[1000];
  ASSERT_TRUE(whole.fill(MutableByteSpan(a)).ok());
  size_t done = 0;
  for (size_t step = 1; done < sizeof(b); step = step * 3 % 61 + 1) {
    const size_t n = std::min(step, sizeof(b) - done);
    ASSERT_TRUE(pieces.fill(MutableByteSpan(b + done, n)).ok());
    done += n;
  }
  EXPECT_EQ(std::memcmp(a, b, sizeof(a)), 0);
  EXPECT_EQ(pieces.position(), 1000u);
}

TEST(SeededStreamTest, NextU64ReadsLittleEndian) {
  SeededStream s(counting_seed(), 0);
  auto v = s.next_u64();
  ASSERT_TRUE(v.ok());
  uint64_t expected = 0;
  for (int i = 7; i >= 0; --i) expected = expected << 8 | golden::kSeededStream0[i];
  EXPECT_EQ(v.value(), expected);
}

TEST(SeededStreamTest, UniformBelowIsUniformChiSquare) {
  // 6 and 1000 outcomes (a small bound and one that does not divide 2^64), 6·10^5 draws each;
  // chi-square at p = 1e-6 (tests/common/chi_square.h) with a fixed seed.
  for (uint64_t bound : {6u, 1000u}) {
    SeededStream s(counting_seed(), bound);
    std::vector<uint64_t> counts(bound, 0);
    for (int i = 0; i < 600000; ++i) {
      auto v = s.uniform_below(bound);
      ASSERT_TRUE(v.ok());
      ASSERT_LT(v.value(), bound);
      ++counts[v.value()];
    }
    EXPECT_LT(testing::chi_square_uniform(counts),
              testing::chi_square_critical_p1e6(static_cast<double>(bound - 1)))
        << "bound " << bound;
  }
}

TEST(SeededStreamTest, UniformBelowEdgeCases) {
  SeededStream s(counting_seed(), 0);
  EXPECT_EQ(s.uniform_below(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.uniform_below(1).value(), 0u);
  // A bound just above 2^63 rejects almost half of all words; results must stay below it.
  const uint64_t big = (1ULL << 63) + 12345;
  for (int i = 0; i < 1000; ++i) EXPECT_LT(s.uniform_below(big).value(), big);
}

}  // namespace
}  // namespace fedstat
