/// @file
/// Discrete Gaussian sampler, exact, for a rational σ² = a/b > 0: P(k) ∝ exp(−k²/(2σ²)), k ∈ Z.
///
/// Algorithm (Canonne, Kamath & Steinke 2020, Algorithm 3): t = ⌊σ⌋ + 1; repeat Y ←
/// discrete_laplace(t) and accept with probability exp(−(|Y| − σ²/t)²/(2σ²)). The exponent is
/// the rational (|Y|·b·t − a)² / (2·a·b·t²), evaluated exactly in 128-bit integers. The
/// expected number of rounds is a small constant (CKS §5.3; measured in the tests' benchmarks).
///
/// @memory stack only.
/// @paper CKS 2020 §5.3; 004 §3.2 and 000 Algorithm 3 (distributed noise).
#ifndef FEDSTAT_SDK_NOISE_DISCRETE_GAUSSIAN_H_
#define FEDSTAT_SDK_NOISE_DISCRETE_GAUSSIAN_H_

#include "sdk/base/random_bits.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace noise {

/// One exact draw of the discrete Gaussian with variance parameter σ² = sigma2.
/// @errors kInvalidArgument: σ² = 0 or a zero denominator. kOutOfRange: the exponent does not
/// fit 128 bits (2·a·b·t² does not: σ² above ~10^18, or a and b themselves huge; or a sample
/// astronomically far in the tail). The random source's error (e.g. kUnavailable).
Result<int64_t> discrete_gaussian(RandomBits& bits, Rational sigma2);

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_DISCRETE_GAUSSIAN_H_
