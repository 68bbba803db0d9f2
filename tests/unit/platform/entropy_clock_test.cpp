#include <gtest/gtest.h>

#include <cstring>

#include "platform/platform.h"

namespace fedstat {
namespace platform {
namespace {

TEST(PlatformEntropyTest, FillsLargeAndEmptyRequests) {
  uint8_t a[4096], b[4096];
  std::memset(a, 0, sizeof(a));
  std::memset(b, 0, sizeof(b));
  ASSERT_TRUE(fill_entropy(MutableByteSpan(a)).ok());
  ASSERT_TRUE(fill_entropy(MutableByteSpan(b)).ok());
  EXPECT_NE(std::memcmp(a, b, sizeof(a)), 0);
  size_t zeros = 0;
  for (uint8_t x : a) zeros += (x == 0);
  EXPECT_LT(zeros, 64u);  // expected 16, s.d. 4: an untouched buffer would have 4096
  EXPECT_TRUE(fill_entropy(MutableByteSpan()).ok());
}

TEST(PlatformClockTest, IsMonotonicAndInMicroseconds) {
  const uint64_t start = monotonic_micros();
  EXPECT_GT(start, 0u);
  uint64_t previous = start;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t now = monotonic_micros();
    ASSERT_GE(now, previous);
    previous = now;
  }
  // 10^5 clock reads take far less than a minute: the unit is not nanoseconds-as-micros.
  EXPECT_LT(previous - start, 60u * 1000u * 1000u);
}

}  // namespace
}  // namespace platform
}  // namespace fedstat
