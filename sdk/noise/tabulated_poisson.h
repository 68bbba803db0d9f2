/// @file
/// TabulatedPoissonSampler: exact Poisson(λ) (and Skellam) at table-lookup speed, for devices and
/// hosts with memory for a table. Exact: floating point only decides which path runs; every
/// outcome has exactly the Poisson probability. So the low-order-bit leaks of samplers whose
/// OUTPUT is computed in floating point (Mironov 2012) do not arise: no output value depends on
/// a rounding, only the time taken does (not constant-time: a random number of proposals).
///
/// Target: m = ⌊λ⌋, f(j) = P(m+j)/P(m), an exact rational (Π p/(q(m+i)) for j > 0, Π q(m−i+1)/p
/// for j < 0, f(0) = 1 the maximum); output m + j with probability ∝ f(j), i.e. Poisson(λ).
///
/// Proposal (rejection sampling, acceptance 0.95–1): central blocks [c_lo + β·s, c_lo + (β+1)·s)
/// of width s = 2^⌊log2(⌊√m⌋/8)⌋ (1 below m = 256), at most 63 a side, covering [c_lo, c_hi] ≈
/// [max(−m, −4√m), 4√m]; and two tail blocks: above, j = c_hi + 1 + K·w + r, below, j = c_lo − 1 −
/// (K·w + r) (none if c_lo reaches −m), K the number of 0-bits before the first 1-bit, r log2(w)
/// uniform bits, w a power of two ≥ 2^⌊log2 √m⌋ whose w-th power of the first factor past the
/// edge — the largest factor there — is ≤ 1/2, so f(edge ± (K·w + r)) ≤ f(edge)·2^−K (a tail
/// proposal with K > 2^20 is rejected, so the output is Poisson(λ) conditioned on a set of
/// probability below 2^−(2^20): exact to far below any δ). Block β is
/// chosen with probability W_β/2^63 exactly, W_β integers summing to 2^63: central W_β =
/// ⌈s·max_β f̃·(1+8γ)·2^63/C⌉, tails ⌈2w·f̃(edge)·(1+8γ)·2^63/C⌉ (f̃ the double-precision f, with
/// relative error ≤ γ there), C a double ≈ 1.000001 × the sum of those before rounding, the
/// rounding slack added to the largest W. Sampling uses Vose's alias table over 2^b slots (b ≤ 7),
/// built in exact integers and checked to realise exactly W: b bits pick slot i; slot i keeps
/// block i if U' < θ_i/2^(63−b), else takes alias_i (U' = the following bits, read as below:
/// to the first difference from θ_i's expansion, or through θ_i's last 1-bit, after which
/// U' ≥ θ_i/2^(63−b) is certain). So g(j) = W_β/(2^63·s) in a central block and
/// W/2^63 · 2^−(K+1)/w in a tail. Acceptance A(j) = f(j)/(C·g(j)) — central f(j)·2^63·s/(C·W_β),
/// tails f(j)·2^(63+K+1)·w/(C·W) — is an exact rational < 1 (the W's are rounded up from certified
/// bounds on f), and g·A = f/C: the output is exactly Poisson(λ). The samples depend on C and the
/// W's, which are computed from λ with correctly rounded IEEE operations only (no libm beyond
/// exact ldexp/frexp/nextafter/ceil; every added product exact, so a fused multiply-add changes
/// nothing): the same on every architecture.
///
/// Deciding [U < A(j)], U = 0.b1 b2 b3 … with b1 the next bit of the stream: the bits are read
/// until the first i with b_i ≠ a_i, a = A's binary expansion (zero-padded if A is dyadic); then
/// U < A iff b_i = 0. That decides [U < A] exactly (U = A has probability 0), and the number of
/// bits read is a stopping time (it depends only on the bits read), so the bits after it are
/// fresh: about 2 bits per decision instead of 64. Which bits are read depends only on U and the
/// exact A, never on a rounding, so every architecture reads the same bits and draws the same
/// samples from the same seed, even if its table differed in the last bits.
///
/// Where a's first bits come from: a table built in double precision holds T(j) = ⌊Ã(j)·2^64⌋
/// and a CERTIFIED margin Δ: with n = 3·(table half-width) + 8 roundings, |Ã − A| ≤ γ·A, γ =
/// n·2^−53/(1 − n·2^−53), Δ = ⌈γ·2^64⌉ + 2, so ⌊A·2^64⌋ lies in [T − Δ, T + Δ] (clamped to
/// [0, 2^64 − 1]). Every integer there shares the leading c = clz((T−Δ) ⊕ (T+Δ)) bits, so those
/// are a_1 … a_c; the table stores them (c ≤ 58, bit-reversed to line up with RandomBits' order)
/// and c in one 64-bit word. If the first difference comes within c bits (all but about 2^−c of
/// decisions; c ≈ 64 − log2(2Δ), about 40 at λ = 10^4) it is decided there. Otherwise A = N/D is
/// computed exactly with big integers in caller memory and its bits produced by long division,
/// 64 at a time, until the first difference (internal error after 320 bits: probability 2^−320).
/// The table covers the central blocks and each tail until w entries in a row have Ã < 2^−62;
/// past them A < 2^−58 (in a tail A(j + w) ≤ A(j): f at least halves, 2^K doubles), so
/// a_1 … a_58 = 0 there. A proposal that reaches the big integers beyond the table (probability
/// below 2^−58 per proposal there, and such proposals are themselves rare) may need more limbs
/// than sizes_for() gives: it then fails with kResourceExhausted, never an inexact sample.
///
/// Bits per draw ≈ (b + 2 + log2 s + 2)/acceptance: measured 14 at λ = 10^4, 17 at λ = 10^6 (the
/// previous sampler: ~130–150, 64 per decision; tests/bench/noise_bench.cpp, words_per_sample).
///
/// Memory (caller's), b = bit_length(central blocks + 1) ≤ 7, J = max(j_max, −j_min):
///   - table_entries = 2^b + (j_max − j_min + 1) words of 8 bytes, j_max, −j_min ≈ 11.5·√λ for
///     λ ≥ 10^3: ≈ 128 + 23·√λ (356 = 2.8 KiB at λ = 100, 2415 = 19 KiB at 10^4, 23082 = 180 KiB
///     at 10^6; 98 at λ = 10, 153 at λ = 20);
///   - scratch_limbs = max(2·(⌈J·β/64⌉ + 32) + 16, 2^(b+1)) words of 8 bytes, β = bit length of
///     max(p, q·(m + J)) (256 = 2 KiB at λ = 100, 588 at 10^4, 7266 at 10^6).
///
/// sizes_for(λ) computes both exactly. Limits: λ = p/q > 0 with p, q < 2^32, λ ≤ 2^31
/// (checked_poisson_lambda: kInvalidArgument for λ = 0, which adds no noise, or q = 0;
/// kOutOfRange past the limits). A refused parameter leaves an earlier successful init() in
/// force; an init() that fails while building its tables leaves the sampler not ready
/// (kFailedPrecondition on every draw until a successful init()).
/// The object itself: ~130 bytes.
///
/// TabulatedSkellamSampler: Sk(λ) = Poisson(λ) − Poisson(λ). For λ ≤ kSplitMaxLambda (and 2λ
/// within the limits above) it draws N ~ Poisson(2λ) from a 2λ table and returns 2X − N with X the
/// number of ones among the next N bits: given N, X ~ Binomial(N, 1/2) exactly (N fresh bits after
/// a stopping time), and by Poisson splitting X and N − X are independent Poisson(λ), so
/// 2X − N = X − (N − X) ~ Sk(λ) exactly. That is one table draw and ~2λ bits instead of two draws.
/// Otherwise (or with Method::kDifference) it returns the difference of two draws of a λ table.
/// sizes_for() and init() take the same method (memory: the table of 2λ or of λ, as above);
/// sample_many() gives exactly the samples, and uses exactly the bits, of sample() calls in a row.
///
/// @memory caller's table of 8·table_entries bytes and scratch of 8·scratch_limbs bytes (the
/// formulas above; sizes_for() computes them) + ~130 bytes for the object; a
/// TabulatedSkellamSampler is one TabulatedPoissonSampler + 8 bytes, with the table of 2λ or λ.
/// @paper 002 §2.3 (Skellam); the method follows ../shared/notes/exact-poisson.md, with the
/// staircase proposal replaced by the alias blocks above and 64-bit decisions by lazy ones.
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

