// DATA_SHIFT outside DIST (contribution.h): the counters of a ShiftSketch of the app's items in
// [0, domain), then the total of all its items — through the local stability histogram when
// local_epsilon > 0. DIST is contribution_data_shift_dist.cpp's.
#include <string.h>

#include "sdk/base/arena.h"
#include "sdk/base/checked_size.h"
#include "sdk/client/contribution.h"
#include "sdk/client/contribution_helpers.h"
#include "sdk/client/task_kinds.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/sketch/stability_histogram.h"

namespace fedstat {
namespace client {
namespace {

sketch::ShiftSketchParams sketch_params_of(const fedstat_v1_Task& task) {
  sketch::ShiftSketchParams p;
  p.rows = task.parameters.data_shift.rows;
  p.width = task.parameters.data_shift.width;
  p.heap_capacity = task.parameters.data_shift.heap_capacity;
  p.k = task.parameters.data_shift.k;
  p.seed = seed_of(task);
  p.buffer_slots = 0;
  return p;
}

Status validate_data_shift(const fedstat_v1_Task& task) {
  if (task.which_parameters != fedstat_v1_Task_data_shift_tag) {
    return invalid_argument("Task.parameters: DATA_SHIFT needs data_shift parameters");
  }
  // DIST is the hashed histogram's (kDataShiftDistKind): reached here only by a direct
  // build_data_shift, or a TaskKinds that lists this kind without secure aggregation (declined
  // before this).
  if (task.trust == fedstat_v1_TrustModel_DIST) {
    return invalid_argument(
        "Task.trust: a DIST data-shift task is a hashed histogram (build_data_shift_dist), not a "
        "sketch");
  }
  const sketch::ShiftSketchParams p = sketch_params_of(task);
  if (!sketch::validate_params(p).ok()) {
    return invalid_argument("Task.data_shift: rows/width/heap_capacity/k refused by ShiftSketch");
  }
  const uint32_t domain = task.parameters.data_shift.domain;
  if (domain == 0 || domain > kMaxDataShiftDomain) {
    return invalid_argument("Task.data_shift.domain must be in [1, 2^24] (the candidate ids)");
  }
  if (sketch::shift_sketch_memory_bytes(p) == kSizeOverflow) {
    return invalid_argument("Task.data_shift: the sketch does not fit this device's address space");
  }
  const double local_epsilon = task.parameters.data_shift.local_epsilon;
  if (!finite_at_least_zero(local_epsilon)) {
    return invalid_argument("Task.data_shift.local_epsilon must be finite and >= 0");
  }
  if (local_epsilon > 0 && !sketch::stability_params(local_epsilon, kStabilityDelta).ok()) {
    return invalid_argument("Task.data_shift.local_epsilon is outside [0.001, 20]");
  }
  if (task.trust != fedstat_v1_TrustModel_NONE && local_epsilon == 0) {
    // Nothing else noises a sketch: no Skellam share (DIST), no central noise on the server
    // (TRUSTED, TAGG: host_server/tasks/task_plan.cpp declares none for data shift), so a
    // private task without local noise would release exact counters.
    return invalid_argument(
        "Task.data_shift.local_epsilon must be > 0 unless trust is NONE (nothing else noises a "
        "sketch)");
  }
  if (task.bits != 64) return invalid_argument("Task.bits must be 64 for DATA_SHIFT");
  if (task.data_words != 0) return invalid_argument("Task.data_words must be 0 for DATA_SHIFT");
  if (uint64_t{p.rows} * p.width + 1 != task.vector_length) {
    return invalid_argument("Task.vector_length must be rows x width + 1 for DATA_SHIFT");
  }
  return Status();
}

AppData histogram_data(const fedstat_v1_Task&, ClientData& data) {
  AppData held;
  const histogram::SparseHistogram* histogram = data.histogram();
  held.held = histogram != nullptr;
  if (held.held) held.local_size = histogram->capacity();
  return held;
}

Status no_task_data(const fedstat_v1_Task&, Span<const uint64_t>) {
  return Status();  // data_words is 0
}

size_t data_shift_scratch(const fedstat_v1_Task& task, size_t local_size) {
  size_t bytes = round_up8(sketch::shift_sketch_memory_bytes(sketch_params_of(task)));
  if (task.parameters.data_shift.local_epsilon > 0) {
    bytes = size_add(bytes, size_mul(sizeof(histogram::SparseEntry), local_size));
  }
  return bytes;
}

// Local noise only (no Skellam share): the shares assumed honest do not matter.
Status data_shift_spend(const fedstat_v1_Task& task, uint32_t, DeviceSpend& spend) {
  const double local_epsilon = task.parameters.data_shift.local_epsilon;
  if (local_epsilon > 0) {  // the stability histogram's own guarantee
    if (spend.epsilon < local_epsilon) spend.epsilon = local_epsilon;
    if (spend.delta < kStabilityDelta) spend.delta = kStabilityDelta;
  }
  return Status();
}

Status build_from_histogram(const fedstat_v1_Task& task, ClientData& data, Span<const uint64_t>,
                            RandomBits& noise, MutableByteSpan scratch, Span<uint64_t> out) {
  const histogram::SparseHistogram* histogram = data.histogram();
  if (histogram == nullptr) return not_found("the app holds no histogram");
  return build_data_shift(task, *histogram, noise, scratch, out);
}

}  // namespace

const TaskKindSupport kDataShiftKind = {fedstat_v1_TaskKind_DATA_SHIFT,
                                        /*dist_share=*/false,
                                        validate_data_shift,
                                        histogram_data,
                                        no_task_data,
                                        data_shift_scratch,
                                        data_shift_spend,
                                        build_from_histogram};

Status build_data_shift(const fedstat_v1_Task& task, const histogram::SparseHistogram& local,
                        RandomBits& noise, MutableByteSpan scratch, Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(
      check_builder_task(task, kDataShiftKind, out.size(), "not a DATA_SHIFT task"));
  const sketch::ShiftSketchParams p = sketch_params_of(task);
  const size_t sketch_bytes = sketch::shift_sketch_memory_bytes(p);
  Arena arena(scratch);
  Result<Span<uint64_t>> sketch_words = arena.allocate_array<uint64_t>(round_up8(sketch_bytes) / 8);
  if (!sketch_words.ok()) return resource_exhausted("scratch is smaller than scratch_bytes(task)");
  sketch::ShiftSketch sketch;
  FEDSTAT_RETURN_IF_ERROR(sketch.init(
      p, MutableByteSpan(reinterpret_cast<uint8_t*>(sketch_words.value().data()), sketch_bytes)));

  const histogram::SparseHistogram* source = &local;
  histogram::SparseHistogram noisy;
  if (task.parameters.data_shift.local_epsilon > 0) {
    Result<Span<histogram::SparseEntry>> table =
        arena.allocate_array<histogram::SparseEntry>(local.capacity());
    if (!table.ok()) return resource_exhausted("scratch is smaller than scratch_bytes(task)");
    FEDSTAT_RETURN_IF_ERROR(noisy.init(table.value()));
    Result<sketch::StabilityParams> stability =
        sketch::stability_params(task.parameters.data_shift.local_epsilon, kStabilityDelta);
    FEDSTAT_RETURN_IF_ERROR(stability.status());
    FEDSTAT_RETURN_IF_ERROR(sketch::stability_histogram(local, stability.value(), noise, noisy));
    source = &noisy;
  }
  // Only the candidates [0, domain) are sketched: an item beyond them is never estimated, and
  // in the counters it would only add to the collisions and to what the server must allow a
  // counter to hold (report_bounds.h bounds a counter by the candidates' weights). Every item
  // counts in the total, so the estimate's shares remain shares of the whole histogram. Modulo
  // 2^64, as the sketch's own total.
  const uint32_t domain = task.parameters.data_shift.domain;
  uint64_t total = 0;
  const Span<const histogram::SparseEntry> slots = source->slots();
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].count == 0) continue;
    total += slots[i].count;
    if (slots[i].id < domain) FEDSTAT_RETURN_IF_ERROR(sketch.add(slots[i].id, slots[i].count));
  }
  size_t next = 0;
  for (uint32_t r = 0; r < p.rows; ++r) {
    for (uint32_t b = 0; b < p.width; ++b)
      out[next++] = static_cast<uint64_t>(sketch.counter(r, b));
  }
  out[next] = total;
  return Status();
}

}  // namespace client
}  // namespace fedstat
