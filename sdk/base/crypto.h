// The crypto adapter: every mbedTLS call the SDK makes passes through this header.
//
// Nothing but crypto.cpp and crypto_exchange.cpp includes an mbedTLS header, so moving from
// mbedTLS 2.28 (Debian 12) to 3.6 LTS or 4.x (PSA, renamed entropy hooks) changes crypto.cpp alone.
// The classes hold the mbedTLS contexts in fixed, aligned storage inside the object (sizes checked
// at compile time in crypto.cpp) and never allocate. mbedTLS contexts point into themselves, so
// these objects can be neither copied nor moved: construct them where they will live.
//
//   Sha256          FIPS 180-4 SHA-256 (incremental), and sha256() for one buffer.
//   Aes256Ctr       AES-256 in counter mode (NIST SP 800-38A) as a keystream generator: a
//                   16-byte initial counter block, incremented as a 128-bit big-endian integer.
//   CtrDrbg         NIST SP 800-90A CTR_DRBG with AES-256 and the derivation function, seeded and
//                   reseeded from an entropy callback (the platform's, in production).
//   x25519_*        RFC 7748 X25519 on mbedTLS's Curve25519 arithmetic (secure aggregation's key
//                   agreement); an all-zero shared secret (a low-order peer key) is refused.
//   hkdf_sha256     RFC 5869 HKDF with SHA-256.
//   aes256_gcm_*    NIST SP 800-38D AES-256-GCM with a 12-byte IV and a 16-byte tag; a failed
//                   authentication is kDataLoss and leaves the plaintext buffer zeroed.
// mbedTLS's bignum, message-digest and cipher layers allocate inside X25519, HKDF and GCM. On
// microcontrollers mbedTLS is built with MBEDTLS_MEMORY_BUFFER_ALLOC_C and those allocations come
// from a static pool of kMbedtlsPoolBytes inside the SDK (no heap); on hosted platforms the
// system's mbedTLS (Debian's) uses its own calloc inside those calls.
//
// Memory (in the object): Sha256 kSha256StateBytes, Aes256Ctr kAesStateBytes + 36,
// CtrDrbg kDrbgStateBytes. Paper: none (primitives for 002 §2.2 secure aggregation and all
// randomness).
#ifndef FEDSTAT_SDK_BASE_CRYPTO_H_
#define FEDSTAT_SDK_BASE_CRYPTO_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/span.h"
#include "sdk/base/status.h"

namespace fedstat {
namespace crypto {

constexpr size_t kSha256DigestBytes = 32;
constexpr size_t kAes256KeyBytes = 32;
constexpr size_t kAesBlockBytes = 16;

// Upper bounds on mbedTLS's context sizes on every supported target (static_assert'ed).
constexpr size_t kSha256StateBytes = 128;
constexpr size_t kAesStateBytes = 320;
constexpr size_t kDrbgStateBytes = 448;

constexpr size_t kX25519KeyBytes = 32;
constexpr size_t kGcmIvBytes = 12;
constexpr size_t kGcmTagBytes = 16;
// The static pool mbedTLS allocates from on microcontrollers (peak use measured in the self-test).
constexpr size_t kMbedtlsPoolBytes = 6144;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Status update(ByteSpan data);
  // Writes the digest and resets the object for a new message.
  Status finish(Span<uint8_t> digest_out);  // digest_out.size() must be 32

 private:
  alignas(16) unsigned char state_[kSha256StateBytes];
};

// Zeroes `size` bytes at `data` in a way the compiler may not remove as a dead store
// (mbedtls_platform_zeroize): for keys, shares and other secrets before their memory is reused
// or goes out of scope. A plain memset of a buffer that is not read again is optimised away.
void wipe(void* data, size_t size);

// Wipes an object's bytes when the scope it guards ends, on every return path.
class ScopedWipe {
 public:
  ScopedWipe(void* data, size_t size) : data_(data), size_(size) {}
  ~ScopedWipe() { wipe(data_, size_); }
  ScopedWipe(const ScopedWipe&) = delete;
  ScopedWipe& operator=(const ScopedWipe&) = delete;

