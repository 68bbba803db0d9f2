/// @file
/// The quantise stage: a real-valued update becomes integers mod 2^b, ready for secure aggregation;
/// the host inverts a modular SUM of such encodings back to the sum of the updates.
///
/// Device, in this order (002 Algorithms 1 and 3; Kairouz, Liu & Steinke 2021):
///   1. L2 clip to norm c;
///   2. optional randomised Walsh–Hadamard rotation (rotation.h; signs from the task's public seed;
///      zero-padded to D = the next power of two);
///   3. scale by γ;
///   4. conditional stochastic rounding: each x rounds up with probability equal to its fractional
///      part (an exact Bernoulli trial of the double), repeated until ‖v* − γx‖₂ ≤ β·√D; after
///      max_rounding_tries misses it rounds to nearest, whose error ≤ ½ per value meets the bound
///      for β ≥ ½ (so β < ½ is refused): no data can make a report fail (a failure would be an
///      output that depends on the data);
///   5. optional noise (a NoiseSampler, e.g. Skellam with the accountant's λ);
///   6. wrap modulo 2^b (b = 32 default; 64 available with uint64 words).
/// Host: centre each word of the modular sum into [−2^(b−1), 2^(b−1)), divide by γ, inverse
/// rotation (in double), drop the padding. Exact for any number of clients as long as the true
/// sum stays inside that range (choose b with room: |sum| < 2^(b−1)).
///
/// Rounding (what the sensitivity must cover; issue 11 item 5). Let x be the update, P_c the exact
/// projection onto the L2 ball of radius c, R the exact rotation, y the float vector step 3
/// scales, u = 2^−24 (float rounding), D ≤ 2^24 and K = log2 D. Then
///     ‖y − R·P_c(x)‖₂ ≤ e := (K + 7)·u·c + √D·2^−148                    (rounding_bound)
/// for x given as floats to quantise(), or as doubles through clip_to_float() first:
///   - clip_to_float clips in double (the computed norm is within D·2^−52 of the true one, so the
///     result is within (D + 3)·2^−52·c of P_c(x)), then casts: + u·‖v‖ + √D·2^−150 (subnormals);
///     in all ≤ 1.01·u·c + √D·2^−150. Clipping BEFORE the cast keeps this relative to c.
///   - step 1 clips the floats again: either nothing changes, or each value is multiplied by
///     fl(c/n̂) (relative error ≤ u + 2^−28) and rounded (u): ≤ 2.1·u·c more, and P_c is
///     1-Lipschitz, so the distance to P_c(x) grows by at most that.
///   - step 2: each of the K butterfly stages rounds every output (relative u) of a vector whose
///     exact norm grows by √2 per stage, so the unnormalised error is ≤ K·u·(1 + u)^K·2^(K/2)·‖w‖;
///     the scale 1/√D is computed in float (≤ 2.01·u) and applied with one more rounding (u,
///     + 2^−150 per value): in all ≤ (K + 3.1)·u·‖w‖ + √D·2^−150, ‖w‖ ≤ c·(1 + 3.2u).
/// Two neighbours' vectors therefore satisfy ‖y − y′‖ ≤ min(‖x − x′‖, 2c) + 2e, since R·P_c is
/// 1-Lipschitz and maps into the ball of radius c. Steps 3–4 add the rounding of γ·y (relative
/// 2^−53, ≤ γ·c·2^−52) and the β test's own rounding (error² summed in double: relative
/// (D + 3)·2^−52), so the integer vectors v* (before noise) satisfy
///     ‖v* − v*′‖₂ ≤ γ·(min(‖x − x′‖, 2c) + 2e) + 2·β·√D·(1 + (D + 3)·2^−52) + γ·c·2^−51
/// (discretised_l2_sensitivity; 002 §4.1 prints γ·Δ + 2β√D, without the rounding terms).
/// What is not covered: the rounding inside the caller's computation of x (e.g. the trainer's
/// double arithmetic, ~2^−53 relative per operation), which the caller must bound or accept.
///
/// Errors (all from public inputs, before any output is trusted): an invalid configuration
/// (kInvalidArgument), including β outside [½, 1], γ·(c + e) beyond the modulus' signed range
/// (lower γ or raise b) and 2·c·√D beyond FLT_MAX (the float transform must not overflow); a NaN
/// or infinity in the update (kInvalidArgument).
///
/// @memory the caller's update buffer of D floats (used as working memory) and D output words;
/// dequantise needs D doubles of work. D = padded_dimension(d) with rotation, else d;
/// d ≤ kMaxDimension.
/// @paper 002 Algorithm 1 lines 4–8, Algorithm 3, §4 "Random rotation".
#ifndef FEDSTAT_SDK_QUANTISE_QUANTISE_H_
#define FEDSTAT_SDK_QUANTISE_QUANTISE_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/base/span.h"
#include "sdk/noise/add_noise.h"

