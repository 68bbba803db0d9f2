#include "sdk/base/crc32.h"

#include <gtest/gtest.h>

#include "tests/common/golden_vectors.h"

namespace fedstat {
namespace {

TEST(Crc32Test, MatchesTheCatalogueCheckValue) {
  const uint8_t digits[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(crc32(ByteSpan(digits)), golden::kCrc32Check);
  EXPECT_EQ(crc32(ByteSpan()), 0u);
}

TEST(Crc32Test, IncrementalEqualsOneShotAndDetectsEveryBitFlip) {
  uint8_t data[100];
  for (size_t i = 0; i < sizeof(data); ++i) data[i] = static_cast<uint8_t>(i * 37 + 11);
  const uint32_t whole = crc32(ByteSpan(data));
  Crc32 parts;
  parts.update(ByteSpan(data).first(33));
  parts.update(ByteSpan(data).subspan(33));
  EXPECT_EQ(parts.value(), whole);
  for (size_t bit = 0; bit < 8 * sizeof(data); ++bit) {
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_NE(crc32(ByteSpan(data)), whole) << "bit " << bit;
    data[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  }
}

}  // namespace
}  // namespace fedstat
