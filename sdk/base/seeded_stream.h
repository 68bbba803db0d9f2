/// @file
/// SeededStream: a deterministic random source keyed by a 256-bit seed, for tests and for public,
/// task-derived randomness (hash seeds, sampled query points, rotation signs).
///
/// Construction (exact, so any language can reproduce it): the byte stream is the AES-256-CTR
/// keystream (NIST SP 800-38A) under key = seed, with initial counter block
/// BE64(stream_id) || BE64(0), the counter incremented as a 128-bit big-endian integer. Byte i of
/// the stream is byte i of that keystream; next_u64 reads the next 8 bytes little-endian. Distinct
/// stream ids give independent streams under one seed (2^64 streams of 2^68 bytes each).
/// The same seed and stream id therefore give the same bytes on x86-64, AArch64 and Cortex-M.
///
/// Not for secrets that must stay unpredictable to someone who knows the seed: use Csprng.
///
/// @memory sizeof(SeededStream) ≤ crypto::kAesStateBytes + 96 bytes (the AES-CTR state, a
/// Status, the position and a vtable pointer, 16-byte aligned; 416 bytes on 64-bit targets).
/// @paper 001 §3 (public hash functions), 002 Algorithm 3 (public rotation), 000 §5 (public
/// query points).
#ifndef FEDSTAT_SDK_BASE_SEEDED_STREAM_H_
#define FEDSTAT_SDK_BASE_SEEDED_STREAM_H_

#include <stdint.h>

#include "sdk/base/crypto.h"
#include "sdk/base/random_source.h"

namespace fedstat {

/// A 256-bit seed: the AES-256 key of a SeededStream.
struct Seed256 {
  uint8_t bytes[32] = {};  ///< the seed's bytes (all zero by default)
};

/// A deterministic RandomSource: the AES-256-CTR keystream under a 256-bit seed, one of 2^64
/// independent streams chosen by a stream id. Not copyable or movable.
class SeededStream final : public RandomSource {
 public:
  /// Stream `stream_id` under `seed`, at position 0. It cannot fail here: an error keying AES is
  /// kept and returned by every fill().
  explicit SeededStream(const Seed256& seed, uint64_t stream_id = 0);
  SeededStream(const SeededStream&) = delete;
  SeededStream& operator=(const SeededStream&) = delete;

  /// Writes the next out.size() bytes of the stream (any length; the bytes do not depend on how
  /// the stream is split into calls).
  /// @errors kInternal: AES failed inside mbedTLS (when keying it at construction, or now);
  /// position() does not advance.
  Status fill(MutableByteSpan out) override;
  /// Bytes produced so far.
  uint64_t position() const { return position_; }

 private:
  crypto::Aes256Ctr cipher_;
  Status init_status_;
  uint64_t position_ = 0;
};

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_SEEDED_STREAM_H_
