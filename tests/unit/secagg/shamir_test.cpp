#include "sdk/secagg/shamir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "sdk/base/crypto.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/secagg_client.h"

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

// Shares of one secret for holders 1..m (x = i + 1) at threshold t.
std::vector<ShamirShare> deal(const Fixture& f, uint32_t t, uint32_t m) {
  ShamirDealer dealer;
  EXPECT_TRUE(dealer.init(ByteSpan(f.secret, 32), t, ByteSpan(f.seed, 32)).ok());
  std::vector<ShamirShare> shares(m);
  for (uint32_t i = 0; i < m; ++i) EXPECT_TRUE(dealer.share_for(3 * i + 7, shares[i]).ok());
  return shares;
}

std::vector<uint32_t> xs_of(const std::vector<ShamirShare>& shares) {
  std::vector<uint32_t> xs;
  for (const auto& s : shares) xs.push_back(s.x);
  return xs;
}

TEST(ShamirBatch, LagrangeCoefficientsOnceRebuildTheSecret) {
  Fixture f;
  const std::vector<ShamirShare> shares = deal(f, 5, 5);
  const std::vector<uint32_t> xs = xs_of(shares);
  std::vector<uint32_t> c(5);
  ASSERT_TRUE(
      shamir_lagrange_at_zero(Span<const uint32_t>(xs.data(), 5), Span<uint32_t>(c.data(), 5))
          .ok());
  uint8_t out[32];
  ASSERT_TRUE(shamir_combine(Span<const ShamirShare>(shares.data(), 5),
                             Span<const uint32_t>(c.data(), 5), MutableByteSpan(out, 32))
                  .ok());
  EXPECT_EQ(std::memcmp(out, f.secret, 32), 0);
  std::vector<uint32_t> twice = {7, 7};
  EXPECT_EQ(
      shamir_lagrange_at_zero(Span<const uint32_t>(twice.data(), 2), Span<uint32_t>(c.data(), 2))
          .code(),
      StatusCode::kInvalidArgument);
}

