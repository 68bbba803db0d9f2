/// @file
/// Exact Poisson(λ) and symmetric Skellam Sk(λ) = Poisson(λ) − Poisson(λ) for rational λ = p/q,
/// integer-only.
///
/// Output distribution, proved: let m = ⌊λ⌋ and f(j) = P(m+j)/P(m), so f(j) = Π_{i≤j} r⁺_i for
/// j > 0 with r⁺_i = λ/(m+i), and f(j) = Π_{i≤|j|} r⁻_i for j < 0 with r⁻_i = (m−i+1)/λ; both
/// sequences are ≤ 1 and decreasing. Proposal: j from the two-sided geometric g(j) ∝ ρ^|j| with
/// the RATIONAL ratio ρ = (w−1)/w, w = max(2, ⌊√(2λ)⌋) (a sign bit, a geometric magnitude, and
/// (−,0) rejected so 0 is counted once). With i⁺ = #{i : r⁺_i > ρ}, i⁻ = #{i : r⁻_i > ρ},
/// M⁺ = Π_{i≤i⁺} r⁺_i/ρ ≥ 1 and M⁻ = Π_{i≤i⁻} r⁻_i/ρ ≥ 1, the bound M = M⁺M⁻ ≥ sup f/g, and for
/// j ≥ 0 the acceptance probability f(j)ρ^{−j}/M is
///     Π_{j<i≤i⁺} (ρ/r⁺_i) · Π_{i⁺<i≤j} (r⁺_i/ρ) · Π_{i≤i⁻} (ρ/r⁻_i)
/// (and symmetrically for j < 0): a product of rationals each in [0, 1]. Its exact Bernoulli is
/// the conjunction of exact Bernoulli trials of the factors (bernoulli.h), multiplied together
/// in 128 bits while they fit. Rejection sampling then returns m + j with probability ∝ f(j),
/// i.e. exactly Poisson(λ). The geometric magnitude K (P(K ≥ k) = ρ^k) is drawn B trials at a
/// time: one trial of ρ^B per block, and within the block that fails, the first failure at l
/// with P = (1−ρ)/(1−ρ^{B−l}) given none before — again exact rationals.
///
/// No floating point anywhere, so none of the attacks on floating-point samplers (Mironov 2012)
/// apply; the only inexactness left is the random source itself. Not constant-time: the number
/// of trials depends on the sample. Expected work O(√λ) factor products and O(√λ/g) Bernoulli
/// trials (g ≈ 128 / bits per factor), about 1.85 proposals per sample.
///
/// Speed: every proposal multiplies factors from the same fixed sequences (the inverse factors
/// i ≤ i± and the direct ones above them), so init() can precompute them as products of g factors
/// (as many as fit 128 bits) in caller memory; a proposal then runs one exact trial per cached
/// group and multiplies only the few factors at the ends of its range. The cache changes speed,
/// never the distribution; it does change how random bits are consumed, so for identical draws
/// on two devices give them the same seed AND the same cache size. Full coverage is
/// cache_groups_wanted() groups (after an init): ⌈(i⁺ + i⁻)/g⌉ + 2·⌈2w/g⌉, e.g. 212 groups (6.8 KB)
/// at λ = 10^4; a smaller cache fills the inverse factors first (used by every proposal), then the
/// direct ones.
///
/// Limits: 0 < λ (kInvalidArgument for λ = 0, which adds no noise, or a zero denominator); p and
/// q below 2^32 after reduction, λ ≤ 2^31 (kOutOfRange otherwise). A refused init() leaves an
/// earlier successful one in force; sample() before a successful init() is kFailedPrecondition.
///
/// @memory sizeof(PoissonSampler) ≈ 2·(kMaxBlock+1)·16 + 128 bytes, plus the optional cache of
/// 32 bytes per FactorGroup; SkellamSampler holds one PoissonSampler.
/// @paper 002 §2.3 (Skellam mechanism, Agarwal, Kairouz & Liu 2021); 001 §4.7.
#ifndef FEDSTAT_SDK_NOISE_POISSON_H_
#define FEDSTAT_SDK_NOISE_POISSON_H_

#include "sdk/base/random_bits.h"
#include "sdk/base/span.h"
#include "sdk/noise/rational.h"
#include "sdk/noise/uint128.h"

