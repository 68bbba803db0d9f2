/// @file
/// ItemHasher: the seeded 64-bit hash of item keys used by sketches and samplers.
///
/// Definition: SipHash-2-4 (Aumasson & Bernstein, "SipHash: a fast short-input PRF", 2012) with
/// the 128-bit key (k0, k1), output as a 64-bit integer. An item id is hashed as its 8-byte
/// little-endian encoding, so hash(id) is the same whether the id was held as 32 or 64 bits; byte
/// strings are hashed as they are. All arithmetic is on uint64_t and all loads are little-endian,
/// so results are identical on every architecture (tests pin the paper's reference vectors and
/// run on x86-64, AArch64 and Cortex-M).
///
/// Why SipHash: a well-studied keyed function (a PRF) with published vectors, for the
/// data-shift sketch's one hash per item (001 §3: weights, buckets and signs derive from it) and
/// other samplers. hash_id is 8 SipRounds, inline so that callers overlap it with other work:
/// ≈ 11 ns per id on this project's 2-core EPYC guest (tests/bench/sketch_bench.cpp); hash_ids
/// computes many ids in vector lanes (item_hash_batch.cpp). The key is
/// public (it comes from the task), so this is a hash with a public seed, not a secret MAC:
/// secrets go through crypto.h (mbedTLS) only.
///
/// @memory 16 bytes (sizeof(ItemHasher): the key).
/// @paper 001 §3–4 (hash functions h_j, s_j and weights W_i).
#ifndef FEDSTAT_SDK_BASE_ITEM_HASH_H_
#define FEDSTAT_SDK_BASE_ITEM_HASH_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/lanes_inline.h"
#include "sdk/base/span.h"
#include "sdk/base/vector_isa.h"

namespace fedstat {

namespace item_hash_detail {

/// x rotated left by b bits (0 < b < 64): on uint64_t, or lane by lane on a vector of them.
template <typename Word>
FEDSTAT_LANES_INLINE constexpr Word rotl(const Word& x, int b) {
  return (x << b) | (x >> (64 - b));
}

/// SipHash's state and rounds, here so that hash_id inlines into the sketch's update loop. Word is
/// uint64_t, or a vector of uint64_t lanes (GCC/Clang vector extensions) for hash_ids, whose lanes
/// then run these very operations, always inlined (lanes_inline.h), so that in hash_ids they are
/// AVX code at every optimisation level. No member takes or returns a Word by value either.
template <typename Word>
struct SipStateOf {
  Word v0, v1, v2, v3;

  constexpr SipStateOf(const Word& k0, const Word& k1)
      : v0(k0 ^ 0x736f6d6570736575ULL),
        v1(k1 ^ 0x646f72616e646f6dULL),
        v2(k0 ^ 0x6c7967656e657261ULL),
        v3(k1 ^ 0x7465646279746573ULL) {}

  FEDSTAT_LANES_INLINE constexpr void round() {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }

  FEDSTAT_LANES_INLINE constexpr void absorb(const Word& m) {  // two compression rounds
    v3 ^= m;
    round();
    round();
    v0 ^= m;
  }

  FEDSTAT_LANES_INLINE constexpr void finish(Word& hash) {  // four finalisation rounds
    v2 ^= 0xff;
    round();
    round();
    round();
    round();
    hash = v0 ^ v1 ^ v2 ^ v3;
  }
};

/// The state of one SipHash.
using SipState = SipStateOf<uint64_t>;

/// `out[j]` = SipHash-2-4 under (k0, k1) of LE64(`items[j]`) for j < n, in the lanes of `isa`
/// (the baseline: one by one); false (and nothing written) when this processor lacks `isa`. For
/// tests and ItemHasher::hash_ids.
bool hash_ids_with(VectorIsa isa, uint64_t k0, uint64_t k1, const uint32_t* items, uint64_t* out,
                   size_t n);

}  // namespace item_hash_detail

/// SipHash-2-4 under a public 128-bit key (k0, k1): the 64-bit hash of item ids and byte strings.
class ItemHasher {
 public:
  /// The hasher with key words `k0` and `k1`.
  constexpr ItemHasher(uint64_t k0, uint64_t k1) : k0_(k0), k1_(k1) {}
  /// The hasher for a 16-byte key: k0 = LE64(key[0..8)), k1 = LE64(key[8..16)), the convention
  /// of the SipHash paper.
  static ItemHasher from_key_bytes(const uint8_t key[16]);

  /// SipHash-2-4 of the bytes of `data` (any length).
  uint64_t hash_bytes(ByteSpan data) const;
  /// The hash of an item id: = hash_bytes(LE64(item)), computed without building the bytes.
  uint64_t hash_id(uint64_t item) const {
    item_hash_detail::SipState s(k0_, k1_);
    s.absorb(item);        // the 8 bytes LE64(item) form exactly one word
    s.absorb(8ULL << 56);  // empty tail, length 8
    uint64_t hash = 0;
    s.finish(hash);
    return hash;
  }
  /// `out[j]` = hash_id(`items[j]`) for j < n, the same values computed together: 8 or 4 at a time
  /// in vector lanes where the processor has AVX-512F or AVX2 (chosen at run time), else one by one
  /// (item_hash_batch.cpp).
  void hash_ids(const uint32_t* items, uint64_t* out, size_t n) const;

  /// The first key word.
  uint64_t k0() const { return k0_; }
  /// The second key word.
  uint64_t k1() const { return k1_; }

 private:
  uint64_t k0_;
  uint64_t k1_;
};

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_ITEM_HASH_H_
