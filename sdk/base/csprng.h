/// @file
/// Csprng: the SDK's cryptographically secure random source, NIST SP 800-90A CTR_DRBG (AES-256,
/// from mbedTLS through the crypto adapter), seeded and periodically reseeded from
/// platform::fill_entropy.
///
/// Use it for everything an adversary must not predict: privacy noise, secure-aggregation keys and
/// masks. Not deterministic by design; tests that need repeatability use SeededStream, or
/// init_with_entropy() with a test entropy source.
///
/// @memory sizeof(Csprng) ≤ crypto::kDrbgStateBytes + 64 bytes (the DRBG context, its entropy
/// source and a vtable pointer, 16-byte aligned; 512 bytes on 64-bit targets); no buffers
/// elsewhere.
/// @paper 002 §2.2–2.3 and 000 Algorithm 3 (noise and masks must come from a CSPRNG).
#ifndef FEDSTAT_SDK_BASE_CSPRNG_H_
#define FEDSTAT_SDK_BASE_CSPRNG_H_

#include "sdk/base/crypto.h"
#include "sdk/base/random_source.h"

namespace fedstat {

/// The SDK's cryptographically secure RandomSource: a CTR_DRBG (AES-256) seeded from the
/// platform's entropy (or a caller's entropy source). Not copyable or movable.
class Csprng final : public RandomSource {
 public:
  /// Unseeded: init() or init_with_entropy() must succeed before fill().
  Csprng() = default;
  Csprng(const Csprng&) = delete;
  Csprng& operator=(const Csprng&) = delete;

  /// Seeds from the platform's entropy source (platform::fill_entropy); `personalization`
  /// (≤ 256 bytes, optional) should distinguish devices or instances. Calling it again reseeds
  /// from scratch.
  /// @errors kUnavailable: the platform has no working entropy source (the platform's own
  /// status is returned). kInvalidArgument: `personalization` is too long (over 336 bytes with
  /// mbedTLS's defaults). kInternal: mbedTLS failed otherwise.
  Status init(ByteSpan personalization = ByteSpan());
  /// Seeds from another entropy source (tests, or an application's own hardware RNG driver),
  /// kept for automatic reseeding; `context` is passed to `entropy` and must outlive this object.
  /// @errors kInvalidArgument: `entropy` is null, or `personalization` is too long (over 336
  /// bytes with mbedTLS's defaults). The status `entropy` returned, when it failed (kUnavailable
  /// if mbedTLS reports a failure it did not return). kInternal: mbedTLS failed otherwise.
  Status init_with_entropy(crypto::EntropyCallback entropy, void* context,
                           ByteSpan personalization = ByteSpan());

  /// Fills `out` with CTR_DRBG output (any length), reseeding automatically when one is due.
  /// @errors kFailedPrecondition: before a successful init(). The entropy source's status (or
  /// kUnavailable) when a due reseed could not get entropy. kInternal: mbedTLS failed otherwise.
  Status fill(MutableByteSpan out) override;
  /// Forces a reseed from the entropy source now.
  /// @errors kFailedPrecondition: before a successful init(). The entropy source's status (or
  /// kUnavailable) when it failed. kInternal: mbedTLS failed otherwise.
  Status reseed() { return drbg_.reseed(); }

 private:
  crypto::CtrDrbg drbg_;
};

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_CSPRNG_H_
