/// @file
/// The vector instruction sets the SDK's batch kernels may use on this processor, asked at run
/// time: AVX2 and AVX-512F on x86-64 (GCC's and Clang's __builtin_cpu_supports, which also checks
/// that the operating system saves the wider registers); none elsewhere, where kernels keep the
/// target's baseline (SSE2, NEON or plain integer code). A kernel chosen by these gives the same
/// values as the baseline one, bit for bit (each kernel's header says how), so the choice changes
/// speed only.
///
/// @memory none.
/// @paper none (an implementation detail of ItemHasher::hash_ids and SamplingWeight::weights).
#ifndef FEDSTAT_SDK_BASE_VECTOR_ISA_H_
#define FEDSTAT_SDK_BASE_VECTOR_ISA_H_

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/// Defined where the SDK has AVX2 and AVX-512F kernels: x86-64 with GCC or Clang (their target
/// attributes and __builtin_cpu_supports).
#define FEDSTAT_X86_VECTOR_KERNELS 1
#endif

namespace fedstat {

/// A vector instruction set a batch kernel is compiled for.
enum class VectorIsa {
  kBaseline,  ///< the target's own (SSE2 on x86-64, NEON on AArch64, none on a Cortex-M)
  kAvx2,      ///< x86-64 AVX2: four 64-bit lanes
  kAvx512,    ///< x86-64 AVX-512F: eight 64-bit lanes
};

/// Whether this processor runs `isa` (kBaseline always).
bool vector_isa_available(VectorIsa isa);
/// The widest available: AVX-512F, else AVX2, else the baseline.
VectorIsa widest_vector_isa();

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_VECTOR_ISA_H_
