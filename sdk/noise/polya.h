/// @file
/// Pólya shares for distributed discrete Laplace noise: n clients each add one share, and the sum
/// of the n shares is exactly discrete_laplace(T) (P(k) ∝ exp(−|k|/T)).
///
/// A share is X − Y with X, Y independent negative binomial NB(1/n, ρ), ρ = e^{−1/T}:
/// P(X = k) ∝ w(k)·ρ^k with w(k) = Γ(k + 1/n)/(Γ(1/n)·k!) = Π_{i<k} (n·i + 1)/(n·(i + 1)).
/// NB is additive in its first parameter, so Σ of n X's is NB(1, ρ) = geometric, and the
/// difference of two independent geometrics is the two-sided geometric = discrete Laplace.
/// Sampling NB exactly: propose k from geometric(T) (P ∝ ρ^k, discrete_laplace.h) and accept
/// with probability w(k) ≤ 1 — a product of rationals, one exact ProductTrial. Acceptance
/// probability (1 − ρ)^{1 − 1/n}: about 1/T^{1−1/n} proposals are needed, so this is meant for
/// the moderate scales of per-coordinate counting noise: T ≤ kMaxPolyaScale = 10^4.
///
/// Errors: kInvalidArgument for T = 0 (no noise), a zero denominator or clients = 0;
/// kOutOfRange for T > 10^4 (a share would cost ~T proposals).
///
/// @memory stack only.
/// @paper 001 §4.7 (distributed DP); Goryczka & Xiong 2015 (Pólya decomposition of the discrete
/// Laplace).
#ifndef FEDSTAT_SDK_NOISE_POLYA_H_
#define FEDSTAT_SDK_NOISE_POLYA_H_

#include "sdk/base/random_bits.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace noise {

/// The largest scale T a Pólya share accepts: a share costs about T^{1−1/n} proposals.
constexpr uint64_t kMaxPolyaScale = 10000;

/// The parameter checks of negative_binomial_fraction() and polya_share(), on their own: OK, or
/// the error a draw would return.
/// @errors kInvalidArgument: scale = 0, a zero denominator, or clients = 0. kOutOfRange:
/// scale > kMaxPolyaScale.
Status check_polya_params(Rational scale, uint32_t clients);

/// One exact NB(1/clients, e^{−1/scale}) draw (geometric proposals accepted with P = w(k)).
/// @errors kInvalidArgument, kOutOfRange: as check_polya_params(); kOutOfRange also when a
/// geometric proposal overflows 64 bits (see geometric()). The random source's error (e.g.
/// kUnavailable).
Result<uint64_t> negative_binomial_fraction(RandomBits& bits, Rational scale, uint32_t clients);
/// One client's share: the difference of two negative_binomial_fraction() draws; `clients`
/// shares sum to one discrete Laplace draw of scale `scale`.
/// @errors As negative_binomial_fraction(): kInvalidArgument, kOutOfRange, or the random
/// source's error (e.g. kUnavailable).
Result<int64_t> polya_share(RandomBits& bits, Rational scale, uint32_t clients);

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_POLYA_H_
