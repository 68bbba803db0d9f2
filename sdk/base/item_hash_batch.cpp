// ItemHasher::hash_ids: SipHash-2-4 of many item ids at once, in vector lanes where the processor
// has them (8 lanes with AVX-512F, 4 with AVX2, chosen at run time on x86-64: vector_isa.h), else
// one by one. The lanes run item_hash.h's SipStateOf on vectors of uint64_t (GCC/Clang vector
// extensions): hash_id's very additions, rotations and exclusive-ors, lane by lane, so each result
// equals hash_id's bit for bit (tests/unit/base/item_hash_test.cpp checks every kernel this
// processor runs against hash_id).
// A vector of 4 or 8 lanes must never cross a call between code compiled for AVX and code
// compiled without (the two pass it differently). hash_in_lanes and SipStateOf's members are
// always inlined (lanes_inline.h) into the AVX functions below, so all the lanes' code is AVX code
// at every optimisation level and no such call exists. GCC and Clang still warn at each
// instantiation that one could (-Wpsabi); the warning is off here.
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#include <string.h>

#include "sdk/base/item_hash.h"

namespace fedstat {
namespace item_hash_detail {
namespace {

template <size_t kLanes>
struct Lanes {
  typedef uint64_t Words __attribute__((vector_size(8 * kLanes)));
  typedef uint32_t Ids __attribute__((vector_size(4 * kLanes)));
};

// The hashes of items[j] for the whole multiples of kLanes ids; returns how many.
template <size_t kLanes>
FEDSTAT_LANES_INLINE size_t hash_in_lanes(uint64_t k0, uint64_t k1, const uint32_t* items,
                                          uint64_t* out, size_t n) {
  typedef typename Lanes<kLanes>::Words Words;
  typedef typename Lanes<kLanes>::Ids Ids;
  const Words key0 = Words{} + k0, key1 = Words{} + k1;
  const Words length = Words{} + (uint64_t{8} << 56);  // the empty tail of an 8-byte message
  size_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Ids ids;
    memcpy(&ids, items + j, sizeof ids);
    SipStateOf<Words> s(key0, key1);
    s.absorb(__builtin_convertvector(ids, Words));  // LE64(id): the id, zero-extended
    s.absorb(length);
    Words hashes;
    s.finish(hashes);
    memcpy(out + j, &hashes, sizeof hashes);
  }
  return j;
}

#if defined(FEDSTAT_X86_VECTOR_KERNELS)
__attribute__((target("avx512f"))) size_t hash_avx512(uint64_t k0, uint64_t k1,
                                                      const uint32_t* items, uint64_t* out,
                                                      size_t n) {
  return hash_in_lanes<8>(k0, k1, items, out, n);
}
__attribute__((target("avx2"))) size_t hash_avx2(uint64_t k0, uint64_t k1, const uint32_t* items,
                                                 uint64_t* out, size_t n) {
  return hash_in_lanes<4>(k0, k1, items, out, n);
}
#endif

}  // namespace

bool hash_ids_with(VectorIsa isa, uint64_t k0, uint64_t k1, const uint32_t* items, uint64_t* out,
                   size_t n) {
  if (!vector_isa_available(isa)) return false;
  size_t done = 0;
#if defined(FEDSTAT_X86_VECTOR_KERNELS)
  if (isa == VectorIsa::kAvx512) done = hash_avx512(k0, k1, items, out, n);
  if (isa == VectorIsa::kAvx2) done = hash_avx2(k0, k1, items, out, n);
#endif
  const ItemHasher hasher(k0, k1);
  for (size_t j = done; j < n; ++j) out[j] = hasher.hash_id(items[j]);
  return true;
}

}  // namespace item_hash_detail

void ItemHasher::hash_ids(const uint32_t* items, uint64_t* out, size_t n) const {
  item_hash_detail::hash_ids_with(widest_vector_isa(), k0_, k1_, items, out, n);
}

}  // namespace fedstat
