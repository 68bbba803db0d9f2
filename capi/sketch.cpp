// The C ABI's data-shift sketch (c/sketch.h): a ShiftSketch placed in the caller's memory, its
// counters, heap and buffer after it; fed update by update or from a histogram; its report.
#include <string.h>

#include <new>

#include "capi/handle.h"
#include "capi/objects.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/sketch/sketch_budget.h"

struct fedstat_sketch {
  uint32_t magic = fedstat::capi::kSketchMagic;
  const char* last_error = "";
  fedstat::sketch::ShiftSketch sketch;
};

namespace fedstat {
namespace capi {
namespace {

constexpr size_t kHandle = handle_bytes<fedstat_sketch>();

sketch::ShiftSketchParams params_of(const fedstat_sketch_params& c) {
  sketch::ShiftSketchParams p;
  p.rows = c.rows;
  p.width = c.width;
  p.heap_capacity = c.heap_capacity;
  p.k = c.k;
  p.buffer_slots = c.buffer_slots;
  memcpy(p.seed.bytes, c.seed, sizeof(p.seed.bytes));
  return p;
}

// The handle plus the sketch's own memory, or kSizeOverflow.
size_t sketch_bytes(const sketch::ShiftSketchParams& p) {
  return size_add(kHandle, sketch::shift_sketch_memory_bytes(p));
}

bool live(const fedstat_sketch* s) {
  return valid(s, kSketchMagic);
}

}  // namespace
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

fedstat_status fedstat_sketch_params_for_budget(size_t budget_bytes, const uint8_t seed[32],
                                                fedstat_sketch_params* params) {
  if (seed == nullptr || params == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  Seed256 s;
  memcpy(s.bytes, seed, sizeof(s.bytes));
  const Result<sketch::ShiftSketchParams> p = sketch::params_for_budget(budget_bytes, s);
  if (!p.ok()) return code_of(p.status());
  fedstat_sketch_params c = {};
  c.rows = p->rows;
  c.width = p->width;
  c.heap_capacity = p->heap_capacity;
  c.k = p->k;
  c.buffer_slots = p->buffer_slots;
  memcpy(c.seed, p->seed.bytes, sizeof(c.seed));
  *params = c;
  return FEDSTAT_OK;
}

fedstat_status fedstat_sketch_size(const fedstat_sketch_params* params, size_t* bytes) {
  if (params == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  const sketch::ShiftSketchParams p = params_of(*params);
  const Status valid_params = sketch::validate_params(p);
  if (!valid_params.ok()) return code_of(valid_params);
  return size_status(sketch_bytes(p), bytes);
}

fedstat_status fedstat_sketch_create(void* memory, size_t memory_bytes,
                                     const fedstat_sketch_params* params, fedstat_sketch** out) {
  if (params == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  const sketch::ShiftSketchParams p = params_of(*params);
  const Status valid_params = sketch::validate_params(p);
  if (!valid_params.ok()) return code_of(valid_params);
  const fedstat_status checked = check_memory(memory, memory_bytes, sketch_bytes(p), out);
  if (checked != FEDSTAT_OK) return checked;
  fedstat_sketch* s = new (handle_address<fedstat_sketch>(memory)) fedstat_sketch();
  const Status status = s->sketch.init(p, MutableByteSpan(after_handle<fedstat_sketch>(memory),
                                                          sketch::shift_sketch_memory_bytes(p)));
  if (!status.ok()) {  // the parameters were validated: not expected
    s->magic = 0;
    return code_of(status);
  }
  *out = s;
  return FEDSTAT_OK;
}

fedstat_status fedstat_sketch_add(fedstat_sketch* sketch, uint32_t item, int64_t count) {
  if (!live(sketch)) return FEDSTAT_INVALID_ARGUMENT;
  return finish(sketch, sketch->sketch.add(item, count));
}

fedstat_status fedstat_sketch_add_histogram(fedstat_sketch* sketch,
                                            const fedstat_histogram* histogram) {
  if (!live(sketch)) return FEDSTAT_INVALID_ARGUMENT;
  if (!valid(histogram, kHistogramMagic)) {
    return finish(sketch, invalid_argument("add_histogram: not a histogram"));
  }
  Status status;
  if (histogram->kind == FEDSTAT_HISTOGRAM_DENSE) {
    const Span<const uint32_t> counts = histogram->dense.counts();
    for (size_t i = 0; i < counts.size() && status.ok(); ++i) {
      if (counts[i] > 0) status = sketch->sketch.add(static_cast<uint32_t>(i), counts[i]);
    }
  } else {
    for (const histogram::SparseEntry& e : histogram->sparse.slots()) {
      if (e.count > 0) status = sketch->sketch.add(e.id, e.count);
      if (!status.ok()) break;
    }
  }
  return finish(sketch, status);
}

fedstat_status fedstat_sketch_report_size(fedstat_sketch* sketch, size_t* bytes) {
  if (!live(sketch)) return FEDSTAT_INVALID_ARGUMENT;
  const sketch::ShiftSketch& s = sketch->sketch;
  return size_status(sketch::shift_sketch_report_bytes(s.params(), s.heap_size()), bytes);
}

fedstat_status fedstat_sketch_serialize(fedstat_sketch* sketch, uint8_t* out, size_t capacity,
                                        size_t* written) {
  if (!live(sketch)) return FEDSTAT_INVALID_ARGUMENT;
  if ((out == nullptr && capacity != 0) || written == nullptr) {
    return finish(sketch, invalid_argument("serialize: out or written is NULL"));
  }
  const Result<size_t> size = sketch->sketch.serialize(MutableByteSpan(out, capacity));
  if (size.ok()) *written = size.value();
  return finish(sketch, size.status());
}

const char* fedstat_sketch_last_error(const fedstat_sketch* sketch) {
  return live(sketch) ? sketch->last_error : kNotAHandle;
}

}  // extern "C"