 private:
  void* data_;
  size_t size_;
};

// SHA-256 of one buffer. `digest_out` must hold 32 bytes.
Status sha256(ByteSpan data, Span<uint8_t> digest_out);

class Aes256Ctr {
 public:
  Aes256Ctr();
  ~Aes256Ctr();
  Aes256Ctr(const Aes256Ctr&) = delete;
  Aes256Ctr& operator=(const Aes256Ctr&) = delete;

  // Keys the cipher and sets the initial counter block; the stream position returns to 0.
  Status start(ByteSpan key, ByteSpan initial_counter_block);
  // Writes the next out.size() keystream bytes (the encryption of zeros).
  Status keystream(MutableByteSpan out);
  // XORs the next data.size() keystream bytes into `data` in place (encrypt = decrypt).
  Status apply(MutableByteSpan data);

 private:
  alignas(16) unsigned char aes_[kAesStateBytes];
  unsigned char counter_[kAesBlockBytes];
  unsigned char stream_block_[kAesBlockBytes];
  size_t offset_in_block_ = 0;
  bool keyed_ = false;
};

// Where a CtrDrbg gets its entropy: fill all of `out` or return an error.
using EntropyCallback = Status (*)(void* context, MutableByteSpan out);

class CtrDrbg {
 public:
  CtrDrbg();
  ~CtrDrbg();
  CtrDrbg(const CtrDrbg&) = delete;
  CtrDrbg& operator=(const CtrDrbg&) = delete;

  // Instantiates the DRBG from `entropy` (kept for automatic reseeding) and an optional
  // personalization string (at most 256 bytes, e.g. a device id). If the entropy source fails,
  // its own Status is returned (e.g. kUnavailable "no entropy hook: ...").
  Status seed(EntropyCallback entropy, void* context, ByteSpan personalization);
  // Any length; requests are split into the DRBG's 1 KiB maximum. kFailedPrecondition before
  // seed(); kUnavailable if a due reseed could not get entropy.
  Status generate(MutableByteSpan out);
  // Forces a reseed from the entropy source now.
  Status reseed();

  struct EntropySource {
    EntropyCallback callback = nullptr;
    void* context = nullptr;
    Status last_status;  // the callback's last answer, returned when seeding or reseeding fails
  };

 private:
  alignas(16) unsigned char drbg_[kDrbgStateBytes];
  EntropySource source_;  // mbedTLS keeps a pointer to it: the object never moves.
  bool seeded_ = false;
};

// ---- Key agreement, key derivation, authenticated encryption (crypto_exchange.cpp) ---------

// RFC 7748 decodeScalar25519: clears bits 0–2 and 255, sets bit 254 (in place, 32 bytes).
void x25519_clamp(Span<uint8_t> private_key);
// public = X25519(private, 9). `blinding` feeds mbedTLS's side-channel countermeasures only; the
// result does not depend on it. The private key must already be clamped.
Status x25519_public_key(ByteSpan private_key, Span<uint8_t> public_out, EntropyCallback blinding,
                         void* blinding_context);
// shared = X25519(private, peer_public); kInvalidArgument for a malformed or low-order peer key.
Status x25519_shared_secret(ByteSpan private_key, ByteSpan peer_public, Span<uint8_t> shared_out,
                            EntropyCallback blinding, void* blinding_context);

Status hkdf_sha256(ByteSpan salt, ByteSpan input_key, ByteSpan info, MutableByteSpan out);

// ciphertext.size() == plaintext.size(); tag 16 bytes; key 32; iv 12.
Status aes256_gcm_seal(ByteSpan key, ByteSpan iv, ByteSpan aad, ByteSpan plaintext,
                       MutableByteSpan ciphertext, MutableByteSpan tag);
Status aes256_gcm_open(ByteSpan key, ByteSpan iv, ByteSpan aad, ByteSpan ciphertext, ByteSpan tag,
                       MutableByteSpan plaintext);

}  // namespace crypto
}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_CRYPTO_H_
