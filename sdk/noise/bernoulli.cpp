#include "sdk/noise/bernoulli.h"

#include <math.h>

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

Result<bool> bernoulli_dyadic(RandomBits& bits, double p) {
  if (!(p >= 0 && p <= 1)) return invalid_argument("Bernoulli probability must lie in [0, 1]");
  if (p == 0) return false;
  if (p == 1) return true;
  int e = 0;
  const double f = frexp(p, &e);  // p = f·2^e, f ∈ [0.5, 1), e ≤ 0
  const uint64_t mantissa = static_cast<uint64_t>(ldexp(f, 53));  // exact: p = M·2^(e−53)
  int zeros = -e;  // U < p needs U < 2^e: the first −e bits zero ...
  if (zeros + 53 <= 127) {
    const int k = zeros + 53;  // 2^k as a 128-bit value
    const UInt128 den = k < 64 ? UInt128(uint64_t{1} << k) : UInt128(uint64_t{1} << (k - 64), 0);
    return bernoulli(bits, UInt128(mantissa), den);
  }
  for (; zeros > 0; zeros -= 64) {
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t prefix, bits.bits(zeros < 64 ? zeros : 64));
    if (prefix != 0) return false;
  }
  // ... and then the next 53 bits, read as an integer, below the mantissa.
  uint64_t u = 0;
  for (int i = 0; i < 53; ++i) {
    FEDSTAT_ASSIGN_OR_RETURN(const bool b, bits.bit());
    u = (u << 1) | (b ? 1u : 0u);
  }
  return u < mantissa;
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
