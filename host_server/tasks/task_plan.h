// Task plans: from a task's declaration (the server's config file, JSON) to what the rounds need —
// the Task message every device receives, the task's data words (TaskData), and the estimator
// that turns the fleet's summed contribution into the published result. One place per task kind
// that knows both halves of the layout in docs/protocol.md ("Contributions").
//
// Declaration (JSON object; every field checked, each error names the field; an unknown field is
// refused, at the top level and in the kind's block, naming it and its block; so is the block of
// a kind other than the task's, which would never be read):
//   id (1..2^31), kind ("data_shift" | "kl" | "model_update" | "heterogeneity"), trust ("none" |
//   "trusted" | "dist" | "tagg" (kl only: host_server/tagg/)), epsilon, delta (the release's
//   privacy; what each device's ledger is charged), min_clients ≥ 2, max_clients ≥ min_clients (≤
//   1024; dist with the sparse graph ≤ 10^7, secagg::kMaxSparseClients), threshold (trusted,
//   tagg, none: default ⌈2·min/3⌉, in [2, min_clients]; dist: below), deadline_seconds,
//   admission_seconds, phase_timeout_seconds, reconnect_grace_seconds (dist: after a server
//   restart, how long a running secure aggregation waits for its members to reconnect before it
//   treats those that have not as dropouts; default min(30, phase_timeout_seconds), at most
//   phase_timeout_seconds), seed (64 hex digits: the 256-bit task seed), and one
//   object per kind (below).
// DIST, the secure-aggregation graph (sdk/secagg/graph.h; docs/protocol.md, "The sparse graph"):
//   graph            "complete": every device shares keys and secrets with every other (Bonawitz
//                    et al. 2017): max_clients ≤ 1024, a device's roster is max_clients entries;
//                    threshold default max(⌈2·min/3⌉, ⌊(max + ⌈0.05·max⌉)/2⌋ + 1) within
//                    min_clients (the second term: what signed sessions need, 2t > max +
//                    ⌈γ·max⌉ at the devices' 5 % corrupt floor), 2 ≤ threshold ≤ min_clients
//                    and more than half of max_clients.
//                    "sparse": SecAgg+ (Bell et al. 2020): each device shares with its k ring
//                    neighbours only, (k, t) = secagg::choose_sparse_graph(max_clients, threat
//                    model) (sdk/secagg/graph_parameters.h: the smallest k whose Harary graph is
//                    private except with probability 2^−40 and completes except with 2^−30); a
//                    declared threshold must pass secagg::check_sparse_graph at that k (refused
//                    with the passing range otherwise) and be ≤ min_clients. A signed server
//                    (ca_public_key) plans secagg::choose_signed_sparse_graph instead, which
//                    also meets the devices' 2t > k + ⌈γ·max_clients⌉ (plan_task below): n =
//                    500 (60, 43), 1,000 (98, 75), none above 1,420. A device's roster
//                    is k + 1 entries whatever max_clients; it is charged δ + 2^−40.
//                    Default: "sparse" when k + 1 ≤ max_clients / 8, and always above 1024; else
//                    "complete". At the default rates that is max_clients ≥ 392 (k = 48, t = 33;
//                    k = 62 at 1,000, 74 at 10^4, 80 at 10^5: graph_parameters.h). Why not
//                    sooner: the sparse graph cuts a device's roster (its memory, 144 bytes an
//                    entry, its key agreements and its shares) and the server's stored shares
//                    from n² to n·(k + 1), but its threshold is t ≈ 0.7·k instead of more than
//                    n/2, and a DIST task's noise is calibrated for threshold shares (each device
//                    adds Sk(μ/t)), so the released sum carries about n/t·μ instead of at most
//                    2μ: at max_clients 392 its standard deviation is ≈ 2.4× the complete
//                    graph's (at 1,000: ≈ 3.4×), plus 2^−40 in δ and protocol-4 devices only.
//                    Below an eightfold saving the complete graph's cost (a 300-device round:
//                    58 kB sent per device, issue 40) is worth its accuracy; above it, and
//                    wherever a device's memory is small (a Cortex-M4 holds a few hundred
//                    roster entries), declare "sparse". Sparse tasks are offered to protocol-4
//                    devices only (coordinator.h).
//   dropout_rate     the fraction of devices that may drop out during the round, δ (default
//                    0.05); corrupt_fraction, the fraction the adversary may control, γ (default
//                    0.05). Each in [0.05, 1): a device judges a sparse graph at max(declared,
//                    its floor) — 0.05 for the SDK's default TaskPolicy (min_assumed_dropout_ppm,
//                    min_assumed_corrupt_ppm) — so a graph chosen for less would be declined; and
//                    γ + 2δ ≤ 0.9. They choose (k, t) and travel in the Task (secagg_dropout_ppm,
//                    secagg_corrupt_ppm) for the sparse graph; the complete graph ignores them
//                    (its Task is the one protocol-3 devices know: degree and rates 0).
// graph, dropout_rate and corrupt_fraction are refused outside trust "dist".
// The kinds' blocks:
//   data_shift: {rows, width, heap_capacity, k, domain, local_epsilon, reference (item-count
//               file)} — D_TV between the fleet's distribution and the reference's, from the
//               summed counters with candidates [0, domain) (001 §4.3–4.6). Privacy comes from
//               the stability histogram on each device (local_epsilon > 0, δ = 1e-6): epsilon
//               and delta must then equal (local_epsilon, 1e-6); with local_epsilon = 0 the task
//               must be trust "none".
//               trust "dist" (issue 41, estimate/dist_shift.h): {buckets (B, default 40,960 =
//               160 KiB of 32-bit words, in [1, 2^22]), max_events (m, default 0 = item level),
//               reference} — no sketch (its fields are refused, naming each). Each device sends
//               its counts folded into B public buckets by the task seed (at most m events when
//               m > 0), each clamped to ⌊(2^31 − 1)/max_clients⌋, plus one Pólya share per bucket
//               of a discrete Laplace of scale T = Δ/ε (Δ = max(1, m); T ≤ 10^4, else refused)
//               split noise_shares = threshold ways; bits 32, vector_length B. With the
//               threshold's shares honest a released sum carries one full discrete Laplace(T) per
//               bucket and the device is charged exactly ε (pure DP; delta may be 0). Estimate:
//               signed_sum of the fleet's words against the reference's exact buckets,
//               estimate_hashed_tv ("estimate" null with "refused" when the fleet's side holds
//               no positive bucket).
//   kl:         {reference (item-count file Π), rounds T, lambda, tau} — PRIEST-KLD D_KL(Π‖P)
//               (000 Algorithms 1–3). trusted: exact counts, central Gaussian noise on the host;
//               tagg: exact counts summed by the collector, noised by the TAgg (kl_estimator.h's
//               tagg model; the collector never runs this plan's estimator);
//               dist: each device adds Sk(μ/threshold) to its counts, so every sum that secure
//               aggregation releases (≥ threshold shares, or the round aborts) carries ≥ Sk(μ).
//   model_update: {dimension, epochs, batches, averaging_interval, eta0, mu, clip_norm, rotate,
//               gamma, beta, bits (≤ 32), examples_per_client, initial_model (optional, zeros),
//               evaluation (optional CSV of held-out examples)} — one round of Sk-RSGD-AR
//               logistic regression (002 Algorithm 1): the new global model w + dequantise(Σ)/N,
//               and its loss and accuracy ("estimate") on the evaluation set. Trust none or dist
//               (each device adds Sk(λ), λ calibrated for threshold shares); trusted is refused.
//               Details: model_update_plan.h.
//   heterogeneity: two chained tasks, D, Q and I² (host_server/tasks/heterogeneity_plan.h).
// Relative file names are resolved against `base_dir`. The field readers every plan shares are
// in declaration_fields.h.
//
// Errors: std::invalid_argument naming the field; std::runtime_error for unreadable files.
// Memory: the plan holds the task data (points: T words; model: d words) and the reference
// (data_shift: R·w counters, dist: B words; kl: Π's items; model_update: the evaluation set).
// Paper: 000 §4, 001 §4.3–4.6, 002 Algorithm 1.
#ifndef FEDSTAT_HOST_TASKS_TASK_PLAN_H_
#define FEDSTAT_HOST_TASKS_TASK_PLAN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "nlohmann/json.hpp"
#include "sdk/base/random_bits.h"

