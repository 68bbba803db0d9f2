/// @file
/// The crypto adapter: every mbedTLS primitive the SDK uses passes through this header.
///
/// Apart from the TLS channel (sdk/tls, which drives mbedTLS's SSL layer itself) and the device
/// credentials' ECDSA (sdk/credential/device_credential.cpp), nothing but crypto.cpp and
/// crypto_exchange.cpp includes an mbedTLS header, so moving from mbedTLS 2.28 (Debian 12) to 3.6
/// LTS or 4.x (PSA, renamed entropy hooks) changes those files alone. The classes hold the mbedTLS
/// contexts in fixed, aligned storage inside the object (sizes checked at compile time in
/// crypto.cpp) and never allocate. mbedTLS contexts point into themselves, so these objects can be
/// neither copied nor moved: construct them where they will live.
///
/// - Sha256: FIPS 180-4 SHA-256 (incremental), and sha256() for one buffer.
/// - Aes256Ctr: AES-256 in counter mode (NIST SP 800-38A) as a keystream generator: a 16-byte
///   initial counter block, incremented as a 128-bit big-endian integer.
/// - CtrDrbg: NIST SP 800-90A CTR_DRBG with AES-256 and the derivation function, seeded and
///   reseeded from an entropy callback (the platform's, in production).
/// - x25519_*: RFC 7748 X25519 on mbedTLS's Curve25519 arithmetic (secure aggregation's key
///   agreement); an all-zero shared secret (a low-order peer key) is refused.
/// - hkdf_sha256: RFC 5869 HKDF with SHA-256.
/// - aes256_gcm_*: NIST SP 800-38D AES-256-GCM with a 12-byte IV and a 16-byte tag; a failed
///   authentication is kDataLoss and leaves the plaintext buffer zeroed.
///
/// mbedTLS's bignum, message-digest and cipher layers allocate inside X25519, HKDF and GCM. On
/// microcontrollers mbedTLS is built with MBEDTLS_MEMORY_BUFFER_ALLOC_C and those allocations come
/// from a static pool of kMbedtlsPoolBytes inside the SDK (no heap); on hosted platforms the
/// system's mbedTLS (Debian's) uses its own calloc inside those calls.
///
/// @memory in the object: sizeof(Sha256) = kSha256StateBytes, sizeof(Aes256Ctr) =
/// kAesStateBytes + 48, sizeof(CtrDrbg) ≤ kDrbgStateBytes + 48 (64-bit targets; the contexts are
/// 16-byte aligned). X25519, HKDF and GCM: mbedTLS allocations during the call only, from the
/// kMbedtlsPoolBytes static pool on microcontrollers.
/// @paper none (primitives for 002 §2.2 secure aggregation and all randomness).
#ifndef FEDSTAT_SDK_BASE_CRYPTO_H_
#define FEDSTAT_SDK_BASE_CRYPTO_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/span.h"
#include "sdk/base/status.h"