namespace fedstat {
namespace quantise {

/// The largest update dimension d (2^24).
constexpr size_t kMaxDimension = size_t{1} << 24;

/// The parameters of the quantise stage; device and host must use the same ones.
struct QuantiseConfig {
  double clip_norm = 1.0;        ///< c: the L2 norm updates are clipped to
  bool rotate = true;            ///< randomised Walsh–Hadamard rotation
  Seed256 rotation_seed;         ///< public: from the task
  uint64_t rotation_stream = 0;  ///< stream id of the rotation signs under rotation_seed
  double gamma = 1024;           ///< γ: scale; finer quantisation, more noise for the same ε
  double beta = 0.6065306597;    ///< β: e^(−1/2), Kairouz et al.'s default; in [½, 1]
  unsigned modulus_bits = 32;    ///< b: words are sums mod 2^b
  uint32_t max_rounding_tries = 1000;  ///< stochastic roundings tried before rounding to nearest
};

/// Checks a configuration for updates of dimension d (the checks quantise makes; 64-bit words).
/// @errors kInvalidArgument: d = 0 or d > kMaxDimension; clip_norm or gamma not positive and
/// finite; beta outside [½, 1]; modulus_bits outside 1..64; max_rounding_tries = 0; 2·c·√D not
/// below FLT_MAX; or γ·(c + e) beyond the modulus' signed range.
Status validate_config(size_t d, const QuantiseConfig& config);

/// D: the number of words an update of dimension d encodes to (padded_dimension(d) when
/// rotating, else d).
size_t encoded_length(size_t d, const QuantiseConfig& config);

/// Steps 1–2 in place on update[0, D) (d values, zero-padded): the float clip and the rotation.
/// Does not validate `config` (quantise() does).
/// @errors kInvalidArgument: d = 0, update.size() ≠ D, or a NaN or infinity in the update.
/// kInternal: the rotation's AES keystream failed inside mbedTLS (not expected).
Status clip_and_rotate(Span<float> update, size_t d, const QuantiseConfig& config);
/// out[0, d) ← P_c(update) as floats: the L2 clip in double, then the cast (see Rounding).
/// update.size() == d ≤ out.size().
/// @errors kInvalidArgument: a NaN or infinity in the update, a clip norm that is not positive
/// and finite, or out.size() < update.size().
Status clip_to_float(Span<const double> update, double clip_norm, Span<float> out);
/// e of Rounding: the distance of the float pipeline's y from the exact R·P_c(x).
double rounding_bound(size_t d, const QuantiseConfig& config);
/// The L2 sensitivity of the integer vector v* (before noise) when the updates' exact difference
/// is at most `update_l2` (Rounding); never below 002's γ·min(Δ, 2c) + 2β√D.
double discretised_l2_sensitivity(double update_l2, size_t d, const QuantiseConfig& config);

/// Steps 1–6 into 32-bit words: update[0, d) holds the update; update.size() ≥ D (it is clipped,
/// rotated and scaled in place); out.size() == D. `noise` may be null (no noise).
/// `private_bits` must come from a CSPRNG in production.
/// @errors kInvalidArgument: as validate_config() (with modulus_bits ≤ 32), update shorter than
/// D, out.size() ≠ D, or a NaN or infinity in the update. kInternal: a clipped value beyond
/// c + e (a rounding-bound bug) or the rotation's keystream failed. Any error of
/// NoiseSampler::sample() (kFailedPrecondition for an uninitialised sampler, kOutOfRange) or of
/// the random source (e.g. kUnavailable); `out` is then partly written.
Status quantise(Span<float> update, size_t d, const QuantiseConfig& config,
                const noise::NoiseSampler* noise, RandomBits& private_bits, Span<uint32_t> out);
/// Steps 1–6 into 64-bit words (modulus_bits up to 64); otherwise as the 32-bit overload.
/// @errors kInvalidArgument: as validate_config(), update shorter than D, out.size() ≠ D, or a
/// NaN or infinity in the update. kInternal: a clipped value beyond c + e (a rounding-bound bug)
/// or the rotation's keystream failed. Any error of NoiseSampler::sample() (kFailedPrecondition
/// for an uninitialised sampler, kOutOfRange) or of the random source (e.g. kUnavailable); `out`
/// is then partly written.
Status quantise(Span<float> update, size_t d, const QuantiseConfig& config,
                const noise::NoiseSampler* noise, RandomBits& private_bits, Span<uint64_t> out);

/// The sum (mod 2^b) of any number of encodings → the sum of the clipped updates (out[0, d)):
/// centre, divide by γ, inverse rotation in double, drop the padding. `work` holds ≥ D doubles.
/// @errors kInvalidArgument: as validate_config(), or sum.size() ≠ D, work.size() < D or
/// out.size() ≠ d. kInternal: the rotation's AES keystream failed inside mbedTLS (not expected).
Status dequantise(Span<const uint64_t> sum, size_t d, const QuantiseConfig& config,
                  Span<double> work, Span<double> out);

/// Σ words mod 2^b, for the host to sum encodings before dequantising (secure aggregation does
/// this without seeing any single one): accumulator[i] = (accumulator[i] + words[i]) mod 2^b.
/// @errors kInvalidArgument: the spans differ in length, or modulus_bits is outside 1..64.
Status add_mod(Span<uint64_t> accumulator, Span<const uint64_t> words, unsigned modulus_bits);

}  // namespace quantise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_QUANTISE_QUANTISE_H_
