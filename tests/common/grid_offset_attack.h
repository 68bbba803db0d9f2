// The grid-offset attack's two pieces, shared by the tests that run it (host GaussianNoise,
// KlEstimator): how far a released value sits from a candidate statistic's grid, and how many
// correct guesses out of n fair coin flips a guesser at chance exceeds with probability below
// 1e-6 (one-sided, normal approximation, z = 4.75). Test code only.
#ifndef FEDSTAT_TESTS_COMMON_GRID_OFFSET_ATTACK_H_
#define FEDSTAT_TESTS_COMMON_GRID_OFFSET_ATTACK_H_

#include <cmath>

namespace fedstat {
namespace testing {

// |k − round(k)| for k = (released − candidate)/grid: 0 when `released` lies on the grid through
// `candidate`.
inline double grid_offset(double released, double candidate, double grid) {
  const double steps = (released - candidate) / grid;
  return std::fabs(steps - std::nearbyint(steps));
}

// The test fails a mechanism at chance about once in a million seeds; the tests use fixed seeds.
inline double chance_limit_p1e6(int n) {
  return n / 2.0 + 4.75 * std::sqrt(n / 4.0);
}

}  // namespace testing
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_COMMON_GRID_OFFSET_ATTACK_H_
