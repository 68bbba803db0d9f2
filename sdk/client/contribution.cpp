// The checks every kind shares and the dispatch to the kinds (task_kinds.h); each kind's checks
// and builder are in contribution_<kind>.cpp.
#include "sdk/client/contribution.h"

#include <math.h>
#include <string.h>

#include "sdk/client/contribution_helpers.h"
#include "sdk/client/task_kinds.h"
#include "sdk/noise/rational.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/graph_parameters.h"

namespace fedstat {
namespace client {
namespace {

// The complete graph (Task.secagg_degree 0): every member shares with every other, the roster
// is max_clients entries (at most the roster bitmap's kMaxTaskClients).
Status validate_complete_graph(const fedstat_v1_Task& task) {
  if (!(task.threshold >= 2 && task.threshold <= task.max_clients &&
        task.max_clients <= kMaxTaskClients)) {
    return invalid_argument(
        "Task.threshold and Task.max_clients must satisfy 2 <= threshold <= max_clients <= 1024 "
        "for the complete graph (secagg_degree 0; a larger round needs a sparse graph)");
  }
  // More than half: two disjoint groups of `threshold` devices must not fit in one round, or a
  // server could show each group its own U3 and unmask a device (docs/protocol.md). The device
  // checks it itself: the server is who it protects against.
  if (2 * uint64_t{task.threshold} <= task.max_clients) {
    return invalid_argument(
        "Task.threshold must exceed half of Task.max_clients (2 * threshold > max_clients) for "
        "DIST");
  }
  return Status();
}

// A sparse graph's shape (SecAgg+, sdk/secagg/graph.h): an even degree k, a threshold among the
// k + 1 holders of each secret, more than half of them (the same two-groups argument, within a
// neighbourhood). Whether (k, t) is safe for max_clients is check_dist_graph's (the bound).
Status validate_sparse_graph(const fedstat_v1_Task& task) {
  if (task.secagg_degree % 2 != 0 || task.secagg_degree > secagg::kMaxGraphDegree) {
    return invalid_argument(
        "Task.secagg_degree must be 0 (complete graph) or an even number in 2..1022 (sparse "
        "graph)");
  }
  if (task.max_clients > secagg::kMaxSparseClients) {
    return invalid_argument("Task.max_clients must be at most 10000000 for a sparse graph");
  }
  if (task.threshold < 2 || task.threshold > task.secagg_degree + 1) {
    return invalid_argument(
        "Task.threshold must be in 2..secagg_degree + 1 for a sparse graph (the holders of each "
        "secret: the device and its secagg_degree neighbours)");
  }
  if (2 * uint64_t{task.threshold} <= uint64_t{task.secagg_degree} + 1) {
    return invalid_argument(
        "Task.threshold must exceed half of secagg_degree + 1 (2 * threshold > degree + 1) for a "
        "sparse graph");
  }
  return Status();
}

// The checks every kind shares: privacy fields, seed, bits, the DIST roster.
Status validate_common(const fedstat_v1_Task& task, const TaskKindSupport& kind) {
  // 0 names no task in the ledger (BudgetLedger::holds_task): a task 0 would be charged and
  // answered again at every offer.
  if (task.task_id == 0) return invalid_argument("Task.task_id must be > 0");
  const int64_t trust = wire_enum_value(task.trust);
  if (trust < fedstat_v1_TrustModel_TRUSTED || trust > fedstat_v1_TrustModel_NONE) {
    return unimplemented("Task.trust: unknown trust model");
  }
  if (!finite_at_least_zero(task.epsilon)) {
    return invalid_argument("Task.epsilon must be finite and >= 0");
  }
  if (!(task.delta >= 0 && task.delta < 1)) return invalid_argument("Task.delta must be in [0, 1)");
  if (task.trust == fedstat_v1_TrustModel_NONE) {
    if (task.epsilon != 0 || task.delta != 0) {
      return invalid_argument("Task.epsilon and Task.delta must be 0 for trust model NONE");
    }
  } else if (task.epsilon == 0) {
    return invalid_argument("Task.epsilon must be > 0 for a private task");
  }
  if (!finite_at_least_zero(task.device_noise_lambda)) {
    return invalid_argument("Task.device_noise_lambda must be finite and >= 0");
  }
  const bool device_noise = task.trust == fedstat_v1_TrustModel_DIST && kind.dist_share;
  if (device_noise && task.device_noise_lambda == 0) {
    return invalid_argument("Task.device_noise_lambda must be > 0 for this kind in DIST");
  }
  // The share's sampler must take λ: refused here, before anything is charged, not at the build.
  if (device_noise && !noise::rational_at_least(task.device_noise_lambda).ok()) {
    return invalid_argument("Task.device_noise_lambda is beyond what the Skellam sampler takes");
  }
  if (!device_noise && task.device_noise_lambda != 0) {
    return invalid_argument(
        "Task.device_noise_lambda must be 0: this kind and trust model add no Skellam share");
  }
  if (task.seed.size != 32) return invalid_argument("Task.seed must be 32 bytes");
  if (task.bits < 1 || task.bits > 64) return invalid_argument("Task.bits must be in 1..64");
  if (task.vector_length == 0) return invalid_argument("Task.vector_length must be >= 1");
  if (task.trust != fedstat_v1_TrustModel_DIST) {
    if (task.secagg_degree != 0 || task.secagg_dropout_ppm != 0 || task.secagg_corrupt_ppm != 0) {
      return invalid_argument(
          "Task.secagg_degree, secagg_dropout_ppm and secagg_corrupt_ppm must be 0 outside DIST");
    }
    return Status();
  }
  if (task.secagg_dropout_ppm >= secagg::kPpmOne || task.secagg_corrupt_ppm >= secagg::kPpmOne) {
    return invalid_argument(
        "Task.secagg_dropout_ppm and secagg_corrupt_ppm must be below 1000000 (parts per million)");
  }
  if (task.secagg_degree == 0) return validate_complete_graph(task);
  return validate_sparse_graph(task);
}

bool known_kind(int64_t kind) {
  return kind >= fedstat_v1_TaskKind_DATA_SHIFT && kind <= fedstat_v1_TaskKind_MODEL_UPDATE;
}

}  // namespace

bool finite_at_least_zero(double x) {
  return isfinite(x) && x >= 0;
}

Seed256 seed_of(const fedstat_v1_Task& task) {
  Seed256 seed;
  memcpy(seed.bytes, task.seed.bytes, sizeof(seed.bytes));
  return seed;
}

Status init_share(const fedstat_v1_Task& task, noise::NoiseSampler& share) {
  Result<noise::Rational> lambda = noise::rational_at_least(task.device_noise_lambda);
  if (!lambda.ok()) return invalid_argument("Task.device_noise_lambda is not a usable rational");
  return share.init(noise::NoiseSpec{noise::NoiseKind::kSkellam, lambda.value(), 1});
}

Status decode_doubles(Span<const uint64_t> bits, Span<double> out, const char* refusal) {
  for (size_t j = 0; j < bits.size(); ++j) {
    double v = 0;
    memcpy(&v, &bits[j], sizeof(v));
    if (!isfinite(v)) return invalid_argument(refusal);
    if (!out.empty()) out[j] = v;
  }
  return Status();
}

Status check_doubles_data(const fedstat_v1_Task&, Span<const uint64_t> data) {
  return decode_doubles(data, Span<double>(), "TaskData: a model or mean holds a NaN or infinity");
}

Status raise_to_skellam_epsilon(const Result<privacy::DpFromRdp>& noise, DeviceSpend& spend) {
  if (!noise.ok()) {
    return invalid_argument(
        "Task.device_noise_lambda/threshold/delta: the Skellam accountant refuses them");
  }
  if (!(isfinite(noise.value().epsilon) && noise.value().epsilon >= 0)) {
    return invalid_argument("Task.device_noise_lambda: the Skellam accountant gives no finite ε");
  }
  if (spend.epsilon < noise.value().epsilon) spend.epsilon = noise.value().epsilon;
  return Status();
}

Status validate_kind_task(const fedstat_v1_Task& task, const TaskKindSupport& kind) {
  FEDSTAT_RETURN_IF_ERROR(validate_common(task, kind));
  return kind.validate(task);
}

Status check_builder_task(const fedstat_v1_Task& task, const TaskKindSupport& kind, size_t out_size,
                          const char* not_this_kind) {
  const int64_t wire_kind = wire_enum_value(task.kind);
  if (wire_kind != kind.kind) {
    return known_kind(wire_kind) ? invalid_argument(not_this_kind)
                                 : unimplemented("Task.kind: unknown task kind");
  }
  FEDSTAT_RETURN_IF_ERROR(validate_kind_task(task, kind));
  if (out_size != task.vector_length) return invalid_argument("out must hold vector_length words");
  return Status();
}

const TaskKindSupport* TaskKinds::find(int64_t kind) const {
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] != nullptr && kinds[i]->kind == kind) return kinds[i];
  }
  return nullptr;
}

