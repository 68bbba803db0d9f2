// X25519, HKDF-SHA256 and AES-256-GCM through mbedTLS (see crypto.h). On microcontrollers
// mbedTLS's allocations come from a static pool here, set up on first use.
#include <string.h>

#include "mbedtls/ecp.h"
#include "mbedtls/gcm.h"
#include "mbedtls/hkdf.h"
#include "mbedtls/md.h"
#include "sdk/base/crypto.h"
#if defined(FEDSTAT_PLATFORM_BAREMETAL)
#include "mbedtls/memory_buffer_alloc.h"
#endif

namespace fedstat {
namespace crypto {

#if defined(FEDSTAT_PLATFORM_BAREMETAL)
namespace {
alignas(8) unsigned char g_pool[kMbedtlsPoolBytes];
bool g_pool_ready = false;
// Painted over the pool's free space at start-up: mbedTLS's allocator writes block headers and
// calloc zeroes what it hands out, so the last byte that no longer holds it marks the peak.
constexpr unsigned char kPoolPaint = 0xA5;
}  // namespace
#endif

void ensure_mbedtls_pool() {
#if defined(FEDSTAT_PLATFORM_BAREMETAL)
  if (!g_pool_ready) {
    mbedtls_memory_buffer_alloc_init(g_pool, sizeof(g_pool));
    // The allocator's first header sits at the start; everything after it is free space.
    constexpr size_t kHeaderReserve = 64;
    memset(g_pool + kHeaderReserve, kPoolPaint, sizeof(g_pool) - kHeaderReserve);
    g_pool_ready = true;
  }
#endif
}

size_t mbedtls_pool_high_water() {
#if defined(FEDSTAT_PLATFORM_BAREMETAL)
  if (!g_pool_ready) return 0;
  size_t end = sizeof(g_pool);
  while (end > 0 && g_pool[end - 1] == kPoolPaint) --end;
  return end;
#else
  return 0;
#endif
}

namespace {

struct Blinding {
  EntropyCallback callback;
  void* context;
};

int blinding_rng(void* context, unsigned char* out, size_t length) {
  const Blinding* b = static_cast<const Blinding*>(context);
  // mbedTLS passes the callback's code through: this one is reported as the entropy failure it
  // is, not as a bad peer key.
  return b->callback(b->context, MutableByteSpan(out, length)).ok() ? 0
                                                                    : MBEDTLS_ERR_ECP_RANDOM_FAILED;
}

// Holds the Curve25519 group and scratch values; freed on every path.
class Curve {
 public:
  Curve() {
    mbedtls_ecp_group_init(&group);
    mbedtls_mpi_init(&scalar);
    mbedtls_ecp_point_init(&point);
    mbedtls_ecp_point_init(&result);
  }
  ~Curve() {
    mbedtls_ecp_point_free(&result);
    mbedtls_ecp_point_free(&point);
    mbedtls_mpi_free(&scalar);
    mbedtls_ecp_group_free(&group);
  }
  Curve(const Curve&) = delete;
  Curve& operator=(const Curve&) = delete;

