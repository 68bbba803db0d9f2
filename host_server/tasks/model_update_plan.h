// The model_update task plan (task_plan.h's kind dispatch calls it): one round of Sk-RSGD-AR
// federated logistic regression (002 Algorithm 1). Each device trains from the global model on
// its examples (local RSGD-AR), quantises the change (clip, rotate, scale, conditional rounding,
// DIST: + Sk(λ)), and the fleet's modular sum becomes the new global model
//   w ← w + dequantise(Σ reports)/contributors            (tasks::apply_aggregate)
// — on the host with the SDK's own configuration of the Task (client::model_update_config).
//
// Declaration member "model_update" (each field checked, errors name it):
//   dimension d (1..2^20), epochs T (1..10000), batches m (1..256), averaging_interval τ
//   (1..10000; τ > T never averages), eta0 > 0 and mu ≥ 0 (η0·(1/4 + μ) ≤ 2, the trainer's rule),
//   clip_norm c > 0, rotate (bool), gamma γ > 0, beta β ∈ [½, 1], bits b (1..32: the report is
//   32-bit words mod 2^b), examples_per_client n ≥ m (the calibration's batch ⌊n/m⌋; a device
//   holding fewer refuses), optionally initial_model (d finite numbers, |w| ≤ 10^12; default
//   zeros) and evaluation (a CSV of held-out examples, labelled_examples.h, read by the host).
//   Trust: "none" (no noise) or "dist" (each device adds Sk(λ) per word, λ =
//   tasks::model_update_lambda(config, d, threshold, ε, δ): calibrated for threshold shares,
//   the fewest secure aggregation releases a sum of — more shares only add noise). "trusted" is
//   refused: its central noise (Skellam on the exact integer sum, from the host's exact samplers)
//   is not built.
//   The sum must not wrap: max_clients·(γ·(c + e) + β·√D + 1) plus 40 standard deviations (+64) of
//   the fleet's Skellam noise must stay below 2^(b−1), or "bits" is refused (raise b, lower γ).
// Task: bits = b, vector_length = quantise::encoded_length(d) (D: d, or the next power of two with
// rotation), data_words = d; TaskData = the initial model as IEEE-754 doubles' bits. Before it is
// served the Task passes the device's own check (client::validate_task).
// Result JSON: kind, contributors, model (d numbers), device_noise_lambda (dist), and with an
// evaluation set its size, "loss" (mean logistic loss with the μ/2·‖w‖² term, tasks::
// logistic_loss), "accuracy" and "estimate" (= accuracy). What it reveals: the new model is a
// function of the noised sum only (post-processing); the evaluation set is the server's own data.
// A sum no honest fleet reaches publishes no model: when the sum's words, centred, have an L2
// norm above contributors × report_bounds.h's per-device bound (γ·(c + e) + β·√D, slackened) plus
// a bound on the fleet's Skellam noise Sk(contributors·λ′) per word (exceeded with probability
// below 1e-15: the bound's derivation is at skellam_norm_bound), the result is {kind,
// contributors, "model": null, "estimate": null, "refused": why}. Under DIST the server never
// sees a device's words (no report bound applies) and one device could otherwise add any vector
// mod 2^b — one word + 2^30 moved every coordinate of a 4-dimensional model by ≈ 32,768 (second
// review of issue 39, C1). Refused rather than clamped: only a forged update crosses the bound, a
// model scaled back into it would still point where the forger chose, and losing the round is
// what one DIST device can already cause (a false commitment aborts it). A forgery inside the
// bound passes: with n contributors it moves the model as far as n honest updates could.
// Memory: the initial model (d doubles) and the evaluation set (labelled_examples.h).
// Paper: 002 Algorithms 1–4, Lemma 3.
#ifndef FEDSTAT_HOST_TASKS_MODEL_UPDATE_PLAN_H_
#define FEDSTAT_HOST_TASKS_MODEL_UPDATE_PLAN_H_

#include <string>

#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"

namespace fedstat {
namespace host {

// Fills plan.task's MODEL_UPDATE fields (the common ones — id, trust, ε, δ, clients, threshold,
// seed — already set by plan_task), plan.data and plan.estimate_with. std::invalid_argument naming
// the field; std::runtime_error for an unreadable or malformed evaluation file.
void plan_model_update(const nlohmann::json& declaration, const std::string& base_dir,
                       TaskPlan& plan);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TASKS_MODEL_UPDATE_PLAN_H_
