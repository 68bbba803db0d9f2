/// @file
/// RandomSource: where every random choice in the SDK comes from.
///
/// Two implementations: Csprng (csprng.h), a CTR_DRBG seeded from the platform's entropy, for
/// everything secret (noise, masks, keys); and SeededStream (seeded_stream.h), a deterministic
/// AES-256-CTR keystream under a 256-bit seed, for tests and for public randomness that the task
/// fixes (hash seeds, query points, rotation signs), so that equal seeds give equal reports on
/// every architecture.
///
/// Derived draws are exact: next_u64 reads 8 bytes little-endian; uniform_below(n) is exactly
/// uniform on [0, n) (rejection of the 2^64 mod n lowest values, at most 1 expected retry, < 2 in
/// the worst case); no floating point.
///
/// @memory the interface holds only a vtable pointer.
/// @paper infrastructure for 001 §4.7, 002 §2.3, 000 §5 (every sampler draws from here).
#ifndef FEDSTAT_SDK_BASE_RANDOM_SOURCE_H_
#define FEDSTAT_SDK_BASE_RANDOM_SOURCE_H_

#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {

/// The interface every random draw in the SDK goes through: fill() bytes, and exact integer draws
/// built on it. Implemented by Csprng (secret randomness) and SeededStream (public, reproducible
/// randomness).
class RandomSource {
 public:
  /// Fills `out` with uniformly random bytes, or fails.
  /// @errors depends on the implementation: Csprng returns kFailedPrecondition before init and
  /// kUnavailable (or its entropy source's status) when entropy fails; SeededStream returns
  /// kInternal when AES fails inside mbedTLS. See the implementation's fill().
  virtual Status fill(MutableByteSpan out) = 0;

  /// 4 bytes from fill(), read little-endian.
  /// @errors fill()'s status when it fails (kUnavailable, kFailedPrecondition, kInternal, ...:
  /// see the implementation's fill()).
  Result<uint32_t> next_u32();
  /// 8 bytes from fill(), read little-endian.
  /// @errors fill()'s status when it fails (kUnavailable, kFailedPrecondition, kInternal, ...:
  /// see the implementation's fill()).
  Result<uint64_t> next_u64();
  /// Exactly uniform on [0, bound): draws next_u64() until it is not among the 2^64 mod bound
  /// lowest values, then reduces it mod bound (fewer than 2 draws expected).
  /// @errors kInvalidArgument: `bound` is 0. Otherwise whatever fill() returns.
  Result<uint64_t> uniform_below(uint64_t bound);

 protected:
  /// For implementations only.
  RandomSource() = default;
  /// Protected and non-virtual: a virtual destructor would emit a deleting destructor that pulls
  /// in operator delete, and the SDK never deletes through this interface.
  ~RandomSource() = default;
  /// For implementations only.
  RandomSource(const RandomSource&) = default;
  /// For implementations only.
  RandomSource& operator=(const RandomSource&) = default;
};

/// RandomSource::fill in the callback form the crypto adapter takes (crypto::EntropyCallback):
/// `source` is a RandomSource*. Lets any source feed X25519's blinding or a DRBG's entropy.
/// @errors kInvalidArgument: `source` is null. Otherwise whatever the source's fill() returns.
Status fill_from_random_source(void* source, MutableByteSpan out);

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_RANDOM_SOURCE_H_
