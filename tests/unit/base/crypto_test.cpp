// Known-answer tests of the crypto adapter against published vectors (FIPS 180-4, SP 800-38A).
#include "sdk/base/crypto.h"

#include <gtest/gtest.h>

#include <cstring>

#include "tests/common/golden_vectors.h"

namespace fedstat {
namespace crypto {
namespace {

TEST(CryptoTest, Sha256KnownAnswers) {
  uint8_t digest[32];
  const uint8_t abc[] = {'a', 'b', 'c'};
  ASSERT_TRUE(sha256(ByteSpan(abc), Span<uint8_t>(digest)).ok());
  EXPECT_EQ(std::memcmp(digest, golden::kSha256Abc, 32), 0);
  ASSERT_TRUE(sha256(ByteSpan(), Span<uint8_t>(digest)).ok());
  EXPECT_EQ(std::memcmp(digest, golden::kSha256Empty, 32), 0);
}

TEST(CryptoTest, Sha256IncrementalAndReusable) {
  Sha256 h;
  const uint8_t a[] = {'a'};
  const uint8_t bc[] = {'b', 'c'};
  uint8_t digest[32];
  ASSERT_TRUE(h.update(ByteSpan(a)).ok());
  ASSERT_TRUE(h.update(ByteSpan(bc)).ok());
  ASSERT_TRUE(h.finish(Span<uint8_t>(digest)).ok());
  EXPECT_EQ(std::memcmp(digest, golden::kSha256Abc, 32), 0);
  ASSERT_TRUE(h.finish(Span<uint8_t>(digest)).ok());  // reset after finish: empty message
  EXPECT_EQ(std::memcmp(digest, golden::kSha256Empty, 32), 0);
  uint8_t short_buffer[31];
  EXPECT_EQ(h.finish(Span<uint8_t>(short_buffer)).code(), StatusCode::kInvalidArgument);
}

TEST(CryptoTest, AesCtrMatchesSp800_38aF55InAnySplit) {
  for (size_t split : {0u, 1u, 15u, 16u, 17u, 40u, 64u}) {
    Aes256Ctr ctr;
    ASSERT_TRUE(ctr.start(ByteSpan(golden::kAesCtrKey), ByteSpan(golden::kAesCtrCounter)).ok());
    uint8_t data[64];
    std::memcpy(data, golden::kAesCtrPlaintext, 64);
    ASSERT_TRUE(ctr.apply(MutableByteSpan(data).first(split)).ok());
    ASSERT_TRUE(ctr.apply(MutableByteSpan(data).subspan(split)).ok());
    EXPECT_EQ(std::memcmp(data, golden::kAesCtrCiphertext, 64), 0) << "split at " << split;
  }
}

TEST(CryptoTest, AesCtrKeystreamIsCiphertextXorPlaintext) {
  Aes256Ctr ctr;
  ASSERT_TRUE(ctr.start(ByteSpan(golden::kAesCtrKey), ByteSpan(golden::kAesCtrCounter)).ok());
  uint8_t stream[64];
  ASSERT_TRUE(ctr.keystream(MutableByteSpan(stream)).ok());
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(stream[i], golden::kAesCtrPlaintext[i] ^ golden::kAesCtrCiphertext[i]);
  }
}

TEST(CryptoTest, AesCtrRefusesBadKeysAndUseBeforeStart) {
  Aes256Ctr ctr;
  uint8_t data[4] = {};
  EXPECT_EQ(ctr.apply(MutableByteSpan(data)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      ctr.start(ByteSpan(golden::kAesCtrKey).first(16), ByteSpan(golden::kAesCtrCounter)).code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ctr.start(ByteSpan(golden::kAesCtrKey), ByteSpan(golden::kAesCtrCounter).first(8)).code(),
      StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace crypto
}  // namespace fedstat
