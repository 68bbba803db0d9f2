#include "sdk/noise/poisson.h"

#include "sdk/noise/bernoulli.h"

namespace fedstat {
namespace noise {
namespace {

constexpr uint64_t kLimit32 = uint64_t{1} << 32;

// a·b·c as 128 bits, or false.
bool product3(uint64_t a, uint64_t b, uint64_t c, UInt128& out) {
  return multiply_checked(multiply(a, b), c, out);
}

unsigned bit_length(UInt128 v) {
  unsigned n = 0;
  for (uint64_t x = v.hi; x != 0; x >>= 1) ++n;
  if (v.hi != 0) return n + 64;
  for (uint64_t x = v.lo; x != 0; x >>= 1) ++n;
  return n;
}

}  // namespace

Status PoissonSampler::factor(bool negative, uint64_t i, bool inverse, UInt128& num,
                              UInt128& den) const {
  if (!negative) {  // r⁺_i/ρ = p·w / (q·(m+i)·(w−1))
    UInt128 big;
    if (!product3(q_, m_ + i, w_ - 1, big)) {
      return out_of_range("Poisson: proposal too far in the tail for 128-bit arithmetic");
    }
    num = inverse ? big : UInt128(p_ * w_);
    den = inverse ? UInt128(p_ * w_) : big;
  } else {  // r⁻_i/ρ = q·(m−i+1)·w / (p·(w−1)), i ≤ m
    const UInt128 big = multiply(q_ * (m_ - i + 1), w_);
    num = inverse ? UInt128(p_ * (w_ - 1)) : big;
    den = inverse ? big : UInt128(p_ * (w_ - 1));
  }
  return Status();
}

Status PoissonSampler::build_side(bool negative, Span<FactorGroup>& cache, bool inverse,
                                  size_t max_groups) {
  Side& side = side_[negative ? 1 : 0];
  const uint64_t g = side.group;
  uint64_t available;
  if (inverse) {
    available = side.peak / g;
  } else {
    uint64_t end = side.peak + 2 * w_;  // direct factors i in (peak, end]
    if (negative && end > m_) end = m_;
    available = end > side.peak ? (end - side.peak) / g : 0;
  }
  size_t count = available < max_groups ? static_cast<size_t>(available) : max_groups;
  if (count > cache.size()) count = cache.size();
  Span<FactorGroup> groups = cache.first(count);
  for (size_t n = 0; n < count; ++n) {
    UInt128 num(1), den(1);
    for (uint64_t f = 0; f < g; ++f) {
      // inverse: group n covers i in (peak − (n+1)g, peak − n·g]; direct: [peak+1+n·g, ...]
      const uint64_t i = inverse ? side.peak - n * g - f : side.peak + 1 + n * g + f;
      UInt128 fn, fd;
      FEDSTAT_RETURN_IF_ERROR(factor(negative, i, inverse, fn, fd));
      if (!fn.fits_u64() || !fd.fits_u64() || !multiply_checked(num, fn.lo, num) ||
          !multiply_checked(den, fd.lo, den)) {
        return internal_error("Poisson: cached factor group overflowed (group size too large)");
      }
    }
    groups[n] = FactorGroup{num, den};
  }
  (inverse ? side.inverse_groups : side.direct_groups) = groups;
  cache = cache.subspan(count);
  return Status();
}

Result<Rational> checked_poisson_lambda(Rational lambda) {
  if (!lambda.valid()) return invalid_argument("Poisson lambda has a zero denominator");
  if (lambda.is_zero()) {
    return invalid_argument("Poisson/Skellam lambda must be > 0 (lambda = 0 adds no noise)");
  }
  const Rational r = reduced(lambda);
  if (r.num >= kLimit32 || r.den >= kLimit32) {
    return out_of_range("Poisson lambda = p/q needs p and q below 2^32 (after reduction)");
  }
  if (r.floor() > (uint64_t{1} << 31)) return out_of_range("Poisson lambda must be at most 2^31");
  return r;
}

Status PoissonSampler::init(Rational lambda, Span<FactorGroup> cache) {
  // A refused λ changes nothing: an earlier successful init() stays in force.
  FEDSTAT_ASSIGN_OR_RETURN(const Rational r, checked_poisson_lambda(lambda));
  ready_ = false;
  p_ = r.num;
  q_ = r.den;
  m_ = r.floor();
  w_ = integer_sqrt((2 * p_) / q_);
  if (w_ < 2) w_ = 2;
  // i⁺ = #{i ≥ 1 : r⁺_i > ρ} = max(0, ⌈H⌉ − m − 1) with H = p·w / (q·(w−1)).
  const uint64_t h_den = q_ * (w_ - 1);
  const uint64_t ceil_h = (p_ * w_ + h_den - 1) / h_den;
  side_[0] = Side();
  side_[1] = Side();
  side_[0].peak = ceil_h > m_ + 1 ? ceil_h - m_ - 1 : 0;
  // i⁻ = #{i ≥ 1 : r⁻_i > ρ} = max(0, m − ⌊L⌋) with L = p·(w−1) / (q·w).
  const uint64_t floor_l = (p_ * (w_ - 1)) / (q_ * w_);
  side_[1].peak = m_ > floor_l ? m_ - floor_l : 0;
  // Factors per cached group: as many of the largest factor as fit 128 bits.
  for (int negative = 0; negative < 2; ++negative) {
    Side& side = side_[negative];
    UInt128 largest(p_ * w_);
    UInt128 num, den;
    if (negative == 0) {
      FEDSTAT_RETURN_IF_ERROR(factor(false, side.peak + 2 * w_, false, num, den));
      largest = den > largest ? den : largest;
    } else {
      largest = multiply(q_ * m_ + q_, w_);
    }
    const unsigned bits = bit_length(largest);
    side.group = bits == 0 || bits > 64 ? 1 : 128 / bits;
  }
  if (!cache.empty()) {
    // Inverse factors first (every proposal uses one side's run and the other side's whole set).
    FEDSTAT_RETURN_IF_ERROR(build_side(false, cache, true, SIZE_MAX));
    FEDSTAT_RETURN_IF_ERROR(build_side(true, cache, true, SIZE_MAX));
    const size_t half = cache.size() / 2;
    FEDSTAT_RETURN_IF_ERROR(build_side(false, cache, false, half));
    FEDSTAT_RETURN_IF_ERROR(build_side(true, cache, false, SIZE_MAX));
  }
  // Powers of w and w−1 for block trials; B = largest block with w^B < 2^128 (≤ kMaxBlock).
  w_pow_[0] = UInt128(1);
  w_minus_1_pow_[0] = UInt128(1);
  block_ = 0;
  while (block_ < kMaxBlock) {
    UInt128 next_w, next_w1;
    if (!multiply_checked(w_pow_[block_], w_, next_w) ||
        !multiply_checked(w_minus_1_pow_[block_], w_ - 1, next_w1)) {
      break;
    }
    ++block_;
    w_pow_[block_] = next_w;
    w_minus_1_pow_[block_] = next_w1;
  }
  ready_ = true;
  return Status();
}

size_t PoissonSampler::cache_groups_wanted() const {
  size_t total = 0;
  for (int negative = 0; negative < 2; ++negative) {
    const Side& side = side_[negative];
    uint64_t end = side.peak + 2 * w_;
    if (negative == 1 && end > m_) end = m_;
    total += static_cast<size_t>(side.peak / side.group);
    if (end > side.peak) total += static_cast<size_t>((end - side.peak) / side.group);
  }
  return total;
}

Result<uint64_t> PoissonSampler::geometric_magnitude(RandomBits& bits) const {
  uint64_t k = 0;
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const bool whole_block,
                             bernoulli(bits, w_minus_1_pow_[block_], w_pow_[block_]));
    if (whole_block) {
      k += block_;
      continue;
    }
    // The block holds a failure: find the first by bisection. Given a failure among the next
    // `len` trials, it is among the first h with probability (1 − ρ^h)/(1 − ρ^len)
    // = (w^h − (w−1)^h)·w^(len−h) / (w^len − (w−1)^len); if not, the trials are memoryless, so
    // the same holds for the remaining len − h.
    unsigned len = block_;
    while (len > 1) {
      const unsigned h = len / 2;
      UInt128 scaled = w_pow_[h] - w_minus_1_pow_[h];
      for (unsigned e = 0; e < len - h; ++e) {
        if (!multiply_checked(scaled, w_, scaled)) {
          return internal_error("Poisson: block bisection overflow (cannot happen: w^B fits)");
        }
      }
      FEDSTAT_ASSIGN_OR_RETURN(const bool first_half,
                               bernoulli(bits, scaled, w_pow_[len] - w_minus_1_pow_[len]));
      if (first_half) {
        len = h;
      } else {
        k += h;
        len -= h;
      }
    }
    return k;
  }
}

