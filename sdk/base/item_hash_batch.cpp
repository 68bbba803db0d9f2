// ItemHasher::hash_ids: SipHash-2-4 of many item ids at once, in vector lanes where the processor
// has them (8 lanes with AVX-512F, 4 with AVX2, chosen at run time on x86-64), else one by one.
// Every lane performs hash_id's additions, rotations and exclusive-ors on 64-bit integers, so each
// result equals hash_id's bit for bit (tests/unit/base/item_hash_test.cpp checks every kernel
// this processor runs against hash_id and the reference vectors).
#include "sdk/base/item_hash.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FEDSTAT_ITEM_HASH_X86_KERNELS 1
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 headers start masked intrinsics from _mm512_undefined_epi32(), which its
// -Wmaybe-uninitialized reports as a use of an uninitialised value (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#endif

namespace fedstat {
namespace item_hash_detail {
namespace {

constexpr uint64_t kInit0 = 0x736f6d6570736575ULL;
constexpr uint64_t kInit1 = 0x646f72616e646f6dULL;
constexpr uint64_t kInit2 = 0x6c7967656e657261ULL;
constexpr uint64_t kInit3 = 0x7465646279746573ULL;
constexpr uint64_t kLengthWord = 8ULL << 56;  // the empty tail of an 8-byte message

void hash_portable(uint64_t k0, uint64_t k1, const uint32_t* items, uint64_t* out, size_t n) {
  const ItemHasher hasher(k0, k1);
  for (size_t j = 0; j < n; ++j) out[j] = hasher.hash_id(items[j]);
}

#if defined(FEDSTAT_ITEM_HASH_X86_KERNELS)

// Eight lanes (AVX-512F: 64-bit rotations are one instruction).
#define FEDSTAT_AVX512 __attribute__((target("avx512f"), always_inline)) inline
struct Lanes8 {
  __m512i v0, v1, v2, v3;
};
FEDSTAT_AVX512 void round8(Lanes8& s) {
  s.v0 = _mm512_add_epi64(s.v0, s.v1);
  s.v1 = _mm512_xor_si512(_mm512_rol_epi64(s.v1, 13), s.v0);
  s.v0 = _mm512_rol_epi64(s.v0, 32);
  s.v2 = _mm512_add_epi64(s.v2, s.v3);
  s.v3 = _mm512_xor_si512(_mm512_rol_epi64(s.v3, 16), s.v2);
  s.v0 = _mm512_add_epi64(s.v0, s.v3);
  s.v3 = _mm512_xor_si512(_mm512_rol_epi64(s.v3, 21), s.v0);
  s.v2 = _mm512_add_epi64(s.v2, s.v1);
  s.v1 = _mm512_xor_si512(_mm512_rol_epi64(s.v1, 17), s.v2);
  s.v2 = _mm512_rol_epi64(s.v2, 32);
}
FEDSTAT_AVX512 void absorb8(Lanes8& s, __m512i m) {
  s.v3 = _mm512_xor_si512(s.v3, m);
  round8(s);
  round8(s);
  s.v0 = _mm512_xor_si512(s.v0, m);
}
__attribute__((target("avx512f"))) size_t hash_avx512(uint64_t k0, uint64_t k1,
                                                      const uint32_t* items, uint64_t* out,
                                                      size_t n) {
  const __m512i a = _mm512_set1_epi64(static_cast<long long>(k0));
  const __m512i b = _mm512_set1_epi64(static_cast<long long>(k1));
  const __m512i length = _mm512_set1_epi64(static_cast<long long>(kLengthWord));
  const __m512i final_xor = _mm512_set1_epi64(0xff);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m512i m =
        _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(items + j)));
    Lanes8 s{_mm512_xor_si512(a, _mm512_set1_epi64(static_cast<long long>(kInit0))),
             _mm512_xor_si512(b, _mm512_set1_epi64(static_cast<long long>(kInit1))),
             _mm512_xor_si512(a, _mm512_set1_epi64(static_cast<long long>(kInit2))),
             _mm512_xor_si512(b, _mm512_set1_epi64(static_cast<long long>(kInit3)))};
    absorb8(s, m);
    absorb8(s, length);
    s.v2 = _mm512_xor_si512(s.v2, final_xor);
    round8(s);
    round8(s);
    round8(s);
    round8(s);
    const __m512i h = _mm512_xor_si512(_mm512_xor_si512(s.v0, s.v1), _mm512_xor_si512(s.v2, s.v3));
    _mm512_storeu_si512(out + j, h);
  }
  return j;
}

