// The vector instruction sets as a GoogleTest parameter (each batch kernel's test runs once per
// set), with readable test names: .../Baseline, .../Avx2, .../Avx512.
#ifndef FEDSTAT_TESTS_COMMON_VECTOR_ISA_PARAM_H_
#define FEDSTAT_TESTS_COMMON_VECTOR_ISA_PARAM_H_

#include <gtest/gtest.h>

#include <string>

#include "sdk/base/vector_isa.h"

namespace fedstat {
namespace testing_support {

inline auto every_vector_isa() {
  return ::testing::Values(VectorIsa::kBaseline, VectorIsa::kAvx2, VectorIsa::kAvx512);
}

inline std::string vector_isa_name(const ::testing::TestParamInfo<VectorIsa>& info) {
  switch (info.param) {
    case VectorIsa::kAvx2:
      return "Avx2";
    case VectorIsa::kAvx512:
      return "Avx512";
    case VectorIsa::kBaseline:
      break;
  }
  return "Baseline";
}

}  // namespace testing_support
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_COMMON_VECTOR_ISA_PARAM_H_
