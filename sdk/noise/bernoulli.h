/// @file
/// Exact Bernoulli trials: the primitive under every fedstat sampler.
///
/// bernoulli(n/d): compares a uniform U ∈ [0,1), read lazily bit by bit, with the binary
/// expansion of n/d computed by long division (r ← 2r; bit = [r ≥ d]); it returns [U < n/d] at the
/// first differing bit, so P(true) = n/d exactly, using 2 random bits on average and only
/// comparisons and subtractions (128-bit, portable).
///
/// bernoulli_exp_minus(γ): P(true) = exp(−γ) exactly for rational γ ≥ 0 (Canonne, Kamath &
/// Steinke 2020, "The Discrete Gaussian for Differential Privacy", Algorithm 1): for γ ∈ [0,1],
/// K ← 1; while Bernoulli(γ/K) {K ← K+1}; return K odd — since P(K > k) = γ^k/k!, P(K odd) =
/// Σ_k (−γ)^k/k! = e^{−γ}. For γ > 1 it multiplies ⌊γ⌋ trials of e^{−1} and one of e^{−(γ−⌊γ⌋)}.
/// Bernoulli(γ/K) is Bernoulli(γ)·Bernoulli(1/K), so no product can overflow.
///
/// No floating point is used, so the outcome probabilities are exactly those stated — unlike
/// samplers built on doubles, whose rounding leaks the secret through the noise's low bits
/// (Mironov 2012, "On significance of the least significant bits for differential privacy").
///
/// Every trial reads from a RandomBits; any error of the RandomSource behind it (e.g.
/// kUnavailable) is returned as is, and that RandomBits must then be discarded.
///
/// @memory a few words of stack.
/// @paper CKS 2020 §5 (used for 002 §2.3, 001 §4.7, 004 §3.2).
#ifndef FEDSTAT_SDK_NOISE_BERNOULLI_H_
#define FEDSTAT_SDK_NOISE_BERNOULLI_H_

#include "sdk/base/random_bits.h"
#include "sdk/noise/rational.h"
#include "sdk/noise/uint128.h"

namespace fedstat {
namespace noise {

/// One exact trial with P(true) = num/den, about 2 random bits on average.
/// @errors kInvalidArgument: den = 0 or num > den. The random source's error (e.g. kUnavailable).
Result<bool> bernoulli(RandomBits& bits, UInt128 num, UInt128 den);
/// One exact trial with P(true) = p = p.num/p.den.
/// @errors kInvalidArgument: p.den = 0 or p > 1. The random source's error (e.g. kUnavailable).
inline Result<bool> bernoulli(RandomBits& bits, Rational p) {
  return bernoulli(bits, UInt128(p.num), UInt128(p.den));
}
/// One exact trial with P(true) = p for a double p in [0, 1]: a double is a dyadic rational
/// M·2^−k, so this is bernoulli(M, 2^k) (about 2 random bits), with a zero-prefix test for
/// k > 127.
/// @errors kInvalidArgument: p is NaN or outside [0, 1]. The random source's error (e.g.
/// kUnavailable).
Result<bool> bernoulli_dyadic(RandomBits& bits, double p);
/// One exact trial with P(true) = exp(−num/den) (CKS 2020 Algorithm 1; see the file comment).
/// @errors kInvalidArgument: den = 0. The random source's error (e.g. kUnavailable).
Result<bool> bernoulli_exp_minus(RandomBits& bits, UInt128 num, UInt128 den);
/// One exact trial with P(true) = exp(−γ), γ = gamma.num/gamma.den.
/// @errors kInvalidArgument: gamma.den = 0. The random source's error (e.g. kUnavailable).
inline Result<bool> bernoulli_exp_minus(RandomBits& bits, Rational gamma) {
  return bernoulli_exp_minus(bits, UInt128(gamma.num), UInt128(gamma.den));
}

/// One exact trial of a product of rational factors, each in [0, 1]: the conjunction of
/// independent trials, with factors multiplied together while the product fits 128 bits (one
/// trial per group). add() returns false as soon as a completed group's trial fails; finish()
/// runs the last group's trial. P(all true) = Π factors exactly.
class ProductTrial {
 public:
  /// An empty product (1) whose trials read from `bits`, which must outlive this object.
  explicit ProductTrial(RandomBits& bits) : bits_(bits) {}
  /// Multiplies num/den into the current group; when num or den exceeds 64 bits or the product
  /// would not fit 128 bits, it runs the group's trial first and starts a new group with this
  /// factor. False: a completed group's trial failed, so the whole product is false (stop
  /// adding); true: undecided so far.
  /// @errors kInvalidArgument: a completed group is not a probability (a factor had den = 0 or
  /// num > den). The random source's error (e.g. kUnavailable).
  Result<bool> add(UInt128 num, UInt128 den) {
    UInt128 grouped_num, grouped_den;
    if (num.fits_u64() && den.fits_u64() && multiply_checked(num_, num.lo, grouped_num) &&
        multiply_checked(den_, den.lo, grouped_den)) {
      num_ = grouped_num;
      den_ = grouped_den;
      return true;
    }
    FEDSTAT_ASSIGN_OR_RETURN(const bool ok, bernoulli(bits_, num_, den_));
    num_ = num;
    den_ = den;
    return ok;
  }
  /// Runs the last group's trial: the product's outcome, given every add() returned true.
  /// @errors kInvalidArgument: the last group is not a probability (a factor had den = 0 or
  /// num > den). The random source's error (e.g. kUnavailable).
  Result<bool> finish() { return bernoulli(bits_, num_, den_); }

 private:
  RandomBits& bits_;
  UInt128 num_ = UInt128(1);
  UInt128 den_ = UInt128(1);
};

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_BERNOULLI_H_
