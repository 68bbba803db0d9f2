// DATA_SHIFT of trust DIST (contribution.h): the app's counts folded into the task's public
// buckets (sketch/hashed_histogram.h), each clamped so that the fleet's sum cannot wrap, plus one
// Pólya share of discrete Laplace noise per bucket. Its own object file, reached only through
// kSecureAggregation (task_kinds.h): an image without secure aggregation does not link it.
#include <math.h>
#include <string.h>

#include "sdk/client/contribution.h"
#include "sdk/client/contribution_helpers.h"
#include "sdk/client/task_kinds.h"
#include "sdk/noise/polya.h"
#include "sdk/sketch/hashed_histogram.h"

namespace fedstat {
namespace client {
namespace {

Status validate_data_shift_dist(const fedstat_v1_Task& task) {
  if (task.which_parameters != fedstat_v1_Task_data_shift_tag) {
    return invalid_argument("Task.parameters: DATA_SHIFT needs data_shift parameters");
  }
  if (task.trust != fedstat_v1_TrustModel_DIST) {
    return invalid_argument("Task.trust: the hashed-histogram data shift is for DIST tasks only");
  }
  const fedstat_v1_DataShiftParameters& d = task.parameters.data_shift;
  if ((d.rows | d.width | d.heap_capacity | d.k | d.domain) != 0 || d.local_epsilon != 0) {
    return invalid_argument(
        "Task.data_shift.rows/width/heap_capacity/k/domain/local_epsilon must be 0 for DIST: a "
        "DIST "
        "data-shift task is a hashed histogram, not a sketch");
  }
  if (d.buckets == 0 || d.buckets > sketch::kMaxHashedBuckets) {
    return invalid_argument("Task.data_shift.buckets must be in [1, 2^22] for DIST");
  }
  if (!(isfinite(d.noise_scale) && d.noise_scale > 0)) {
    return invalid_argument(
        "Task.data_shift.noise_scale must be finite and > 0 for DIST (T = 1/epsilon item level, "
        "2*max_events/epsilon user level)");
  }
  if (d.noise_scale > static_cast<double>(noise::kMaxPolyaScale)) {
    return invalid_argument(
        "Task.data_shift.noise_scale must be at most 10000 (noise::kMaxPolyaScale): raise epsilon "
        "or lower max_events");
  }
  if (d.noise_shares == 0) {
    return invalid_argument("Task.data_shift.noise_shares must be >= 1 for DIST (the threshold)");
  }
  // The sampler takes T rounded up to a rational (never less noise than declared).
  const Result<noise::Rational> scale = noise::rational_at_least(d.noise_scale);
  if (!scale.ok() || !noise::check_polya_params(scale.value(), d.noise_shares).ok()) {
    return invalid_argument("Task.data_shift.noise_scale is beyond what the Polya sampler takes");
  }
  if (task.bits != 32 && task.bits != 64) {
    return invalid_argument("Task.bits must be 32 or 64 for a DIST data-shift task");
  }
  if (task.data_words != 0) return invalid_argument("Task.data_words must be 0 for DATA_SHIFT");
  if (task.vector_length != d.buckets) {
    return invalid_argument("Task.vector_length must equal Task.data_shift.buckets for DIST");
  }
  if (task.max_clients == 0) {
    return invalid_argument("Task.max_clients must be >= 1 (each bucket is clamped by it)");
  }
  return Status();
}

AppData histogram_held(const fedstat_v1_Task&, ClientData& data) {
  AppData held;
  held.held = data.histogram() != nullptr;
  return held;  // no scratch: the vector is built in place
}

Status no_task_data(const fedstat_v1_Task&, Span<const uint64_t>) {
  return Status();  // data_words is 0
}

size_t no_scratch(const fedstat_v1_Task&, size_t) {
  return 0;
}

// Δ·(1/T + ln(1/r)), Δ = 1 or 2·max_events, r = min(1, honest/noise_shares): pure DP, δ as
// declared.
Status data_shift_dist_spend(const fedstat_v1_Task& task, uint32_t honest_shares,
                             DeviceSpend& spend) {
  const fedstat_v1_DataShiftParameters& d = task.parameters.data_shift;
  const double epsilon =
      sketch::hashed_histogram_epsilon(d.max_events, d.noise_scale, d.noise_shares, honest_shares);
  if (!isfinite(epsilon)) {
    return invalid_argument("Task.data_shift.noise_scale: the device's epsilon is not finite");
  }
  if (spend.epsilon < epsilon) spend.epsilon = epsilon;
  return Status();
}

Status build_dist_from_histogram(const fedstat_v1_Task& task, ClientData& data,
                                 Span<const uint64_t>, RandomBits& noise, MutableByteSpan,
                                 Span<uint64_t> out) {
  const histogram::SparseHistogram* histogram = data.histogram();
  if (histogram == nullptr) return not_found("the app holds no histogram");
  return build_data_shift_dist(task, *histogram, noise, out);
}

}  // namespace

const TaskKindSupport kDataShiftDistKind = {fedstat_v1_TaskKind_DATA_SHIFT,
                                            /*dist_share=*/false,
                                            validate_data_shift_dist,
                                            histogram_held,
                                            no_task_data,
                                            no_scratch,
                                            data_shift_dist_spend,
                                            build_dist_from_histogram};

uint64_t data_shift_dist_bucket_limit(const fedstat_v1_Task& task) {
  const uint64_t positive = (uint64_t{1} << (task.bits - 1)) - 1;
  return task.max_clients == 0 ? positive : positive / task.max_clients;
}

Status build_data_shift_dist(const fedstat_v1_Task& task, const histogram::SparseHistogram& local,
                             RandomBits& noise, Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(
      check_builder_task(task, kDataShiftDistKind, out.size(), "not a DATA_SHIFT task"));
  const fedstat_v1_DataShiftParameters& d = task.parameters.data_shift;
  memset(out.data(), 0, out.size() * sizeof(uint64_t));
  const sketch::BucketMap map(seed_of(task), d.buckets);
  FEDSTAT_RETURN_IF_ERROR(sketch::add_bucket_counts(map, local, d.max_events, noise, out));
  // At most (2^(bits−1) − 1)/max_clients per device, so the fleet's exact sum stays a positive
  // signed word; clamping is 1-Lipschitz in each bucket, so one event still moves the vector by
  // at most 1 (and two bounded histograms stay within 2m): the privacy argument is unchanged.
  const uint64_t limit = data_shift_dist_bucket_limit(task);
  for (size_t b = 0; b < out.size(); ++b) {
    if (out[b] > limit) out[b] = limit;
  }
  const Result<noise::Rational> scale = noise::rational_at_least(d.noise_scale);
  FEDSTAT_RETURN_IF_ERROR(scale.status());
  FEDSTAT_RETURN_IF_ERROR(sketch::add_polya_shares(scale.value(), d.noise_shares, noise, out));
  if (task.bits < 64) {
    const uint64_t mask = (uint64_t{1} << task.bits) - 1;
    for (size_t b = 0; b < out.size(); ++b) out[b] &= mask;
  }
  return Status();
}

}  // namespace client
}  // namespace fedstat