namespace fedstat {
namespace crypto {

/// Bytes of a SHA-256 digest.
constexpr size_t kSha256DigestBytes = 32;
/// Bytes of an AES-256 key (Aes256Ctr, aes256_gcm_*).
constexpr size_t kAes256KeyBytes = 32;
/// Bytes of an AES block (and of Aes256Ctr's initial counter block).
constexpr size_t kAesBlockBytes = 16;

/// Storage reserved in a Sha256 for mbedTLS's context: an upper bound on its size on every
/// supported target (static_assert'ed in crypto.cpp).
constexpr size_t kSha256StateBytes = 128;
/// Storage reserved in an Aes256Ctr for mbedTLS's AES context (upper bound, static_assert'ed).
constexpr size_t kAesStateBytes = 320;
/// Storage reserved in a CtrDrbg for mbedTLS's CTR_DRBG context (upper bound, static_assert'ed).
constexpr size_t kDrbgStateBytes = 448;

/// Bytes of an X25519 private key, public key and shared secret.
constexpr size_t kX25519KeyBytes = 32;
/// Bytes of an AES-256-GCM IV (nonce).
constexpr size_t kGcmIvBytes = 12;
/// Bytes of an AES-256-GCM authentication tag.
constexpr size_t kGcmTagBytes = 16;
/// The static pool mbedTLS allocates from on microcontrollers; unused on hosted platforms. It
/// holds a TLS connection's state (two 1 KiB-record buffers, the transform, the session; the
/// handshake's X25519 while it runs) and, at the same time, secure aggregation's X25519, HKDF and
/// GCM calls. Measured peak (mbedtls_pool_high_water, printed by the Cortex-M4 firmware in every
/// task kind of tests/cross/firmware_round_test.py): 5,344 bytes, so 8 KiB leaves half again.
constexpr size_t kMbedtlsPoolBytes = 8192;

/// Hands mbedTLS the static pool on microcontrollers (once; later calls do nothing). The
/// functions below call it themselves; code that calls mbedTLS directly (the TLS channel) calls
/// it first. A no-op on hosted platforms.
void ensure_mbedtls_pool();
/// Microcontrollers: the most of the static pool mbedTLS has used since ensure_mbedtls_pool()
/// first ran (bytes from the pool's start to the last byte it wrote), by painting; 0 on hosted
/// platforms and before the pool is set up.
size_t mbedtls_pool_high_water();

/// Incremental FIPS 180-4 SHA-256: update() with the message in pieces, then finish().
/// Not copyable or movable (the mbedTLS context lives inside the object).
class Sha256 {
 public:
  /// Ready for a new message.
  Sha256();
  /// Frees the mbedTLS context.
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  /// Feeds the next bytes of the message.
  /// @errors kInternal: mbedTLS reported a failure.
  Status update(ByteSpan data);
  /// Writes the digest of everything fed since construction or the last finish() into
  /// `digest_out` (exactly kSha256DigestBytes), and resets the object for a new message.
  /// @errors kInvalidArgument: digest_out.size() is not 32 (nothing is written or reset).
  /// kInternal: mbedTLS reported a failure (the object is reset all the same).
  Status finish(Span<uint8_t> digest_out);  // digest_out.size() must be 32
  /// Drops everything fed since construction or the last finish(): ready for a new message.
  /// @errors kInternal: mbedTLS reported a failure.
  Status reset();

 private:
  alignas(16) unsigned char state_[kSha256StateBytes];
};

/// Zeroes `size` bytes at `data` in a way the compiler may not remove as a dead store
/// (mbedtls_platform_zeroize): for keys, shares and other secrets before their memory is reused
/// or goes out of scope. A plain memset of a buffer that is not read again is optimised away.
/// A null `data` or a zero `size` does nothing.
void wipe(void* data, size_t size);

/// Wipes an object's bytes (with wipe()) when the scope it guards ends, on every return path.
class ScopedWipe {
 public:
  /// Guards the `size` bytes at `data`, which must stay valid until this object is destroyed.
  ScopedWipe(void* data, size_t size) : data_(data), size_(size) {}
  /// Wipes the guarded bytes.
  ~ScopedWipe() { wipe(data_, size_); }
  ScopedWipe(const ScopedWipe&) = delete;
  ScopedWipe& operator=(const ScopedWipe&) = delete;

 private:
  void* data_;
  size_t size_;
};

/// SHA-256 of one buffer into `digest_out`, which must be exactly kSha256DigestBytes long.
/// @errors kInvalidArgument: digest_out.size() is not 32. kInternal: mbedTLS reported a failure.
Status sha256(ByteSpan data, Span<uint8_t> digest_out);

/// AES-256 in counter mode (NIST SP 800-38A) as a keystream generator: a 16-byte initial counter
/// block, incremented as a 128-bit big-endian integer; the stream may be read in pieces of any
/// size. Not copyable or movable (the mbedTLS context lives inside the object).
class Aes256Ctr {
 public:
  /// Unkeyed: start() must be called before keystream() or apply().
  Aes256Ctr();
  /// Frees the mbedTLS context and wipes the counter and buffered keystream.
  ~Aes256Ctr();
  Aes256Ctr(const Aes256Ctr&) = delete;
  Aes256Ctr& operator=(const Aes256Ctr&) = delete;

