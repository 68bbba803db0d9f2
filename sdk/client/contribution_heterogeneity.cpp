// HETEROGENEITY (contribution.h): stage 1 [x, w·x, w, 1/w], stage 2 [||x − μ′||_p^p,
// w·||x − μ̄′||²], each value sent as round(scale·v); in DIST every entry carries a Skellam share.
#include <math.h>

#include "sdk/base/arena.h"
#include "sdk/base/checked_size.h"
#include "sdk/client/contribution.h"
#include "sdk/client/contribution_helpers.h"
#include "sdk/client/task_kinds.h"
#include "sdk/noise/add_noise.h"
#include "sdk/tasks/heterogeneity_task.h"

namespace fedstat {
namespace client {
namespace {

tasks::HeterogeneityConfig heterogeneity_config_of(const fedstat_v1_Task& task) {
  tasks::HeterogeneityConfig c;
  c.p = task.parameters.heterogeneity.p;
  c.max_weight = task.parameters.heterogeneity.max_weight;
  return c;
}

Status validate_heterogeneity(const fedstat_v1_Task& task) {
  if (task.which_parameters != fedstat_v1_Task_heterogeneity_tag) {
    return invalid_argument("Task.parameters: HETEROGENEITY needs heterogeneity parameters");
  }
  // No honest server noises a heterogeneity stage centrally (host_server/tasks/
  // heterogeneity_plan.cpp serves "none" and "dist" only; a TAgg noises KL aggregates only): a
  // TRUSTED or TAGG task would collect this device's exact x, w·x, w, 1/w.
  if (task.trust != fedstat_v1_TrustModel_NONE && task.trust != fedstat_v1_TrustModel_DIST) {
    return invalid_argument(
        "Task.trust must be NONE or DIST for HETEROGENEITY: no server adds central noise to its "
        "stages, so TRUSTED or TAGG would collect exact words");
  }
  const fedstat_v1_HeterogeneityParameters& h = task.parameters.heterogeneity;
  if (h.dimension == 0) return invalid_argument("Task.heterogeneity.dimension must be >= 1");
  if (!isfinite(h.p) || !isfinite(h.max_weight) ||
      !tasks::validate_heterogeneity_config(heterogeneity_config_of(task)).ok()) {
    return invalid_argument("Task.heterogeneity: p must be finite >= 1, max_weight finite >= 4");
  }
  if (!(isfinite(h.scale) && h.scale > 0)) {
    return invalid_argument("Task.heterogeneity.scale must be finite and > 0");
  }
  // The largest value encoded is max(W, 1)·d (w·||x − μ̄||² ≤ W·d): it must fit 2^62.
  const double largest = h.scale * (h.max_weight > 1 ? h.max_weight : 1) * h.dimension;
  if (!(largest < 4.6e18)) {
    return invalid_argument(
        "Task.heterogeneity.scale x max_weight x dimension must stay below 2^62");
  }
  if (task.bits != 64) return invalid_argument("Task.bits must be 64 for HETEROGENEITY");
  uint64_t length = 0, data_words = 0;
  if (h.stage == 1) {
    length = 2 * uint64_t{h.dimension} + 2;
  } else if (h.stage == 2) {
    length = tasks::heterogeneity_round2_length();
    data_words = 2 * uint64_t{h.dimension};
  } else {
    return invalid_argument("Task.heterogeneity.stage must be 1 or 2");
  }
  if (task.data_words != data_words) {
    return invalid_argument("Task.data_words must be 0 (stage 1) or 2 x dimension (stage 2)");
  }
  if (task.vector_length != length) {
    return invalid_argument("Task.vector_length must be 2d + 2 (stage 1) or 2 (stage 2)");
  }
  return Status();
}

AppData vector_data(const fedstat_v1_Task& task, ClientData& data) {
  AppData held;
  Result<Span<const double>> x = data.unit_vector();
  held.held = x.ok();
  if (held.held) held.usable = validate_unit_vector(task, x.value());
  return held;
}

size_t heterogeneity_scratch(const fedstat_v1_Task& task, size_t) {
  return size_add(size_mul(8, task.vector_length), size_mul(8, task.data_words));
}

// In DIST: the RDP curve of Sk(λ·honest_shares) on this stage's two releases, with ε = δ = 0
// (the ledger composes it with the other stage's order by order; contribution.h, device_spend).
Status heterogeneity_spend(const fedstat_v1_Task& task, uint32_t honest_shares,
                           DeviceSpend& spend) {
  if (!is_dist(task)) return Status();
  const fedstat_v1_HeterogeneityParameters& h = task.parameters.heterogeneity;
  const double scales[4] = {h.scale, h.scale, h.scale, h.scale};
  privacy::Sensitivity encoded[4];
  tasks::heterogeneity_encoded_sensitivities(h.dimension, heterogeneity_config_of(task), scales,
                                             encoded);
  const int first = h.stage == 1 ? 0 : 2;  // this stage's two releases
  const double mu = task.device_noise_lambda * honest_shares;
  spend.epsilon = 0;
  spend.delta = 0;
  spend.has_rdp = true;
  for (size_t i = 0; i < privacy::kLedgerOrderCount; ++i) {
    double total = 0;
    for (int k = first; k < first + 2; ++k) {
      Result<double> rdp = privacy::skellam_rdp(privacy::kLedgerOrders[i], encoded[k], mu);
      if (!rdp.ok() || !(isfinite(rdp.value()) && rdp.value() >= 0)) {
        return invalid_argument(
            "Task.device_noise_lambda/threshold/scale: the Skellam accountant gives no finite "
            "RDP");
      }
      total += rdp.value();
    }
    spend.rdp[i] = total;
  }
  return Status();
}

Status build_from_vector(const fedstat_v1_Task& task, ClientData& data, Span<const uint64_t> means,
                         RandomBits& noise, MutableByteSpan scratch, Span<uint64_t> out) {
  Result<Span<const double>> x = data.unit_vector();
  FEDSTAT_RETURN_IF_ERROR(x.status());
  return build_heterogeneity(task, x.value(), means, noise, scratch, out);
}

}  // namespace

const TaskKindSupport kHeterogeneityKind = {fedstat_v1_TaskKind_HETEROGENEITY,
                                            /*dist_share=*/true,
                                            validate_heterogeneity,
                                            vector_data,
                                            check_doubles_data,
                                            heterogeneity_scratch,
                                            heterogeneity_spend,
                                            build_from_vector};

Status validate_unit_vector(const fedstat_v1_Task& task, Span<const double> x) {
  if (x.size() != task.parameters.heterogeneity.dimension) {
    return invalid_argument("the app's vector has another dimension than the task");
  }
  return tasks::validate_unit_vector(x);
}

Status build_heterogeneity(const fedstat_v1_Task& task, Span<const double> x,
                           Span<const uint64_t> means, RandomBits& noise, MutableByteSpan scratch,
                           Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(
      check_builder_task(task, kHeterogeneityKind, out.size(), "not HETEROGENEITY"));
  const fedstat_v1_HeterogeneityParameters& h = task.parameters.heterogeneity;
  const size_t d = h.dimension;
  if (means.size() != task.data_words) return invalid_argument("TaskData: 2d words in stage 2");
  if (x.size() != d)
    return invalid_argument("the app's vector has another dimension than the task");
  FEDSTAT_RETURN_IF_ERROR(tasks::validate_unit_vector(x));
  Arena arena(scratch);
  Result<Span<double>> values = arena.allocate_array<double>(out.size());
  Result<Span<double>> host_means = arena.allocate_array<double>(means.size());
  if (!values.ok() || !host_means.ok()) {
    return resource_exhausted("scratch is smaller than scratch_bytes(task)");
  }
  const tasks::HeterogeneityConfig config = heterogeneity_config_of(task);
  if (h.stage == 1) {
    FEDSTAT_RETURN_IF_ERROR(tasks::heterogeneity_round1(x, config, values.value()));
  } else {
    FEDSTAT_RETURN_IF_ERROR(
        decode_doubles(means, host_means.value(), "TaskData: the means hold a NaN or infinity"));
    const Span<const double> all = host_means.value();
    FEDSTAT_RETURN_IF_ERROR(
        tasks::heterogeneity_round2(x, all.first(d), all.subspan(d, d), config, values.value()));
  }
  const Span<int64_t> words(reinterpret_cast<int64_t*>(out.data()), out.size());
  FEDSTAT_RETURN_IF_ERROR(tasks::encode_fixed_point(values.value(), h.scale, words));
  if (is_dist(task)) {
    noise::NoiseSampler share;
    FEDSTAT_RETURN_IF_ERROR(init_share(task, share));
    FEDSTAT_RETURN_IF_ERROR(noise::add_noise(Span<const int64_t>(words), words, share, noise));
  }
  return Status();
}

}  // namespace client
}  // namespace fedstat
