#include "sdk/base/arena.h"

#include <gtest/gtest.h>

#include <cstring>

namespace fedstat {
namespace {

TEST(ArenaTest, CarvesAlignedZeroedArrays) {
  alignas(16) uint8_t buffer[256];
  std::memset(buffer, 0xAB, sizeof(buffer));
  Arena arena{MutableByteSpan(buffer)};
  auto bytes = arena.allocate_array<uint8_t>(3);
  ASSERT_TRUE(bytes.ok());
  auto words = arena.allocate_array<uint64_t>(4);
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(words->data()) % alignof(uint64_t), 0u);
  for (uint64_t w : words.value()) EXPECT_EQ(w, 0u);
  for (uint8_t b : bytes.value()) EXPECT_EQ(b, 0u);
  EXPECT_EQ(arena.used(), 8u + 4 * sizeof(uint64_t));  // 3 bytes + 5 of padding + 32
  EXPECT_LE(arena.used(), Arena::bytes_needed<uint8_t>(3) + Arena::bytes_needed<uint64_t>(4));
}

TEST(ArenaTest, ExhaustionIsAClearErrorAndChangesNothing) {
  alignas(8) uint8_t buffer[64];
  Arena arena{MutableByteSpan(buffer)};
  ASSERT_TRUE(arena.allocate_array<uint32_t>(10).ok());
  const size_t used_before = arena.used();
  auto too_big = arena.allocate_array<uint32_t>(7);  // 28 bytes, 24 left
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::strstr(too_big.status().message(), "arena exhausted"), nullptr);
  EXPECT_EQ(arena.used(), used_before);
  EXPECT_TRUE(arena.allocate_array<uint32_t>(6).ok());  // exactly what is left still fits
  EXPECT_EQ(arena.remaining(), 0u);
}

TEST(ArenaTest, HugeCountsDoNotOverflow) {
  alignas(8) uint8_t buffer[64];
  Arena arena{MutableByteSpan(buffer)};
  auto r = arena.allocate_array<uint64_t>(SIZE_MAX / 4);
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(arena.used(), 0u);
}

TEST(ArenaTest, RewindReleasesAndHighWaterRemembers) {
  alignas(8) uint8_t buffer[128];
  Arena arena{MutableByteSpan(buffer)};
  ASSERT_TRUE(arena.allocate_array<uint8_t>(16).ok());
  const Arena::Mark mark = arena.mark();
  ASSERT_TRUE(arena.allocate_array<uint8_t>(64).ok());
  EXPECT_EQ(arena.used(), 80u);
  ASSERT_TRUE(arena.rewind(mark).ok());
  EXPECT_EQ(arena.used(), 16u);
  EXPECT_EQ(arena.high_water(), 80u);
  EXPECT_EQ(arena.rewind(Arena::Mark{100}).code(), StatusCode::kInvalidArgument);
  arena.reset();
  EXPECT_EQ(arena.used(), 0u);
}

TEST(ArenaTest, RejectsBadAlignment) {
  alignas(8) uint8_t buffer[32];
  Arena arena{MutableByteSpan(buffer)};
  EXPECT_EQ(arena.allocate_bytes(4, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(arena.allocate_bytes(4, 0).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fedstat
