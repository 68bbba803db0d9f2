#include "sdk/secagg/shamir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace fedstat {
namespace secagg {
namespace {

struct Fixture {
  uint8_t secret[32];
  uint8_t seed[32];
  Fixture() {
    for (int i = 0; i < 32; ++i) {
      secret[i] = static_cast<uint8_t>(0xF0 ^ (i * 37));
      seed[i] = static_cast<uint8_t>(i * 11 + 3);
    }
    secret[31] = 0xFF;  // the top piece's bits are all used
  }
};

TEST(Shamir, AnyThresholdSubsetReconstructsTheSecret) {
  Fixture f;
  for (uint32_t threshold : {1u, 2u, 3u, 7u}) {
    ShamirDealer dealer;
    ASSERT_TRUE(dealer.init(ByteSpan(f.secret, 32), threshold, ByteSpan(f.seed, 32)).ok());
    std::vector<ShamirShare> shares(10);
    for (uint32_t i = 0; i < 10; ++i) {
      ASSERT_TRUE(dealer.share_for(1000 + 7 * i, shares[i]).ok());
    }
    for (size_t start = 0; start + threshold <= shares.size(); ++start) {
      uint8_t out[32];
      ASSERT_TRUE(shamir_reconstruct(Span<const ShamirShare>(&shares[start], threshold), threshold,
                                     MutableByteSpan(out, 32))
                      .ok());
      EXPECT_EQ(std::memcmp(out, f.secret, 32), 0) << "t " << threshold << " from " << start;
    }
  }
}

TEST(Shamir, SharesAreDeterministicPerSeedAndBoundToX) {
  Fixture f;
  ShamirDealer a, b;
  ASSERT_TRUE(a.init(ByteSpan(f.secret, 32), 3, ByteSpan(f.seed, 32)).ok());
  ASSERT_TRUE(b.init(ByteSpan(f.secret, 32), 3, ByteSpan(f.seed, 32)).ok());
  ShamirShare s1, s2, s3;
  ASSERT_TRUE(a.share_for(5, s1).ok());
  ASSERT_TRUE(b.share_for(5, s2).ok());
  ASSERT_TRUE(a.share_for(6, s3).ok());
  EXPECT_EQ(std::memcmp(s1.y, s2.y, sizeof(s1.y)), 0);
  EXPECT_NE(std::memcmp(s1.y, s3.y, sizeof(s1.y)), 0);
  for (uint32_t v : s1.y) EXPECT_LT(v, kShamirPrime);
}

TEST(Shamir, TooFewOrMismatchedSharesFail) {
  Fixture f;
  ShamirDealer dealer;
  ASSERT_TRUE(dealer.init(ByteSpan(f.secret, 32), 3, ByteSpan(f.seed, 32)).ok());
  ShamirShare shares[3];
  for (uint32_t i = 0; i < 3; ++i) ASSERT_TRUE(dealer.share_for(i + 1, shares[i]).ok());
  uint8_t out[32];
  EXPECT_EQ(
      shamir_reconstruct(Span<const ShamirShare>(shares, 2), 3, MutableByteSpan(out, 32)).code(),
      StatusCode::kFailedPrecondition);
  ShamirShare twice[3] = {shares[0], shares[0], shares[1]};
  EXPECT_EQ(
      shamir_reconstruct(Span<const ShamirShare>(twice, 3), 3, MutableByteSpan(out, 32)).code(),
      StatusCode::kInvalidArgument);
  // A corrupted share gives pieces that overflow their widths with overwhelming probability.
  shares[2].y[8] ^= 0x5A5A;
  EXPECT_EQ(
      shamir_reconstruct(Span<const ShamirShare>(shares, 3), 3, MutableByteSpan(out, 32)).code(),
      StatusCode::kDataLoss);
  ShamirShare dummy;
  EXPECT_EQ(dealer.share_for(0, dummy).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(dealer.share_for(kShamirPrime, dummy).code(), StatusCode::kInvalidArgument);
}

TEST(Shamir, WireFormIsLittleEndianAndChecked) {
  ShamirShare share;
  share.x = 9;
  for (size_t k = 0; k < kShamirPieces; ++k)
    share.y[k] = 0x01020304u * static_cast<uint32_t>(k + 1);
  uint8_t bytes[kShareBytes];
  share_to_bytes(share, MutableByteSpan(bytes, sizeof(bytes)));
  EXPECT_EQ(bytes[0], 0x04);
  ShamirShare back;
  ASSERT_TRUE(share_from_bytes(9, ByteSpan(bytes, sizeof(bytes)), back).ok());
  EXPECT_EQ(std::memcmp(back.y, share.y, sizeof(share.y)), 0);
  std::memset(bytes, 0xFF, 4);  // 2^32 − 1 is not a field element
  EXPECT_EQ(share_from_bytes(9, ByteSpan(bytes, sizeof(bytes)), back).code(),
            StatusCode::kDataLoss);
}

}  // namespace
}  // namespace secagg
}  // namespace fedstat