// Π of the inverse factors i in (k, peak]: cached groups from the top, the rest one by one.
Result<bool> PoissonSampler::inverse_suffix(RandomBits& bits, bool negative, uint64_t k) const {
  const Side& side = side_[negative ? 1 : 0];
  if (k >= side.peak) return true;
  uint64_t full = (side.peak - k) / side.group;
  if (full > side.inverse_groups.size()) full = side.inverse_groups.size();
  for (uint64_t g = 0; g < full; ++g) {
    const FactorGroup& group = side.inverse_groups[static_cast<size_t>(g)];
    FEDSTAT_ASSIGN_OR_RETURN(const bool ok, bernoulli(bits, group.num, group.den));
    if (!ok) return false;
  }
  ProductTrial rest(bits);
  for (uint64_t i = k + 1; i <= side.peak - full * side.group; ++i) {
    UInt128 num, den;
    FEDSTAT_RETURN_IF_ERROR(factor(negative, i, true, num, den));
    FEDSTAT_ASSIGN_OR_RETURN(const bool ok, rest.add(num, den));
    if (!ok) return false;
  }
  return rest.finish();
}

// Π of the direct factors i in (peak, k]: cached groups from the bottom, the rest one by one.
Result<bool> PoissonSampler::direct_prefix(RandomBits& bits, bool negative, uint64_t k) const {
  const Side& side = side_[negative ? 1 : 0];
  if (k <= side.peak) return true;
  uint64_t full = (k - side.peak) / side.group;
  if (full > side.direct_groups.size()) full = side.direct_groups.size();
  for (uint64_t g = 0; g < full; ++g) {
    const FactorGroup& group = side.direct_groups[static_cast<size_t>(g)];
    FEDSTAT_ASSIGN_OR_RETURN(const bool ok, bernoulli(bits, group.num, group.den));
    if (!ok) return false;
  }
  ProductTrial rest(bits);
  for (uint64_t i = side.peak + full * side.group + 1; i <= k; ++i) {
    UInt128 num, den;
    FEDSTAT_RETURN_IF_ERROR(factor(negative, i, false, num, den));
    FEDSTAT_ASSIGN_OR_RETURN(const bool ok, rest.add(num, den));
    if (!ok) return false;
  }
  return rest.finish();
}

