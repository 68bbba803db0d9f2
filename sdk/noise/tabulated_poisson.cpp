#include "sdk/noise/tabulated_poisson.h"

#include <math.h>

#include "sdk/noise/poisson.h"

namespace fedstat {
namespace noise {
namespace {

constexpr double kNegligible = 0x1p-70;     // table ends where A < 2^−70 (< 2^−64 with margin)
constexpr int64_t kMaxHalfWidth = 1 << 26;  // 64 M entries: far beyond any sensible λ

unsigned bit_length(uint64_t v) {
  unsigned n = 0;
  for (; v != 0; v >>= 1) ++n;
  return n;
}

}  // namespace

// The parameters and table shape, computed in double precision (two identical passes: one to
// size and find M, one to fill the table).
struct TabulatedPoissonSampler::Plan {
  uint64_t p = 0, q = 1, m = 0, w = 1;
  unsigned log2_w = 0;
  double lambda = 0;
  int64_t j_max = 0, j_min = 0;
  double sup = 1;  // max f̃(j)·2^K(j)

  Status make(Rational r_in) {
    FEDSTAT_ASSIGN_OR_RETURN(const Rational r, checked_poisson_lambda(r_in));
    p = r.num;
    q = r.den;
    m = r.floor();
    lambda = static_cast<double>(p) / static_cast<double>(q);
    const uint64_t root = integer_sqrt(m);
    log2_w = root == 0 ? 0 : bit_length(root) - 1;
    w = uint64_t{1} << log2_w;
    sup = 1;
    // Positive side: factors λ/(m+i), decreasing.
    FEDSTAT_RETURN_IF_ERROR(walk(false, nullptr, 0, 0, j_max));
    // Negative side: factors (m−i+1)/λ, decreasing, and f = 0 below −m.
    int64_t negative_width = 0;
    FEDSTAT_RETURN_IF_ERROR(walk(true, nullptr, 0, 0, negative_width));
    j_min = -negative_width;
    return Status();
  }

  double factor(bool negative, int64_t i) const {
    return negative ? static_cast<double>(static_cast<int64_t>(m) - i + 1) / lambda
                    : lambda / static_cast<double>(m + static_cast<uint64_t>(i));
  }

  // Walks one side from j = ±1 outward. Without a table it finds the width and updates sup;
  // with one it writes thresholds T ± margin for the entries of that side.
  Status walk(bool negative, PoissonThreshold* table, double inverse_m, uint64_t margin,
              int64_t& width) {
    double f = 1;
    int64_t below = 0;
    int64_t i = 0;
    const int64_t limit = table != nullptr ? width : kMaxHalfWidth;
    for (;;) {
      if (negative && i == static_cast<int64_t>(m)) break;  // f(−m−1) = 0: the support ends
      if (i == limit) {
        if (table != nullptr) break;
        return out_of_range("tabulated Poisson: the table would exceed 2^26 entries per side");
      }
      ++i;
      f *= factor(negative, i);
      const double a = ldexp(f, static_cast<int>(static_cast<uint64_t>(i) >> log2_w));
      if (table != nullptr) {
        write(table[negative ? -i : i], a * inverse_m, margin);
        continue;
      }
      if (a > sup) sup = a;
      below = a < kNegligible ? below + 1 : 0;
      if (below >= static_cast<int64_t>(w) && power_of_w(factor(negative, i + 1)) <= 0.49) break;
    }
    width = i;
    return Status();
  }

  // x^w by log2(w) squarings: only correctly rounded IEEE operations, so the table's width —
  // and with it M and every sample — is the same on every architecture (pow() is not).
  double power_of_w(double x) const {
    for (unsigned i = 0; i < log2_w; ++i) x *= x;
    return x;
  }

  static void write(PoissonThreshold& entry, double accept, uint64_t margin) {
    const double scaled = ldexp(accept, 64);
    const uint64_t t = scaled >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(scaled);
    entry.low = t > margin ? t - margin : 0;
    entry.high = t > UINT64_MAX - margin ? UINT64_MAX : t + margin;
  }

