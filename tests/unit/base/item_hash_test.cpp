#include "sdk/base/item_hash.h"

#include <gtest/gtest.h>

#include <vector>

#include "sdk/base/bytes.h"
#include "tests/common/chi_square.h"
#include "tests/common/golden_vectors.h"

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
