// Discrete Gaussian sampler, exact, for a rational σ² = a/b > 0: P(k) ∝ exp(−k²/(2σ²)), k ∈ Z.
//
// Algorithm (Canonne, Kamath & Steinke 2020, Algorithm 3): t = ⌊σ⌋ + 1; repeat Y ←
// discrete_laplace(t) and accept with probability exp(−(|Y| − σ²/t)²/(2σ²)). The exponent is
// the rational (|Y|·b·t − a)² / (2·a·b·t²), evaluated exactly in 128-bit integers. The
// expected number of rounds is a small constant (CKS §5.3; measured in the tests' benchmarks).
//
// Errors: kInvalidArgument for σ² ≤ 0; kOutOfRange when the exponent does not fit 128 bits
// (σ² above ~10^18, or a sample astronomically far in the tail).
// Memory: stack only. Paper: CKS 2020 §5.3; 004 §3.2 and 000 Algorithm 3 (distributed noise).
#ifndef FEDSTAT_SDK_NOISE_DISCRETE_GAUSSIAN_H_
#define FEDSTAT_SDK_NOISE_DISCRETE_GAUSSIAN_H_

#include "sdk/base/random_bits.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace noise {

Result<int64_t> discrete_gaussian(RandomBits& bits, Rational sigma2);

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_DISCRETE_GAUSSIAN_H_
