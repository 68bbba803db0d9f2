// Csprng: the SDK's cryptographically secure random source, NIST SP 800-90A CTR_DRBG (AES-256,
// from mbedTLS through the crypto adapter), seeded and periodically reseeded from
// platform::fill_entropy.
//
// Use it for everything an adversary must not predict: privacy noise, secure-aggregation keys and
// masks. Not deterministic by design; tests that need repeatability use SeededStream, or
// init_with_entropy() with a test entropy source.
//
// Memory: sizeof(Csprng) ≈ crypto::kDrbgStateBytes + 3 words (no buffers elsewhere).
// Paper: 002 §2.2–2.3 and 000 Algorithm 3 (noise and masks must come from a CSPRNG).
#ifndef FEDSTAT_SDK_BASE_CSPRNG_H_
#define FEDSTAT_SDK_BASE_CSPRNG_H_

#include "sdk/base/crypto.h"
#include "sdk/base/random_source.h"

namespace fedstat {

class Csprng final : public RandomSource {
 public:
  Csprng() = default;
  Csprng(const Csprng&) = delete;
  Csprng& operator=(const Csprng&) = delete;

  // Seeds from the platform's entropy source; `personalization` (≤ 256 bytes, optional) should
  // distinguish devices or instances. kUnavailable if the platform has no working entropy.
  Status init(ByteSpan personalization = ByteSpan());
  // Seeds from another entropy source (tests, or an application's own hardware RNG driver).
  Status init_with_entropy(crypto::EntropyCallback entropy, void* context,
                           ByteSpan personalization = ByteSpan());

  // kFailedPrecondition before init.
  Status fill(MutableByteSpan out) override;
  Status reseed() { return drbg_.reseed(); }

 private:
  crypto::CtrDrbg drbg_;
};

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_CSPRNG_H_
