// The audit's yardstick: the regularized incomplete beta function and the exact one-sided
// Clopper–Pearson bounds, pinned against scipy 1.10.1 (Debian 12) and, where scipy is not
// accurate (a + b ≈ 10^7), against exact binomial tails in 60-digit decimal arithmetic. The
// values come from tests/privacy_audit/clopper_pearson_reference.py; the bounds are, e.g.,
//   /usr/bin/python3 -c "from scipy.stats import beta; print(repr(beta.ppf(6.25e-8, 8548,
//   10**6 - 8548 + 1)), repr(beta.isf(6.25e-8, 8549, 10**6 - 8548)))"
#include "tests/privacy_audit/clopper_pearson.h"

#include <gtest/gtest.h>

#include <cmath>

namespace fedstat {
namespace testing {
namespace {

struct BetaCase {
  double a, b, x, lower, upper;  // I_x(a, b) and 1 − I_x(a, b)
};

void expect_relative(double got, double want, double tolerance, const char* what, double a,
                     double b, double x) {
  EXPECT_LE(std::fabs(got - want), tolerance * std::fabs(want))
      << what << " at a = " << a << ", b = " << b << ", x = " << x << ": got " << got << ", want "
      << want;
}

TEST(ClopperPearson, IncompleteBetaMatchesScipy) {
  // scipy.special.betainc(a, b, x) and betainc(b, a, 1 - x). Our error is ~1e-15 at small a + b
  // and grows like (a + b)·1e-15 through std::lgamma; scipy's own is ~1e-10 at a + b = 2·10^5.
  const BetaCase cases[] = {
      {2.5, 3.5, 0.3, 0.2967529892956661, 0.7032470107043336},
      {1, 1, 0.7, 0.7, 0.30000000000000004},
      {0.5, 0.5, 0.01, 0.06376856085851987, 0.9362314391414801},
      {10, 200, 0.02, 0.010010757270630404, 0.9899892427293695},
      {100000, 100000, 0.501, 0.8144532553270518, 0.18554674467294824},
      {30, 1000000.0, 2e-05, 0.02182435072114014, 0.9781756492781727},
  };
  for (const BetaCase& c : cases) {
    const BetaTails t = incomplete_beta(c.a, c.b, c.x);
    expect_relative(t.lower, c.lower, 1e-8, "I", c.a, c.b, c.x);
    expect_relative(t.upper, c.upper, 1e-8, "1 - I", c.a, c.b, c.x);
  }
}

TEST(ClopperPearson, IncompleteBetaMatchesExactTailsAtTenMillion) {
  // Exact P(Bin(a + b − 1, x) ≥ a) (decimal, clopper_pearson_reference.py). scipy 1.10 gives
  // 0.49926 for the first (off by 8e-4); ours is within 4e-8 (std::lgamma at 10^7).
  const BetaCase cases[] = {
      {4000000, 6000000, 0.4, 0.5000171677426284, 0.49998283225737156},
      {5000000, 5000000, 0.4995, 0.0007826992164198151, 0.9992173007835802},
      {2, 3000000, 1e-07, 0.036936327559722926, 0.963063672440277},
  };
  for (const BetaCase& c : cases) {
    const BetaTails t = incomplete_beta(c.a, c.b, c.x);
    expect_relative(t.lower, c.lower, 1e-7, "I", c.a, c.b, c.x);
    expect_relative(t.upper, c.upper, 1e-7, "1 - I", c.a, c.b, c.x);
  }
}

TEST(ClopperPearson, BoundsMatchScipy) {
  // {k, n, α, beta.ppf(α, k, n − k + 1), beta.isf(α, k + 1, n − k)} (0 and 1 at k = 0 and n).
  const struct {
    uint64_t k, n;
    double alpha, lower, upper;
  } cases[] = {
      {0, 100, 0.05, 0.0, 0.029513049607039935},
      {1, 100, 0.05, 0.000512801416262292, 0.04655981145353895},
      {50, 100, 0.025, 0.39832112950330106, 0.6016788704966989},
      {100, 100, 0.05, 0.9704869503929601, 1.0},
      {7, 10, 1e-06, 0.07210197028159973, 0.997965364365909},
      {3, 1000000, 1e-07, 8.452172214115697e-09, 2.398598078195462e-05},
      {600000, 1000000, 1.25e-07, 0.5974709625148771, 0.6025254228789161},
      {8548, 1000000, 6.25e-08, 0.00807016105794909, 0.009044503532643156},
      {0, 1000000, 6.25e-08, 0.0, 1.6587961698445927e-05},
      {1000000, 1000000, 6.25e-08, 0.9999834120383015, 1.0},
      {4000000, 10000000, 2.5e-08, 0.3991556387172258, 0.4008447642080521},
      {85000, 10000000, 2.5e-08, 0.008342684339275817, 0.008659296780540194},
  };
  for (const auto& c : cases) {
    const double lo = clopper_pearson_lower(c.k, c.n, c.alpha);
    const double hi = clopper_pearson_upper(c.k, c.n, c.alpha);
    EXPECT_LE(std::fabs(lo - c.lower), 1e-9 * c.lower) << c.k << "/" << c.n << " lower " << lo;
    EXPECT_LE(std::fabs(hi - c.upper), 1e-9 * c.upper) << c.k << "/" << c.n << " upper " << hi;
    EXPECT_LE(lo, static_cast<double>(c.k) / static_cast<double>(c.n));
    EXPECT_GE(hi, static_cast<double>(c.k) / static_cast<double>(c.n));
  }
}

TEST(ClopperPearson, RoundsOutwardsAndWidensWithConfidence) {
  // At the returned bounds the tail probabilities are on the safe side of α (never narrower).
  const uint64_t k = 8548, n = 1000000;
  const double alpha = 6.25e-8;
  const double lo = clopper_pearson_lower(k, n, alpha);
  const double hi = clopper_pearson_upper(k, n, alpha);
  EXPECT_LE(incomplete_beta(static_cast<double>(k), static_cast<double>(n - k + 1), lo).lower,
            alpha);
  EXPECT_LE(incomplete_beta(static_cast<double>(k + 1), static_cast<double>(n - k), hi).upper,
            alpha);
  EXPECT_LT(clopper_pearson_lower(k, n, alpha / 10), lo);
  EXPECT_GT(clopper_pearson_upper(k, n, alpha / 10), hi);
  EXPECT_EQ(clopper_pearson_lower(0, n, alpha), 0.0);
  EXPECT_EQ(clopper_pearson_upper(n, n, alpha), 1.0);
  // No trials, no information.
  EXPECT_EQ(clopper_pearson_lower(0, 0, alpha), 0.0);
  EXPECT_EQ(clopper_pearson_upper(0, 0, alpha), 1.0);
}

}  // namespace
}  // namespace testing
}  // namespace fedstat
