/// @file
/// The local trainer of Sk-RSGD-AR: RSGD-AR (002 Algorithm 2, after Chen, Lee & Kifer 2019) for
/// L2-regularised logistic regression, f(w; x, y) = log(1 + e^{−y·w·x}) + (μ/2)·‖w‖².
///
/// Algorithm: shuffle the n examples (Fisher–Yates with the given random bits), cut them into m
/// batches of ⌊n/m⌋ (the n mod m left over are not used: the sensitivity analysis needs equal
/// batches); for s = 1..T: h ← h + 1, η = η0/h, one gradient step per batch; every τ epochs the
/// model becomes the average of the m·τ iterates since the last averaging and h resets to 0.
/// Features must have L2 norm ≤ 1 and labels be ±1 (checked); then the loss is μ-strongly convex
/// and (1/4 + μ)-smooth and a gradient's norm is at most 1 (R = 1), which is what the sensitivity
/// of this exact schedule (privacy/accountants.h rsgd_ar_schedule_sensitivities: resets and window
/// averages included) needs. The arithmetic is double: its rounding (≈ 2^−53 relative per
/// operation) is not inside that bound (stated, not proven; the float pipeline's rounding is,
/// quantise.h).
///
/// Deterministic given the bits.
///
/// @memory from the caller's Arena: n·4 bytes (the permutation) + 3·d·8 bytes (gradient, sum
/// of iterates, working model) = trainer_memory_bytes(n, d), alignment included.
/// @paper 002 §3.2 and Algorithm 2.
#ifndef FEDSTAT_SDK_TASKS_LOGISTIC_TRAINER_H_
#define FEDSTAT_SDK_TASKS_LOGISTIC_TRAINER_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/arena.h"
#include "sdk/base/checked_size.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace tasks {

/// n examples of d features, row-major; labels −1 or +1 (views of the caller's arrays).
struct Examples {
  Span<const float> features;  ///< count()·dimension values, example i at [i·d, (i + 1)·d)
  Span<const int8_t> labels;   ///< one label per example, −1 or +1
  size_t dimension = 0;        ///< d, the features per example
  /// n, the number of examples (one per label).
  size_t count() const { return labels.size(); }
};

/// The trainer's schedule (validate_trainer_config states which values are allowed).
struct TrainerConfig {
  uint32_t epochs = 10;              ///< T, 1..kMaxEpochs
  uint32_t batches = 4;              ///< m ≥ 1
  uint32_t averaging_interval = 10;  ///< τ (epochs) ≥ 1; τ > T never averages
  double eta0 = 1.0;                 ///< initial step size, ≤ 2/(1/4 + μ) (checked)
  double mu = 0.001;                 ///< L2 regularisation (strong convexity), finite, ≥ 0
};

/// The most epochs T a configuration may ask for.
constexpr uint32_t kMaxEpochs = 10000;
/// The largest ‖x‖² an example may have: 1 plus room for float normalisation. The loss is then
/// (kMaxFeatureNorm2/4 + μ)-smooth and its gradient norm at most √kMaxFeatureNorm2, the
/// constants the sensitivity uses (model_update_task.h).
constexpr double kMaxFeatureNorm2 = 1 + 1e-6;
/// The largest |value| of a starting model (public input): keeps every iterate and window sum
/// finite.
constexpr double kMaxStartValue = 1e12;

/// Checks a schedule: epochs 1..kMaxEpochs, batches and averaging interval ≥ 1, η0 > 0 and μ ≥ 0
/// finite, and η0·(kMaxFeatureNorm2/4 + μ) ≤ 2: every step is then non-expansive (ρ ≤ 1) and
/// moves the model by at most η0·(1 + μ‖w‖)-ish, so with a start within kMaxStartValue no data
/// can drive the model to infinity and the report to a refusal. τ > T never averages.
/// @errors kInvalidArgument: any of those conditions fails (NaN included).
Status validate_trainer_config(const TrainerConfig& config);
/// Checks examples a model of dimension d can train on: the dimension d (≥ 1), count·d features
/// (no wrap), labels −1 or +1, finite features of L2 norm ≤ 1 (+10^−6).
/// @errors kInvalidArgument: any of those fails; the message names what is wrong.
Status check_examples(const Examples& examples, size_t d);
/// The smoothness L = kMaxFeatureNorm2/4 + μ the sensitivity analysis uses for this trainer (the
/// gradient bound R is √kMaxFeatureNorm2).
inline double trainer_smoothness(const TrainerConfig& config) {
  return kMaxFeatureNorm2 / 4 + config.mu;
}

/// The trainer's Fisher–Yates shuffle: order ← a uniformly random permutation of 0..size−1. The
/// record at order[p] is in batch ⌊p/⌊n/m⌋⌋ (positions from m·⌊n/m⌋ on are unused).
/// @errors any error of `bits`' random source (e.g. kUnavailable); `order` is then a partial
/// shuffle and `bits` must be discarded.
Status shuffle_order(RandomBits& bits, Span<uint32_t> order);

/// The Arena bytes train_logistic needs for n examples of dimension d: 4n + 24d + 16 (alignment);
/// kSizeOverflow (sdk/base/checked_size.h) when the bytes do not fit in size_t (d is the
/// server's).
constexpr size_t trainer_memory_bytes(size_t n, size_t d) {
  return size_add(size_add(size_mul(n, 4), size_mul(d, 24)), 16);
}

/// Trains from `start` and writes the local model to `out` (both d values). The scratch it takes
/// from `scratch` is rewound before it returns, on success and on error.
/// @errors kInvalidArgument: `out` is not as long as `start`; `examples` fail check_examples;
/// `config` fails validate_trainer_config; `start` holds a NaN, an infinity or a value beyond
/// kMaxStartValue; fewer examples than batches. kResourceExhausted: `scratch` has less than
/// trainer_memory_bytes(n, d) free. Any error of `shuffle_bits`' random source (e.g.
/// kUnavailable). `out` is unchanged on every error.
Status train_logistic(const Examples& examples, Span<const double> start,
                      const TrainerConfig& config, RandomBits& shuffle_bits, Arena& scratch,
                      Span<double> out);

/// Mean logistic loss with the regulariser (μ/2)·‖w‖², for tests and examples (NaN for no
/// examples).
double logistic_loss(const Examples& examples, Span<const double> w, double mu);
/// The share of examples whose label is the sign of w·x (w·x = 0 counts as +1); 0 for no
/// examples. For tests and examples.
double accuracy(const Examples& examples, Span<const double> w);

}  // namespace tasks
}  // namespace fedstat

#endif  // FEDSTAT_SDK_TASKS_LOGISTIC_TRAINER_H_
