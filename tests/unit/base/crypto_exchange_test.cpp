// Known-answer tests of the key-agreement, key-derivation and AEAD adapters (crypto.h).
#include <gtest/gtest.h>

#include <cstring>

#include "sdk/base/crypto.h"
#include "tests/common/golden_vectors.h"

namespace fedstat {
namespace crypto {
namespace {

// Blinding randomness for mbedTLS's countermeasures (the results do not depend on it).
Status counter_bytes(void* context, MutableByteSpan out) {
  uint8_t* counter = static_cast<uint8_t*>(context);
  for (size_t i = 0; i < out.size(); ++i) out[i] = (*counter)++;
  return Status();
}

TEST(CryptoExchange, X25519MatchesRfc7748) {
  uint8_t counter = 0;
  uint8_t alice[32], bob[32], pub[32], shared[32];
  std::memcpy(alice, golden::kX25519AlicePrivate, 32);
  std::memcpy(bob, golden::kX25519BobPrivate, 32);
  x25519_clamp(Span<uint8_t>(alice, 32));
  x25519_clamp(Span<uint8_t>(bob, 32));
  ASSERT_TRUE(
      x25519_public_key(ByteSpan(alice, 32), Span<uint8_t>(pub, 32), counter_bytes, &counter).ok());
  EXPECT_EQ(std::memcmp(pub, golden::kX25519AlicePublic, 32), 0);
  ASSERT_TRUE(
      x25519_public_key(ByteSpan(bob, 32), Span<uint8_t>(pub, 32), counter_bytes, &counter).ok());
  EXPECT_EQ(std::memcmp(pub, golden::kX25519BobPublic, 32), 0);
  ASSERT_TRUE(x25519_shared_secret(ByteSpan(alice, 32), ByteSpan(golden::kX25519BobPublic, 32),
                                   Span<uint8_t>(shared, 32), counter_bytes, &counter)
                  .ok());
  EXPECT_EQ(std::memcmp(shared, golden::kX25519Shared, 32), 0);
  ASSERT_TRUE(x25519_shared_secret(ByteSpan(bob, 32), ByteSpan(golden::kX25519AlicePublic, 32),
                                   Span<uint8_t>(shared, 32), counter_bytes, &counter)
                  .ok());
  EXPECT_EQ(std::memcmp(shared, golden::kX25519Shared, 32), 0);
}

TEST(CryptoExchange, X25519RefusesUnclampedKeysAndLowOrderPeers) {
  uint8_t counter = 0, out[32];
  uint8_t raw[32];
  std::memcpy(raw, golden::kX25519AlicePrivate, 32);  // bit 254 clear, low bits set: unclamped
  EXPECT_EQ(
      x25519_public_key(ByteSpan(raw, 32), Span<uint8_t>(out, 32), counter_bytes, &counter).code(),
      StatusCode::kInvalidArgument);
  x25519_clamp(Span<uint8_t>(raw, 32));
  const uint8_t zero[32] = {};  // u = 0 is a point of small order: the secret would be 0
  EXPECT_EQ(x25519_shared_secret(ByteSpan(raw, 32), ByteSpan(zero, 32), Span<uint8_t>(out, 32),
                                 counter_bytes, &counter)
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(CryptoExchange, HkdfMatchesRfc5869) {
  uint8_t ikm[22], salt[13], info[10], okm[42];
  std::memset(ikm, 0x0b, sizeof(ikm));
  for (int i = 0; i < 13; ++i) salt[i] = static_cast<uint8_t>(i);
  for (int i = 0; i < 10; ++i) info[i] = static_cast<uint8_t>(0xf0 + i);
  ASSERT_TRUE(hkdf_sha256(ByteSpan(salt, 13), ByteSpan(ikm, 22), ByteSpan(info, 10),
                          MutableByteSpan(okm, 42))
                  .ok());
  EXPECT_EQ(std::memcmp(okm, golden::kHkdfOkm, 42), 0);
}

TEST(CryptoExchange, GcmSealsOpensAndDetectsTampering) {
  uint8_t key[32], iv[12];
  for (int i = 0; i < 32; ++i) key[i] = static_cast<uint8_t>(i);
  for (int i = 0; i < 12; ++i) iv[i] = static_cast<uint8_t>(100 + i);
  const char aad[] = "fedstat secagg";
  const char text[] = "Shamir shares of b_u and s_u^SK!";
  uint8_t sealed[32], tag[16], opened[32];
  const ByteSpan aad_span(reinterpret_cast<const uint8_t*>(aad), sizeof(aad) - 1);
  ASSERT_TRUE(aes256_gcm_seal(ByteSpan(key, 32), ByteSpan(iv, 12), aad_span,
                              ByteSpan(reinterpret_cast<const uint8_t*>(text), 32),
                              MutableByteSpan(sealed, 32), MutableByteSpan(tag, 16))
                  .ok());
  EXPECT_EQ(std::memcmp(sealed, golden::kGcmCiphertext, 32), 0);
  EXPECT_EQ(std::memcmp(tag, golden::kGcmTag, 16), 0);
  ASSERT_TRUE(aes256_gcm_open(ByteSpan(key, 32), ByteSpan(iv, 12), aad_span, ByteSpan(sealed, 32),
                              ByteSpan(tag, 16), MutableByteSpan(opened, 32))
                  .ok());
  EXPECT_EQ(std::memcmp(opened, text, 32), 0);
  sealed[5] ^= 1;
  EXPECT_EQ(aes256_gcm_open(ByteSpan(key, 32), ByteSpan(iv, 12), aad_span, ByteSpan(sealed, 32),
                            ByteSpan(tag, 16), MutableByteSpan(opened, 32))
                .code(),
            StatusCode::kDataLoss);
  for (uint8_t b : opened) EXPECT_EQ(b, 0);  // nothing of a forgery is released
  sealed[5] ^= 1;
  const char other_aad[] = "fedstat secagh";
  EXPECT_EQ(aes256_gcm_open(ByteSpan(key, 32), ByteSpan(iv, 12),
                            ByteSpan(reinterpret_cast<const uint8_t*>(other_aad), 14),
                            ByteSpan(sealed, 32), ByteSpan(tag, 16), MutableByteSpan(opened, 32))
                .code(),
            StatusCode::kDataLoss);
}

}  // namespace
}  // namespace crypto
}  // namespace fedstat