const TaskKindSupport* TaskKinds::support_for(const fedstat_v1_Task& task) const {
  const TaskKindSupport* support = find(wire_enum_value(task.kind));
  if (support != nullptr && support->kind == fedstat_v1_TaskKind_DATA_SHIFT &&
      wire_enum_value(task.trust) == fedstat_v1_TrustModel_DIST && secure_aggregation != nullptr) {
    return secure_aggregation->data_shift_dist;
  }
  return support;
}

Status check_dist_graph(const fedstat_v1_Task& task, const secagg::SecAggThreatModel& floor) {
  if (!is_dist(task) || task.secagg_degree == 0) return Status();
  secagg::SecAggThreatModel model = floor;
  if (task.secagg_dropout_ppm > model.dropout_ppm) model.dropout_ppm = task.secagg_dropout_ppm;
  if (task.secagg_corrupt_ppm > model.corrupt_ppm) model.corrupt_ppm = task.secagg_corrupt_ppm;
  const Status bound =
      secagg::check_sparse_graph(task.max_clients, task.secagg_degree, task.threshold, model);
  if (bound.ok()) return bound;
  // The bound's own message names the condition that fails (the degree, the threshold's range,
  // the threat model); every refusal of a task's field is kInvalidArgument.
  return Status(StatusCode::kInvalidArgument, bound.message());
}

