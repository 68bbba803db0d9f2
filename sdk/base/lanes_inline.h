/// @file
/// FEDSTAT_LANES_INLINE marks each helper that takes or returns a vector of 4 or 8 lanes by value
/// (the batch kernels of ItemHasher::hash_ids and SamplingWeight::weights). Where those kernels
/// have AVX2 and AVX-512F versions (x86-64 with GCC or Clang) it forces inlining at every
/// optimisation level (always_inline): a call to such a helper from a function compiled for AVX
/// would pass the vector differently from how the helper, compiled for the baseline, receives it,
/// so no such call may remain. Elsewhere (AArch64, the Cortex-M) every function has the baseline's
/// conventions and the helpers are plain inline functions, so the compiler keeps choosing (a
/// Cortex-M image stays small: forcing SipHash's rounds inline there costs 640 bytes of flash).
///
/// @memory none.
/// @paper none.
#ifndef FEDSTAT_SDK_BASE_LANES_INLINE_H_
#define FEDSTAT_SDK_BASE_LANES_INLINE_H_

#include "sdk/base/vector_isa.h"

#if defined(FEDSTAT_X86_VECTOR_KERNELS)
/// Inline at every optimisation level (x86-64 with GCC or Clang, where the AVX kernels exist).
#define FEDSTAT_LANES_INLINE __attribute__((always_inline)) inline
#else
/// A plain inline function (no AVX kernels on this target, so no call can cross conventions).
#define FEDSTAT_LANES_INLINE inline
#endif

#endif  // FEDSTAT_SDK_BASE_LANES_INLINE_H_