  /// Keys the cipher and sets the initial counter block; the stream position returns to 0.
  /// @errors kInvalidArgument: `key` is not kAes256KeyBytes or `initial_counter_block` not
  /// kAesBlockBytes long (the object is left as it was). kInternal: mbedTLS's key schedule
  /// failed (the object is then unkeyed).
  Status start(ByteSpan key, ByteSpan initial_counter_block);
  /// Writes the next out.size() keystream bytes (the encryption of zeros).
  /// @errors kFailedPrecondition: start() has not succeeded. kInternal: mbedTLS reported a
  /// failure.
  Status keystream(MutableByteSpan out);
  /// XORs the next data.size() keystream bytes into `data` in place (encrypt = decrypt).
  /// @errors kFailedPrecondition: start() has not succeeded. kInternal: mbedTLS reported a
  /// failure.
  Status apply(MutableByteSpan data);

 private:
  alignas(16) unsigned char aes_[kAesStateBytes];
  unsigned char counter_[kAesBlockBytes];
  unsigned char stream_block_[kAesBlockBytes];
  size_t offset_in_block_ = 0;
  bool keyed_ = false;
};

/// Where a CtrDrbg gets its entropy (and X25519 its blinding): fill all of `out` from `context`'s
/// source, or return an error Status (which CtrDrbg passes on to its caller).
using EntropyCallback = Status (*)(void* context, MutableByteSpan out);

/// NIST SP 800-90A CTR_DRBG with AES-256 and the derivation function (mbedTLS), seeded and
/// automatically reseeded from an EntropyCallback. Not copyable or movable (mbedTLS keeps a
/// pointer into the object).
class CtrDrbg {
 public:
  /// Unseeded: seed() must succeed before generate() or reseed().
  CtrDrbg();
  /// Frees the mbedTLS context.
  ~CtrDrbg();
  CtrDrbg(const CtrDrbg&) = delete;
  CtrDrbg& operator=(const CtrDrbg&) = delete;

  /// Instantiates the DRBG from `entropy` (kept, with `context`, for automatic reseeding) and an
  /// optional personalization string (keep it to 256 bytes, e.g. a device id). Seeding again
  /// discards the previous state; the object is unseeded until this call succeeds.
  /// @errors kInvalidArgument: `entropy` is null, or `personalization` is longer than mbedTLS's
  /// seed input allows (384 − 48 = 336 bytes with its default settings). Whatever the entropy
  /// callback returned, when it failed (e.g. kUnavailable "no entropy hook: ..."); kUnavailable
  /// if mbedTLS reports an entropy failure without one. kInternal: mbedTLS failed otherwise.
  Status seed(EntropyCallback entropy, void* context, ByteSpan personalization);
  /// Fills `out` (any length; requests are split into the DRBG's 1 KiB maximum), reseeding from
  /// the entropy source when one is due.
  /// @errors kFailedPrecondition: before a successful seed(). The entropy callback's status
  /// (or kUnavailable) when a due reseed could not get entropy. kInternal: mbedTLS failed
  /// otherwise. After an error, `out` may be partly written.
  Status generate(MutableByteSpan out);
  /// Forces a reseed from the entropy source now.
  /// @errors kFailedPrecondition: before a successful seed(). The entropy callback's status (or
  /// kUnavailable) when it failed. kInternal: mbedTLS failed otherwise.
  Status reseed();

  /// The entropy callback and its context as mbedTLS sees them (public for crypto.cpp's bridge
  /// function; not for callers).
  struct EntropySource {
    EntropyCallback callback = nullptr;  ///< the callback given to seed()
    void* context = nullptr;             ///< its context
    Status last_status;  ///< the callback's last answer, returned when seeding or reseeding fails
  };

