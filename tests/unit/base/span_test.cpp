#include "sdk/base/span.h"

#include <gtest/gtest.h>

namespace fedstat {
namespace {

TEST(SpanTest, ViewsAnArray) {
  int values[5] = {1, 2, 3, 4, 5};
  Span<int> s(values);
  EXPECT_EQ(s.size(), 5u);
  EXPECT_EQ(s.size_bytes(), 5 * sizeof(int));
  s[2] = 30;
  EXPECT_EQ(values[2], 30);
  int sum = 0;
  for (int v : s) sum += v;
  EXPECT_EQ(sum, 1 + 2 + 30 + 4 + 5);
}

TEST(SpanTest, SubviewsStayInsideOrComeBackEmpty) {
  int values[5] = {1, 2, 3, 4, 5};
  const Span<int> s(values);
  EXPECT_EQ(s.first(2).size(), 2u);
  EXPECT_EQ(s.last(2)[0], 4);
  EXPECT_EQ(s.subspan(1, 3)[2], 4);
  EXPECT_EQ(s.subspan(4).size(), 1u);
  EXPECT_TRUE(s.first(6).empty());
  EXPECT_TRUE(s.last(6).empty());
  EXPECT_TRUE(s.subspan(3, 3).empty());
  EXPECT_TRUE(s.subspan(6).empty());
  EXPECT_TRUE(s.subspan(2, SIZE_MAX).empty());  // no overflow in offset + count
}

TEST(SpanTest, ConvertsToConstAndToBytes) {
  uint32_t words[2] = {0x04030201u, 0};
  const Span<const uint32_t> c = Span<uint32_t>(words);
  const ByteSpan bytes = as_bytes(c);
  EXPECT_EQ(bytes.size(), 8u);
  MutableByteSpan writable = as_writable_bytes(Span<uint32_t>(words));
  writable[4] = 0xAA;
  EXPECT_NE(words[1], 0u);
}

}  // namespace
}  // namespace fedstat
