/// @file
/// Contribution: a task's checks and the device's contribution vector for each task kind — the
/// words docs/protocol.md ("Contributions: one integer vector per task kind") sums over devices.
///
///   DATA_SHIFT     (trust DIST: DATA_SHIFT DIST below.) R·w counters of a sketch::ShiftSketch
///                  (int64 as two's complement words,
///                  row-major), then the total. Seed = the task seed; R, w, H, k from the task; no
///                  pre-aggregation buffer. With local_epsilon > 0 the sketch is fed from the
///                  stability histogram (sdk/sketch/stability_histogram.h, δ = kStabilityDelta)
///                  of the app's histogram, drawn from `noise` — as host_server/estimate/
///                  client_emulation.cpp sketch_clients does. Only the items in [0, domain) (the
///                  estimator's candidates; domain in [1, kMaxDataShiftDomain]) are sketched,
///                  while the total counts every item (sketch_clients, for the tools, sketches
///                  all). bits 64; no Skellam share
///                  (device_noise_lambda must be 0), and no central noise on the server for any
///                  trust model, so local_epsilon must be > 0 unless the trust model is NONE.
///                  buckets, noise_scale, noise_shares and max_events must be 0.
///   DATA_SHIFT DIST  B = buckets words (sketch/hashed_histogram.h, docs/data_shift_dp.md): the
///                  app's counts folded into B public buckets under the task seed
///                  (sketch::add_bucket_counts; max_events m > 0 bounds the events added to m,
///                  m events drawn uniformly from the N), each bucket clamped to at most
///                  data_shift_dist_bucket_limit(task) = ⌊(2^(bits−1) − 1)/max_clients⌋ (the
///                  fleet's exact sum cannot wrap; clamping is 1-Lipschitz), plus one Pólya share
///                  NB(1/s, e^{−1/T}) − NB(1/s, e^{−1/T}) per bucket (sketch::add_polya_shares, T =
///                  noise_scale rounded up to a rational, s = noise_shares), mod 2^bits. No total
///                  (the server sums the buckets). rows, width, heap_capacity, k, domain and
///                  local_epsilon must be 0; buckets in [1, 2^22]; noise_scale finite, > 0 and
///                  ≤ noise::kMaxPolyaScale (10^4); noise_shares ≥ 1; bits 32 or 64;
///                  vector_length = buckets; data_words 0; device_noise_lambda 0. In its own
///                  object file, reached through kSecureAggregation (task_kinds.h).
///   KL_ANSWERS     TaskData = the query points (distinct, ascending, < 2^32, one word each); the
///                  counts at the points, then the total. DIST: each count plus a Skellam share of
///                  λ = device_noise_lambda (tasks::answer_kl_points_noised, as collect_kl_sums);
///                  other models: exact (tasks::answer_kl_points). bits 64.
///   MODEL_UPDATE   TaskData = the global model (d IEEE-754 doubles' bits); the report of
///                  tasks::model_update_report (rotation seed = the task seed, stream 0), words
///                  mod 2^bits (bits ≤ 32: computed as 32-bit words, widened); DIST adds the
///                  Skellam share λ = device_noise_lambda inside quantise.
///   HETEROGENEITY  the app's x ∈ [0,1]^d; stage 1: [x, w·x, w, 1/w] (2d + 2 words,
///                  tasks::heterogeneity_round1); stage 2: TaskData = the host's mean μ′ then its
///                  weighted mean μ̄′ (2d doubles' bits), [||x − μ′||_p^p, w·||x − μ̄′||²] (2 words,
///                  tasks::heterogeneity_round2). Each value v is sent as round(scale·v)
///                  (tasks::encode_fixed_point, int64 as two's complement; one scale for every
///                  entry); DIST adds a Skellam share of λ = device_noise_lambda to every entry
///                  (noise::add_noise). bits 64; scale·max(W, 1)·d must stay below 2^62.
/// Noise (the stability histogram, Skellam shares, the trainer's shuffle) is drawn from `noise`
/// in that order, so a SeededStream reproduces a report exactly.
/// Outside DIST the server refuses a report holding a word no honest device of the kind sends
/// (host_server/tasks/report_bounds.h: KL counts above the device's total, alone or summed; a
/// sketch row that needs more items than the total, each counter at least |counter| / the
/// heaviest candidate's weight there; an update beyond the quantiser's L2 reach; a heterogeneity
/// entry outside the fixed-point range of [0, 1]); these builders never leave those bounds, so an
/// honest device needs neither to clip nor to decline for them.
///
/// Each kind lives in its own file (contribution_<kind>.cpp) as a TaskKindSupport
/// (task_kinds.h). The functions below without a TaskKinds serve every kind (all_task_kinds());
/// the overloads with one serve only the kinds it names, which is how a Client built for some
/// kinds keeps the others out of the firmware image.
///
/// Checks (validate_task, before anything is computed): every field the kind reads, each failure
/// kInvalidArgument with a message naming the field — task_id 0 (the ledger keeps 0 for spends of
/// no task, so a task 0 would escape the check for a task already paid for, client.h check 3),
/// ε, δ, λ NaN/negative/infinite or not allowed
/// for the trust model, a seed that is not 32 bytes, bits outside the kind's, vector_length other
/// than the kind's formula, data_words other than the kind's, sketch or trainer parameters the SDK
/// refuses, a DATA_SHIFT task of a private trust model (TRUSTED, TAGG) with local_epsilon 0
/// (exact counters nobody noises), a MODEL_UPDATE or HETEROGENEITY task of trust TRUSTED or TAGG
/// (no server adds central noise to them — host_server/tasks/model_update_plan.cpp and
/// heterogeneity_plan.cpp refuse those trust models, a TAgg noises KL only — so only a dishonest
/// server would offer one: it would collect exact words), the secure-aggregation graph of a DIST
/// task (below), secagg_degree or the threat model's rates non-zero outside DIST.
/// kUnimplemented: an unknown kind or trust model.
/// The graph (Task.secagg_degree, sdk/secagg/graph.h), for DIST:
///   complete (degree 0)  2 ≤ t ≤ max_clients ≤ kMaxTaskClients (1024) and 2·t > max_clients;
///   sparse (degree k)    k even, 2 ≤ k ≤ secagg::kMaxGraphDegree, max_clients ≤
///                        secagg::kMaxSparseClients, 2 ≤ t ≤ k + 1 and 2·t > k + 1 (more than
///                        half of each secret's holders), and — the SecAgg+ bound —
///                        secagg::check_sparse_graph(max_clients, k, t, model) with model's rates
///                        max(declared, floor) (check_dist_graph);
///   both                 secagg_dropout_ppm and secagg_corrupt_ppm below 10^6.
/// The floor is the device's (TaskPolicy::min_assumed_dropout_ppm and min_assumed_corrupt_ppm,
/// task_policy.h; the Client passes them): a server declaring a rosy threat model cannot have
/// the device accept a graph its own assumptions find unsafe. The overloads without a floor
/// judge the graph at the declared rates alone (kNoGraphFloor) — a check that the task is
/// consistent with its declaration, which every floor only tightens. What the app accepts of a
/// valid task — its trust model, the (ε, δ) it is charged — is the Client's task policy
/// (task_policy.h), checked right after these.
///
///
/// @memory scratch_bytes(task, local_size) bytes of caller scratch (8-byte aligned), where
/// local_size is the app's histogram capacity (DATA_SHIFT) or example count (MODEL_UPDATE):
///   DATA_SHIFT   ⌈shift_sketch_memory_bytes(R, w, H)⌉₈ + (local_epsilon > 0 ? 8·local_size : 0)
///   DATA_SHIFT DIST  0 (the vector is built in place: the Client's 8·B bytes of contribution)
///   KL_ANSWERS   ⌈4·points⌉₈
///   MODEL_UPDATE 8·d + model_update_memory_bytes(local_size, d) + 8 + (bits ≤ 32 ? ⌈4·L⌉₈ : 0)
///   HETEROGENEITY 8·L + 8·data_words
/// (kSizeOverflow arithmetic, sdk/base/checked_size.h: a size past size_t is kResourceExhausted).
/// A sketch object (sizeof(sketch::ShiftSketch): 960 bytes on 64-bit hosts, 640 on the Cortex-M4)
/// and a noise sampler live on the stack while building.
/// @paper 001 Algorithm 1 and §4.7.1; 000 Algorithms 1–3; 002 Algorithm 1; 004 §3.1, §4.
#ifndef FEDSTAT_SDK_CLIENT_CONTRIBUTION_H_
#define FEDSTAT_SDK_CLIENT_CONTRIBUTION_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/client/client_data.h"
#include "sdk/client/task_kinds.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/secagg/graph_parameters.h"
#include "sdk/tasks/logistic_trainer.h"
#include "sdk/tasks/model_update_task.h"

