#include "sdk/base/item_hash.h"

#include <gtest/gtest.h>

#include <vector>

#include "sdk/base/bytes.h"
#include "tests/common/chi_square.h"
#include "tests/common/golden_vectors.h"
#include "tests/common/vector_isa_param.h"

namespace fedstat {
namespace {

ItemHasher reference_hasher() {
  uint8_t key[16];
  for (int i = 0; i < 16; ++i) key[i] = static_cast<uint8_t>(i);
  return ItemHasher::from_key_bytes(key);
}

TEST(ItemHashTest, MatchesSipHashReferenceVectorsForEveryTailLength) {
  const ItemHasher hasher = reference_hasher();
  uint8_t message[18];
  for (int i = 0; i < 18; ++i) message[i] = static_cast<uint8_t>(i);
  for (size_t n = 0; n < 18; ++n) {
    EXPECT_EQ(hasher.hash_bytes(ByteSpan(message, n)), golden::kSipHash24[n]) << "length " << n;
  }
}

TEST(ItemHashTest, IdHashEqualsHashOfLittleEndianBytes) {
  const ItemHasher hasher(0x0123456789abcdefULL, 0xfedcba9876543210ULL);
  uint64_t id = 1;
  for (int i = 0; i < 1000; ++i, id = id * 6364136223846793005ULL + 1442695040888963407ULL) {
    uint8_t bytes[8];
    store_le64(bytes, id);
    ASSERT_EQ(hasher.hash_id(id), hasher.hash_bytes(ByteSpan(bytes)));
  }
  // The 8-byte reference vector: message 00..07 is the id 0x0706050403020100.
  EXPECT_EQ(reference_hasher().hash_id(0x0706050403020100ULL), golden::kSipHash24[8]);
}

// Every kernel of hash_ids gives hash_id's values (itself pinned to the reference vectors above),
// for every batch length around the lane counts (the vector part and the one-by-one rest) and
// ids at both ends of uint32. A kernel this processor lacks must refuse and write nothing, and its
// test is reported skipped; on a processor with AVX-512F all three kernels are checked.
class ItemHashKernels : public ::testing::TestWithParam<VectorIsa> {};

TEST_P(ItemHashKernels, GiveHashIdsValuesForEveryLength) {
  const VectorIsa isa = GetParam();
  const ItemHasher hasher(0x0123456789abcdefULL, 0xfedcba9876543210ULL);
  std::vector<uint32_t> items(70);
  uint64_t state = 5;
  for (size_t i = 0; i < items.size(); ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    items[i] = static_cast<uint32_t>(state >> 32);
  }
  items[0] = 0;
  items[1] = 0xFFFFFFFFu;
  items[9] = 0x80000000u;
  for (size_t n = 0; n <= items.size(); ++n) {
    std::vector<uint64_t> out(n + 1, 0x5A5A5A5A5A5A5A5AULL);
    if (!vector_isa_available(isa)) {
      EXPECT_FALSE(item_hash_detail::hash_ids_with(isa, hasher.k0(), hasher.k1(), items.data(),
                                                   out.data(), n));
      for (uint64_t value : out) ASSERT_EQ(value, 0x5A5A5A5A5A5A5A5AULL);
      continue;
    }
    ASSERT_TRUE(item_hash_detail::hash_ids_with(isa, hasher.k0(), hasher.k1(), items.data(),
                                                out.data(), n));
    for (size_t j = 0; j < n; ++j) ASSERT_EQ(out[j], hasher.hash_id(items[j])) << "n " << n;
    EXPECT_EQ(out[n], 0x5A5A5A5A5A5A5A5AULL) << "wrote past n = " << n;
  }
  if (!vector_isa_available(isa)) {
    GTEST_SKIP() << "this processor lacks the kernel: only its refusal was checked";
  }
  // The public entry point (the fastest kernel here) gives the same values.
  std::vector<uint64_t> out(items.size());
  hasher.hash_ids(items.data(), out.data(), items.size());
  for (size_t j = 0; j < items.size(); ++j) ASSERT_EQ(out[j], hasher.hash_id(items[j]));
}

INSTANTIATE_TEST_SUITE_P(EveryKernel, ItemHashKernels, testing_support::every_vector_isa(),
                         testing_support::vector_isa_name);

TEST(ItemHashTest, TheBaselineRunsEverywhereAndTheWidestIsAvailable) {
  EXPECT_TRUE(vector_isa_available(VectorIsa::kBaseline));
  EXPECT_TRUE(vector_isa_available(widest_vector_isa()));
}

TEST(ItemHashTest, DifferentKeysGiveUnrelatedHashes) {
  const ItemHasher a(1, 2), b(1, 3);
  int equal_low_bytes = 0;
  for (uint64_t id = 0; id < 4096; ++id) {
    if ((a.hash_id(id) & 0xFF) == (b.hash_id(id) & 0xFF)) ++equal_low_bytes;
  }
  // Independent hashes agree on the low byte with probability 1/256: mean 16, s.d. 4.
  // 16 + 10·4 = 56 is a > 8-sigma bound (binomial tail < 1e-6).
  EXPECT_LT(equal_low_bytes, 56);
}

TEST(ItemHashTest, ConsecutiveIdsFillBucketsUniformly) {
  // Chi-square goodness of fit, 1000 buckets, 10^6 consecutive ids (the worst case for a weak
  // mixer), threshold p = 1e-6 (tests/common/chi_square.h), fixed key.
  const ItemHasher hasher(0x5eed, 0xfeed);
  constexpr size_t kBuckets = 1000;
  std::vector<uint64_t> counts(kBuckets, 0);
  for (uint64_t id = 0; id < 1000000; ++id) ++counts[hasher.hash_id(id) % kBuckets];
  EXPECT_LT(testing::chi_square_uniform(counts), testing::chi_square_critical_p1e6(kBuckets - 1));
}

}  // namespace
}  // namespace fedstat
