// The test suite's own yardstick: exact chi-square critical values at p = 1e-6, checked against
// scipy.stats.chi2.isf(1e-6, df) (scipy 1.10.1, Debian 12).
#include "tests/common/chi_square.h"

#include <gtest/gtest.h>

namespace fedstat {
namespace testing {
namespace {

TEST(ChiSquareTest, CriticalValuesMatchScipy) {
  const struct {
    double df, expected;
  } cases[] = {{1, 23.9281}, {2, 27.6310},  {3, 30.6648},   {5, 35.8882},   {10, 46.863},
               {20, 65.421}, {50, 112.608}, {100, 182.127}, {255, 377.078}, {999, 1226.046}};
  for (const auto& c : cases) {
    EXPECT_NEAR(chi_square_critical_p1e6(c.df), c.expected, 2e-3 * c.expected) << "df " << c.df;
  }
}

}  // namespace
}  // namespace testing
}  // namespace fedstat
