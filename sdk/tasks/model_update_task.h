/// @file
/// ModelUpdateTask: one client's part of Sk-RSGD-AR (002 Algorithm 1, lines 3–6), the per-client
/// noise level that achieves a target (ε, δ) (002 §4.1, Lemma 3), and the host's one-shot
/// aggregation (lines 8–9).
///
/// Device: train locally from the global model (logistic_trainer.h) → Δ = w_local − w_global →
/// quantise Δ (quantise.h: clip, rotate, scale γ, conditional rounding with β, Skellam noise, wrap
/// mod 2^b) → the report, D words. Secure aggregation (its own issue) will sum the reports; until
/// then the host sums them in the clear with quantise::add_mod.
/// Host: w ← w + dequantise(Σ reports)/N.
/// Calibration: Δ[j] for the trainer's actual schedule (privacy/accountants.h
/// rsgd_ar_schedule_sensitivities: step-size resets and window averages every τ epochs; 002's
/// Algorithm 4 as printed ignores both and understated ‖w_D − w_D′‖ by up to 2.67× at τ = 1) for
/// the client's batch size; Δ2*[j] = quantise::discretised_l2_sensitivity(Δ[j]) — 002's
/// γ·min(Δ, 2c) + 2β·√D plus every rounding of the float pipeline (quantise.h, Rounding) — and
/// Δ1*[j] = min(√D·Δ2*, Δ2*²) (an integer vector); then the smallest λ with ε(mixture over the m
/// batches, N·λ) ≤ ε (002 Lemma 3). The device clips the change in double before it becomes float
/// (quantise::clip_to_float), which keeps the rounding relative to c.
///
///
/// @memory model_update_memory_bytes(n, d) from the caller's Arena (the trainer's, the local
/// model and a D-float update buffer); the report is D = encoded_length(d) words.
/// @paper 002 Algorithms 1–4, Lemma 3.
#ifndef FEDSTAT_SDK_TASKS_MODEL_UPDATE_TASK_H_
#define FEDSTAT_SDK_TASKS_MODEL_UPDATE_TASK_H_

#include "sdk/noise/add_noise.h"
#include "sdk/privacy/accountants.h"
#include "sdk/quantise/quantise.h"
#include "sdk/tasks/logistic_trainer.h"

