#include <gtest/gtest.h>

#include <stdlib.h>
#include <algorithm>
#include <utility>

#include <string>
#include <vector>

#include "platform/posix/posix_platform.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "sdk/histogram/dense_histogram.h"
#include "sdk/histogram/sparse_histogram.h"
#include "tests/common/golden_vectors.h"

namespace fedstat {
namespace histogram {
namespace {

TEST(DenseHistogramTest, CountsAndRefusesWithoutChangingWhatItHolds) {
  uint32_t counts[8];
  DenseHistogram h;
  ASSERT_TRUE(h.init(Span<uint32_t>(counts)).ok());
  ASSERT_TRUE(h.add(3).ok());
  ASSERT_TRUE(h.add(3, 4).ok());
  ASSERT_TRUE(h.add(7, 2).ok());
  EXPECT_EQ(h.count(3), 5u);
  EXPECT_EQ(h.total(), 7u);
  EXPECT_EQ(h.add(8, 10).code(), StatusCode::kOutOfRange);  // outside the domain
  ASSERT_TRUE(h.add(0, UINT32_MAX).ok());
  EXPECT_EQ(h.add(0, 1).code(), StatusCode::kResourceExhausted);  // would overflow
  EXPECT_EQ(h.count(0), UINT32_MAX);
  EXPECT_EQ(h.total(), uint64_t{7} + UINT32_MAX);
  EXPECT_EQ(h.dropped(), 11u);
  uint32_t none[1];
  DenseHistogram empty;
  EXPECT_EQ(empty.init(Span<uint32_t>(none, 0)).code(), StatusCode::kInvalidArgument);
}

TEST(DenseHistogramTest, RoundTripAndEveryCorruptionIsRejected) {
  uint32_t counts[16], other[16];
  DenseHistogram h, g;
  ASSERT_TRUE(h.init(Span<uint32_t>(counts)).ok());
  ASSERT_TRUE(g.init(Span<uint32_t>(other)).ok());
  for (uint32_t i = 0; i < 16; ++i) ASSERT_TRUE(h.add(i, i * i + 1).ok());
  (void)h.add(99, 5);
  std::vector<uint8_t> blob(DenseHistogram::serialized_bytes(16));
  ASSERT_EQ(h.serialize(MutableByteSpan(blob.data(), blob.size())).value(), blob.size());
  ASSERT_TRUE(g.deserialize(ByteSpan(blob.data(), blob.size())).ok());
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(g.count(i), h.count(i));
  EXPECT_EQ(g.total(), h.total());
  EXPECT_EQ(g.dropped(), 5u);
  ASSERT_TRUE(g.add(0, 1000).ok());  // g now differs from the blob
  for (size_t i = 0; i < blob.size(); ++i) {
    std::vector<uint8_t> bad = blob;
    bad[i] ^= 0x04;
    EXPECT_FALSE(g.deserialize(ByteSpan(bad.data(), bad.size())).ok()) << "byte " << i;
    EXPECT_EQ(g.count(0), 1001u);  // nothing held was lost
  }
  EXPECT_EQ(g.deserialize(ByteSpan(blob.data(), 20)).code(), StatusCode::kDataLoss);
  uint32_t small[4];
  DenseHistogram wrong_domain;
  ASSERT_TRUE(wrong_domain.init(Span<uint32_t>(small)).ok());
  EXPECT_EQ(wrong_domain.deserialize(ByteSpan(blob.data(), blob.size())).code(),
            StatusCode::kInvalidArgument);
}

TEST(SparseHistogramTest, FullTableRefusesNewItemsButKeepsCountingOldOnes) {
  SparseEntry table[8];
  SparseHistogram h;
  ASSERT_TRUE(h.init(Span<SparseEntry>(table)).ok());
  for (uint32_t id = 100; id < 108; ++id) ASSERT_TRUE(h.add(id, 2).ok());
  EXPECT_EQ(h.size(), 8u);
  EXPECT_EQ(h.add(5000, 3).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(h.count(5000), 0u);
  EXPECT_EQ(h.dropped(), 3u);
  ASSERT_TRUE(h.add(104, 5).ok());
  EXPECT_EQ(h.count(104), 7u);
  EXPECT_EQ(h.total(), 8u * 2 + 5);
  SparseEntry odd[6];
  SparseHistogram bad;
  EXPECT_EQ(bad.init(Span<SparseEntry>(odd)).code(), StatusCode::kInvalidArgument);
}

// The layout depends only on the set of ids: every insertion order of the same items — here
// with every id sharing one home slot, and a 200-item set with many collisions — gives the same
// table, so the stored bytes do not reveal which item arrived first.
TEST(SparseHistogramTest, LayoutDependsOnlyOnTheSetOfIds) {
  auto table_after = [](size_t capacity, std::vector<uint32_t> ids, uint64_t shuffle) {
    std::vector<SparseEntry> table(capacity);
    SparseHistogram h;
    EXPECT_TRUE(h.init(Span<SparseEntry>(table.data(), table.size())).ok());
    uint64_t state = shuffle;
    for (size_t i = ids.size(); i > 1; --i) {  // a seeded Fisher–Yates order
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      std::swap(ids[i - 1], ids[(state >> 33) % i]);
    }
    for (uint32_t id : ids) EXPECT_TRUE(h.add(id, id % 5 + 1).ok());
    for (uint32_t id : ids) EXPECT_EQ(h.count(id), id % 5 + 1);
    std::vector<std::pair<uint32_t, uint32_t>> layout;
    for (const SparseEntry& e : h.slots()) layout.emplace_back(e.id, e.count);
    return layout;
  };
  const std::vector<uint32_t> same_home = {8, 16, 21, 29, 3};  // capacity 8: homes 7, 7, 7, 7, 4
  std::vector<uint32_t> many;
  for (uint32_t i = 0; i < 200; ++i) many.push_back((i * 2654435761u) % 1000003u);
  for (uint64_t shuffle = 1; shuffle <= 20; ++shuffle) {
    EXPECT_EQ(table_after(8, same_home, shuffle), table_after(8, same_home, 0)) << shuffle;
    EXPECT_EQ(table_after(256, many, shuffle), table_after(256, many, 0)) << shuffle;
  }
}

TEST(SparseHistogramTest, ManyItemsRoundTripAndPinnedBytes) {
  // The same insertions give the same bytes on every architecture (golden CRC).
  std::vector<SparseEntry> table(256), other(512);
  SparseHistogram h, g;
  ASSERT_TRUE(h.init(Span<SparseEntry>(table.data(), table.size())).ok());
  ASSERT_TRUE(g.init(Span<SparseEntry>(other.data(), other.size())).ok());
  for (uint32_t i = 0; i < 200; ++i) {
    ASSERT_TRUE(
        h.add(static_cast<uint32_t>((uint64_t{i} * 2654435761u) % 1000003u), i % 7 + 1).ok());
  }
  EXPECT_EQ(h.size(), 200u);
  std::vector<uint8_t> blob(SparseHistogram::serialized_bytes(h.size()));
  ASSERT_TRUE(h.serialize(MutableByteSpan(blob.data(), blob.size())).ok());
  // The CRC of the content (without the blob's own trailing CRC: a CRC over data followed by its
  // CRC is the constant residue 0x2144DF1C and would prove nothing).
  EXPECT_EQ(crc32(ByteSpan(blob.data(), blob.size() - 4)), golden::kSparseHistogramBlobCrc);
  ASSERT_TRUE(g.deserialize(ByteSpan(blob.data(), blob.size())).ok());
  for (const SparseEntry& e : h.slots()) {
    if (e.count != 0) {
      EXPECT_EQ(g.count(e.id), e.count);
    }
  }
  EXPECT_EQ(g.total(), h.total());
  // Loading needs an empty histogram.
  EXPECT_EQ(g.deserialize(ByteSpan(blob.data(), blob.size())).code(),
            StatusCode::kFailedPrecondition);
}

TEST(SparseHistogramTest, CorruptOrCraftedBlobsAreRejected) {
  SparseEntry table[16];
  SparseHistogram h;
  ASSERT_TRUE(h.init(Span<SparseEntry>(table)).ok());
  for (uint32_t id = 1; id <= 5; ++id) ASSERT_TRUE(h.add(id * 17, id).ok());
  std::vector<uint8_t> blob(SparseHistogram::serialized_bytes(5));
  ASSERT_TRUE(h.serialize(MutableByteSpan(blob.data(), blob.size())).ok());
  SparseEntry other[16];
  SparseHistogram g;
  ASSERT_TRUE(g.init(Span<SparseEntry>(other)).ok());
  for (size_t i = 0; i < blob.size(); ++i) {
    std::vector<uint8_t> bad = blob;
    bad[i] ^= 0x40;
    EXPECT_FALSE(g.deserialize(ByteSpan(bad.data(), bad.size())).ok()) << "byte " << i;
    EXPECT_EQ(g.size(), 0u);
  }
  // A well-formed blob (valid CRC) that repeats an id: rejected, and g stays empty.
  std::vector<uint8_t> crafted = blob;
  store_le32(crafted.data() + kBlobHeaderBytes + 8, load_le32(crafted.data() + kBlobHeaderBytes));
  store_le32(crafted.data() + kBlobHeaderBytes + 12,
             load_le32(crafted.data() + kBlobHeaderBytes + 4));
  uint64_t total = 0;
  for (size_t i = 0; i < 5; ++i) total += load_le32(crafted.data() + kBlobHeaderBytes + 8 * i + 4);
  store_le64(crafted.data() + 12, total);
  seal_blob(MutableByteSpan(crafted.data(), crafted.size()));
  EXPECT_EQ(g.deserialize(ByteSpan(crafted.data(), crafted.size())).code(), StatusCode::kDataLoss);
  EXPECT_EQ(g.size(), 0u);
  EXPECT_EQ(g.total(), 0u);
  // A dense blob is not a sparse one.
  uint32_t counts[4];
  DenseHistogram d;
  ASSERT_TRUE(d.init(Span<uint32_t>(counts)).ok());
  std::vector<uint8_t> dense(DenseHistogram::serialized_bytes(4));
  ASSERT_TRUE(d.serialize(MutableByteSpan(dense.data(), dense.size())).ok());
  EXPECT_EQ(g.deserialize(ByteSpan(dense.data(), dense.size())).code(),
            StatusCode::kInvalidArgument);
}

TEST(SparseHistogramTest, PersistsThroughPlatformStorage) {
  char pattern[] = "/tmp/fedstat-histogram-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  ASSERT_TRUE(platform::posix::set_storage_directory(pattern).ok());
  SparseEntry table[64], other[64];
  SparseHistogram h, g;
  ASSERT_TRUE(h.init(Span<SparseEntry>(table)).ok());
  ASSERT_TRUE(g.init(Span<SparseEntry>(other)).ok());
  for (uint32_t id = 0; id < 40; ++id) ASSERT_TRUE(h.add(id * 1000, id + 1).ok());
  std::vector<uint8_t> scratch(SparseHistogram::serialized_bytes(64));
  ASSERT_TRUE(h.save("histogram", MutableByteSpan(scratch.data(), scratch.size())).ok());
  ASSERT_TRUE(g.load("histogram", MutableByteSpan(scratch.data(), scratch.size())).ok());
  EXPECT_EQ(g.count(39000), 40u);
  EXPECT_EQ(g.total(), h.total());
  ASSERT_EQ(std::system((std::string("rm -rf ") + pattern).c_str()), 0);
}

}  // namespace
}  // namespace histogram
}  // namespace fedstat
