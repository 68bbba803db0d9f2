/// @file
/// Geometric and discrete Laplace samplers, exact, for a rational scale T = a/b > 0.
///
///     geometric(T):          P(k) ∝ exp(−k/T),   k = 0, 1, 2, ...
///     discrete_laplace(T):   P(k) ∝ exp(−|k|/T), k ∈ Z   (the two-sided geometric)
///     truncated_discrete_laplace(T, B): discrete_laplace conditioned on |k| ≤ B (rejection),
///                            for stability-based histograms (001 §4.7)
///
/// Algorithm (Canonne, Kamath & Steinke 2020, Algorithm 2, with t = a, s = b): draw U uniform in
/// {0..a−1} and keep it with probability exp(−U/a); V ← number of successes of exp(−1) trials
/// before the first failure; X = U + a·V has P(X = x) ∝ exp(−x/a); Y = ⌊X/b⌋ has
/// P(Y = y) ∝ exp(−y·b/a). The two-sided form draws a sign and rejects (−, 0) so 0 is not
/// counted twice. Expected cost O(1) exact Bernoulli trials for any T.
///
/// Errors: kInvalidArgument for T = 0 (no noise) or a zero denominator, and for a truncation
/// bound B = 0 (every draw would be 0); kOutOfRange if a·V overflows 64 bits (needs a ≳ 2^58).
/// truncated_discrete_laplace rejects until |k| ≤ B: about (T/B) draws when B ≪ T, so keep
/// B ≳ T (stability_params does).
///
/// @memory stack only.
/// @paper CKS 2020 §5.2; 001 §4.7 (local/distributed DP on counts).
#ifndef FEDSTAT_SDK_NOISE_DISCRETE_LAPLACE_H_
#define FEDSTAT_SDK_NOISE_DISCRETE_LAPLACE_H_

#include "sdk/base/random_bits.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace noise {

/// One exact draw of the geometric distribution P(k) ∝ exp(−k/T), k ≥ 0, T = scale.
/// @errors kInvalidArgument: T = 0 or a zero denominator. kOutOfRange: a·V overflows 64 bits
/// (a = T's numerator; needs a ≳ 2^58 or a draw far in the tail). The random source's error
/// (e.g. kUnavailable).
Result<uint64_t> geometric(RandomBits& bits, Rational scale);
/// One exact draw of the discrete Laplace P(k) ∝ exp(−|k|/T), k ∈ Z, T = scale.
/// @errors kInvalidArgument: T = 0 or a zero denominator. kOutOfRange: a·V overflows 64 bits
/// (as geometric()) or the magnitude exceeds INT64_MAX. The random source's error (e.g.
/// kUnavailable).
Result<int64_t> discrete_laplace(RandomBits& bits, Rational scale);
/// One exact draw of the discrete Laplace with scale T conditioned on |k| ≤ bound (by
/// rejection: about T/bound draws when bound ≪ T).
/// @errors kInvalidArgument: bound = 0, T = 0 or a zero denominator. kOutOfRange: as
/// discrete_laplace(). The random source's error (e.g. kUnavailable).
Result<int64_t> truncated_discrete_laplace(RandomBits& bits, Rational scale, uint64_t bound);

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_DISCRETE_LAPLACE_H_