namespace fedstat {
namespace host {

// The estimator of one task: the fleet's sum (vector_length words, modulo 2^bits) and the number
// of devices it sums, to the published result, drawing its central noise (kl trusted and tagg;
// the other estimators draw none) from `noise` and from nothing else — so the same sum, count and
// noise bits give the same result bytes. The rounds pass a stream of a seed they stored before
// estimating (rounds/task_round.h: one draw per aggregate, whatever restarts).
using NoisedEstimator = std::function<nlohmann::json(const std::vector<uint64_t>& sum,
                                                     uint32_t contributors, RandomBits& noise)>;
// The same with the plan's own noise source: `noise_seed` 0, the platform CSPRNG; otherwise a
// seeded stream (tests, the tools' evaluations, the TAgg's).
using TaskEstimator =
    std::function<nlohmann::json(const std::vector<uint64_t>& sum, uint32_t contributors)>;

struct TaskPlan {
  fedstat_v1_Task task = fedstat_v1_Task_init_zero;
  std::vector<uint64_t> data;  // TaskData words
  uint32_t admission_seconds = 30;
  uint32_t phase_timeout_seconds = 30;
  uint32_t reconnect_grace_seconds = 30;
  NoisedEstimator estimate_with;  // the estimator (a kind's planner sets this one)
  TaskEstimator estimate;         // estimate_with on the plan's own noise (plan_task sets it)
  // The non-private value the estimate estimates, over the fleet's whole data (`data_dir`, the
  // files fedstat-sim reads): for measurement only (the demo's "exact" column), never released
  // by the server. Null for a kind without one.
  std::function<double(const std::string& data_dir)> exact;
  // A chained kind (heterogeneity_plan.h): the task that follows this one, planned from this
  // task's published result alone (so a restarted server plans the same), opening then.
  uint32_t next_task_id = 0;
  // Planned for signed sessions (plan_task's signed_sessions): next_stage plans the same way.
  bool signed_sessions = false;
  std::function<TaskPlan(const std::string& result_json, uint64_t opened_unix_seconds)> next_stage;
};

// SHA-256 of the sum's words, little-endian, in hex. Results of none and dist tasks carry it as
// "sum_sha256", so a published result can be checked bit for bit against an in-process
// computation; trusted results never do (the exact aggregate's hash is not private).
std::string sum_digest(const std::vector<uint64_t>& sum);

// `estimate`, whose results also name their aggregate ("sum_sha256") when the aggregate is itself
// a release: noised by the devices (dist, or local DP) or no privacy claimed (none); trusted and
// tagg results never do. Every plan's estimator goes through it.
NoisedEstimator with_sum_digest(NoisedEstimator estimate, fedstat_v1_TrustModel trust);
// `estimate` drawing from the plan's own source: `noise_seed` 0, a CSPRNG (std::runtime_error
// when the platform has no entropy); otherwise SeededStream(noise_seed, stream 0).
TaskEstimator with_plan_noise(NoisedEstimator estimate, uint64_t noise_seed);

// `opened_unix_seconds`: when the task opens (its deadline is counted from it).
// The threshold a DIST task of `clients` devices gets when its declaration leaves the graph and
// threshold to the defaults (min_clients = max_clients = clients; 1 below 2 clients): what
// fedstat-tv's DIST emulation splits its noise by, as a real round would.
uint32_t default_dist_threshold(uint32_t clients);

// `signed_sessions`: the server signs DIST sessions (ServerConfig::ca_public_key; fedstat-sim
// with --credentials): a sparse graph's (k, t) is then secagg::choose_signed_sparse_graph's, which
// also meets the devices' rule 2t > k + ⌈γ·max_clients⌉ (sdk/secagg/signed_keys.h: the server
// fixes U1 knowing every ring position, so it can make every colluder one device's neighbour); a
// declared threshold that fails it, or a max_clients no degree ≤ 126 fits (above 1,420 at 5 %),
// is refused (std::invalid_argument naming the field and the rule).
TaskPlan plan_task(const nlohmann::json& declaration, const std::string& base_dir,
                   uint64_t opened_unix_seconds, uint64_t noise_seed = 0,
                   bool signed_sessions = false);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TASKS_TASK_PLAN_H_
