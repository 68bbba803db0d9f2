#include "sdk/base/portable_math.h"

#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>

#include "sdk/privacy/accountants.h"
#include "sdk/tasks/kl_answer_task.h"
#include "tests/common/golden_vectors.h"

namespace fedstat {
namespace {

using math::bits_of;
using math::double_of;

// Distance in units in the last place between two finite doubles of the same sign (the count of
// doubles between them).
uint64_t ulps_apart(double a, double b) {
  const uint64_t x = bits_of(a), y = bits_of(b);
  return x > y ? x - y : y - x;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// A fixed seed: the same million inputs on every run.
std::mt19937_64 fixed_generator() {
  return std::mt19937_64(20261127);
}

TEST(PortableMathTest, SqrtIsCorrectlyRoundedLikeTheHostsBitForBit) {
  // IEEE-754 requires √ correctly rounded, so the host's is the exact reference.
  std::mt19937_64 gen = fixed_generator();
  for (int i = 0; i < 2000000; ++i) {
    const double x = double_of(gen() >> 1);  // every positive finite double, NaN and +∞ too
    const double want = sqrt(x), got = math::portable_sqrt(x);
    if (x != x) {
      ASSERT_NE(got, got);
      continue;
    }
    ASSERT_EQ(bits_of(got), bits_of(want)) << "x = " << x;
  }
  for (uint64_t n = 0; n < 300000; ++n) {  // counts, the KL sensitivity's inputs, and squares
    const double x = static_cast<double>(n), sq = static_cast<double>(n * n);
    ASSERT_EQ(bits_of(math::portable_sqrt(x)), bits_of(sqrt(x))) << n;
    ASSERT_EQ(math::portable_sqrt(sq), static_cast<double>(n)) << n;
  }
  EXPECT_EQ(bits_of(math::portable_sqrt(-0.0)), bits_of(-0.0));
  EXPECT_NE(math::portable_sqrt(-1.0), math::portable_sqrt(-1.0));  // NaN
  EXPECT_NE(math::portable_sqrt(-kInf), math::portable_sqrt(-kInf));
  EXPECT_EQ(math::portable_sqrt(kInf), kInf);
  EXPECT_EQ(math::portable_sqrt(double_of(1)), sqrt(double_of(1)));  // the least subnormal
}

TEST(PortableMathTest, LogIsWithinOneUlpOfTheHostsEverywhere) {
  std::mt19937_64 gen = fixed_generator();
  uint64_t worst = 0;
  for (int i = 0; i < 2000000; ++i) {
    const double x = double_of(gen() % bits_of(kInf));  // every positive finite double
    if (x == 0) continue;
    const double want = log(x), got = math::portable_log(x);
    if (want == 0) {
      ASSERT_EQ(got, 0.0) << x;
      continue;
    }
    const uint64_t d = ulps_apart(got, want);
    worst = d > worst ? d : worst;
    ASSERT_LE(d, 1u) << "x = " << x;
  }
  for (int k = -1000; k <= 1000; ++k) {  // 1 + k ulps: where ln needs its relative accuracy
    const double x = double_of(bits_of(1.0) + static_cast<uint64_t>(static_cast<int64_t>(k)));
    if (x == 1.0) continue;
    ASSERT_LE(ulps_apart(math::portable_log(x), log(x)), 1u) << k;
  }
  EXPECT_EQ(math::portable_log(1.0), 0.0);
  EXPECT_EQ(math::portable_log(0.0), -kInf);
  EXPECT_EQ(math::portable_log(-0.0), -kInf);
  EXPECT_NE(math::portable_log(-1.0), math::portable_log(-1.0));
  EXPECT_EQ(math::portable_log(kInf), kInf);
  EXPECT_LE(ulps_apart(math::portable_log(double_of(1)), log(double_of(1))), 1u);
  std::printf("portable_log: at most %llu ulp from the host's log on 2,000,000 inputs\n",
              static_cast<unsigned long long>(worst));
}

TEST(PortableMathTest, ExpIsWithinOneUlpOfTheHostsEverywhere) {
  std::mt19937_64 gen = fixed_generator();
  std::uniform_real_distribution<double> range(-745.2, 709.8);
  uint64_t worst = 0;
  for (int i = 0; i < 2000000; ++i) {
    // Half uniform over the whole range, half random bit patterns (small |x| of every scale).
    const double x = (i & 1) ? range(gen) : double_of(gen() % bits_of(709.0)) * ((i & 2) ? -1 : 1);
    const double want = exp(x), got = math::portable_exp(x);
    if (want == 0 || want == kInf) {
      ASSERT_EQ(got, want) << x;
      continue;
    }
    const uint64_t d = ulps_apart(got, want);
    worst = d > worst ? d : worst;
    ASSERT_LE(d, 1u) << "x = " << x;
  }
  EXPECT_EQ(math::portable_exp(0.0), 1.0);
  EXPECT_EQ(math::portable_exp(-0.0), 1.0);
  EXPECT_EQ(math::portable_exp(-kInf), 0.0);
  EXPECT_EQ(math::portable_exp(kInf), kInf);
  EXPECT_EQ(math::portable_exp(710.0), kInf);
  EXPECT_EQ(math::portable_exp(-746.0), 0.0);
  EXPECT_NE(math::portable_exp(NAN), math::portable_exp(NAN));
  std::printf("portable_exp: at most %llu ulp from the host's exp on 2,000,000 inputs\n",
              static_cast<unsigned long long>(worst));
}

// The privacy ledger's conversions that use them give the same doubles on every target (the
// values are pinned in tests/common/golden_vectors.h and checked on AArch64 and the Cortex-M4
// too), and agree with the host's libm formulas to the last few bits.
TEST(PortableMathTest, TheLedgersConversionsGiveThePinnedDoubles) {
  for (const golden::RdpToDpCase& c : golden::kRdpToDp) {
    const Result<double> eps = privacy::rdp_to_dp(c.alpha, c.rdp, c.delta);
    ASSERT_TRUE(eps.ok());
    EXPECT_EQ(bits_of(eps.value()), c.epsilon_bits) << c.alpha << " " << c.delta;
    const double a = c.alpha;
    const double libm = c.rdp + (log(1 / c.delta) + (a - 1) * log(1 - 1 / a) - log(a)) / (a - 1);
    EXPECT_NEAR(eps.value(), libm, 4e-15 * libm);
  }
  for (const golden::LaplaceDeltaCase& c : golden::kTruncatedLaplaceDelta) {
    const Result<double> delta =
        privacy::truncated_discrete_laplace_delta(c.scale, c.bound, c.sensitivity);
    ASSERT_TRUE(delta.ok());
    EXPECT_EQ(bits_of(delta.value()), c.delta_bits) << c.scale << " " << c.bound;
    // An independent reference where long double is wider (x86-64's 64-bit significand): the
    // same sum in extended precision. The double loop's rounding grows with the bound (measured
    // against mpmath: 1.1e-14 relative at bound 200, 3e-12 at 99999), hence 1e-11.
    if (sizeof(long double) > sizeof(double)) {
      const long double q = expl(-1.0L / static_cast<long double>(c.scale));
      long double total = 1, tail = 0, power = 1;
      for (uint64_t k = 1; k <= c.bound; ++k) {
        power *= q;
        total += 2 * power;
        if (k + c.sensitivity > c.bound) tail += power;
      }
      const double reference = static_cast<double>(tail / total);
      EXPECT_NEAR(delta.value(), reference, 1e-11 * reference) << c.scale << " " << c.bound;
    }
  }
  for (const golden::KlSensitivityCase& c : golden::kKlSensitivity) {
    const privacy::Sensitivity s = tasks::kl_answer_sensitivity(c.m1, c.m2);
    EXPECT_EQ(bits_of(s.l2), c.l2_bits) << c.m1 << " " << c.m2;
    EXPECT_EQ(s.l2, sqrt(static_cast<double>(c.m1) + static_cast<double>(c.m2)));
  }
}

}  // namespace
}  // namespace fedstat
