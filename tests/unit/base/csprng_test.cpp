#include "sdk/base/csprng.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tests/common/chi_square.h"

namespace fedstat {
namespace {

// A scripted entropy source: counts its calls and can be told to fail.
struct TestEntropy {
  uint8_t next = 0;
  int calls = 0;
  bool fail = false;
  static Status fill(void* context, MutableByteSpan out) {
    auto* self = static_cast<TestEntropy*>(context);
    ++self->calls;
    if (self->fail) return unavailable("test entropy switched off");
    for (uint8_t& b : out) b = self->next++;
    return Status();
  }
};

TEST(CsprngTest, SeedsFromThePlatformAndTwoInstancesDiffer) {
  Csprng a, b;
  ASSERT_TRUE(a.init().ok());
  ASSERT_TRUE(b.init().ok());
  uint8_t x[32], y[32];
  ASSERT_TRUE(a.fill(MutableByteSpan(x)).ok());
  ASSERT_TRUE(b.fill(MutableByteSpan(y)).ok());
  EXPECT_NE(std::memcmp(x, y, 32), 0);  // equal with probability 2^-256
}

TEST(CsprngTest, SameEntropyAndPersonalizationGiveTheSameBytes) {
  TestEntropy e1, e2, e3;
  Csprng a, b, c;
  const uint8_t device_a[] = {'d', 'e', 'v', 'A'};
  const uint8_t device_b[] = {'d', 'e', 'v', 'B'};
  ASSERT_TRUE(a.init_with_entropy(TestEntropy::fill, &e1, ByteSpan(device_a)).ok());
  ASSERT_TRUE(b.init_with_entropy(TestEntropy::fill, &e2, ByteSpan(device_a)).ok());
  ASSERT_TRUE(c.init_with_entropy(TestEntropy::fill, &e3, ByteSpan(device_b)).ok());
  uint8_t x[100], y[100], z[100];
  ASSERT_TRUE(a.fill(MutableByteSpan(x)).ok());
  ASSERT_TRUE(b.fill(MutableByteSpan(y)).ok());
  ASSERT_TRUE(c.fill(MutableByteSpan(z)).ok());
  EXPECT_EQ(std::memcmp(x, y, sizeof(x)), 0);
  EXPECT_NE(std::memcmp(x, z, sizeof(x)), 0);  // personalization separates devices
  EXPECT_GE(e1.calls, 1);
}

// The documented limit is the limit: 256 bytes are taken, 257 and 312 (mbedTLS's own limit, which
// the check once let through up to 336) are refused as too long, with nothing drawn.
TEST(CsprngTest, PersonalizationLongerThan256BytesIsRefusedAsDocumented) {
  std::vector<uint8_t> personal(400, 0x5A);
  for (size_t size : {size_t{256}, size_t{257}, size_t{312}, size_t{336}}) {
    TestEntropy e;
    Csprng rng;
    const Status st = rng.init_with_entropy(TestEntropy::fill, &e, ByteSpan(personal.data(), size));
    if (size <= 256) {
      EXPECT_TRUE(st.ok()) << size << ": " << st.message();
    } else {
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << size << ": " << st.message();
      EXPECT_EQ(e.calls, 0) << size;
    }
  }
}

TEST(CsprngTest, EntropyFailureIsReportedNotHidden) {
  TestEntropy e;
  e.fail = true;
  Csprng rng;
  const Status refused = rng.init_with_entropy(TestEntropy::fill, &e);
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable);
  EXPECT_STREQ(refused.message(), "test entropy switched off");  // the source's own reason
  uint8_t x[8];
  EXPECT_EQ(rng.fill(MutableByteSpan(x)).code(), StatusCode::kFailedPrecondition);

  TestEntropy later;
  ASSERT_TRUE(rng.init_with_entropy(TestEntropy::fill, &later).ok());
  later.fail = true;
  EXPECT_EQ(rng.reseed().code(), StatusCode::kUnavailable);
}

TEST(CsprngTest, LargeRequestsAreSplitAndBytesAreUniform) {
  // 4 MiB in one call (the DRBG's limit is 1 KiB per request); byte values chi-square at
  // p = 1e-6 with 255 degrees of freedom. Scripted entropy, so the run is repeatable.
  TestEntropy entropy;
  Csprng rng;
  ASSERT_TRUE(rng.init_with_entropy(TestEntropy::fill, &entropy).ok());
  std::vector<uint8_t> data(4u << 20);
  ASSERT_TRUE(rng.fill(MutableByteSpan(data.data(), data.size())).ok());
  std::vector<uint64_t> counts(256, 0);
  for (uint8_t b : data) ++counts[b];
  EXPECT_LT(testing::chi_square_uniform(counts), testing::chi_square_critical_p1e6(255));
}

}  // namespace
}  // namespace fedstat
