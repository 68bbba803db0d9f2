// Chi-square goodness-of-fit helpers for the statistical tests (host tests only).
//
// Thresholds: a test fails when the statistic exceeds the upper critical value at p = 1e-6 for
// its degrees of freedom, so a correct implementation fails about once in a million runs; every
// test uses a fixed seed, so a given build either always passes or always fails. The critical
// value uses the Wilson–Hilferty approximation chi2_{df,p} ≈ df·(1 − 2/(9df) + z_p·√(2/(9df)))³
// with z_{1e-6} = 4.753424 (accurate to < 1% for df ≥ 10).
#ifndef FEDSTAT_TESTS_COMMON_CHI_SQUARE_H_
#define FEDSTAT_TESTS_COMMON_CHI_SQUARE_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fedstat {
namespace testing {

inline double chi_square_critical_p1e6(double degrees_of_freedom) {
  const double z = 4.753424;
  const double a = 2.0 / (9.0 * degrees_of_freedom);
  const double t = 1.0 - a + z * std::sqrt(a);
  return degrees_of_freedom * t * t * t;
}

// Pearson's statistic of observed counts against equal expected counts.
inline double chi_square_uniform(const std::vector<uint64_t>& counts) {
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  const double expected = static_cast<double>(total) / static_cast<double>(counts.size());
  double statistic = 0;
  for (uint64_t c : counts) {
    const double d = static_cast<double>(c) - expected;
    statistic += d * d / expected;
  }
  return statistic;
}

}  // namespace testing
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_COMMON_CHI_SQUARE_H_