namespace fedstat {
namespace noise {

/// λ in lowest terms if both Poisson samplers (this one and tabulated_poisson.h) accept it:
/// λ > 0, p, q < 2^32 and λ ≤ 2^31.
/// @errors kInvalidArgument: λ = 0 or a zero denominator. kOutOfRange: p or q ≥ 2^32 after
/// reduction, or λ > 2^31.
Result<Rational> checked_poisson_lambda(Rational lambda);

/// A cached product of consecutive acceptance factors (an element of PoissonSampler's cache).
struct FactorGroup {
  UInt128 num;  ///< the product of the factors' numerators
  UInt128 den;  ///< the product of the factors' denominators
};

/// Exact Poisson(λ) for a rational λ, integer-only (the algorithm of this file's comment).
class PoissonSampler {
 public:
  /// The most geometric trials merged into one block trial (powers of w up to w^kMaxBlock kept).
  static constexpr unsigned kMaxBlock = 16;

  /// Checks λ and prepares sampling; `cache` (optional, caller memory, must outlive the sampler)
  /// speeds sampling up and changes which random bits are used, never the distribution. A
  /// refused λ changes nothing: an earlier successful init() stays in force.
  /// @errors kInvalidArgument, kOutOfRange: as checked_poisson_lambda(). kInternal: a cached
  /// factor group overflowed 128 bits (not expected for an accepted λ); the sampler is then not
  /// ready.
  Status init(Rational lambda, Span<FactorGroup> cache = Span<FactorGroup>());
  /// One exact Poisson(λ) draw.
  /// @errors kFailedPrecondition: no successful init(). kOutOfRange: a proposal so far in the
  /// tail that a factor overflows 128 bits (astronomically unlikely). kInternal: an internal
  /// overflow that cannot happen. The random source's error (e.g. kUnavailable).
  Result<uint64_t> sample(RandomBits& bits) const;
  /// λ in lowest terms as init() accepted it (0/1 before any init()).
  Rational lambda() const { return Rational{p_, q_}; }
  /// The cache size, in FactorGroups, that covers every factor a proposal within 2w of the peak
  /// uses (meaningful after a successful init()).
  size_t cache_groups_wanted() const;

 private:
  // One side of the mode: the positive (j > 0) or the negative (j < 0).
  struct Side {
    uint64_t peak = 0;                 // i⁺ or i⁻
    unsigned group = 1;                // factors per cached group
    Span<FactorGroup> inverse_groups;  // from the top of [1, peak] down
    Span<FactorGroup> direct_groups;   // from peak + 1 up
  };

  Status factor(bool negative, uint64_t i, bool inverse, UInt128& num, UInt128& den) const;
  Status build_side(bool negative, Span<FactorGroup>& cache, bool inverse, size_t max_groups);
  Result<bool> inverse_suffix(RandomBits& bits, bool negative, uint64_t k) const;
  Result<bool> direct_prefix(RandomBits& bits, bool negative, uint64_t k) const;
  Result<uint64_t> geometric_magnitude(RandomBits& bits) const;
  Result<bool> accept(RandomBits& bits, bool negative, uint64_t k) const;

  uint64_t p_ = 0, q_ = 1, m_ = 0, w_ = 2;
  Side side_[2];  // [0] positive, [1] negative
  unsigned block_ = 1;
  UInt128 w_pow_[kMaxBlock + 1];
  UInt128 w_minus_1_pow_[kMaxBlock + 1];
  bool ready_ = false;
};

/// Sk(λ): the difference of two independent Poisson(λ) draws; variance 2λ.
class SkellamSampler {
 public:
  /// Checks λ and prepares sampling, as PoissonSampler::init() (the optional cache is
  /// PoissonSampler's: cache_groups_wanted() groups cover everything).
  /// @errors kInvalidArgument, kOutOfRange: as checked_poisson_lambda(). kInternal: as
  /// PoissonSampler::init().
  Status init(Rational lambda, Span<FactorGroup> cache = Span<FactorGroup>()) {
    return poisson_.init(lambda, cache);
  }
  /// The cache size that covers every factor (PoissonSampler::cache_groups_wanted()).
  size_t cache_groups_wanted() const { return poisson_.cache_groups_wanted(); }
  /// One exact Sk(λ) draw: two Poisson(λ) draws, subtracted.
  /// @errors As PoissonSampler::sample(): kFailedPrecondition before a successful init(),
  /// kOutOfRange or kInternal (practically never), the random source's error (e.g.
  /// kUnavailable).
  Result<int64_t> sample(RandomBits& bits) const;

 private:
  PoissonSampler poisson_;
};

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_POISSON_H_