  mbedtls_ecp_group group;
  mbedtls_mpi scalar;
  mbedtls_ecp_point point;
  mbedtls_ecp_point result;
};

// result = scalar · base (base null: the generator), written as 32 little-endian bytes.
Status multiply(ByteSpan private_key, const uint8_t* base, Span<uint8_t> out, EntropyCallback cb,
                void* cb_context) {
  if (private_key.size() != kX25519KeyBytes || out.size() != kX25519KeyBytes || cb == nullptr) {
    return invalid_argument("X25519: keys are 32 bytes and a blinding source is required");
  }
  ensure_mbedtls_pool();
  Curve c;
  Blinding blinding{cb, cb_context};
  if (mbedtls_ecp_group_load(&c.group, MBEDTLS_ECP_DP_CURVE25519) != 0 ||
      mbedtls_mpi_read_binary_le(&c.scalar, private_key.data(), private_key.size()) != 0) {
    return resource_exhausted("X25519: mbedTLS could not set up the curve (memory pool full?)");
  }
  if (mbedtls_ecp_check_privkey(&c.group, &c.scalar) != 0) {
    return invalid_argument("X25519: the private key is not clamped (use x25519_clamp)");
  }
  const mbedtls_ecp_point* multiplicand = &c.group.G;
  if (base != nullptr) {
    if (mbedtls_ecp_point_read_binary(&c.group, &c.point, base, kX25519KeyBytes) != 0) {
      return invalid_argument("X25519: the peer's public key is malformed");
    }
    multiplicand = &c.point;
  }
  const int rc =
      mbedtls_ecp_mul(&c.group, &c.result, &c.scalar, multiplicand, blinding_rng, &blinding);
  if (rc == MBEDTLS_ERR_ECP_RANDOM_FAILED) {
    return unavailable("X25519: the blinding randomness source failed");
  }
  if (rc == MBEDTLS_ERR_ECP_ALLOC_FAILED || rc == MBEDTLS_ERR_MPI_ALLOC_FAILED) {
    return resource_exhausted("X25519: mbedTLS ran out of memory (the static pool is full)");
  }
  if (rc != 0) {
    // mbedTLS refuses a product at infinity, which only a low-order peer point produces.
    return base != nullptr
               ? invalid_argument("X25519: the peer's public key is a low-order point")
               : internal_error("X25519: the scalar multiplication failed inside mbedTLS");
  }
  size_t written = 0;
  if (mbedtls_ecp_point_write_binary(&c.group, &c.result, MBEDTLS_ECP_PF_UNCOMPRESSED, &written,
                                     out.data(), out.size()) != 0 ||
      written != kX25519KeyBytes) {
    return internal_error("X25519: could not encode the result");
  }
  return Status();
}

}  // namespace

void x25519_clamp(Span<uint8_t> private_key) {
  if (private_key.size() != kX25519KeyBytes) return;
  private_key[0] = static_cast<uint8_t>(private_key[0] & 248);
  private_key[31] = static_cast<uint8_t>((private_key[31] & 127) | 64);
}

Status x25519_public_key(ByteSpan private_key, Span<uint8_t> public_out, EntropyCallback blinding,
                         void* blinding_context) {
  return multiply(private_key, nullptr, public_out, blinding, blinding_context);
}

Status x25519_shared_secret(ByteSpan private_key, ByteSpan peer_public, Span<uint8_t> shared_out,
                            EntropyCallback blinding, void* blinding_context) {
  if (peer_public.size() != kX25519KeyBytes) {
    return invalid_argument("X25519: the peer's public key must be 32 bytes");
  }
  FEDSTAT_RETURN_IF_ERROR(
      multiply(private_key, peer_public.data(), shared_out, blinding, blinding_context));
  uint8_t any = 0;
  for (size_t i = 0; i < shared_out.size(); ++i) any = static_cast<uint8_t>(any | shared_out[i]);
  if (any == 0) {
    return invalid_argument("X25519: the peer's public key is a low-order point (zero secret)");
  }
  return Status();
}

Status hkdf_sha256(ByteSpan salt, ByteSpan input_key, ByteSpan info, MutableByteSpan out) {
  ensure_mbedtls_pool();
  const mbedtls_md_info_t* md = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
  if (md == nullptr) return internal_error("HKDF: SHA-256 is not in this mbedTLS build");
  const int rc = mbedtls_hkdf(md, salt.data(), salt.size(), input_key.data(), input_key.size(),
                              info.data(), info.size(), out.data(), out.size());
  if (rc == MBEDTLS_ERR_MD_ALLOC_FAILED) {
    return resource_exhausted("HKDF: mbedTLS ran out of memory (the static pool is full)");
  }
  if (rc != 0) return invalid_argument("HKDF: output too long (at most 255 × 32 bytes)");
  return Status();
}

namespace {

class Gcm {
 public:
  Gcm() { mbedtls_gcm_init(&context); }
  ~Gcm() { mbedtls_gcm_free(&context); }
  Gcm(const Gcm&) = delete;
  Gcm& operator=(const Gcm&) = delete;
  mbedtls_gcm_context context;
};

Status check_gcm_sizes(ByteSpan key, ByteSpan iv, size_t in, size_t out, size_t tag) {
  if (key.size() != kAes256KeyBytes || iv.size() != kGcmIvBytes || in != out ||
      tag != kGcmTagBytes) {
    return invalid_argument("AES-GCM: 32-byte key, 12-byte IV, 16-byte tag, equal lengths");
  }
  return Status();
}

}  // namespace

Status aes256_gcm_seal(ByteSpan key, ByteSpan iv, ByteSpan aad, ByteSpan plaintext,
                       MutableByteSpan ciphertext, MutableByteSpan tag) {
  FEDSTAT_RETURN_IF_ERROR(
      check_gcm_sizes(key, iv, plaintext.size(), ciphertext.size(), tag.size()));
  ensure_mbedtls_pool();
  Gcm gcm;
  if (mbedtls_gcm_setkey(&gcm.context, MBEDTLS_CIPHER_ID_AES, key.data(), 256) != 0) {
    return resource_exhausted("AES-GCM: mbedTLS could not set the key (memory pool full?)");
  }
  if (mbedtls_gcm_crypt_and_tag(&gcm.context, MBEDTLS_GCM_ENCRYPT, plaintext.size(), iv.data(),
                                iv.size(), aad.data(), aad.size(), plaintext.data(),
                                ciphertext.data(), tag.size(), tag.data()) != 0) {
    return internal_error("AES-GCM: encryption failed inside mbedTLS");
  }
  return Status();
}

Status aes256_gcm_open(ByteSpan key, ByteSpan iv, ByteSpan aad, ByteSpan ciphertext, ByteSpan tag,
                       MutableByteSpan plaintext) {
  FEDSTAT_RETURN_IF_ERROR(
      check_gcm_sizes(key, iv, ciphertext.size(), plaintext.size(), tag.size()));
  ensure_mbedtls_pool();
  Gcm gcm;
  if (mbedtls_gcm_setkey(&gcm.context, MBEDTLS_CIPHER_ID_AES, key.data(), 256) != 0) {
    return resource_exhausted("AES-GCM: mbedTLS could not set the key (memory pool full?)");
  }
  const int rc = mbedtls_gcm_auth_decrypt(&gcm.context, ciphertext.size(), iv.data(), iv.size(),
                                          aad.data(), aad.size(), tag.data(), tag.size(),
                                          ciphertext.data(), plaintext.data());
  if (rc != 0) {
    memset(plaintext.data(), 0, plaintext.size());
    return data_loss("AES-GCM: authentication failed (wrong key, tampered or misrouted message)");
  }
  return Status();
}

}  // namespace crypto
}  // namespace fedstat
