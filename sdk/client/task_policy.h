/// @file
/// TaskPolicy: what the app lets its Client take part in, whatever the server asks. The server
/// names a task's trust model and its (ε, δ); without a policy the device would obey any of them
/// — answer a trust-NONE task with exact words, or a TRUSTED task declared at ε = 1e-9 whose
/// exact words the ledger would then pay almost nothing for, again and again. The Client checks
/// every offered task against its ClientConfig::task_policy right after validate_task
/// (contribution.h), before it reads the TaskData, charges the ledger or computes anything, and
/// declines a task outside it (TaskReply.reason POLICY; SessionResult::kDeclinedPolicy, the rule
/// in SessionOutcome::policy_refusal).
///
/// The rules, in the order they are checked (the first that fails is the one reported):
///   0. task kind    the task's kind is one of answered_kinds (kAnswer* bits). Default: every
///                   kind. Checked first, on the Task alone: the charge is not even computed.
///                   Why an app narrows it: a decline that depends on the app's data — it holds
///                   none for the kind (NO_DATA), or none that fits — comes after the ledger is
///                   charged and keeps the charge (client.h, check 7: a free one would let a server
///                   read the data off declines). So a server can drain the budget of a device
///                   that never holds, say, model-update examples by offering it model-update
///                   tasks: it pays each one's ε and answers none (four DIST tasks at ε 2.5 use up
///                   the default ε 10, and the device then declines, BUDGET_EXHAUSTED, the task it
///                   does hold data for; second review of issue 39, B1). The set of kinds is
///                   configuration, not data, so declining by it is free and tells the server
///                   only what the app chose: an app that never answers a kind says so here and
///                   is not drained through it. An app whose data for a kind comes and goes (a
///                   histogram filled by usage) cannot avoid the charge that way — its budget
///                   window, max_epsilon and the ledger's budget are what bound the drain then.
///   1. trust model  the task's trust model is one of accepted_trust (kAccept* bits). Default:
///                   TRUSTED, TAGG and DIST; NONE is off — an app that wants to answer
///                   unprotected tasks (a demo, a baseline) opts in with kAcceptNone.
///   2. ε ceiling    the ε the ledger would be charged for the task (policy_charge: device_spend's
///                   ε, which for DIST tasks and data-shift tasks with local noise can exceed the
///                   declared ε; a DIST heterogeneity stage's RDP curve converted at the task's δ;
///                   DIST at the shares assumed honest, assumed_honest_shares below)
///                   is at most max_epsilon. Default 10: beyond it a guarantee means little (an
///                   output's likelihood may change e^10 ≈ 22,000-fold), and it is above every
///                   charge of the example fleet's tasks (examples/fleet/tasks.json).
///   3. δ ceiling    the δ charged is at most max_delta. The issue asked for "the smallest δ the
///                   device accepts": read as the weakest δ the app tolerates — a larger δ is a
///                   weaker guarantee, so a task above the bound is refused. Default 1e-5 (δ is a
///                   probability that the ε guarantee fails outright; 1e-5 is the usual ceiling,
///                   and the examples' tasks declare 1e-5 or less).
///   4. ε floor      a TRUSTED or TAGG task — the server (or the TAgg's collector) sees this
///                   device's words, exact unless the kind adds local noise — is charged at least
///                   min_exact_epsilon. The floor bounds how many such tasks a ledger pays for:
///                   budget / floor per window (the ledger's default budget ε = 1: 10). Default
///                   0.1: an honest central-noise task below it is rare (noise ten times the
///                   sensitivity), while a server declaring ε = 1e-9 would otherwise collect exact
///                   words indefinitely. DIST tasks are exempt (their charge is what the device's
///                   own noise guarantees), and so are NONE tasks (rule 1 governs them).
/// NONE tasks are charged nothing (ε = δ = 0), so rules 2–4 never refuse one (rule 0 may).
///
/// The charge of a DIST task depends on how many of the noise shares in a released sum the app
/// assumes come from honest devices (assumed_honest_shares, this device's own included): the
/// device is charged — and rule 2 weighs — the ε of Sk(λ·h), h = min(threshold, assumed), λ the
/// task's per-device share (device_spend(task, kinds, assumed), contribution.h).
///   * 0 (the default): h = threshold. Bonawitz et al.'s semi-honest model: secure aggregation
///     releases no sum with fewer than threshold shares, and every one of them is honest. The
///     server calibrates λ for that (λ = μ/threshold), so an honest task costs its declared ε.
///   * 1: only this device's own share. Right against a server that fields devices of its own:
///     it issues every device's PSK, so per-device credentials do not stop it from enrolling
///     threshold − 1 devices that add no noise; nor do they stop participants that collude with
///     it from subtracting their shares. The charge is then the ε of Sk(λ), far above the
///     declared ε when λ was calibrated for many shares (λ = μ/threshold: a KL task declared at
///     ε = 5 with threshold 501 costs ≈ 670), and rule 2 declines such a task unless λ alone is
///     large, i.e. unless the server asks each device for noise enough on its own (local-DP-sized
///     shares, whose sum a fleet then pays for in accuracy).
///   * k in between: the app trusts k shares, e.g. its own and those of k − 1 devices it believes
///     independent of the server.
///   * t − c, against a lying server with credentials (signed sessions): the devices' rules keep
///     the sum masked with up to c = ⌈γ·max_clients⌉ colluders (γ = min_assumed_corrupt_ppm or
///     the task's larger declared fraction), but such a server can keep U3 at exactly t members
///     of which c are its colluders, which add no noise — the released sum then carries t − c
///     honest shares. The default charge does not count them out (not built); an app that assumes
///     a lying server sets this to t − c for the tasks it accepts (docs/protocol.md, "Privacy
///     accounting's assumptions"; e.g. signed sparse, max_clients 1,000, t 75: 25).
/// The trade-off: a smaller h protects the device against a dishonest server and colluders, at
/// the price of declining (or paying far more for) the DIST tasks an honest server calibrates for
/// threshold shares. Nothing on the device can tell which kind of server it talks to, so this is
/// the app's choice, not the SDK's; the default keeps the semi-honest model fedstat-server's
/// calibration assumes.
///
/// The secure-aggregation graph of a sparse DIST task (SecAgg+, sdk/secagg/graph.h): the task
/// names its degree k and threshold t and the threat model the server chose them for — a dropout
/// rate δ and a corrupt fraction γ (Task.secagg_dropout_ppm, secagg_corrupt_ppm). A server that
/// declares δ = γ = 0 could pick a tiny neighbourhood and a low threshold, which a few corrupt
/// neighbours then unmask. So the device judges (k, t) itself (validate_task with a floor,
/// contribution.h: secagg::check_sparse_graph at max(declared, floor) for each rate) and declines
/// (REFUSED) a graph that does not hold at least at min_assumed_dropout_ppm and
/// min_assumed_corrupt_ppm. Default 50,000 ppm each (5 %): what fedstat-server declares by
/// default ("dropout_rate", "corrupt_fraction": host_server/tasks/task_plan.h), and the rates of
/// Bell et al.'s own parameter tables; a fleet that expects more dropouts or more compromised
/// devices raises them (the device then needs a larger neighbourhood or a higher threshold), and
/// 0 trusts the task's declaration. Each must be below 10^6 (and γ + 2δ ≤ 0.9, or no sparse graph
/// passes: every sparse task is then declined; the complete graph is unaffected).
///
/// @memory sizeof(TaskPolicy) (48 bytes on a 64-bit host and on a Cortex-M) in ClientConfig; the
/// checks use no memory beyond a few doubles on the stack.
/// @paper none (device-side policy around 000–004's trust models).
#ifndef FEDSTAT_SDK_CLIENT_TASK_POLICY_H_
#define FEDSTAT_SDK_CLIENT_TASK_POLICY_H_