  int64_t half_width() const { return j_max > -j_min ? j_max : -j_min; }
  size_t scratch_limbs() const {
    const size_t region =
        static_cast<size_t>(half_width()) + static_cast<size_t>(half_width()) / 64 + 32;
    return 4 * region + 16;
  }
};

Result<TabulatedPoissonSampler::Sizes> TabulatedPoissonSampler::sizes_for(Rational lambda) {
  Plan plan;
  FEDSTAT_RETURN_IF_ERROR(plan.make(lambda));
  Sizes sizes;
  sizes.table_entries = static_cast<size_t>(plan.j_max - plan.j_min + 1);
  sizes.scratch_limbs = plan.scratch_limbs();
  return sizes;
}

Status TabulatedPoissonSampler::init(Rational lambda, Span<PoissonThreshold> table,
                                     Span<uint64_t> scratch) {
  // A refused λ or a short buffer changes nothing: an earlier successful init() stays in force.
  Plan plan;
  FEDSTAT_RETURN_IF_ERROR(plan.make(lambda));
  const size_t entries = static_cast<size_t>(plan.j_max - plan.j_min + 1);
  if (table.size() < entries || scratch.size() < plan.scratch_limbs()) {
    return resource_exhausted("tabulated Poisson: table or scratch smaller than sizes_for()");
  }
  ready_ = false;
  p_ = plan.p;
  q_ = plan.q;
  m_ = plan.m;
  w_ = plan.w;
  log2_w_ = plan.log2_w;
  j_min_ = plan.j_min;
  j_max_ = plan.j_max;
  table_ = table.first(entries);
  scratch_ = scratch;
  fallbacks_ = 0;
  // Certified rounding: each entry is a product of at most half_width factors, each factor one
  // rounding after λ̃ (itself one), the product one per step, then ·2^K (exact) and /M (one):
  // n = 3·half_width + 3 roundings of relative size ≤ 2^−53.
  const double n = 3.0 * static_cast<double>(plan.half_width()) + 3;
  const double u = 0x1p-53;
  const double gamma = n * u / (1 - n * u);
  double m_value = nextafter(plan.sup * (1 + 4 * gamma), INFINITY);  // M ≥ sup f·2^K, certified
  int exponent = 0;
  const double mantissa = frexp(m_value, &exponent);  // m_value = mantissa · 2^exponent
  m_mantissa_ = static_cast<uint64_t>(ldexp(mantissa, 53));
  m_exponent_ = exponent - 53;
  while ((m_mantissa_ & 1) == 0) {
    m_mantissa_ >>= 1;
    ++m_exponent_;
  }
  const uint64_t margin = static_cast<uint64_t>(ceil(ldexp(gamma, 64))) + 2;
  PoissonThreshold* center = table_.data() + (-j_min_);
  Plan::write(*center, 1 / m_value, margin);
  int64_t width = j_max_;
  FEDSTAT_RETURN_IF_ERROR(plan.walk(false, center, 1 / m_value, margin, width));
  width = -j_min_;
  FEDSTAT_RETURN_IF_ERROR(plan.walk(true, center, 1 / m_value, margin, width));
  ready_ = true;
  return Status();
}

Result<uint64_t> TabulatedPoissonSampler::sample(RandomBits& bits) {
  if (!ready_) return failed_precondition("TabulatedPoissonSampler used before init()");
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const bool negative, bits.bit());
    uint64_t k = 0;
    for (;;) {
      FEDSTAT_ASSIGN_OR_RETURN(const bool one, bits.bit());
      if (one) break;
      ++k;
    }
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t r, bits.bits(log2_w_));
    if (k > (uint64_t{1} << 40)) continue;  // unreachable in practice (P = 2^−2^40); no overflow
    const uint64_t magnitude = k * w_ + r;
    if (negative && (magnitude == 0 || magnitude > m_)) continue;
    const int64_t j = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t u, bits.bits(64));
    bool decided_accept = false;
    bool need_exact = false;
    if (j >= j_min_ && j <= j_max_) {
      const PoissonThreshold& t = table_[static_cast<size_t>(j - j_min_)];
      const uint64_t low = t.low > extra_margin_ ? t.low - extra_margin_ : 0;
      const uint64_t high =
          t.high > UINT64_MAX - extra_margin_ ? UINT64_MAX : t.high + extra_margin_;
      if (u < low) {
        decided_accept = true;
      } else if (u <= high) {
        need_exact = true;
      }
    } else {
      need_exact = u < 1 + extra_margin_;  // A < 2^−70 here: only u = 0 can accept
    }
    if (need_exact) {
      FEDSTAT_ASSIGN_OR_RETURN(decided_accept, exact_accept(bits, j, k, u));
    }
    if (decided_accept) return negative ? m_ - magnitude : m_ + magnitude;
  }
}

