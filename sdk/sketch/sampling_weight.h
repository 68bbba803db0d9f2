/// @file
/// The L1-sampling weight of an item (001 §4.2–4.4, Algorithm 1 lines 1–2), bit-identical on every
/// architecture.
///
/// u = (⌊h/2^12⌋ + ½)/2^52 ∈ (0, 1) (exact, never 0 or 1) from the item's seeded 64-bit hash h; W =
/// 1/(1 − u^(1/k)), the largest of k reciprocal uniforms (Lemma 4.4). W is kept in fixed point: ω =
/// round(W·2^4), capped at kMaxFixedWeight = 2^35 (W ≤ 2^31), so sketches hold integers and add
/// exactly. The host divides by 2^4 and uses the same ω, so the rounding changes W's distribution
/// by at most 2^-5 absolute (W ≥ k/37 ≫ 1 for every u). The cap matters for an item only when its
/// share x is below τ/2^31 (the estimators' threshold τ is a few units): an item held once among
/// N < 2^28 items has x > 2^-28, so every item is counted. (An earlier cap of 2^23 lost the tail
/// of a 10^8-draw Zipf pair: items below τ/2^23 could never be sampled.)
///
/// W is evaluated with a fixed sequence of IEEE-754 additions, multiplications and divisions:
/// t = −ln u by fdlibm's method (the exponent and mantissa taken from the bits, exactly; ln of the
/// mantissa in [√½, √2) by its degree-14 minimax polynomial in s = f/(2 + f), error below 1 ulp),
/// then with x = t/k: for x ≤ 1/4 (every u when k ≥ 147), W = k/t + 1/2 + x·P(x²) with P the
/// first six Bernoulli terms of x/(1 − e^(−x)) (truncation below 1e-19 relative); for larger x
/// (small k only), W = −1/expm1(−x) by halving and a Taylor series. Those operations are correctly
/// rounded everywhere, and the SDK is compiled with -ffp-contract=off (fedstat_sdk_rules in
/// cmake/FedstatWarnings.cmake: GCC would otherwise fuse a·b + c on AArch64), so ω is the same on
/// x86-64, AArch64 and the Cortex-M4's software floating point (tests/common/golden_vectors.h pins
/// 13 × 1026 values on all three). Accuracy: against 200-bit arithmetic (mpmath, 15,000 u over k =
/// 1 … 2^20) the relative error of W is below 6e-16 (that of the first version's series, summed
/// until terms fell below 1e-40: 7e-16); tests/unit/sketch/sampling_weight_test.cpp checks W within
/// 2e-15 of that series (measured: 1.2e-15) and ω equal to its ω except where W·16 lies within a
/// few ulps of a half-integer (1 hash in 2.8·10^7 measured). So the rounding to ω (≤ 2^-5 absolute)
/// remains the only change to W's distribution. Cost: ≈ 35 operations and 2 divisions, against the
/// series' ≈ 60 iterations; SamplingWeight::fixed_batch computes many at a time in vector lanes, 2,
/// 4 or 8 wide (the same values).
///
/// @memory none (stack only); a SamplingWeight object is two doubles.
/// @paper 001 §4.2–4.4, Algorithm 1 lines 1–2 (the L1-sampling weight, Lemma 4.4).
#ifndef FEDSTAT_SDK_SKETCH_SAMPLING_WEIGHT_H_
#define FEDSTAT_SDK_SKETCH_SAMPLING_WEIGHT_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/vector_isa.h"

namespace fedstat {
namespace sketch {

/// Fraction bits of the fixed-point weight: ω = round(W·2^4).
constexpr unsigned kWeightFractionBits = 4;
/// The cap on ω, 2^35 (W ≤ 2^31); a weight that would round above it, or is not finite, is this.
constexpr uint64_t kMaxFixedWeight = uint64_t{1} << 35;

/// The weight function for one k (k and 1/k converted once). Every function below gives the same
/// value as this one.
class SamplingWeight {
 public:
  /// The weight function for sampling parameter `k` (k ≥ 1; validate_params refuses k = 0).
  explicit SamplingWeight(uint32_t k);
  /// W = 1/(1 − u^(1/k)) for u ∈ (0, 1), computed portably (see the file description).
  double weight(double u) const;
  /// ω = min(round(W·2^4), 2^35) for the u of a 64-bit hash (uniform_from_hash).
  uint64_t fixed(uint64_t hash) const;
  /// `out[j] = weight(uniform_from_hash(hashes[j]))` for j < n: the same doubles bit for bit,
  /// computed in vector lanes: 8 with AVX-512F, 4 with AVX2 (x86-64, asked at run time:
  /// vector_isa.h), else 2 (SSE2, NEON, or lane by lane).
  void weights(const uint64_t* hashes, double* out, size_t n) const;
  /// weights() in the lanes of `isa` (the baseline: two); false (nothing written) when this
  /// processor lacks `isa`. For tests.
  bool weights_with(VectorIsa isa, const uint64_t* hashes, double* out, size_t n) const;
  /// `out[j] = fixed(hashes[j])` for j < n: the same values, through weights().
  void fixed_batch(const uint64_t* hashes, uint64_t* out, size_t n) const;

 private:
  // W for x = t/k ≤ 1/4 from t = −ln u: k/t + 1/2 + x·P(x²) (the Bernoulli series above).
  double series_weight(double t, double x) const;

  double k_;
  double inverse_k_;
};

/// W = 1/(1 − u^(1/k)) for u ∈ (0, 1): `SamplingWeight(k).weight(u)`.
double sampling_weight(double u, uint32_t k);
/// ω = min(round(W·2^4), 2^35) for a 64-bit item hash: `SamplingWeight(k).fixed(hash)`.
uint64_t fixed_sampling_weight(uint64_t hash, uint32_t k);
/// u from a 64-bit hash: (⌊h/2^12⌋ + ½)/2^52, exactly; never 0 or 1.
double uniform_from_hash(uint64_t hash);

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_SAMPLING_WEIGHT_H_