Status validate_task(const fedstat_v1_Task& task, const TaskKinds& kinds) {
  return validate_task(task, kinds, kNoGraphFloor);
}

Status validate_task(const fedstat_v1_Task& task, const TaskKinds& kinds,
                     const secagg::SecAggThreatModel& floor) {
  const int64_t kind = wire_enum_value(task.kind);
  if (!known_kind(kind)) return unimplemented("Task.kind: unknown task kind");
  const TaskKindSupport* support = kinds.support_for(task);
  if (support == nullptr) {
    return unimplemented("Task.kind: this Client was not built with this kind (TaskKinds)");
  }
  // Read as the wire delivered it: the trust model is not checked yet (an enum field may hold
  // any number; reading it through the enum type would be undefined).
  if (wire_enum_value(task.trust) == fedstat_v1_TrustModel_DIST &&
      kinds.secure_aggregation == nullptr) {
    return unimplemented("Task.trust: DIST, but this Client was built without secure aggregation");
  }
  FEDSTAT_RETURN_IF_ERROR(validate_kind_task(task, *support));
  // The bound, through the secure aggregation the Client was built with (a Client without it
  // declined DIST above), so that a firmware image without DIST leaves the bound's code out.
  if (!is_dist(task) || task.secagg_degree == 0) return Status();
  return kinds.secure_aggregation->check_graph(task, floor);
}