// Four lanes (AVX2: a rotation is two shifts and an or; by 32, a shuffle of 32-bit halves).
#define FEDSTAT_AVX2 __attribute__((target("avx2"), always_inline)) inline
struct Lanes4 {
  __m256i v0, v1, v2, v3;
};
template <int kBits>
FEDSTAT_AVX2 __m256i rotl4(__m256i x) {
  return _mm256_or_si256(_mm256_slli_epi64(x, kBits), _mm256_srli_epi64(x, 64 - kBits));
}
FEDSTAT_AVX2 __m256i swap_halves4(__m256i x) {  // rotation by 32
  return _mm256_shuffle_epi32(x, 0xB1);
}
FEDSTAT_AVX2 void round4(Lanes4& s) {
  s.v0 = _mm256_add_epi64(s.v0, s.v1);
  s.v1 = _mm256_xor_si256(rotl4<13>(s.v1), s.v0);
  s.v0 = swap_halves4(s.v0);
  s.v2 = _mm256_add_epi64(s.v2, s.v3);
  s.v3 = _mm256_xor_si256(rotl4<16>(s.v3), s.v2);
  s.v0 = _mm256_add_epi64(s.v0, s.v3);
  s.v3 = _mm256_xor_si256(rotl4<21>(s.v3), s.v0);
  s.v2 = _mm256_add_epi64(s.v2, s.v1);
  s.v1 = _mm256_xor_si256(rotl4<17>(s.v1), s.v2);
  s.v2 = swap_halves4(s.v2);
}
FEDSTAT_AVX2 void absorb4(Lanes4& s, __m256i m) {
  s.v3 = _mm256_xor_si256(s.v3, m);
  round4(s);
  round4(s);
  s.v0 = _mm256_xor_si256(s.v0, m);
}
__attribute__((target("avx2"))) size_t hash_avx2(uint64_t k0, uint64_t k1, const uint32_t* items,
                                                 uint64_t* out, size_t n) {
  const __m256i a = _mm256_set1_epi64x(static_cast<long long>(k0));
  const __m256i b = _mm256_set1_epi64x(static_cast<long long>(k1));
  const __m256i length = _mm256_set1_epi64x(static_cast<long long>(kLengthWord));
  const __m256i final_xor = _mm256_set1_epi64x(0xff);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const __m256i m =
        _mm256_cvtepu32_epi64(_mm_loadu_si128(reinterpret_cast<const __m128i*>(items + j)));
    Lanes4 s{_mm256_xor_si256(a, _mm256_set1_epi64x(static_cast<long long>(kInit0))),
             _mm256_xor_si256(b, _mm256_set1_epi64x(static_cast<long long>(kInit1))),
             _mm256_xor_si256(a, _mm256_set1_epi64x(static_cast<long long>(kInit2))),
             _mm256_xor_si256(b, _mm256_set1_epi64x(static_cast<long long>(kInit3)))};
    absorb4(s, m);
    absorb4(s, length);
    s.v2 = _mm256_xor_si256(s.v2, final_xor);
    round4(s);
    round4(s);
    round4(s);
    round4(s);
    const __m256i h = _mm256_xor_si256(_mm256_xor_si256(s.v0, s.v1), _mm256_xor_si256(s.v2, s.v3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j), h);
  }
  return j;
}

#endif  // FEDSTAT_ITEM_HASH_X86_KERNELS

}  // namespace

bool hash_kernel_available(HashKernel kernel) {
  switch (kernel) {
    case HashKernel::kPortable:
      return true;
#if defined(FEDSTAT_ITEM_HASH_X86_KERNELS)
    case HashKernel::kAvx2:
      return __builtin_cpu_supports("avx2");
    case HashKernel::kAvx512:
      return __builtin_cpu_supports("avx512f");
#else
    case HashKernel::kAvx2:
    case HashKernel::kAvx512:
      return false;
#endif
  }
  return false;
}

HashKernel fastest_hash_kernel() {
  if (hash_kernel_available(HashKernel::kAvx512)) return HashKernel::kAvx512;
  if (hash_kernel_available(HashKernel::kAvx2)) return HashKernel::kAvx2;
  return HashKernel::kPortable;
}

bool hash_ids_with(HashKernel kernel, uint64_t k0, uint64_t k1, const uint32_t* items,
                   uint64_t* out, size_t n) {
  if (!hash_kernel_available(kernel)) return false;
  size_t done = 0;
#if defined(FEDSTAT_ITEM_HASH_X86_KERNELS)
  if (kernel == HashKernel::kAvx512) done = hash_avx512(k0, k1, items, out, n);
  if (kernel == HashKernel::kAvx2) done = hash_avx2(k0, k1, items, out, n);
#endif
  hash_portable(k0, k1, items + done, out + done, n - done);
  return true;
}

}  // namespace item_hash_detail

void ItemHasher::hash_ids(const uint32_t* items, uint64_t* out, size_t n) const {
  item_hash_detail::hash_ids_with(item_hash_detail::fastest_hash_kernel(), k0_, k1_, items, out, n);
}

}  // namespace fedstat
