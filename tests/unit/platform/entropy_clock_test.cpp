#include <gtest/gtest.h>

#include <cstring>

#include "platform/platform.h"
#if defined(__linux__)
#include <time.h>

#include "platform/posix/posix_platform.h"
#endif

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

#if defined(__linux__)
// A saved TLS session's maximum age must count a phone's sleep: on Linux the clock is
// CLOCK_BOOTTIME (CLOCK_MONOTONIC stops while suspended), and monotonic_micros() reads it — its
// value lies between two CLOCK_BOOTTIME reads taken around it (on a host that has been
// suspended, CLOCK_MONOTONIC would read less than the first by the time slept).
TEST(PlatformClockTest, CountsSuspendedTimeOnLinux) {
  EXPECT_EQ(posix::kMonotonicClock, CLOCK_BOOTTIME);
  const auto boot_micros = [] {
    struct timespec t;
    EXPECT_EQ(clock_gettime(CLOCK_BOOTTIME, &t), 0);
    return static_cast<uint64_t>(t.tv_sec) * 1000000u + static_cast<uint64_t>(t.tv_nsec) / 1000u;
  };
  const uint64_t before = boot_micros();
  const uint64_t now = monotonic_micros();
  const uint64_t after = boot_micros();
  EXPECT_LE(before, now);
  EXPECT_LE(now, after);
}
#endif

}  // namespace
}  // namespace platform
}  // namespace fedstat