Status validate_task(const fedstat_v1_Task& task) {
  return validate_task(task, all_task_kinds());
}

Status validate_task_data(const fedstat_v1_Task& task, Span<const uint64_t> data,
                          const TaskKinds& kinds) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task, kinds));
  if (data.size() != task.data_words) return invalid_argument("TaskData: not data_words words");
  return kinds.support_for(task)->validate_data(task, data);
}

Status validate_task_data(const fedstat_v1_Task& task, Span<const uint64_t> data) {
  return validate_task_data(task, data, all_task_kinds());
}

Result<size_t> contribution_length(const fedstat_v1_Task& task) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task));
  return static_cast<size_t>(task.vector_length);
}

Result<size_t> scratch_bytes(const fedstat_v1_Task& task, size_t local_size,
                             const TaskKinds& kinds) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task, kinds));
  const size_t bytes = kinds.support_for(task)->scratch_bytes(task, local_size);
  if (bytes == kSizeOverflow) {
    return resource_exhausted("the task's scratch does not fit this device's address space");
  }
  return bytes;
}

Result<size_t> scratch_bytes(const fedstat_v1_Task& task, size_t local_size) {
  return scratch_bytes(task, local_size, all_task_kinds());
}

Result<DeviceSpend> device_spend(const fedstat_v1_Task& task, const TaskKinds& kinds,
                                 uint32_t assumed_honest_shares) {
  FEDSTAT_RETURN_IF_ERROR(validate_task(task, kinds));
  DeviceSpend spend;
  if (task.trust == fedstat_v1_TrustModel_NONE) return spend;
  spend.epsilon = task.epsilon;
  spend.delta = task.delta;
  // The shares a released DIST sum is assumed to hold from honest devices: the threshold (the
  // least secure aggregation releases a sum with), or fewer when the app assumes fewer.
  const uint32_t honest = assumed_honest_shares != 0 && assumed_honest_shares < task.threshold
                              ? assumed_honest_shares
                              : task.threshold;
  FEDSTAT_RETURN_IF_ERROR(kinds.support_for(task)->device_spend(task, honest, spend));
  // SecAgg+: the sparse graph's guarantee (no device's input revealed, the threshold holds
  // among each neighbourhood) fails with probability at most 2^−σ (graph_parameters.h). Added to
  // δ also for an RDP spend (a heterogeneity stage, ε = δ = 0 before): the ledger counts every
  // spend's δ beside its curve (BudgetLedger::compose converts the curves at the budget's δ less
  // those δs), and policy_charge adds it to the task's δ.
  if (is_dist(task) && task.secagg_degree != 0) spend.delta += kSparseGraphFailureDelta;
  return spend;
}

Result<DeviceSpend> device_spend(const fedstat_v1_Task& task, const TaskKinds& kinds) {
  return device_spend(task, kinds, 0);
}

Result<DeviceSpend> device_spend(const fedstat_v1_Task& task) {
  return device_spend(task, all_task_kinds());
}

Status build_contribution(const fedstat_v1_Task& task, ClientData& data,
                          Span<const uint64_t> task_data, RandomBits& noise,
                          MutableByteSpan scratch, Span<uint64_t> out, const TaskKinds& kinds) {
  const TaskKindSupport* support = kinds.support_for(task);
  if (support == nullptr) return unimplemented("Task.kind: not computed on the device");
  return support->build(task, data, task_data, noise, scratch, out);
}

Status build_contribution(const fedstat_v1_Task& task, ClientData& data,
                          Span<const uint64_t> task_data, RandomBits& noise,
                          MutableByteSpan scratch, Span<uint64_t> out) {
  return build_contribution(task, data, task_data, noise, scratch, out, all_task_kinds());
}

}  // namespace client
}  // namespace fedstat
