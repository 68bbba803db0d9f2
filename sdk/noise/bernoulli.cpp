#include "sdk/noise/bernoulli.h"

namespace fedstat {
namespace noise {

Result<bool> bernoulli(RandomBits& bits, UInt128 num, UInt128 den) {
  if (den.is_zero()) return invalid_argument("Bernoulli probability has a zero denominator");
  if (num > den) return invalid_argument("Bernoulli probability is above 1");
  if (num == den) return true;
  if (num.is_zero()) return false;
  UInt128 r = num;  // invariant: 0 < r < den; the expansion of num/den continues from r/den
  FEDSTAT_RETURN_IF_ERROR(bits.ensure_bits());
  uint64_t word = bits.word();
  unsigned used = 0;
  for (;;) {
    const UInt128 gap = den - r;
    bool p_bit;
    if (r >= gap) {  // 2r ≥ den: the next binary digit of num/den is 1
      p_bit = true;
      r = r - gap;
    } else {
      p_bit = false;
      r = r + r;
    }
    if (used == bits.available()) {  // the buffered word is used up: take the next one
      bits.consume(used);
      FEDSTAT_RETURN_IF_ERROR(bits.ensure_bits());
      word = bits.word();
      used = 0;
    }
    const bool u_bit = ((word >> used) & 1u) != 0;
    ++used;
    if (u_bit != p_bit) {  // first difference: U < p iff p has the 1
      bits.consume(used);
      return p_bit;
    }
    if (r.is_zero()) {  // p's expansion ended and U's prefix equals it: U ≥ p
      bits.consume(used);
      return false;
    }
  }
}

namespace {
// exp(−num/den) for num ≤ den (CKS Algorithm 1, γ ∈ [0, 1]).
Result<bool> exp_minus_at_most_one(RandomBits& bits, UInt128 num, UInt128 den) {
  if (num.is_zero()) return true;
  uint64_t k = 1;
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const bool a, bernoulli(bits, num, den));
    bool continue_loop = a;
    if (a && k > 1) {
      FEDSTAT_ASSIGN_OR_RETURN(const bool b, bernoulli(bits, UInt128(1), UInt128(k)));
      continue_loop = b;
    }
    if (!continue_loop) break;
    ++k;
  }
  return (k & 1) == 1;
}
}  // namespace

Result<bool> bernoulli_exp_minus(RandomBits& bits, UInt128 num, UInt128 den) {
  if (den.is_zero()) return invalid_argument("exp(-gamma): gamma has a zero denominator");
  while (num > den) {  // e^{-γ} = e^{-1} · e^{-(γ-1)}; stops at the first failure (P = 1 − 1/e)
    FEDSTAT_ASSIGN_OR_RETURN(const bool one, exp_minus_at_most_one(bits, UInt128(1), UInt128(1)));
    if (!one) return false;
    num = num - den;
  }
  return exp_minus_at_most_one(bits, num, den);
}

}  // namespace noise
}  // namespace fedstat
