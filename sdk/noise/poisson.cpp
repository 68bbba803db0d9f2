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

}  // namespace

Status PoissonSampler::init(Rational lambda) {
  ready_ = false;
  if (!lambda.valid()) return invalid_argument("Poisson lambda has a zero denominator");
  const Rational r = reduced(lambda);
  if (r.num >= kLimit32 || r.den >= kLimit32) {
    return out_of_range("Poisson lambda = p/q needs p and q below 2^32 (after reduction)");
  }
  if (r.floor() > (uint64_t{1} << 31)) return out_of_range("Poisson lambda must be at most 2^31");
  p_ = r.num;
  q_ = r.den;
  m_ = r.floor();
  w_ = integer_sqrt((2 * p_) / q_);
  if (w_ < 2) w_ = 2;
  // i⁺ = #{i ≥ 1 : r⁺_i > ρ} = max(0, ⌈H⌉ − m − 1) with H = p·w / (q·(w−1)).
  const uint64_t h_den = q_ * (w_ - 1);
  const uint64_t ceil_h = (p_ * w_ + h_den - 1) / h_den;
  i_plus_ = ceil_h > m_ + 1 ? ceil_h - m_ - 1 : 0;
  // i⁻ = #{i ≥ 1 : r⁻_i > ρ} = max(0, m − ⌊L⌋) with L = p·(w−1) / (q·w).
  const uint64_t floor_l = (p_ * (w_ - 1)) / (q_ * w_);
  i_minus_ = m_ > floor_l ? m_ - floor_l : 0;
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

Result<uint64_t> PoissonSampler::geometric_magnitude(RandomBits& bits) const {
  uint64_t k = 0;
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const bool whole_block,
                             bernoulli(bits, w_minus_1_pow_[block_], w_pow_[block_]));
    if (whole_block) {
      k += block_;
      continue;
    }
    for (unsigned l = 0; l < block_; ++l) {
      const unsigned left = block_ - l;  // P(fail at l | none before, one in block)
      FEDSTAT_ASSIGN_OR_RETURN(
          const bool here, bernoulli(bits, w_pow_[left - 1], w_pow_[left] - w_minus_1_pow_[left]));
      if (here) return k + l;
    }
    return internal_error("Poisson: block geometric fell through (cannot happen)");
  }
}

Result<bool> PoissonSampler::accept(RandomBits& bits, bool negative, uint64_t k) const {
  const uint64_t pw = p_ * w_;          // numerator of r⁺/ρ, denominator of ρ/r⁺
  const uint64_t p_w1 = p_ * (w_ - 1);  // numerator of ρ/r⁻, denominator of r⁻/ρ
  ProductTrial conjunction(bits);
  // The positive side's factors i in (from, to]: ρ/r⁺_i when inverse, else r⁺_i/ρ.
  auto plus_side = [&](uint64_t from, uint64_t to, bool inverse) -> Result<bool> {
    for (uint64_t i = from + 1; i <= to; ++i) {
      UInt128 q_mi_w1;
      if (!product3(q_, m_ + i, w_ - 1, q_mi_w1)) {
        return out_of_range("Poisson: proposal too far in the tail for 128-bit arithmetic");
      }
      FEDSTAT_ASSIGN_OR_RETURN(const bool ok, inverse ? conjunction.add(q_mi_w1, UInt128(pw))
                                                      : conjunction.add(UInt128(pw), q_mi_w1));
      if (!ok) return false;
    }
    return true;
  };
  // The negative side's factors i in (from, to] (i ≤ m): ρ/r⁻_i or r⁻_i/ρ.
  auto minus_side = [&](uint64_t from, uint64_t to, bool inverse) -> Result<bool> {
    for (uint64_t i = from + 1; i <= to; ++i) {
      const UInt128 q_mi_w = multiply(q_ * (m_ - i + 1), w_);
      FEDSTAT_ASSIGN_OR_RETURN(const bool ok, inverse ? conjunction.add(UInt128(p_w1), q_mi_w)
                                                      : conjunction.add(q_mi_w, UInt128(p_w1)));
      if (!ok) return false;
    }
    return true;
  };
  const uint64_t own_peak = negative ? i_minus_ : i_plus_;
  Result<bool> ok = true;
  if (!negative) {
    ok = k <= own_peak ? plus_side(k, own_peak, true) : plus_side(own_peak, k, false);
    if (ok.ok() && ok.value()) ok = minus_side(0, i_minus_, true);
  } else {
    ok = k <= own_peak ? minus_side(k, own_peak, true) : minus_side(own_peak, k, false);
    if (ok.ok() && ok.value()) ok = plus_side(0, i_plus_, true);
  }
  if (!ok.ok() || !ok.value()) return ok;
  return conjunction.finish();
}

Result<uint64_t> PoissonSampler::sample(RandomBits& bits) const {
  if (!ready_) return failed_precondition("PoissonSampler used before a successful init()");
  if (p_ == 0) return uint64_t{0};
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
