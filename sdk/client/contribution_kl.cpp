// KL_ANSWERS (contribution.h): the app's counts at the task's query points, then the total; in
// DIST each count carries a Skellam share.
#include "sdk/base/arena.h"
#include "sdk/base/checked_size.h"
#include "sdk/client/contribution.h"
#include "sdk/client/contribution_helpers.h"
#include "sdk/client/task_kinds.h"
#include "sdk/privacy/accountants.h"
#include "sdk/tasks/kl_answer_task.h"

namespace fedstat {
namespace client {
namespace {

Status validate_kl(const fedstat_v1_Task& task) {
  if (task.which_parameters != fedstat_v1_Task_kl_tag) {
    return invalid_argument("Task.parameters: KL_ANSWERS needs kl parameters");
  }
  const uint32_t points = task.parameters.kl.points;
  if (points == 0) return invalid_argument("Task.kl.points must be >= 1");
  if (task.data_words != points) {
    return invalid_argument("Task.data_words must equal Task.kl.points for KL_ANSWERS");
  }
  if (task.bits != 64) return invalid_argument("Task.bits must be 64 for KL_ANSWERS");
  if (uint64_t{points} + 1 != task.vector_length) {
    return invalid_argument("Task.vector_length must be points + 1 for KL_ANSWERS");
  }
  return Status();
}

AppData histogram_data(const fedstat_v1_Task&, ClientData& data) {
  AppData held;
  held.held = data.histogram() != nullptr;
  return held;  // local_size 0: the scratch does not grow with the histogram
}

// KL query points: distinct, ascending, each below 2^32 (docs/protocol.md).
Status check_kl_points(const fedstat_v1_Task&, Span<const uint64_t> points) {
  for (size_t t = 0; t < points.size(); ++t) {
    if (points[t] > UINT32_MAX || (t > 0 && points[t] <= points[t - 1])) {
      return invalid_argument("TaskData: KL points must be distinct ascending ids below 2^32");
    }
  }
  return Status();
}

size_t kl_scratch(const fedstat_v1_Task& task, size_t) {
  return round_up8(size_mul(4, task.parameters.kl.points));
}

// In DIST: at least the ε of Sk(λ·honest_shares), the least noise a released sum carries from
// the shares the app assumes honest.
Status kl_spend(const fedstat_v1_Task& task, uint32_t honest_shares, DeviceSpend& spend) {
  if (!is_dist(task)) return Status();
  const privacy::Sensitivity sensitivity =
      tasks::kl_answer_sensitivity(1, task.parameters.kl.points > 1 ? 1 : 0);
  const Result<privacy::DpFromRdp> noise =
      privacy::skellam_epsilon(task.device_noise_lambda, honest_shares, sensitivity, task.delta);
  return raise_to_skellam_epsilon(noise, spend);
}

Status build_from_histogram(const fedstat_v1_Task& task, ClientData& data,
                            Span<const uint64_t> points, RandomBits& noise, MutableByteSpan scratch,
                            Span<uint64_t> out) {
  const histogram::SparseHistogram* histogram = data.histogram();
  if (histogram == nullptr) return not_found("the app holds no histogram");
  return build_kl_answers(task, *histogram, points, noise, scratch, out);
}

}  // namespace

const TaskKindSupport kKlAnswersKind = {fedstat_v1_TaskKind_KL_ANSWERS,
                                        /*dist_share=*/true,
                                        validate_kl,
                                        histogram_data,
                                        check_kl_points,
                                        kl_scratch,
                                        kl_spend,
                                        build_from_histogram};

Status build_kl_answers(const fedstat_v1_Task& task, const histogram::SparseHistogram& local,
                        Span<const uint64_t> points, RandomBits& noise, MutableByteSpan scratch,
                        Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(check_builder_task(task, kKlAnswersKind, out.size(), "not a KL task"));
  const size_t n = task.parameters.kl.points;
  if (points.size() != n) return invalid_argument("TaskData: KL needs one word per query point");
  Arena arena(scratch);
  Result<Span<uint32_t>> ids = arena.allocate_array<uint32_t>(n);
  if (!ids.ok()) return resource_exhausted("scratch is smaller than scratch_bytes(task)");
  FEDSTAT_RETURN_IF_ERROR(check_kl_points(task, points));
  for (size_t t = 0; t < n; ++t) ids.value()[t] = static_cast<uint32_t>(points[t]);
  // The counts, int64 in two's complement, in the contribution's own words.
  const Span<int64_t> counts(reinterpret_cast<int64_t*>(out.data()), n);
  uint64_t total = 0;
  if (is_dist(task)) {
    noise::NoiseSampler share;
    FEDSTAT_RETURN_IF_ERROR(init_share(task, share));
    FEDSTAT_RETURN_IF_ERROR(
        tasks::answer_kl_points_noised(local, ids.value(), share, noise, counts, &total));
  } else {
    FEDSTAT_RETURN_IF_ERROR(tasks::answer_kl_points(local, ids.value(), counts, &total));
  }
  out[n] = total;
  return Status();
}

}  // namespace client
}  // namespace fedstat