namespace fedstat {
namespace client {

/// The δ of the local stability histogram (the host tools use the same).
constexpr double kStabilityDelta = 1e-6;
/// Largest DATA_SHIFT domain (candidate ids [0, domain)), as the host's estimator allows.
constexpr uint32_t kMaxDataShiftDomain = uint32_t{1} << 24;
/// Largest DIST round (max_clients) of the complete graph (the roster bitmap's limit); a sparse
/// graph allows up to secagg::kMaxSparseClients.
constexpr uint32_t kMaxTaskClients = 1024;
/// The δ a sparse DIST task adds to the device's charge: SecAgg+'s guarantee fails with
/// probability at most 2^−σ, σ = secagg::SecAggThreatModel().security_bits = 40
/// (graph_parameters.h).
constexpr double kSparseGraphFailureDelta = 0x1p-40;
static_assert(secagg::SecAggThreatModel{}.security_bits == 40,
              "kSparseGraphFailureDelta is 2^-sigma at the default sigma");
/// A floor of zero rates (the default σ and η): the graph judged at the task's declared rates
/// alone.
constexpr secagg::SecAggThreatModel kNoGraphFloor = [] {
  secagg::SecAggThreatModel model;
  model.dropout_ppm = 0;
  model.corrupt_ppm = 0;
  return model;
}();

/// An enum field as the wire delivered it: nanopb stores any number there, and reading an
/// out-of-range value through the enum type is undefined, so the bytes are copied out instead.
template <typename Enum>
int64_t wire_enum_value(const Enum& field) {
  typename std::underlying_type<Enum>::type value;
  memcpy(&value, &field, sizeof(value));
  return static_cast<int64_t>(value);
}

/// True when the task's contribution is summed by secure aggregation (trust model DIST).
inline bool is_dist(const fedstat_v1_Task& task) {
  return task.trust == fedstat_v1_TrustModel_DIST;
}

/// Every field check of the file description (Checks); OK when the task can be computed.
/// @errors kUnimplemented: an unknown kind or trust model. kInvalidArgument: any other field
/// check fails; the message names the field.
Status validate_task(const fedstat_v1_Task& task);
/// validate_task for a Client built with `kinds`.
/// @errors validate_task's; kUnimplemented also when the task's kind is not among `kinds`, or the
/// task is DIST and they hold no secure aggregation.
Status validate_task(const fedstat_v1_Task& task, const TaskKinds& kinds);
/// validate_task(task, kinds) with a sparse graph judged at `floor`'s rates where they exceed
/// the task's (the Client passes its TaskPolicy's min_assumed_*_ppm; σ and η are floor's).
/// @errors validate_task(task, kinds)'s; kInvalidArgument also when check_dist_graph refuses the
/// graph at that floor.
Status validate_task(const fedstat_v1_Task& task, const TaskKinds& kinds,
                     const secagg::SecAggThreatModel& floor);
/// The SecAgg+ bound of a DIST task's sparse graph (OK for the complete graph and outside DIST):
/// secagg::check_sparse_graph(max_clients, secagg_degree, threshold, model), model = `floor`
/// with each rate raised to the task's declared one. Reads the fields only: validate_task calls
/// it after the shape checks.
/// @errors kInvalidArgument with check_sparse_graph's message, which names the condition that
/// fails: the degree too small for max_clients (raise it), the threshold outside the passing
/// range (sparse_threshold_range gives it), max_clients ≤ degree + 1 (use the complete graph),
/// or a threat model no graph withstands (γ + 2δ > 0.9).
Status check_dist_graph(const fedstat_v1_Task& task, const secagg::SecAggThreatModel& floor);
/// MODEL_UPDATE: the trainer and quantiser configuration the device runs (rotation seed = the
/// task seed, stream 0; modulus_bits = Task.bits) — what the host calibrates λ with and
/// dequantises by. Reads the fields only: validate_task checks them.
tasks::ModelUpdateConfig model_update_config(const fedstat_v1_Task& task);
/// L = vector_length as the kind's formula gives it (validates the task first).
/// @errors validate_task's errors (kInvalidArgument naming the field, kUnimplemented for an unknown
/// kind or trust model).
Result<size_t> contribution_length(const fedstat_v1_Task& task);
/// The TaskData's content, before anything is charged or computed: KL points distinct, ascending
/// and < 2^32; a global model or host means of finite doubles.
/// @errors validate_task's errors (kInvalidArgument naming the field, kUnimplemented for an unknown
/// kind or trust model). kInvalidArgument: `data` is not data_words words, KL points that are not
/// distinct ascending ids below 2^32, or a model or mean holding a NaN or an infinity.
Status validate_task_data(const fedstat_v1_Task& task, Span<const uint64_t> data);
/// validate_task_data with validate_task(task, kinds).
/// @errors validate_task_data's (kInvalidArgument for the data), with validate_task(task,
/// kinds)'s in place of validate_task's (also kUnimplemented for a kind or DIST `kinds` lacks).
Status validate_task_data(const fedstat_v1_Task& task, Span<const uint64_t> data,
                          const TaskKinds& kinds);
/// The app's MODEL_UPDATE examples against a task validate_task accepted (it reads the
/// model_update parameters): examples of dimension d that pass tasks::check_examples, and at
/// least as many per batch as calibrated.
/// @errors kInvalidArgument: the task has no batches, another dimension, or check_examples
/// refuses them (labels, finite features of norm ≤ 1, count·d). kFailedPrecondition: fewer examples
/// per batch than examples_per_client gives (model_update_report would refuse).
Status validate_examples(const fedstat_v1_Task& task, const tasks::Examples& examples);
/// The app's HETEROGENEITY vector against a task validate_task accepted: d numbers in [0, 1].
/// @errors kInvalidArgument: `x` does not have the task's dimension, or a coordinate is outside
/// [0, 1] or NaN.
Status validate_unit_vector(const fedstat_v1_Task& task, Span<const double> x);
/// The caller scratch a task needs while building (the formula of the file description).
/// @errors validate_task's errors (kInvalidArgument naming the field, kUnimplemented for an unknown
/// kind or trust model). kResourceExhausted: the size does not fit in size_t.
Result<size_t> scratch_bytes(const fedstat_v1_Task& task, size_t local_size);
/// scratch_bytes with validate_task(task, kinds).
/// @errors scratch_bytes's (kResourceExhausted past size_t), with validate_task(task, kinds)'s in
/// place of validate_task's (also kUnimplemented for a kind or DIST `kinds` lacks).
Result<size_t> scratch_bytes(const fedstat_v1_Task& task, size_t local_size,
                             const TaskKinds& kinds);

// The builders: `out` holds contribution_length(task) words; `scratch` scratch_bytes(...) bytes,
// 8-byte aligned. On an error `out` holds no complete contribution: discard it. Each checks the
// task's kind first: a task of another known kind is kInvalidArgument ("not a ... task") before
// validate_task's errors.
/// DATA_SHIFT: the R·w counters of a ShiftSketch of `local`'s items in [0, domain) (through the
/// stability histogram when local_epsilon > 0, drawn from `noise`), then the total of all its
/// items. `out` holds contribution_length(task) words, `scratch` scratch_bytes(task,
/// local.capacity()) bytes; on an error `out` holds no complete contribution: discard it.
/// A DIST task is kInvalidArgument here (build_data_shift_dist builds it).
/// @errors validate_task's errors (kInvalidArgument naming the field, kUnimplemented for an unknown
/// kind or trust model). kInvalidArgument: not a DATA_SHIFT task, a DIST one, or `out` is not
/// vector_length words. kResourceExhausted: `scratch` is smaller than scratch_bytes. Any error of
/// stability_histogram, i.e. of `noise`'s random source (e.g. kUnavailable).
Status build_data_shift(const fedstat_v1_Task& task, const histogram::SparseHistogram& local,
                        RandomBits& noise, MutableByteSpan scratch, Span<uint64_t> out);
/// DATA_SHIFT of trust DIST: `local`'s counts in the task's buckets (at most max_events events),
/// each clamped to data_shift_dist_bucket_limit(task), plus one Pólya share per bucket drawn from
/// `noise`, mod 2^bits (the file description). No scratch. On an error discard `out`.
/// @errors validate_task's errors for a DIST data-shift task (kInvalidArgument naming the field,
/// kUnimplemented for an unknown kind or trust model; a task of another trust model is
/// kInvalidArgument: build_data_shift builds it). kInvalidArgument: not a DATA_SHIFT task, or
/// `out` is not vector_length words. The random source's errors (e.g. kUnavailable).
Status build_data_shift_dist(const fedstat_v1_Task& task, const histogram::SparseHistogram& local,
                             RandomBits& noise, Span<uint64_t> out);
/// The most one device puts in a bucket of a DIST data-shift task before its noise:
/// ⌊(2^(bits−1) − 1)/max_clients⌋ (2^(bits−1) − 1 for max_clients 0, which validate_task
/// refuses). Reads the fields only.
uint64_t data_shift_dist_bucket_limit(const fedstat_v1_Task& task);
/// KL_ANSWERS: the counts of `local` at the query `points` (the TaskData), then the total; in
/// DIST each count carries a Skellam share of λ = device_noise_lambda drawn from `noise`. `out`
/// and `scratch` as build_data_shift; on an error discard `out`.
/// @errors validate_task's errors (kInvalidArgument naming the field, kUnimplemented for an unknown
/// kind or trust model). kInvalidArgument: not a KL task; `out` is not vector_length words;
/// `points` is not one word per point or not distinct ascending ids below 2^32.
/// kResourceExhausted: `scratch` is smaller than scratch_bytes. kOutOfRange: a count plus its
/// noise overflows int64. Any error of `noise`'s random source (e.g. kUnavailable).
Status build_kl_answers(const fedstat_v1_Task& task, const histogram::SparseHistogram& local,
                        Span<const uint64_t> points, RandomBits& noise, MutableByteSpan scratch,
                        Span<uint64_t> out);
/// MODEL_UPDATE: tasks::model_update_report of `examples` from the global model in `model_bits`
/// (the TaskData), words mod 2^bits (bits ≤ 32: computed as 32-bit words, widened); in DIST with
/// a Skellam share inside quantise. `out` and `scratch` as build_data_shift (scratch_bytes with
/// local_size = the example count); on an error discard `out`.
/// @errors validate_task's errors (kInvalidArgument naming the field, kUnimplemented for an unknown
/// kind or trust model). kInvalidArgument: not MODEL_UPDATE; `out` is not vector_length words;
/// `model_bits` is not d words or holds a NaN or an infinity; the examples have another
/// dimension; and model_update_report's kInvalidArgument cases. kResourceExhausted: `scratch`
/// is smaller than scratch_bytes. kFailedPrecondition: fewer examples per batch than
/// calibrated. kInternal: a quantiser rounding-bound bug. Any error of `noise`'s random source
/// (e.g. kUnavailable).
Status build_model_update(const fedstat_v1_Task& task, const tasks::Examples& examples,
                          Span<const uint64_t> model_bits, RandomBits& noise,
                          MutableByteSpan scratch, Span<uint64_t> out);

/// HETEROGENEITY: stage 1 [x, w·x, w, 1/w], stage 2 [||x − μ′||_p^p, w·||x − μ̄′||²] from the
/// host's `means` (the TaskData), each value sent as round(scale·v) as int64 words; in DIST every
/// entry carries a Skellam share of λ = device_noise_lambda drawn from `noise`. `out` and
/// `scratch` as build_data_shift; on an error discard `out`.
/// @errors validate_task's errors (kInvalidArgument naming the field, kUnimplemented for an unknown
/// kind or trust model). kInvalidArgument: not HETEROGENEITY; `out` is not vector_length words;
/// `means` is not data_words words or holds a NaN or an infinity; `x` is not d numbers in
/// [0, 1]. kResourceExhausted: `scratch` is smaller than scratch_bytes. kOutOfRange: a scaled
/// value does not fit 2^62, or a value plus its noise overflows int64. Any error of `noise`'s
/// random source (e.g. kUnavailable).
Status build_heterogeneity(const fedstat_v1_Task& task, Span<const double> x,
                           Span<const uint64_t> means, RandomBits& noise, MutableByteSpan scratch,
                           Span<uint64_t> out);

/// What the device's ledger is charged for `task`: what the device's noise guarantees under the
/// task's trust model, never less than the task declares (a server cannot under-charge a device
/// by declaring a small ε beside little noise):
///   NONE                        nothing (ε = δ = 0): the Client answers such a task only when the
///                               app's task policy accepts NONE (task_policy.h; off by default)
///   DATA_SHIFT, local_epsilon>0 at least (local_epsilon, kStabilityDelta): the stability histogram
///   DATA_SHIFT in DIST          ε at least Δ·(1/T + ln(1/r)), δ the task's (pure DP): Δ =
///                               2·max_events (1 when 0, item level: one event added or
///                               removed; user level: any two histograms of the device, m
///                               events moved from one bucket to another), T = noise_scale, r =
///                               min(1, h/noise_shares), h below — h ≥ s gives Δ/T exactly
///                               (sketch::hashed_histogram_epsilon, portable ln)
///   KL_ANSWERS in DIST          at least the ε of Sk(λ·h) — h = threshold, the least noise a
///                               released sum carries, since secure aggregation aborts below
///                               threshold shares (h: see below) — for the answers' sensitivity
///                               (each distinct point answered once: Δ1 = 2, Δ2 = √2; one point:
///                               1, 1), by the Skellam accountant
///   MODEL_UPDATE in DIST        at least the ε of Sk(λ·h) for the report's per-batch
///                               sensitivities (tasks::model_update_epsilon: the mixture accountant
///                               model_update_lambda inverts), at the task's δ
///   HETEROGENEITY in DIST       the RDP curve (at privacy::kLedgerOrders) of Sk(λ·h) on
///                               this stage's two releases, encoded at the task's scale
///                               (tasks::heterogeneity_encoded_sensitivities), with ε = δ = 0: the
///                               ledger adds it to the other stage's curve order by order, so the
///                               two stages together cost what the four releases composed in RDP
///                               give (the task's declared (ε, δ) is that pair's,
///                               host_server/tasks/ heterogeneity_plan.h), not the declared ε once
///                               per stage
///   otherwise                   the task's (ε, δ) (TRUSTED: the trusted server adds the noise)
///   + sparse DIST graph         δ + 2^−40 (kSparseGraphFailureDelta) on top of the line above,
///                               HETEROGENEITY's RDP spend included (its δ is then 2^−40, which
///                               the ledger counts beside the curve): SecAgg+ guarantees that
///                               no honest device's input is revealed and that the threshold
///                               holds in each neighbourhood only except with probability 2^−σ
///                               (σ = 40, Bell et al. 2020; sdk/secagg/graph_parameters.h)
/// Assumption of the DIST lines: h honest shares are in any released sum. These overloads take
/// h = threshold (Bonawitz et al.'s semi-honest server: the threshold shares come from honest
/// devices). The server issues every device's PSK, so it can field threshold − 1 devices of its
/// own that add no noise, and colluding participants can subtract their own shares: then only
/// this device's Sk(λ) is left. device_spend(task, kinds, assumed_honest_shares) charges
/// h = min(threshold, assumed) instead — the Client uses it with TaskPolicy::
/// assumed_honest_shares (task_policy.h); h = 1 is this device's own share alone.
/// @errors validate_task's errors (kInvalidArgument naming the field, kUnimplemented for an unknown
/// kind or trust model). kInvalidArgument: the Skellam accountant refuses the task (δ = 0 in DIST
/// KL or MODEL_UPDATE) or gives no finite ε or RDP.
Result<DeviceSpend> device_spend(const fedstat_v1_Task& task);
/// device_spend with validate_task(task, kinds).
/// @errors device_spend's (kInvalidArgument when the accountant refuses), with
/// validate_task(task, kinds)'s in place of validate_task's (also kUnimplemented for a kind or
/// DIST `kinds` lacks).
Result<DeviceSpend> device_spend(const fedstat_v1_Task& task, const TaskKinds& kinds);
/// device_spend with validate_task(task, kinds), a DIST task charged for the noise of
/// min(threshold, assumed_honest_shares) shares instead of threshold (0: threshold, as the
/// overloads without it) — what the Client charges under TaskPolicy::assumed_honest_shares
/// (task_policy.h). 1 is this device's own share alone.
/// @errors device_spend(task, kinds)'s: kInvalidArgument (a field, or the accountant refuses
/// the task at those shares) or kUnimplemented (a kind or DIST `kinds` lacks).
Result<DeviceSpend> device_spend(const fedstat_v1_Task& task, const TaskKinds& kinds,
                                 uint32_t assumed_honest_shares);

/// The contribution of `task` from the app's data: the builder of the task's kind, fed with what
/// `data` holds for it (kNotFound when it holds nothing). What the Client sends; what an emulator
/// recomputes in process for the same task, data and noise.
/// @errors kNotFound: `data` holds no histogram (DATA_SHIFT, KL_ANSWERS); for MODEL_UPDATE and
/// HETEROGENEITY whatever status data.examples() or data.unit_vector() returns (kNotFound from
/// the defaults). kUnimplemented: an unknown kind. Otherwise the errors of the kind's builder
/// (build_data_shift, build_kl_answers, build_model_update, build_heterogeneity).
Status build_contribution(const fedstat_v1_Task& task, ClientData& data,
                          Span<const uint64_t> task_data, RandomBits& noise,
                          MutableByteSpan scratch, Span<uint64_t> out);
/// build_contribution with the builders of `kinds`.
/// @errors build_contribution's; kUnimplemented for a kind not among `kinds`.
Status build_contribution(const fedstat_v1_Task& task, ClientData& data,
                          Span<const uint64_t> task_data, RandomBits& noise,
                          MutableByteSpan scratch, Span<uint64_t> out, const TaskKinds& kinds);

}  // namespace client
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CLIENT_CONTRIBUTION_H_