/// One table entry (caller memory; init() fills it): the leading known bits of A(j)'s binary
/// expansion, bit-reversed (bit i of `bits` is a_{i+1}), in bits 0..57, and how many are known
/// (0..58) in bits 58..63.
struct PoissonThreshold {
  uint64_t bits = 0;  ///< known prefix (bits 0..57) and its length (bits 58..63)
};

/// Exact Poisson(λ) at table-lookup speed from a table and scratch in caller memory (the method
/// of this file's comment).
class TabulatedPoissonSampler {
 public:
  /// The most leading bits of A(j) a table entry holds.
  static constexpr unsigned kMaxKnownBits = 58;

  /// The caller memory a λ needs, in elements (see the file comment for the formulas).
  struct Sizes {
    size_t table_entries = 0;  ///< PoissonThreshold entries of the table
    size_t scratch_limbs = 0;  ///< uint64 words of scratch (the exact fallback's big integers)
  };
  /// The table and scratch sizes init(lambda) needs, computed exactly.
  /// @errors kInvalidArgument, kOutOfRange: λ refused as by checked_poisson_lambda() (poisson.h).
  /// kOutOfRange: the table would exceed 2^26 entries per side (not expected within those
  /// limits). kInternal: the block weights could not be made to fit 2^63 (not expected).
  static Result<Sizes> sizes_for(Rational lambda);

