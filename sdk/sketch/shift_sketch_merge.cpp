// ShiftSketch (shift_sketch.h): sketches of equal parameters added or subtracted, and a sketch
// scaled; the heap re-estimated on the new counters.
#include "sdk/sketch/shift_sketch.h"

#include "sdk/sketch/shift_sketch_internal.h"

namespace fedstat {
namespace sketch {

Status ShiftSketch::combine(const ShiftSketch& other, int64_t sign) {
  if (!ready_ || !other.ready_) return failed_precondition("sketch: combine before init");
  if (!same_params(params_, other.params_)) {
    return invalid_argument("sketch: only sketches with equal parameters and seed combine");
  }
  flush();
  other.settle();
  const size_t cells = size_t{params_.rows} * params_.width;
  for (size_t i = 0; i < cells; ++i) {
    counters_[i] = sign > 0 ? counters_[i] + other.counters_[i] : counters_[i] - other.counters_[i];
  }
  const uint64_t t = static_cast<uint64_t>(other.total_);
  total_ = static_cast<int64_t>(sign > 0 ? static_cast<uint64_t>(total_) + t
                                         : static_cast<uint64_t>(total_) - t);
  // Heap merge (001 §4.6): re-estimate this heap's items on the new counters, then offer the
  // other heap's items; the H largest of the union remain.
  for (size_t i = 0; i < heap_size_; ++i)
    heap_[i].magnitude = magnitude_of(estimate(heap_[i].item));
  for (size_t i = heap_parents(); i-- > 0;) sift_down(i, kNotFound);
  for (size_t i = 0; i < other.heap_size_; ++i) offer(other.heap_[i].item);
  return Status();
}

Status ShiftSketch::add_sketch(const ShiftSketch& other) {
  return combine(other, 1);
}
Status ShiftSketch::subtract_sketch(const ShiftSketch& other) {
  return combine(other, -1);
}

Status ShiftSketch::scale(int64_t factor) {
  if (!ready_) return failed_precondition("sketch: scale before init");
  flush();
  const size_t cells = size_t{params_.rows} * params_.width;
  for (size_t i = 0; i < cells; ++i) counters_[i] *= static_cast<uint64_t>(factor);
  total_ = static_cast<int64_t>(static_cast<uint64_t>(total_) * static_cast<uint64_t>(factor));
  for (size_t i = 0; i < heap_size_; ++i)
    heap_[i].magnitude = magnitude_of(estimate(heap_[i].item));
  for (size_t i = heap_parents(); i-- > 0;) sift_down(i, kNotFound);
  return Status();
}

}  // namespace sketch
}  // namespace fedstat
