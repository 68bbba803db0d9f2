// Device credentials (sdk/credential/device_credential.h): RFC 6979 known answers for P-256 with
// SHA-256, determinism, and every refusal the header documents.
#include "sdk/credential/device_credential.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "sdk/base/crypto.h"
#include "sdk/base/seeded_stream.h"

namespace fedstat {
namespace credential {
namespace {

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::vector<uint8_t> sha256_of(const std::string& message) {
  std::vector<uint8_t> digest(32);
  EXPECT_TRUE(
      crypto::sha256(ByteSpan(reinterpret_cast<const uint8_t*>(message.data()), message.size()),
                     MutableByteSpan(digest.data(), digest.size()))
          .ok());
  return digest;
}

Seed256 seed_of(uint8_t value) {
  Seed256 seed;
  seed.bytes[0] = value;
  return seed;
}

// RFC 6979 appendix A.2.5 (NIST P-256): the private key and its public point.
const char kRfcPrivate[] = "C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721";
const char kRfcPublic[] =
    "04"
    "60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6"
    "7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299";
// The group order n: a scalar or signature half equal to it is out of range.
const char kOrder[] = "FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551";

class FailingSource final : public RandomSource {
 public:
  Status fill(MutableByteSpan) override { return unavailable("test: no entropy"); }
};

struct KeyPair {
  uint8_t private_key[kPrivateKeyBytes];
  uint8_t public_key[kPublicKeyBytes];
};

KeyPair make_keys(uint8_t seed_byte) {
  SeededStream stream(seed_of(seed_byte));
  KeyPair pair;
  EXPECT_TRUE(
      generate_key_pair(stream, MutableByteSpan(pair.private_key), MutableByteSpan(pair.public_key))
          .ok());
  return pair;
}

TEST(DeviceCredential, SizesMatchTheHeader) {
  EXPECT_EQ(sizeof(DeviceCertificate), 136u);
  EXPECT_EQ(sizeof(DeviceCredential), 236u);
}

TEST(DeviceCredential, Rfc6979P256Sha256KnownAnswers) {
  const std::vector<uint8_t> x = from_hex(kRfcPrivate);
  SeededStream blinding(seed_of(1));
  uint8_t pub[kPublicKeyBytes];
  ASSERT_TRUE(public_key_of(ByteSpan(x.data(), x.size()), blinding, MutableByteSpan(pub)).ok());
  EXPECT_EQ(std::vector<uint8_t>(pub, pub + sizeof(pub)), from_hex(kRfcPublic));

  struct Case {
    const char* message;
    const char* r_s;
  };
  const Case cases[] = {
      {"sample",
       "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716"
       "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"},
      {"test",
       "F1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367"
       "019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083"},
  };
  for (const Case& c : cases) {
    const std::vector<uint8_t> digest = sha256_of(c.message);
    uint8_t signature[kSignatureBytes];
    ASSERT_TRUE(sign_digest(ByteSpan(x.data(), x.size()), ByteSpan(digest.data(), digest.size()),
                            MutableByteSpan(signature))
                    .ok());
    EXPECT_EQ(std::vector<uint8_t>(signature, signature + sizeof(signature)), from_hex(c.r_s))
        << c.message;
    EXPECT_TRUE(
        verify_digest(ByteSpan(pub), ByteSpan(digest.data(), digest.size()), ByteSpan(signature))
            .ok());
  }
}

TEST(DeviceCredential, SigningIsDeterministicAndKeysFollowTheSeed) {
  const KeyPair a = make_keys(7);
  const KeyPair a_again = make_keys(7);
  const KeyPair b = make_keys(8);
  EXPECT_EQ(std::memcmp(&a, &a_again, sizeof(a)), 0);
  EXPECT_NE(std::memcmp(a.private_key, b.private_key, kPrivateKeyBytes), 0);
  const std::vector<uint8_t> d1 = sha256_of("one"), d2 = sha256_of("two");
  uint8_t s1[kSignatureBytes], s1_again[kSignatureBytes], s2[kSignatureBytes];
  ASSERT_TRUE(
      sign_digest(ByteSpan(a.private_key), ByteSpan(d1.data(), 32), MutableByteSpan(s1)).ok());
  ASSERT_TRUE(
      sign_digest(ByteSpan(a.private_key), ByteSpan(d1.data(), 32), MutableByteSpan(s1_again))
          .ok());
  ASSERT_TRUE(
      sign_digest(ByteSpan(a.private_key), ByteSpan(d2.data(), 32), MutableByteSpan(s2)).ok());
  EXPECT_EQ(std::memcmp(s1, s1_again, sizeof(s1)), 0);
  EXPECT_NE(std::memcmp(s1, s2, sizeof(s1)), 0);
  // The public key does not depend on the blinding source.
  SeededStream other_blinding(seed_of(99));
  uint8_t pub[kPublicKeyBytes];
  ASSERT_TRUE(public_key_of(ByteSpan(a.private_key), other_blinding, MutableByteSpan(pub)).ok());
  EXPECT_EQ(std::memcmp(pub, a.public_key, sizeof(pub)), 0);
  EXPECT_TRUE(check_public_key(ByteSpan(a.public_key)).ok());
}

TEST(DeviceCredential, VerifyRejectsAFlippedBitAnywhere) {
  const KeyPair a = make_keys(3);
  const KeyPair other = make_keys(4);
  std::vector<uint8_t> digest = sha256_of("statement");
  uint8_t sig[kSignatureBytes];
  ASSERT_TRUE(
      sign_digest(ByteSpan(a.private_key), ByteSpan(digest.data(), 32), MutableByteSpan(sig)).ok());
  ASSERT_TRUE(
      verify_digest(ByteSpan(a.public_key), ByteSpan(digest.data(), 32), ByteSpan(sig)).ok());
  for (size_t bit = 0; bit < 8 * kDigestBytes; bit += 37) {
    std::vector<uint8_t> changed = digest;
    changed[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_EQ(
        verify_digest(ByteSpan(a.public_key), ByteSpan(changed.data(), 32), ByteSpan(sig)).code(),
        StatusCode::kPermissionDenied)
        << "digest bit " << bit;
  }
  for (size_t bit = 0; bit < 8 * kSignatureBytes; bit += 29) {  // hits both r and s
    uint8_t changed[kSignatureBytes];
    std::memcpy(changed, sig, sizeof(sig));
    changed[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    EXPECT_EQ(verify_digest(ByteSpan(a.public_key), ByteSpan(digest.data(), 32), ByteSpan(changed))
                  .code(),
              StatusCode::kPermissionDenied)
        << "signature bit " << bit;
  }
  for (size_t bit = 8; bit < 8 * kPublicKeyBytes; bit += 41) {  // past the 0x04 prefix
    uint8_t changed[kPublicKeyBytes];
    std::memcpy(changed, a.public_key, sizeof(changed));
    changed[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    // A flipped coordinate bit almost always leaves the curve (kInvalidArgument); either way the
    // signature must not verify.
    EXPECT_FALSE(verify_digest(ByteSpan(changed), ByteSpan(digest.data(), 32), ByteSpan(sig)).ok())
        << "key bit " << bit;
  }
  EXPECT_EQ(
      verify_digest(ByteSpan(other.public_key), ByteSpan(digest.data(), 32), ByteSpan(sig)).code(),
      StatusCode::kPermissionDenied);
  // r or s = 0 or n: out of range.
  const std::vector<uint8_t> n = from_hex(kOrder);
  for (int half = 0; half < 2; ++half) {
    uint8_t changed[kSignatureBytes];
    std::memcpy(changed, sig, sizeof(sig));
    std::memset(changed + 32 * half, 0, 32);
    EXPECT_EQ(verify_digest(ByteSpan(a.public_key), ByteSpan(digest.data(), 32), ByteSpan(changed))
                  .code(),
              StatusCode::kPermissionDenied);
    std::memcpy(changed + 32 * half, n.data(), 32);
    EXPECT_EQ(verify_digest(ByteSpan(a.public_key), ByteSpan(digest.data(), 32), ByteSpan(changed))
                  .code(),
              StatusCode::kPermissionDenied);
  }
  EXPECT_EQ(
      verify_digest(ByteSpan(a.public_key), ByteSpan(digest.data(), 31), ByteSpan(sig)).code(),
      StatusCode::kInvalidArgument);
}

TEST(DeviceCredential, CheckPublicKeyRefusesBadPoints) {
  const KeyPair a = make_keys(5);
  ASSERT_TRUE(check_public_key(ByteSpan(a.public_key)).ok());
  uint8_t key[kPublicKeyBytes];
  // Off the curve: Y + 1 (the last byte's low bit flipped gives Y ± 1).
  std::memcpy(key, a.public_key, sizeof(key));
  key[64] ^= 1;
  EXPECT_EQ(check_public_key(ByteSpan(key)).code(), StatusCode::kInvalidArgument);
  // Compressed: 0x02/0x03 ‖ X, whether 33 bytes or padded to 65.
  uint8_t compressed[33];
  compressed[0] = static_cast<uint8_t>(0x02 | (a.public_key[64] & 1));
  std::memcpy(compressed + 1, a.public_key + 1, 32);
  EXPECT_EQ(check_public_key(ByteSpan(compressed)).code(), StatusCode::kInvalidArgument);
  std::memcpy(key, a.public_key, sizeof(key));
  key[0] = 0x02;
  EXPECT_EQ(check_public_key(ByteSpan(key)).code(), StatusCode::kInvalidArgument);
  // The point at infinity: SEC1's single 0x00 byte, or zeros.
  const uint8_t infinity[1] = {0x00};
  EXPECT_EQ(check_public_key(ByteSpan(infinity)).code(), StatusCode::kInvalidArgument);
  uint8_t zeros[kPublicKeyBytes] = {};
  EXPECT_EQ(check_public_key(ByteSpan(zeros)).code(), StatusCode::kInvalidArgument);
  zeros[0] = 0x04;  // (0, 0) is not on P-256
  EXPECT_EQ(check_public_key(ByteSpan(zeros)).code(), StatusCode::kInvalidArgument);
  // Coordinates ≥ p.
  std::memset(key, 0xFF, sizeof(key));
  key[0] = 0x04;
  EXPECT_EQ(check_public_key(ByteSpan(key)).code(), StatusCode::kInvalidArgument);
  // Short and long.
  EXPECT_EQ(check_public_key(ByteSpan(a.public_key, 64)).code(), StatusCode::kInvalidArgument);
  uint8_t longer[kPublicKeyBytes + 1] = {};
  std::memcpy(longer, a.public_key, kPublicKeyBytes);
  EXPECT_EQ(check_public_key(ByteSpan(longer)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(check_public_key(ByteSpan()).code(), StatusCode::kInvalidArgument);
}

TEST(DeviceCredential, PrivateKeysOutsideTheRangeAreRefused) {
  const std::vector<uint8_t> digest = sha256_of("x");
  const uint8_t zero[kPrivateKeyBytes] = {};
  const std::vector<uint8_t> n = from_hex(kOrder);
  uint8_t sig[kSignatureBytes], pub[kPublicKeyBytes];
  SeededStream blinding(seed_of(1));
  EXPECT_EQ(sign_digest(ByteSpan(zero), ByteSpan(digest.data(), 32), MutableByteSpan(sig)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      sign_digest(ByteSpan(n.data(), 32), ByteSpan(digest.data(), 32), MutableByteSpan(sig)).code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(public_key_of(ByteSpan(n.data(), 32), blinding, MutableByteSpan(pub)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(public_key_of(ByteSpan(n.data(), 31), blinding, MutableByteSpan(pub)).code(),
            StatusCode::kInvalidArgument);
}

TEST(DeviceCredential, RandomSourceFailuresArePassedOn) {
  FailingSource failing;
  KeyPair pair = {};
  EXPECT_EQ(generate_key_pair(failing, MutableByteSpan(pair.private_key),
                              MutableByteSpan(pair.public_key))
                .code(),
            StatusCode::kUnavailable);
  const KeyPair a = make_keys(6);
  uint8_t pub[kPublicKeyBytes];
  EXPECT_EQ(public_key_of(ByteSpan(a.private_key), failing, MutableByteSpan(pub)).code(),
            StatusCode::kUnavailable);
  SeededStream stream(seed_of(1));
  EXPECT_EQ(generate_key_pair(stream, MutableByteSpan(pair.private_key, 31),
                              MutableByteSpan(pair.public_key))
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(DeviceCredential, CertificatesVerifyOnlyUnderTheirCaForTheirIdAndKey) {
  const KeyPair ca = make_keys(10);
  const KeyPair other_ca = make_keys(11);
  const KeyPair device = make_keys(12);
  const KeyPair device2 = make_keys(13);
  DeviceCertificate cert;
  ASSERT_TRUE(
      issue_certificate(ByteSpan(ca.private_key), 42, ByteSpan(device.public_key), cert).ok());
  EXPECT_EQ(cert.client_id, 42u);
  EXPECT_EQ(std::memcmp(cert.public_key, device.public_key, kPublicKeyBytes), 0);
  EXPECT_TRUE(verify_certificate(ByteSpan(ca.public_key), cert).ok());
  EXPECT_EQ(verify_certificate(ByteSpan(other_ca.public_key), cert).code(),
            StatusCode::kPermissionDenied);
  DeviceCertificate changed = cert;
  changed.client_id = 43;
  EXPECT_EQ(verify_certificate(ByteSpan(ca.public_key), changed).code(),
            StatusCode::kPermissionDenied);
  changed = cert;
  std::memcpy(changed.public_key, device2.public_key, kPublicKeyBytes);
  EXPECT_EQ(verify_certificate(ByteSpan(ca.public_key), changed).code(),
            StatusCode::kPermissionDenied);
  changed = cert;
  changed.ca_signature[10] ^= 0x40;
  EXPECT_EQ(verify_certificate(ByteSpan(ca.public_key), changed).code(),
            StatusCode::kPermissionDenied);
  // The digest binds the id little-endian after the tag: recompute it independently.
  uint8_t digest[kDigestBytes];
  ASSERT_TRUE(certificate_digest(42, ByteSpan(device.public_key), MutableByteSpan(digest)).ok());
  std::string preimage = "fedstat device certificate v1";
  preimage += std::string("\x2a\x00\x00\x00", 4);
  preimage += std::string(reinterpret_cast<const char*>(device.public_key), kPublicKeyBytes);
  EXPECT_EQ(std::vector<uint8_t>(digest, digest + 32), sha256_of(preimage));
  EXPECT_TRUE(
      verify_digest(ByteSpan(ca.public_key), ByteSpan(digest), ByteSpan(cert.ca_signature)).ok());
}

TEST(DeviceCredential, CertificateIdsAndKeysAreChecked) {
  const KeyPair ca = make_keys(20);
  const KeyPair device = make_keys(21);
  DeviceCertificate cert;
  ASSERT_TRUE(
      issue_certificate(ByteSpan(ca.private_key), 0x80000000u, ByteSpan(device.public_key), cert)
          .ok());
  EXPECT_TRUE(verify_certificate(ByteSpan(ca.public_key), cert).ok());
  DeviceCertificate untouched = cert;
  for (uint32_t id : {0u, 0x80000001u, 0xFFFFFFFFu}) {
    EXPECT_EQ(
        issue_certificate(ByteSpan(ca.private_key), id, ByteSpan(device.public_key), cert).code(),
        StatusCode::kInvalidArgument);
    EXPECT_EQ(std::memcmp(&cert, &untouched, sizeof(cert)), 0);  // out untouched on error
    DeviceCertificate bad = cert;
    bad.client_id = id;
    EXPECT_EQ(verify_certificate(ByteSpan(ca.public_key), bad).code(),
              StatusCode::kInvalidArgument);
  }
  uint8_t off_curve[kPublicKeyBytes];
  std::memcpy(off_curve, device.public_key, sizeof(off_curve));
  off_curve[64] ^= 1;
  EXPECT_EQ(issue_certificate(ByteSpan(ca.private_key), 5, ByteSpan(off_curve), cert).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(verify_certificate(ByteSpan(off_curve), untouched).code(),
            StatusCode::kInvalidArgument);
  DeviceCertificate bad_key = untouched;
  std::memcpy(bad_key.public_key, off_curve, sizeof(off_curve));
  EXPECT_EQ(verify_certificate(ByteSpan(ca.public_key), bad_key).code(),
            StatusCode::kInvalidArgument);
  const uint8_t zero[kPrivateKeyBytes] = {};
  EXPECT_EQ(issue_certificate(ByteSpan(zero), 5, ByteSpan(device.public_key), cert).code(),
            StatusCode::kInvalidArgument);
}

TEST(DeviceCredential, CheckCredentialRefusesAMismatchedPrivateKey) {
  const KeyPair ca = make_keys(30);
  const KeyPair device = make_keys(31);
  const KeyPair stranger = make_keys(32);
  DeviceCredential credential;
  ASSERT_TRUE(issue_certificate(ByteSpan(ca.private_key), 7, ByteSpan(device.public_key),
                                credential.certificate)
                  .ok());
  std::memcpy(credential.private_key, device.private_key, kPrivateKeyBytes);
  std::memcpy(credential.ca_public_key, ca.public_key, kPublicKeyBytes);
  SeededStream blinding(seed_of(2));
  EXPECT_TRUE(check_credential(credential, blinding).ok());

  DeviceCredential mismatched = credential;
  std::memcpy(mismatched.private_key, stranger.private_key, kPrivateKeyBytes);
  EXPECT_EQ(check_credential(mismatched, blinding).code(), StatusCode::kPermissionDenied);
  DeviceCredential zero_key = credential;
  std::memset(zero_key.private_key, 0, kPrivateKeyBytes);
  EXPECT_EQ(check_credential(zero_key, blinding).code(), StatusCode::kInvalidArgument);
  DeviceCredential wrong_ca = credential;
  std::memcpy(wrong_ca.ca_public_key, stranger.public_key, kPublicKeyBytes);
  EXPECT_EQ(check_credential(wrong_ca, blinding).code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace credential
}  // namespace fedstat