  /// Builds the table for λ; `table` and `scratch` must hold sizes_for(lambda) and outlive the
  /// sampler. A refused λ or a short buffer changes nothing (an earlier successful init() stays in
  /// force); a failure while building leaves the sampler not ready.
  /// @errors kInvalidArgument, kOutOfRange, kInternal: as sizes_for(). kResourceExhausted: `table`
  /// or `scratch` is smaller than sizes_for(lambda). kInternal: the alias table does not realise
  /// the block weights exactly (a bug; the sampler is then not ready).
  Status init(Rational lambda, Span<PoissonThreshold> table, Span<uint64_t> scratch);
  /// One exact Poisson(λ) draw.
  /// @errors kFailedPrecondition: no successful init(). kResourceExhausted: a proposal beyond the
  /// table needed more big-integer limbs than the scratch holds (probability below 2^−58 per such
  /// proposal; never an inexact sample). kInternal: the exact comparison stayed undecided after
  /// 320 bits (probability 2^−320). The random source's error (e.g. kUnavailable).
  Result<uint64_t> sample(RandomBits& bits);
  /// out[i] = the i-th of out.size() draws: the same values, and the same bits used, as that many
  /// sample() calls. On an error the elements before the failing one hold their draws.
  /// @errors As sample(): kFailedPrecondition, kResourceExhausted, kInternal, or the random
  /// source's error (e.g. kUnavailable).
  Status sample_many(RandomBits& bits, Span<uint64_t> out);

  /// Tests only: use at most `known` table bits per decision (0..58), so that the exact
  /// big-integer path decides about 2^−known of them; the samples and the bits used must not
  /// change.
  void limit_known_bits_for_testing(unsigned known) {
    known_limit_ = known < kMaxKnownBits ? known : kMaxKnownBits;
  }
  /// How many decisions fell back to the exact big-integer path since the last init().
  uint64_t exact_fallbacks() const { return fallbacks_; }
  /// λ in lowest terms as the last successful init() accepted it (0/1 before any).
  Rational lambda() const { return Rational{p_, q_}; }

 private:
  friend class TabulatedSkellamSampler;
  struct Plan;
  inline Result<uint64_t> draw(RandomBits& bits);
  Result<uint64_t> propose_block_slowly(RandomBits& bits, uint64_t& r);
  Result<bool> propose_tail(RandomBits& bits, bool lower, int64_t& j);
  Result<bool> exact_accept(RandomBits& bits, int64_t j);
  uint64_t block_weight(uint64_t block) const;

