// TabulatedPoissonSampler: exact Poisson(λ) (and Skellam) at table-lookup speed, for devices and
// hosts with memory for a table. Exact: floating point only decides which path runs; every
// outcome has exactly the Poisson probability. So the low-order-bit leaks of samplers whose
// OUTPUT is computed in floating point (Mironov 2012) do not arise: no output value depends on
// a rounding, only the time taken does (not constant-time: a random number of proposals).
//
// Proposal: m = ⌊λ⌋, w = 2^⌊log2 √λ⌋; a sign bit, K = the number of 0-bits before the first
// 1-bit, r = log2(w) uniform bits; j = ±(K·w + r), with (−, 0) rejected. So g(j) ∝ 2^−K(j),
// K(j) = ⌊|j|/w⌋. Acceptance: A(j) = f(j)·2^K(j)/M with f(j) = P(m+j)/P(m) ≤ 1 and M ≥
// sup_j f(j)·2^K(j) a double (so A is an exact rational). Output m + j, exactly Poisson(λ).
//
// Deciding [U < A(j)] with the next 64 uniform bits u (U = 0.u...): a table built in double
// precision holds T(j) = ⌊Ã(j)·2^64⌋ and a CERTIFIED margin Δ: with n = 3·(table half-width) + 3
// roundings, |Ã − A| ≤ γ = n·2^−53/(1 − n·2^−53), and Δ = ⌈γ·2^64⌉ + 2. If u < T − Δ then
// U < (u+1)/2^64 ≤ A: accept; if u > T + Δ then U ≥ u/2^64 ≥ A: reject. Otherwise (probability
// 2Δ/2^64, about 10^−12 at λ = 10^4) A = N/D is computed exactly with big integers in caller
// memory and compared: accept iff (u+1)·D ≤ N·2^L, reject iff u·D ≥ N·2^L, else 64 more bits.
// Beyond the table A(j) < 2^−70 (the table ends once w entries in a row are below 2^−70 and the
// next factor^w ≤ 1/2, after which f·2^K never grows), so u ≠ 0 rejects there. Every decision
// equals the event [U < A(j)], and a decision always consumes exactly 64 bits (more only on an
// exact tie), so the draws are identical on every architecture for the same seed: M and the
// table's width come from correctly rounded IEEE operations only (no pow, no libm).
//
// Memory (caller's): table_entries ≈ 2·√(97·λ) thresholds of 16 bytes (≈ 31 KB at λ = 10^4,
// 0.3 MB at 10^6), scratch_limbs ≈ 4·(54·J/64 + 7) words of 8 bytes, J the table half-width;
// sizes_for(λ) computes both exactly. Limits: λ = p/q > 0 with p, q < 2^32, λ ≤ 2^31
// (checked_poisson_lambda: kInvalidArgument for λ = 0, which adds no noise, or q = 0;
// kOutOfRange past the limits). A refused init() leaves an earlier successful one in force.
// Paper: 002 §2.3 (Skellam); the method follows ../shared/notes/exact-poisson.md.
#ifndef FEDSTAT_SDK_NOISE_TABULATED_POISSON_H_
#define FEDSTAT_SDK_NOISE_TABULATED_POISSON_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/random_bits.h"
#include "sdk/base/span.h"
#include "sdk/noise/big_uint.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace noise {

struct PoissonThreshold {
  uint64_t low = 0;   // accept when u < low
  uint64_t high = 0;  // reject when u > high
};

class TabulatedPoissonSampler {
 public:
  struct Sizes {
    size_t table_entries = 0;
    size_t scratch_limbs = 0;
  };
  static Result<Sizes> sizes_for(Rational lambda);

  // table and scratch must hold sizes_for(lambda) and outlive the sampler.
  Status init(Rational lambda, Span<PoissonThreshold> table, Span<uint64_t> scratch);
  Result<uint64_t> sample(RandomBits& bits);

  // Tests only: widen every margin by `extra` so the exact fallback runs often.
  void widen_margins_for_testing(uint64_t extra) { extra_margin_ = extra; }
  uint64_t exact_fallbacks() const { return fallbacks_; }

 private:
  struct Plan;
  Result<bool> exact_accept(RandomBits& bits, int64_t j, uint64_t k, uint64_t u);

  uint64_t p_ = 0, q_ = 1, m_ = 0, w_ = 1;
  unsigned log2_w_ = 0;
  int64_t j_min_ = 0, j_max_ = 0;
  uint64_t m_mantissa_ = 1;  // M = m_mantissa_ · 2^m_exponent_
  int m_exponent_ = 0;
  Span<PoissonThreshold> table_;
  Span<uint64_t> scratch_;
  uint64_t extra_margin_ = 0;
  uint64_t fallbacks_ = 0;
  bool ready_ = false;
};

class TabulatedSkellamSampler {
 public:
  static Result<TabulatedPoissonSampler::Sizes> sizes_for(Rational lambda) {
    return TabulatedPoissonSampler::sizes_for(lambda);
  }
  Status init(Rational lambda, Span<PoissonThreshold> table, Span<uint64_t> scratch) {
    return poisson_.init(lambda, table, scratch);
  }
  Result<int64_t> sample(RandomBits& bits) {
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t a, poisson_.sample(bits));
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t b, poisson_.sample(bits));
    return static_cast<int64_t>(a) - static_cast<int64_t>(b);
  }
  TabulatedPoissonSampler& poisson() { return poisson_; }

 private:
  TabulatedPoissonSampler poisson_;
};

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_TABULATED_POISSON_H_