 private:
  alignas(16) unsigned char drbg_[kDrbgStateBytes];
  EntropySource source_;  // mbedTLS keeps a pointer to it: the object never moves.
  bool seeded_ = false;
};

// ---- Key agreement, key derivation, authenticated encryption (crypto_exchange.cpp) ---------

/// RFC 7748 decodeScalar25519: clears bits 0–2 and 255, sets bit 254 (in place, 32 bytes).
/// A span that is not kX25519KeyBytes long is left untouched.
void x25519_clamp(Span<uint8_t> private_key);
/// public = X25519(private, 9), written as 32 little-endian bytes to `public_out`. `blinding`
/// feeds mbedTLS's side-channel countermeasures only; the result does not depend on it. The
/// private key must already be clamped (x25519_clamp).
/// @errors kInvalidArgument: a key or `public_out` is not 32 bytes, `blinding` is null, or the
/// private key is not clamped. kResourceExhausted: mbedTLS could not set up the curve (its memory
/// pool is full). kUnavailable: the blinding callback failed. kInternal: mbedTLS failed
/// otherwise.
Status x25519_public_key(ByteSpan private_key, Span<uint8_t> public_out, EntropyCallback blinding,
                         void* blinding_context);
/// shared = X25519(private, peer_public), written as 32 bytes to `shared_out`; `blinding` as in
/// x25519_public_key().
/// @errors kInvalidArgument: a key or `shared_out` is not 32 bytes, `blinding` is null, the
/// private key is not clamped, or the peer key is malformed or of low order (the secret would
/// be all zeros; `shared_out` may then hold those zeros). kResourceExhausted: mbedTLS could not
/// set up the curve (memory pool full). kUnavailable: the blinding callback failed. kInternal:
/// mbedTLS failed otherwise.
Status x25519_shared_secret(ByteSpan private_key, ByteSpan peer_public, Span<uint8_t> shared_out,
                            EntropyCallback blinding, void* blinding_context);

/// RFC 5869 HKDF-SHA256 (extract then expand): fills `out` from `input_key`, `salt` and `info`.
/// @errors kInvalidArgument: mbedTLS refused the derivation; it reports this for an `out` longer
/// than 255 × 32 bytes, and (reported the same way) for any other mbedTLS failure. kInternal:
/// SHA-256 is missing from the mbedTLS build.
Status hkdf_sha256(ByteSpan salt, ByteSpan input_key, ByteSpan info, MutableByteSpan out);

/// AES-256-GCM encryption: `ciphertext` (as long as `plaintext`) and a 16-byte `tag`
/// authenticating it and `aad`, under a 32-byte `key` and a 12-byte `iv` that must never repeat
/// under one key.
/// @errors kInvalidArgument: a size is wrong (key 32, iv 12, tag 16, ciphertext.size() ==
/// plaintext.size()). kResourceExhausted: mbedTLS could not set the key (memory pool full).
/// kInternal: the encryption failed inside mbedTLS.
Status aes256_gcm_seal(ByteSpan key, ByteSpan iv, ByteSpan aad, ByteSpan plaintext,
                       MutableByteSpan ciphertext, MutableByteSpan tag);
/// AES-256-GCM decryption: checks `tag` over `ciphertext` and `aad`, and writes `plaintext` (as
/// long as `ciphertext`) only if it is authentic.
/// @errors kInvalidArgument: a size is wrong (key 32, iv 12, tag 16, plaintext.size() ==
/// ciphertext.size()). kResourceExhausted: mbedTLS could not set the key (memory pool full).
/// kDataLoss: authentication failed (wrong key, tampered or misrouted message), or mbedTLS failed
/// while decrypting; `plaintext` is then zeroed.
Status aes256_gcm_open(ByteSpan key, ByteSpan iv, ByteSpan aad, ByteSpan ciphertext, ByteSpan tag,
                       MutableByteSpan plaintext);

}  // namespace crypto
}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_CRYPTO_H_
