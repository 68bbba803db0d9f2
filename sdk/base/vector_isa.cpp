#include "sdk/base/vector_isa.h"

namespace fedstat {

bool vector_isa_available(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kBaseline:
      return true;
#if defined(FEDSTAT_X86_VECTOR_KERNELS)
    case VectorIsa::kAvx2:
      return __builtin_cpu_supports("avx2");
    case VectorIsa::kAvx512:
      return __builtin_cpu_supports("avx512f");
#else
    case VectorIsa::kAvx2:
    case VectorIsa::kAvx512:
      return false;
#endif
  }
  return false;
}

VectorIsa widest_vector_isa() {
  if (vector_isa_available(VectorIsa::kAvx512)) return VectorIsa::kAvx512;
  if (vector_isa_available(VectorIsa::kAvx2)) return VectorIsa::kAvx2;
  return VectorIsa::kBaseline;
}

}  // namespace fedstat
