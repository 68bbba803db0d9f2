// HETEROGENEITY plans: dispersion D, Cochran's Q and I² (004 §4) through fedstat-server, as two
// chained tasks, because round 2's TaskData (the means) is known only once round 1's sum is
// released (definitions: sdk/tasks/heterogeneity_task.h; host math: estimate/heterogeneity.h).
//
//   stage 1  task `id`:         every device sends [x, w·x, w, 1/w] (2d + 2 words) in fixed point
//                               at scale s₁; the result publishes the released sum and what
//                               follows from it alone: μ′ = clamp(Σx/n₁), μ̄′ = clamp(Σw·x/Σw′),
//                               Σw′, Σ(1/w)′ (finish_heterogeneity_round1), "estimate": null
//   stage 2  task `stage2_id`:  opens when stage 1 completes (never after an abort), TaskData = μ′
//                               then μ̄′ (2d doubles' bits); every device sends
//                               [||x − μ′||_p^p, w·||x − μ̄′||²] at scale s₂; the result publishes
//                               D, Q and I² with the paper's intervals and noise_sd
//                               (finish_heterogeneity_round2), and "estimate": I².
// A device may take part in either stage or both; each sum is over its own contributors (n₁, n₂):
// D = Σ₂/n₂ and I² = max(0, 1 − (n₂ − 1)/Q), against stage 1's means. D and Q are clamped to
// [0, d] and [0, n₂·W·d], the range honest devices' terms keep (estimate/heterogeneity.h): under
// DIST that is what bounds one device's masked words.
//
// Declaration (task_plan.h's common fields, and):
//   kind "heterogeneity"; trust "none" (no noise, ε = δ = 0) or "dist" (trusted is refused: it
//   would need central noise on both stages' exact sums, which is not built);
//   epsilon, delta: the two stages together (dist);
//   heterogeneity: {dimension d (1..4096), p (1..64), max_weight W (4..10^6),
//                   stage2_id (1..2^31, not the task's own id)}.
// Both stages share min_clients, max_clients, threshold, the admission window, the phase time-out
// and deadline_seconds (stage 2's counted from its opening). Stage 2's secure-aggregation session
// id is derived from the seed like stage 1's, from another stream.
//
// Noise (dist): one scale per stage (the Task carries one `scale`), s_k = 1024/√(Δa² + Δb²) over
// the stage's two releases (calibrate_heterogeneity_skellam, FixedPointScales::kPerStage), and μ
// the smallest total whose four releases, composed in RDP, meet (ε, δ). Every device adds
// Sk(μ/threshold) to every entry in both stages, so any sum secure aggregation releases (≥
// threshold shares, or it aborts) carries ≥ Sk(μ). A device's ledger is charged each stage's RDP
// curve (sdk/client/contribution.h, device_spend), so the two stages cost it the composed ε, not
// the declared ε twice. σ of each release, √(2·n_k·λ)/s_k, is published with the stage-2 result.
// trust none uses the same scales (rounding ≤ 1/(2s) per entry and client).
//
// Stage 1's published result holds the released sum's words (int64) and stage 2 is derived from
// that result alone (plan_heterogeneity_stage2): a restarted server derives the same TaskData.
// Errors: std::invalid_argument naming the field (task declaration: heterogeneity.<field> ...);
// a stage-1 result that is not one (wrong kind, length, or a sum_sha256 that does not match its
// words) is std::invalid_argument too. Memory: O(d). Paper: 004 §4, Algorithm 1.
#ifndef FEDSTAT_HOST_TASKS_HETEROGENEITY_PLAN_H_
#define FEDSTAT_HOST_TASKS_HETEROGENEITY_PLAN_H_

#include <cstdint>
#include <string>

#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"

namespace fedstat {
namespace host {

// Stage 1: fills plan.task's heterogeneity parameters, the estimator and the chained stage 2
// (next_task_id, next_stage). plan.task's common fields are plan_task's, already checked.
void plan_heterogeneity(const nlohmann::json& declaration, const std::string& base_dir,
                        uint64_t noise_seed, TaskPlan& plan);

// Stage 2, from the declaration and stage 1's published result (its JSON), opening at
// `opened_unix_seconds`; `signed_sessions` as stage 1 was planned (plan_task).
TaskPlan plan_heterogeneity_stage2(const nlohmann::json& declaration, const std::string& base_dir,
                                   uint64_t noise_seed, const nlohmann::json& stage1_result,
                                   uint64_t opened_unix_seconds, bool signed_sessions = false);

// Stage 2's Task as devices receive it, from the declaration alone (plan_heterogeneity_stage2's
// task; only its TaskData, the means, needs stage 1's result): what a device checks and is
// charged for before stage 1 has run (the Python module's TaskPolicy.check).
fedstat_v1_Task heterogeneity_stage2_task(const nlohmann::json& declaration,
                                          const std::string& base_dir,
                                          uint64_t opened_unix_seconds);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TASKS_HETEROGENEITY_PLAN_H_