Result<bool> TabulatedPoissonSampler::exact_accept(RandomBits& bits, int64_t j, uint64_t k,
                                                   uint64_t u) {
  ++fallbacks_;
  const size_t region = (scratch_.size() - 16) / 4;
  BigUint n(scratch_.subspan(0, region));
  BigUint d(scratch_.subspan(region, region));
  BigUint x(scratch_.subspan(2 * region, region));
  BigUint y(scratch_.subspan(3 * region, region));
  BigUint uu(scratch_.subspan(4 * region, 8));
  BigUint u1(scratch_.subspan(4 * region + 8, 8));
  // A = f(j)·2^k / M exactly: f(j) = Π p/(q(m+i)) for j > 0, Π q(m−i+1)/p for j < 0.
  FEDSTAT_RETURN_IF_ERROR(n.assign(1));
  FEDSTAT_RETURN_IF_ERROR(d.assign(1));
  const uint64_t magnitude = static_cast<uint64_t>(j < 0 ? -j : j);
  for (uint64_t i = 1; i <= magnitude; ++i) {
    if (j > 0) {
      FEDSTAT_RETURN_IF_ERROR(n.multiply_word(p_));
      FEDSTAT_RETURN_IF_ERROR(d.multiply_word(q_ * (m_ + i)));  // < 2^32 · 2^32
    } else {
      FEDSTAT_RETURN_IF_ERROR(n.multiply_word(q_ * (m_ - i + 1)));
      FEDSTAT_RETURN_IF_ERROR(d.multiply_word(p_));
    }
  }
  FEDSTAT_RETURN_IF_ERROR(d.multiply_word(m_mantissa_));
  const int64_t e = static_cast<int64_t>(k) - m_exponent_;
  if (e >= 0) {
    FEDSTAT_RETURN_IF_ERROR(n.shift_left(static_cast<uint64_t>(e)));
  } else {
    FEDSTAT_RETURN_IF_ERROR(d.shift_left(static_cast<uint64_t>(-e)));
  }
  FEDSTAT_RETURN_IF_ERROR(uu.assign(u));
  uint64_t length = 64;  // U is known to `length` bits: uu / 2^length ≤ U < (uu+1) / 2^length
  for (int extension = 0; extension < 4; ++extension) {
    FEDSTAT_RETURN_IF_ERROR(y.assign(n));
    FEDSTAT_RETURN_IF_ERROR(y.shift_left(length));  // N·2^L
    FEDSTAT_RETURN_IF_ERROR(u1.assign(uu));
    FEDSTAT_RETURN_IF_ERROR(u1.add_word(1));
    FEDSTAT_RETURN_IF_ERROR(x.assign_product(d, u1));
    if (x.compare(y) <= 0) return true;  // (u+1)·D ≤ N·2^L: U < A
    FEDSTAT_RETURN_IF_ERROR(x.assign_product(d, uu));
    if (x.compare(y) >= 0) return false;  // u·D ≥ N·2^L: U ≥ A
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t more, bits.bits(64));
    FEDSTAT_RETURN_IF_ERROR(uu.shift_left(64));
    FEDSTAT_RETURN_IF_ERROR(uu.add_word(more));
    length += 64;
  }
  return internal_error("tabulated Poisson: exact comparison undecided after 320 bits");
}

}  // namespace noise
}  // namespace fedstat