  uint64_t p_ = 0, q_ = 1, m_ = 0;
  unsigned log2_s_ = 0;          // central blocks of width 2^log2_s_ ...
  int64_t c_lo_ = 0, c_hi_ = 0;  // ... covering [c_lo_, c_hi_]
  uint64_t central_blocks_ = 0;  // then the upper and the lower tail
  unsigned log2_slots_ = 0;
  unsigned log2_tail_[2] = {0, 0};
  int64_t j_min_ = 0, j_max_ = 0;
  uint64_t c_mantissa_ = 1;  // C = c_mantissa_ · 2^c_exponent_
  int c_exponent_ = 0;
  Span<PoissonThreshold> alias_;  // 2^log2_slots_ slots
  Span<PoissonThreshold> table_;  // A's known prefix for j_min_..j_max_
  Span<uint64_t> scratch_;
  unsigned known_limit_ = kMaxKnownBits;
  uint64_t fallbacks_ = 0;
  bool ready_ = false;
};

/// Exact Sk(λ) = Poisson(λ) − Poisson(λ) from one TabulatedPoissonSampler (of 2λ when it
/// splits, else of λ); see the file comment.
class TabulatedSkellamSampler {
 public:
  /// How a Skellam draw is made from Poisson table draws.
  enum class Method : uint8_t {
    kAuto,  ///< kSplit for λ ≤ kSplitMaxLambda when 2λ is within the limits, else kDifference
    kDifference,  ///< Poisson(λ) − Poisson(λ), a λ table
    kSplit,  ///< N ~ Poisson(2λ), 2·Binomial(N, 1/2) − N: a 2λ table and ~2λ bits per sample
  };
  /// Where kAuto splits: the split was faster up to λ = 20 and slower from λ = 32 on
  /// (tests/bench/noise_bench.cpp, BM_SkellamMethod; one table draw costs about as much as
  /// 50 bits of CTR_DRBG output).
  static constexpr uint64_t kSplitMaxLambda = 24;

  /// The table and scratch sizes init(lambda, ..., method) needs: those of the 2λ table when the
  /// method splits, else of the λ table.
  /// @errors kInvalidArgument, kOutOfRange: λ refused as by checked_poisson_lambda();
  /// kOutOfRange also for kSplit when 2λ is past those limits. Otherwise as
  /// TabulatedPoissonSampler::sizes_for() (kOutOfRange, kInternal).
  static Result<TabulatedPoissonSampler::Sizes> sizes_for(Rational lambda,
                                                          Method method = Method::kAuto);
  /// Builds the table for `method` (sizes: sizes_for(lambda, method)); the buffers must outlive
  /// the sampler. A refused λ or a short buffer changes nothing.
  /// @errors As sizes_for() (kInvalidArgument, kOutOfRange, kInternal), and as
  /// TabulatedPoissonSampler::init(): kResourceExhausted for a table or scratch smaller than
  /// sizes_for(lambda, method), kInternal while building (the sampler is then not ready).
  Status init(Rational lambda, Span<PoissonThreshold> table, Span<uint64_t> scratch,
              Method method = Method::kAuto);
  /// One exact Sk(λ) draw.
  /// @errors kFailedPrecondition: no successful init(). As TabulatedPoissonSampler::sample():
  /// kResourceExhausted or kInternal (practically never), the random source's error (e.g.
  /// kUnavailable).
  Result<int64_t> sample(RandomBits& bits);
  /// As many sample() calls in a row (same values, same bits); on an error the elements before
  /// the failing one hold their draws.
  /// @errors As sample(): kFailedPrecondition, kResourceExhausted, kInternal, or the random
  /// source's error (e.g. kUnavailable).
  Status sample_many(RandomBits& bits, Span<int64_t> out);
  /// True when the last successful init() chose the split method (a 2λ table).
  bool splits() const { return split_; }
  /// The Poisson sampler underneath (its table is of 2λ when splits(), else of λ).
  TabulatedPoissonSampler& poisson() { return poisson_; }

 private:
  // The table's λ (2λ when splitting), or an error for a refused λ or method.
  static Result<Rational> table_lambda(Rational lambda, Method method, bool& split);
  inline Result<int64_t> draw(RandomBits& bits);

  TabulatedPoissonSampler poisson_;
  bool split_ = false;
};

}  // namespace noise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_NOISE_TABULATED_POISSON_H_