namespace fedstat {
namespace tasks {

/// A model-update task's parameters (public: every client and the host use the same).
struct ModelUpdateConfig {
  TrainerConfig trainer;              ///< the local trainer's schedule
  quantise::QuantiseConfig quantise;  ///< clipping, rotation, scale, rounding and modulus
  /// n, public: the calibration uses batches of ⌊n/m⌋; a client with fewer examples than that
  /// (smaller batches, larger sensitivity) refuses to report (kFailedPrecondition).
  size_t examples_per_client = 0;
};

/// The Arena bytes model_update_report needs for n examples of dimension d:
/// trainer_memory_bytes(n, d) + 16·d + 64; kSizeOverflow (sdk/base/checked_size.h) when the
/// bytes do not fit in size_t.
constexpr size_t model_update_memory_bytes(size_t n, size_t d) {
  return size_add(size_add(trainer_memory_bytes(n, d), size_mul(d, 16)), 64);
}

/// The smallest per-client Skellam λ for (epsilon, delta) with `clients` clients of
/// config.examples_per_client examples each, for models of dimension d (the mixture over the m
/// batches, 002 Lemma 3).
/// @errors kInvalidArgument: `config.trainer.batches` is 0 or above 256;
/// `config.examples_per_client` is below the number of batches; `config.trainer` fails
/// validate_trainer_config; `config.quantise` is invalid for `dimension`; ε not positive, δ outside
/// (0, 1) or `clients` = 0. kOutOfRange: no per-client λ up to 10^15 reaches ε.
Result<double> model_update_lambda(const ModelUpdateConfig& config, size_t dimension,
                                   uint32_t clients, double epsilon, double delta);
/// The inverse: the (ε, δ) that `clients` clients each adding Sk(lambda_per_client) give, with
/// the same sensitivities (what a device is charged for a DIST model update,
/// sdk/client/contribution.h device_spend). Stack: the m sensitivities (≤ 256 × 24 bytes), as
/// model_update_lambda.
/// @errors kInvalidArgument: `config.trainer.batches` is 0 or above 256;
/// `config.examples_per_client` is below the number of batches; `config.trainer` fails
/// validate_trainer_config; `config.quantise` is invalid for `dimension`; `clients` = 0, λ not
/// positive, or δ outside (0, 1).
Result<privacy::DpFromRdp> model_update_epsilon(const ModelUpdateConfig& config, size_t dimension,
                                                uint32_t clients, double lambda_per_client,
                                                double delta);

/// Trains from `global_model` on `examples` and writes the quantised, noised change Δ to
/// `report` in 32-bit words (modulus_bits ≤ 32). `noise` may be null (no noise);
/// `private_bits` must come from a CSPRNG in production (it shuffles, rounds and draws noise).
/// @errors kInvalidArgument: `report` does not hold encoded_length(d) words; `examples` fail
/// check_examples; `config.trainer` fails validate_trainer_config; `global_model` holds a NaN,
/// an infinity or a value beyond kMaxStartValue; `config.quantise` is invalid; the change holds
/// a NaN or an infinity. kFailedPrecondition: this client holds fewer than examples_per_client
/// examples per batch (it must not report), or the calibration is unusable (no batches, or
/// examples_per_client below the number of batches); also when `noise` was never init()ed.
/// kResourceExhausted: `scratch` has less than model_update_memory_bytes(n, d) free.
/// kInternal: a clipped value lies beyond the rounding bound (a bug). Any error of
/// `private_bits`' random source (e.g. kUnavailable). The scratch is rewound on every return;
/// after an error `report` must be discarded.
Status model_update_report(const Examples& examples, Span<const double> global_model,
                           const ModelUpdateConfig& config, const noise::NoiseSampler* noise,
                           RandomBits& private_bits, Arena& scratch, Span<uint32_t> report);
/// The report in 64-bit words (modulus_bits ≤ 64), as the 32-bit overload.
/// @errors kInvalidArgument: `report` does not hold encoded_length(d) words; `examples` fail
/// check_examples; `config.trainer` fails validate_trainer_config; `global_model` holds a NaN,
/// an infinity or a value beyond kMaxStartValue; `config.quantise` is invalid; the change holds
/// a NaN or an infinity. kFailedPrecondition: this client holds fewer than examples_per_client
/// examples per batch (it must not report), or the calibration is unusable (no batches, or
/// examples_per_client below the number of batches); also when `noise` was never init()ed.
/// kResourceExhausted: `scratch` has less than model_update_memory_bytes(n, d) free.
/// kInternal: a clipped value lies beyond the rounding bound (a bug). Any error of
/// `private_bits`' random source (e.g. kUnavailable). The scratch is rewound on every return;
/// after an error `report` must be discarded.
Status model_update_report(const Examples& examples, Span<const double> global_model,
                           const ModelUpdateConfig& config, const noise::NoiseSampler* noise,
                           RandomBits& private_bits, Arena& scratch, Span<uint64_t> report);

/// The host's step: global_model += dequantise(sum)/clients; `work` needs D doubles, `delta` d
/// doubles (it receives the summed change).
/// @errors kInvalidArgument: `clients` = 0; `delta` is not as long as `global_model`; an invalid
/// `config.quantise`; `sum`, `work` or `delta` of the wrong length. `global_model` is unchanged
/// on every error.
Status apply_aggregate(Span<const uint64_t> sum, uint32_t clients, const ModelUpdateConfig& config,
                       Span<double> work, Span<double> delta, Span<double> global_model);

}  // namespace tasks
}  // namespace fedstat

#endif  // FEDSTAT_SDK_TASKS_MODEL_UPDATE_TASK_H_
