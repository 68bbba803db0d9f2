// Device credentials: ECDSA P-256 through mbedTLS 2.28 (see device_credential.h). Like
// sdk/base/crypto*.cpp, this file includes mbedTLS directly; on microcontrollers mbedTLS's
// allocations (bignum limbs, the HMAC context of RFC 6979's HMAC_DRBG) come from the SDK's static
// pool (crypto::ensure_mbedtls_pool).
#include "sdk/credential/device_credential.h"

#include <string.h>

#include "mbedtls/bignum.h"
#include "mbedtls/ecdsa.h"
#include "mbedtls/ecp.h"
#include "mbedtls/hmac_drbg.h"
#include "mbedtls/md.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"

namespace fedstat {
namespace credential {
namespace {

// The certificate's domain tag (without a terminating zero).
constexpr char kCertificateTag[] = "fedstat device certificate v1";
// Labels the HMAC_DRBG that feeds the signature's blinding, so that its bytes are never those of
// RFC 6979's nonce stream (as mbedTLS's own deterministic blinding does).
constexpr char kBlindingLabel[] = "fedstat ecdsa blinding";
// 2^31: the largest client id.
constexpr uint32_t kMaxClientId = 0x80000000u;
// Rejection sampling of a scalar in [1, n − 1]: n > 2^256 − 2^224, so a 32-byte draw is refused
// with probability < 2^-32; 64 refusals in a row mean the source is broken.
constexpr int kMaxKeyDraws = 64;

bool is_alloc_failure(int rc) {
  return rc == MBEDTLS_ERR_MPI_ALLOC_FAILED || rc == MBEDTLS_ERR_ECP_ALLOC_FAILED ||
         rc == MBEDTLS_ERR_MD_ALLOC_FAILED;
}

constexpr Status pool_full() {
  return resource_exhausted("P-256: mbedTLS ran out of memory (the static pool is full)");
}

// The P-256 group and the values one call needs; freed (and the scalar wiped) on every path.
class P256 {
 public:
  P256() {
    mbedtls_ecp_group_init(&group);
    mbedtls_mpi_init(&scalar);
    mbedtls_mpi_init(&r);
    mbedtls_mpi_init(&s);
    mbedtls_ecp_point_init(&point);
  }
  ~P256() {
    mbedtls_ecp_point_free(&point);
    mbedtls_mpi_free(&s);
    mbedtls_mpi_free(&r);
    mbedtls_mpi_free(&scalar);  // mbedtls_mpi_free zeroizes the limbs
    mbedtls_ecp_group_free(&group);
  }
  P256(const P256&) = delete;
  P256& operator=(const P256&) = delete;

  Status load() {
    crypto::ensure_mbedtls_pool();
    const int rc = mbedtls_ecp_group_load(&group, MBEDTLS_ECP_DP_SECP256R1);
    if (rc == 0) return Status();
    if (rc == MBEDTLS_ERR_ECP_FEATURE_UNAVAILABLE) {
      return internal_error("P-256: this mbedTLS build lacks secp256r1");
    }
    return pool_full();
  }

