// ItemHasher: the seeded 64-bit hash of item keys used by sketches and samplers.
//
// Definition: SipHash-2-4 (Aumasson & Bernstein, "SipHash: a fast short-input PRF", 2012) with
// the 128-bit key (k0, k1), output as a 64-bit integer. An item id is hashed as its 8-byte
// little-endian encoding, so hash(id) is the same whether the id was held as 32 or 64 bits; byte
// strings are hashed as they are. All arithmetic is on uint64_t and all loads are little-endian,
// so results are identical on every architecture (tests pin the paper's reference vectors and
// run on x86-64, AArch64 and Cortex-M).
//
// Why SipHash: a well-studied keyed function with published vectors, good mixing for
// CountSketch buckets and signs and for the L1-sampling weights of 001 §3; ≈ 1.5 ns per id on a
// modern host. The key is public (it comes from the task), so this is a hash with a public seed,
// not a secret MAC: secrets go through crypto.h (mbedTLS) only.
//
// Memory: 16 bytes. Paper: 001 §3–4 (hash functions h_j, s_j and weights W_i).
#ifndef FEDSTAT_SDK_BASE_ITEM_HASH_H_
#define FEDSTAT_SDK_BASE_ITEM_HASH_H_

#include <stdint.h>

#include "sdk/base/span.h"

namespace fedstat {

class ItemHasher {
 public:
  constexpr ItemHasher(uint64_t k0, uint64_t k1) : k0_(k0), k1_(k1) {}
  // k0 = LE64(key[0..8)), k1 = LE64(key[8..16)), the convention of the SipHash paper.
  static ItemHasher from_key_bytes(const uint8_t key[16]);

  uint64_t hash_bytes(ByteSpan data) const;
  // = hash_bytes(LE64(item)), computed without building the bytes.
  uint64_t hash_id(uint64_t item) const;

  uint64_t k0() const { return k0_; }
  uint64_t k1() const { return k1_; }

 private:
  uint64_t k0_;
  uint64_t k1_;
};

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_ITEM_HASH_H_