#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/client/task_kinds.h"

namespace fedstat {
namespace client {

/// TaskPolicy::accepted_trust bit of trust model TRUSTED (the server adds the noise).
constexpr uint32_t kAcceptTrusted = 1u << 0;
/// ... of TAGG (a trusted aggregator adds the noise; the collector sees exact words).
constexpr uint32_t kAcceptTagg = 1u << 1;
/// ... of DIST (the device adds its Skellam share; secure aggregation hides its words).
constexpr uint32_t kAcceptDist = 1u << 2;
/// ... of NONE (no privacy: exact words, nothing charged). Off by default.
constexpr uint32_t kAcceptNone = 1u << 3;
/// The default accepted_trust: every private trust model.
constexpr uint32_t kAcceptPrivate = kAcceptTrusted | kAcceptTagg | kAcceptDist;
/// Every trust model (a demo or test fleet that also answers NONE tasks).
constexpr uint32_t kAcceptAll = kAcceptPrivate | kAcceptNone;

/// TaskPolicy::answered_kinds bit of DATA_SHIFT tasks (1 << fedstat_v1_TaskKind_DATA_SHIFT).
constexpr uint32_t kAnswerDataShift = 1u << fedstat_v1_TaskKind_DATA_SHIFT;
/// ... of KL_ANSWERS tasks.
constexpr uint32_t kAnswerKlAnswers = 1u << fedstat_v1_TaskKind_KL_ANSWERS;
/// ... of HETEROGENEITY tasks (both stages).
constexpr uint32_t kAnswerHeterogeneity = 1u << fedstat_v1_TaskKind_HETEROGENEITY;
/// ... of MODEL_UPDATE tasks.
constexpr uint32_t kAnswerModelUpdate = 1u << fedstat_v1_TaskKind_MODEL_UPDATE;
/// The default answered_kinds: every kind.
constexpr uint32_t kAnswerAllKinds =
    kAnswerDataShift | kAnswerKlAnswers | kAnswerHeterogeneity | kAnswerModelUpdate;

/// What the app accepts (the file description has each rule and why its default).
struct TaskPolicy {
  uint32_t accepted_trust = kAcceptPrivate;  ///< kAccept* bits; at least one, no others
  double max_epsilon = 10;                   ///< largest ε charged for one task; finite, > 0
  double max_delta = 1e-5;                   ///< largest δ charged for one task; in [0, 1)
  /// Smallest ε a TRUSTED or TAGG task may be charged; finite, in [0, max_epsilon].
  double min_exact_epsilon = 0.1;
  /// DIST: how many noise shares (this device's own included) the app assumes honest in a
  /// released sum; the charge is the ε of Sk(λ·min(threshold, this)). 0: the task's threshold
  /// (the semi-honest model); 1: only the device's own share (see above). Any value.
  uint32_t assumed_honest_shares = 0;
  /// kAnswer* bits: the task kinds the app answers (rule 0); at least one, no others. Default
  /// every kind; an app that never holds a kind's data leaves it out (see above).
  uint32_t answered_kinds = kAnswerAllKinds;
  /// DIST, sparse graph: the least dropout rate (ppm) the device judges the task's (k, t) at —
  /// max(Task.secagg_dropout_ppm, this) (see above). < 10^6; default 5 %.
  uint32_t min_assumed_dropout_ppm = 50000;
  /// DIST, sparse graph: the least corrupt fraction (ppm) the device judges (k, t) at —
  /// max(Task.secagg_corrupt_ppm, this). < 10^6; default 5 %.
  uint32_t min_assumed_corrupt_ppm = 50000;
};

/// Which rule of a TaskPolicy declined a task (SessionOutcome::policy_refusal).
enum class PolicyRefusal : uint8_t {
  kNotRefused = 0,         ///< the policy accepts the task (or no task was checked)
  kTrustModel = 1,         ///< rule 1: its trust model is not in accepted_trust
  kEpsilonAboveMax = 2,    ///< rule 2: its ε charge exceeds max_epsilon
  kDeltaAboveMax = 3,      ///< rule 3: its δ charge exceeds max_delta
  kExactEpsilonBelow = 4,  ///< rule 4: a TRUSTED/TAGG task charged below min_exact_epsilon
  kTaskKind = 5,           ///< rule 0: its kind is not in answered_kinds (checked first)
};

/// The kAccept* bit of a trust model as the wire delivered it (0 for an unknown one).
uint32_t trust_bit(int64_t trust);

/// The kAccept* bits of a comma-separated list of trust model names — "trusted", "tagg", "dist",
/// "none", or "all" — as the tools' --accept-trust flags and the firmware's provisioning take it
/// (e.g. "none,dist").
/// @errors kInvalidArgument: a null or empty list, an empty item or an unknown name.
Result<uint32_t> parse_accepted_trust(const char* list);

/// The kAnswer* bits of a comma-separated list of task kind names — "data_shift", "kl",
/// "model_update", "heterogeneity", or "all" — as fedstat-sim's --answer-kinds takes it (e.g.
/// "kl,data_shift").
/// @errors kInvalidArgument: a null or empty list, an empty item or an unknown name.
Result<uint32_t> parse_answered_kinds(const char* list);

/// Whether `policy` answers tasks of `kind` (the wire's number): rule 0. An unknown kind: false.
/// @errors none.
bool answers_kind(const TaskPolicy& policy, int64_t kind);

/// OK when `policy` is well formed.
/// @errors kInvalidArgument, naming the field: accepted_trust is 0 or holds a bit other than
/// kAccept*; max_epsilon NaN, infinite or ≤ 0; max_delta NaN or outside [0, 1);
/// min_exact_epsilon NaN, infinite, negative or above max_epsilon; answered_kinds 0 or holding a
/// bit other than kAnswer*; min_assumed_dropout_ppm or min_assumed_corrupt_ppm ≥ 10^6.
Status validate_task_policy(const TaskPolicy& policy);

/// What a ledger charge of `spend` costs alone, as (ε, δ): its ε and δ, plus, for a spend that
/// carries an RDP curve, that curve converted at the task's δ (the best of privacy::
/// kLedgerOrders, 002 Lemma 1) and that δ. A curve that gives no finite ε there (task_delta
/// outside (0, 1)) costs ε = +∞.
struct PolicyCharge {
  double epsilon = 0;  ///< ε charged
  double delta = 0;    ///< δ charged
};
/// See PolicyCharge.
/// @errors none (an unconvertible curve is ε = +∞, which rule 2 refuses).
PolicyCharge policy_charge(const DeviceSpend& spend, double task_delta);

/// The first of rules 1–4 of `policy` that refuses a task of trust model `trust` (the wire's
/// number) whose charge is `charge`; kNotRefused when none does (rule 0, on the kind, is
/// answers_kind: the Client checks it first, before the charge is computed). `policy` must be
/// valid (validate_task_policy).
/// @errors none (a NaN charge is refused by rule 2 or 3).
PolicyRefusal check_task_policy(const TaskPolicy& policy, int64_t trust,
                                const PolicyCharge& charge);

/// A sentence naming the rule (static storage), for logs and the app's detail.
/// @errors none ("" never: an unknown value says so).
const char* policy_refusal_text(PolicyRefusal refusal);

}  // namespace client
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CLIENT_TASK_POLICY_H_