  mbedtls_ecp_group group;
  mbedtls_mpi scalar;
  mbedtls_mpi r;
  mbedtls_mpi s;
  mbedtls_ecp_point point;
};

// RandomSource → mbedTLS's f_rng, keeping the source's status for the caller.
struct RandomBridge {
  RandomSource* source;
  Status status;
};

int random_bridge(void* context, unsigned char* out, size_t length) {
  RandomBridge* bridge = static_cast<RandomBridge*>(context);
  bridge->status = bridge->source->fill(MutableByteSpan(out, length));
  return bridge->status.ok() ? 0 : MBEDTLS_ERR_ECP_RANDOM_FAILED;
}

// Reads a private scalar and checks it is in [1, n − 1].
Status read_private_key(P256& c, ByteSpan private_key) {
  if (private_key.size() != kPrivateKeyBytes) {
    return invalid_argument("P-256: a private key is 32 bytes");
  }
  if (mbedtls_mpi_read_binary(&c.scalar, private_key.data(), private_key.size()) != 0) {
    return pool_full();
  }
  if (mbedtls_ecp_check_privkey(&c.group, &c.scalar) != 0) {
    return invalid_argument("P-256: the private key is not in [1, n - 1]");
  }
  return Status();
}

// Reads a 65-byte SEC1 uncompressed point into c.point and checks it is on the curve.
Status read_public_key(P256& c, ByteSpan public_key) {
  if (public_key.size() != kPublicKeyBytes || public_key[0] != 0x04) {
    return invalid_argument(
        "P-256: a public key is 65 bytes, SEC1 uncompressed (0x04 || X || Y); compressed, "
        "infinity and other encodings are refused");
  }
  const int rc =
      mbedtls_ecp_point_read_binary(&c.group, &c.point, public_key.data(), public_key.size());
  if (is_alloc_failure(rc)) return pool_full();
  if (rc != 0) return invalid_argument("P-256: the public key is malformed");
  const int check = mbedtls_ecp_check_pubkey(&c.group, &c.point);
  if (is_alloc_failure(check)) return pool_full();
  if (check != 0) {
    return invalid_argument("P-256: the public key is not a point on the curve");
  }
  return Status();
}

// c.point = c.scalar · G (blinded from `random`), written as 65 bytes.
Status multiply_generator(P256& c, RandomSource& random, MutableByteSpan public_key) {
  RandomBridge bridge{&random, Status()};
  const int rc = mbedtls_ecp_mul(&c.group, &c.point, &c.scalar, &c.group.G, random_bridge, &bridge);
  if (rc == MBEDTLS_ERR_ECP_RANDOM_FAILED) {
    return bridge.status.ok() ? unavailable("P-256: the blinding randomness source failed")
                              : bridge.status;
  }
  if (is_alloc_failure(rc)) return pool_full();
  if (rc != 0) return internal_error("P-256: the scalar multiplication failed inside mbedTLS");
  size_t written = 0;
  if (mbedtls_ecp_point_write_binary(&c.group, &c.point, MBEDTLS_ECP_PF_UNCOMPRESSED, &written,
                                     public_key.data(), public_key.size()) != 0 ||
      written != kPublicKeyBytes) {
    return internal_error("P-256: could not encode the public key");
  }
  return Status();
}

Status check_client_id(uint32_t client_id) {
  if (client_id == 0 || client_id > kMaxClientId) {
    return invalid_argument("certificate: the client id must be in [1, 2^31]");
  }
  return Status();
}

}  // namespace

Status generate_key_pair(RandomSource& random, MutableByteSpan private_key,
                         MutableByteSpan public_key) {
  if (private_key.size() != kPrivateKeyBytes || public_key.size() != kPublicKeyBytes) {
    return invalid_argument("P-256: the private key is 32 bytes and the public key 65");
  }
  P256 c;
  FEDSTAT_RETURN_IF_ERROR(c.load());
  uint8_t draw[kPrivateKeyBytes];
  crypto::ScopedWipe wipe_draw(draw, sizeof(draw));
  bool found = false;
  for (int attempt = 0; attempt < kMaxKeyDraws && !found; ++attempt) {
    FEDSTAT_RETURN_IF_ERROR(random.fill(MutableByteSpan(draw, sizeof(draw))));
    if (mbedtls_mpi_read_binary(&c.scalar, draw, sizeof(draw)) != 0) return pool_full();
    found = mbedtls_ecp_check_privkey(&c.group, &c.scalar) == 0;
  }
  if (!found) {
    return internal_error("P-256: the random source gave 64 scalars outside [1, n - 1] in a row");
  }
  uint8_t point[kPublicKeyBytes];
  FEDSTAT_RETURN_IF_ERROR(multiply_generator(c, random, MutableByteSpan(point, sizeof(point))));
  memcpy(private_key.data(), draw, sizeof(draw));
  memcpy(public_key.data(), point, sizeof(point));
  return Status();
}

Status public_key_of(ByteSpan private_key, RandomSource& random, MutableByteSpan public_key) {
  if (public_key.size() != kPublicKeyBytes) {
    return invalid_argument("P-256: a public key is 65 bytes");
  }
  P256 c;
  FEDSTAT_RETURN_IF_ERROR(c.load());
  FEDSTAT_RETURN_IF_ERROR(read_private_key(c, private_key));
  return multiply_generator(c, random, public_key);
}

Status check_public_key(ByteSpan public_key) {
  if (public_key.size() != kPublicKeyBytes) {
    return invalid_argument("P-256: a public key is 65 bytes, SEC1 uncompressed");
  }
  P256 c;
  FEDSTAT_RETURN_IF_ERROR(c.load());
  return read_public_key(c, public_key);
}

Status sign_digest(ByteSpan private_key, ByteSpan digest, MutableByteSpan signature) {
  if (private_key.size() != kPrivateKeyBytes || digest.size() != kDigestBytes ||
      signature.size() != kSignatureBytes) {
    return invalid_argument("ECDSA: a 32-byte key, a 32-byte digest and a 64-byte signature");
  }
  P256 c;
  FEDSTAT_RETURN_IF_ERROR(c.load());
  FEDSTAT_RETURN_IF_ERROR(read_private_key(c, private_key));
  const mbedtls_md_info_t* sha256 = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
  if (sha256 == nullptr) return internal_error("ECDSA: SHA-256 is not in this mbedTLS build");

  // Blinding for the signature's scalar operations: an HMAC_DRBG over key ‖ digest under a label
  // of its own (the result does not depend on it; a device signs without randomness).
  uint8_t seed[kPrivateKeyBytes + kDigestBytes];
  crypto::ScopedWipe wipe_seed(seed, sizeof(seed));
  memcpy(seed, private_key.data(), kPrivateKeyBytes);
  memcpy(seed + kPrivateKeyBytes, digest.data(), kDigestBytes);
  mbedtls_hmac_drbg_context blinding;
  mbedtls_hmac_drbg_init(&blinding);
  int rc = mbedtls_hmac_drbg_seed_buf(&blinding, sha256, seed, sizeof(seed));
  if (rc == 0) {
    rc = mbedtls_hmac_drbg_update_ret(&blinding,
                                      reinterpret_cast<const unsigned char*>(kBlindingLabel),
                                      sizeof(kBlindingLabel) - 1);
  }
  if (rc == 0) {
    rc = mbedtls_ecdsa_sign_det_ext(&c.group, &c.r, &c.s, &c.scalar, digest.data(), digest.size(),
                                    MBEDTLS_MD_SHA256, mbedtls_hmac_drbg_random, &blinding);
  }
  mbedtls_hmac_drbg_free(&blinding);  // zeroizes its state
  if (is_alloc_failure(rc)) return pool_full();
  if (rc != 0) return internal_error("ECDSA: signing failed inside mbedTLS");
  if (mbedtls_mpi_write_binary(&c.r, signature.data(), kSignatureBytes / 2) != 0 ||
      mbedtls_mpi_write_binary(&c.s, signature.data() + kSignatureBytes / 2, kSignatureBytes / 2) !=
          0) {
    return internal_error("ECDSA: could not encode the signature");
  }
  return Status();
}

Status verify_digest(ByteSpan public_key, ByteSpan digest, ByteSpan signature) {
  if (public_key.size() != kPublicKeyBytes || digest.size() != kDigestBytes ||
      signature.size() != kSignatureBytes) {
    return invalid_argument("ECDSA: a 65-byte key, a 32-byte digest and a 64-byte signature");
  }
  P256 c;
  FEDSTAT_RETURN_IF_ERROR(c.load());
  FEDSTAT_RETURN_IF_ERROR(read_public_key(c, public_key));
  if (mbedtls_mpi_read_binary(&c.r, signature.data(), kSignatureBytes / 2) != 0 ||
      mbedtls_mpi_read_binary(&c.s, signature.data() + kSignatureBytes / 2, kSignatureBytes / 2) !=
          0) {
    return pool_full();
  }
  const int rc = mbedtls_ecdsa_verify(&c.group, digest.data(), digest.size(), &c.point, &c.r, &c.s);
  if (rc == 0) return Status();
  if (is_alloc_failure(rc)) return pool_full();
  // MBEDTLS_ERR_ECP_VERIFY_FAILED (r or s out of range, or the equation fails) and anything else:
  // a signature that cannot be checked does not verify.
  return permission_denied("ECDSA: the signature does not verify under this key and statement");
}

Status certificate_digest(uint32_t client_id, ByteSpan public_key, MutableByteSpan digest) {
  if (public_key.size() != kPublicKeyBytes || digest.size() != kDigestBytes) {
    return invalid_argument("certificate digest: a 65-byte public key and a 32-byte digest");
  }
  uint8_t id[4];
  store_le32(id, client_id);
  crypto::Sha256 hasher;
  FEDSTAT_RETURN_IF_ERROR(hasher.update(
      ByteSpan(reinterpret_cast<const uint8_t*>(kCertificateTag), sizeof(kCertificateTag) - 1)));
  FEDSTAT_RETURN_IF_ERROR(hasher.update(ByteSpan(id, sizeof(id))));
  FEDSTAT_RETURN_IF_ERROR(hasher.update(public_key));
  return hasher.finish(digest);
}

Status issue_certificate(ByteSpan ca_private_key, uint32_t client_id, ByteSpan public_key,
                         DeviceCertificate& out) {
  FEDSTAT_RETURN_IF_ERROR(check_client_id(client_id));
  FEDSTAT_RETURN_IF_ERROR(check_public_key(public_key));
  DeviceCertificate certificate;
  certificate.client_id = client_id;
  memcpy(certificate.public_key, public_key.data(), kPublicKeyBytes);
  uint8_t digest[kDigestBytes];
  FEDSTAT_RETURN_IF_ERROR(
      certificate_digest(client_id, public_key, MutableByteSpan(digest, sizeof(digest))));
  FEDSTAT_RETURN_IF_ERROR(sign_digest(ca_private_key, ByteSpan(digest, sizeof(digest)),
                                      MutableByteSpan(certificate.ca_signature)));
  out = certificate;
  return Status();
}

Status verify_certificate(ByteSpan ca_public_key, const DeviceCertificate& certificate) {
  FEDSTAT_RETURN_IF_ERROR(check_client_id(certificate.client_id));
  FEDSTAT_RETURN_IF_ERROR(check_public_key(ByteSpan(certificate.public_key)));
  uint8_t digest[kDigestBytes];
  FEDSTAT_RETURN_IF_ERROR(certificate_digest(certificate.client_id,
                                             ByteSpan(certificate.public_key),
                                             MutableByteSpan(digest, sizeof(digest))));
  // verify_digest refuses a malformed CA key with kInvalidArgument before checking anything.
  const Status verified = verify_digest(ca_public_key, ByteSpan(digest, sizeof(digest)),
                                        ByteSpan(certificate.ca_signature));
  if (verified.code() == StatusCode::kPermissionDenied) {
    return permission_denied(
        "certificate: the CA's signature does not verify (another CA, or a "
        "changed id or key)");
  }
  return verified;
}

Status check_credential(const DeviceCredential& credential, RandomSource& random) {
  FEDSTAT_RETURN_IF_ERROR(
      verify_certificate(ByteSpan(credential.ca_public_key), credential.certificate));
  uint8_t derived[kPublicKeyBytes];
  FEDSTAT_RETURN_IF_ERROR(public_key_of(ByteSpan(credential.private_key), random,
                                        MutableByteSpan(derived, sizeof(derived))));
  if (memcmp(derived, credential.certificate.public_key, kPublicKeyBytes) != 0) {
    return permission_denied(
        "credential: the private key does not match the certificate's public key");
  }
  return Status();
}

}  // namespace credential
}  // namespace fedstat
