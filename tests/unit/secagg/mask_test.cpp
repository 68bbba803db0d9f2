#include "sdk/secagg/mask.h"

#include <gtest/gtest.h>

#include <vector>

#include "tests/common/chi_square.h"

namespace fedstat {
namespace secagg {
namespace {

const uint8_t kSession[32] = {1, 2, 3};
const uint8_t kSeed[32] = {9, 8, 7, 6};

TEST(Mask, AddingThenSubtractingRestoresTheVector) {
  for (unsigned bits : {1u, 17u, 32u, 33u, 64u}) {
    std::vector<uint64_t> v(300);
    const uint64_t limit = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    for (size_t i = 0; i < v.size(); ++i) v[i] = (i * 0x9E3779B97F4A7C15ull) & limit;
    const std::vector<uint64_t> original = v;
    ASSERT_TRUE(apply_mask(ByteSpan(kSession, 32), ByteSpan(kSeed, 32), MaskKind::kPairwise, false,
                           bits, Span<uint64_t>(v.data(), v.size()))
                    .ok());
    EXPECT_NE(v, original) << bits;
    for (uint64_t w : v) EXPECT_LE(w, limit);
    ASSERT_TRUE(apply_mask(ByteSpan(kSession, 32), ByteSpan(kSeed, 32), MaskKind::kPairwise, true,
                           bits, Span<uint64_t>(v.data(), v.size()))
                    .ok());
    EXPECT_EQ(v, original) << bits;
  }
}

// The length enters the key as 32 bits: a longer vector (only possible with a 64-bit size_t)
// is refused before any word changes, rather than sharing a keystream with a shorter one.
TEST(Mask, LengthsAbove32BitsAreRefused) {
  if (sizeof(size_t) < 8) GTEST_SKIP() << "no span this long exists with a 32-bit size_t";
  std::vector<uint64_t> v(16, 5);
  // The span claims 2^32 words but only 16 exist: apply_mask must refuse before touching any.
  const Span<uint64_t> claimed(v.data(), size_t{1} << 32);
  EXPECT_EQ(
      apply_mask(ByteSpan(kSession, 32), ByteSpan(kSeed, 32), MaskKind::kSelf, false, 64, claimed)
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(v, std::vector<uint64_t>(16, 5));
}

TEST(Mask, SessionKindAndWidthSelectIndependentStreams) {
  std::vector<uint32_t> a(8, 0), b(8, 0), c(8, 0);
  const uint8_t other_session[32] = {1, 2, 4};
  ASSERT_TRUE(apply_mask(ByteSpan(kSession, 32), ByteSpan(kSeed, 32), MaskKind::kSelf, false, 32,
                         Span<uint32_t>(a.data(), 8))
                  .ok());
  ASSERT_TRUE(apply_mask(ByteSpan(kSession, 32), ByteSpan(kSeed, 32), MaskKind::kPairwise, false,
                         32, Span<uint32_t>(b.data(), 8))
                  .ok());
  ASSERT_TRUE(apply_mask(ByteSpan(other_session, 32), ByteSpan(kSeed, 32), MaskKind::kSelf, false,
                         32, Span<uint32_t>(c.data(), 8))
                  .ok());
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  // The same mask on 32-bit and 64-bit containers agrees at bits ≤ 32.
  std::vector<uint64_t> wide(8, 0);
  ASSERT_TRUE(apply_mask(ByteSpan(kSession, 32), ByteSpan(kSeed, 32), MaskKind::kSelf, false, 32,
                         Span<uint64_t>(wide.data(), 8))
                  .ok());
  for (int i = 0; i < 8; ++i) EXPECT_EQ(wide[i], a[i]);
  EXPECT_EQ(apply_mask(ByteSpan(kSession, 32), ByteSpan(kSeed, 32), MaskKind::kSelf, false, 33,
                       Span<uint32_t>(a.data(), 8))
                .code(),
            StatusCode::kInvalidArgument);
}

// A masked zero vector is uniform modulo 2^8: Pearson's chi-square over 256 cells below its
// critical value at p = 1e-6 (255 degrees of freedom), 51,200 words, fixed seed.
TEST(Mask, MaskedZeroVectorIsUniform) {
  std::vector<uint32_t> v(51200, 0);
  ASSERT_TRUE(apply_mask(ByteSpan(kSession, 32), ByteSpan(kSeed, 32), MaskKind::kSelf, false, 8,
                         Span<uint32_t>(v.data(), v.size()))
                  .ok());
  std::vector<uint64_t> counts(256, 0);
  for (uint32_t w : v) ++counts[w];
  EXPECT_LT(fedstat::testing::chi_square_uniform(counts),
            fedstat::testing::chi_square_critical_p1e6(255));
}

}  // namespace
}  // namespace secagg
}  // namespace fedstat