Result<bool> PoissonSampler::accept(RandomBits& bits, bool negative, uint64_t k) const {
  const uint64_t own_peak = side_[negative ? 1 : 0].peak;
  FEDSTAT_ASSIGN_OR_RETURN(const bool own, k <= own_peak ? inverse_suffix(bits, negative, k)
                                                         : direct_prefix(bits, negative, k));
  if (!own) return false;
  return inverse_suffix(bits, !negative, 0);  // 1/M of the other side
}

Result<uint64_t> PoissonSampler::sample(RandomBits& bits) const {
  if (!ready_) return failed_precondition("PoissonSampler used before a successful init()");
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t k, geometric_magnitude(bits));
    FEDSTAT_ASSIGN_OR_RETURN(const bool negative, bits.bit());
    if (negative && (k == 0 || k > m_)) continue;  // 0 counted once; m + j < 0 has f = 0
    FEDSTAT_ASSIGN_OR_RETURN(const bool accepted, accept(bits, negative, k));
    if (accepted) return negative ? m_ - k : m_ + k;
  }
}

Result<int64_t> SkellamSampler::sample(RandomBits& bits) const {
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t a, poisson_.sample(bits));
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t b, poisson_.sample(bits));
  return static_cast<int64_t>(a) - static_cast<int64_t>(b);
}

}  // namespace noise
}  // namespace fedstat