// The dual-code check: zero for shares on one polynomial, non-zero with one share off it, and the
// wrong share located from two random check polynomials (m ≥ t + 2), for every position.
TEST(ShamirBatch, TheCheckSeesAndLocatesOneWrongShare) {
  Fixture f;
  const uint32_t t = 4, m = 8;
  std::vector<ShamirShare> shares = deal(f, t, m);
  const std::vector<uint32_t> xs = xs_of(shares);
  const std::vector<uint32_t> g = {123456789u, 987654321u, 55555u, 2u};  // m − t = 4 coefficients
  const std::vector<uint32_t> g2 = {31337u, 1u, 77777777u, 424242u};
  std::vector<uint32_t> w(m), w2(m);
  ASSERT_TRUE(shamir_check_weights(Span<const uint32_t>(xs.data(), m), t,
                                   Span<const uint32_t>(g.data(), g.size()),
                                   Span<uint32_t>(w.data(), m))
                  .ok());
  ASSERT_TRUE(shamir_check_weights(Span<const uint32_t>(xs.data(), m), t,
                                   Span<const uint32_t>(g2.data(), g2.size()),
                                   Span<uint32_t>(w2.data(), m))
                  .ok());
  const Span<const uint32_t> ws(w.data(), m), w2s(w2.data(), m);
  for (size_t k = 0; k < kShamirPieces; ++k) {
    EXPECT_EQ(shamir_syndrome(ws, Span<const ShamirShare>(shares.data(), m), k), 0u);
  }
  for (size_t wrong = 0; wrong < m; ++wrong) {
    std::vector<ShamirShare> bad = shares;
    bad[wrong].y[3] = (bad[wrong].y[3] + 1) % kShamirPrime;
    const Span<const ShamirShare> b(bad.data(), m);
    const uint32_t s = shamir_syndrome(ws, b, 3), s2 = shamir_syndrome(w2s, b, 3);
    EXPECT_NE(s, 0u);
    const Result<size_t> at = shamir_locate_one(ws, w2s, s, s2);
    ASSERT_TRUE(at.ok()) << at.status().message();
    EXPECT_EQ(at.value(), wrong);
    EXPECT_EQ(shamir_syndrome(ws, b, 2), 0u);  // the other pieces still fit
  }
  // Two wrong shares: seen, and not taken for one.
  std::vector<ShamirShare> two = shares;
  two[1].y[0] = (two[1].y[0] + 5) % kShamirPrime;
  two[6].y[0] = (two[6].y[0] + 9) % kShamirPrime;
  const Span<const ShamirShare> b2(two.data(), m);
  const uint32_t s = shamir_syndrome(ws, b2, 0), s2 = shamir_syndrome(w2s, b2, 0);
  EXPECT_NE(s, 0u);
  EXPECT_EQ(shamir_locate_one(ws, w2s, s, s2).status().code(), StatusCode::kNotFound);
  // The check polynomial's degree is at most m − t − 1.
  const std::vector<uint32_t> long_g(m - t + 1, 1);
  EXPECT_EQ(shamir_check_weights(Span<const uint32_t>(xs.data(), m), t,
                                 Span<const uint32_t>(long_g.data(), long_g.size()),
                                 Span<uint32_t>(w.data(), m))
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(ShamirBatch, OneShareMoreThanTheThresholdIsSeenButNotLocated) {
  Fixture f;
  std::vector<ShamirShare> shares = deal(f, 3, 4);
  const std::vector<uint32_t> xs = xs_of(shares);
  const std::vector<uint32_t> g = {99u}, g2 = {12345u};
  std::vector<uint32_t> w(4), w2(4);
  ASSERT_TRUE(shamir_check_weights(Span<const uint32_t>(xs.data(), 4), 3,
                                   Span<const uint32_t>(g.data(), 1), Span<uint32_t>(w.data(), 4))
                  .ok());
  ASSERT_TRUE(shamir_check_weights(Span<const uint32_t>(xs.data(), 4), 3,
                                   Span<const uint32_t>(g2.data(), 1), Span<uint32_t>(w2.data(), 4))
                  .ok());
  shares[2].y[0] = (shares[2].y[0] + 1) % kShamirPrime;
  const Span<const ShamirShare> b(shares.data(), 4);
  const Span<const uint32_t> ws(w.data(), 4), w2s(w2.data(), 4);
  const uint32_t s = shamir_syndrome(ws, b, 0), s2 = shamir_syndrome(w2s, b, 0);
  EXPECT_NE(s, 0u);
  EXPECT_EQ(shamir_locate_one(ws, w2s, s, s2).status().code(), StatusCode::kNotFound);
}

// The table of low-order keys is checked against mbedTLS: X25519 of each with a clamped scalar
// fails (a zero secret), while a real public key passes both checks.
TEST(SecAggKeyCheck, LowOrderAndNonCanonicalKeysAreRefusedAsMbedTlsWould) {
  Seed256 seed;
  SeededStream random(seed, 9);
  uint8_t secret[32], public_key[32], shared[32];
  ASSERT_TRUE(random.fill(MutableByteSpan(secret, 32)).ok());
  crypto::x25519_clamp(Span<uint8_t>(secret, 32));
  ASSERT_TRUE(crypto::x25519_public_key(ByteSpan(secret, 32), Span<uint8_t>(public_key, 32),
                                        fill_from_random_source, &random)
                  .ok());
  EXPECT_TRUE(check_public_key(ByteSpan(public_key, 32)).ok());
  const uint8_t order8[32] = {0xe0, 0xeb, 0x7a, 0x7c, 0x3b, 0x41, 0xb8, 0xae, 0x16, 0x56, 0xe3,
                              0xfa, 0xf1, 0x9f, 0xc4, 0x6a, 0xda, 0x09, 0x8d, 0xeb, 0x9c, 0x32,
                              0xb1, 0xfd, 0x86, 0x62, 0x05, 0x16, 0x5f, 0x49, 0xb8, 0x00};
  std::vector<std::vector<uint8_t>> low = {std::vector<uint8_t>(32, 0), std::vector<uint8_t>(32, 0),
                                           std::vector<uint8_t>(order8, order8 + 32),
                                           std::vector<uint8_t>(32, 0xff)};
  low[1][0] = 1;
  low[3][0] = 0xec;  // p − 1
  low[3][31] = 0x7f;
  for (const auto& key : low) {
    EXPECT_EQ(check_public_key(ByteSpan(key.data(), 32)).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(
        crypto::x25519_shared_secret(ByteSpan(secret, 32), ByteSpan(key.data(), 32),
                                     Span<uint8_t>(shared, 32), fill_from_random_source, &random)
            .code(),
        StatusCode::kInvalidArgument);
  }
  // Non-canonical: p itself (= 0), p + 1 (= 1), and a real key with bit 255 set.
  std::vector<uint8_t> p(32, 0xff), p1(32, 0xff), high(public_key, public_key + 32);
  p[0] = 0xed;
  p[31] = 0x7f;
  p1[0] = 0xee;
  p1[31] = 0x7f;
  high[31] |= 0x80;
  for (const auto& key : {p, p1, high}) {
    EXPECT_EQ(check_public_key(ByteSpan(key.data(), 32)).code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(check_public_key(ByteSpan(public_key, 31)).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace secagg
}  // namespace fedstat
