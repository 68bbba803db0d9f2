/* fedstat C ABI: the data-shift sketch (Cormode-Ting CountSketch + heap with integer counters)
 * and its report, the bytes a device sends. The C form of sdk/sketch/shift_sketch.h and
 * sketch_budget.h: the same parameters, the same report bytes for the same updates and seed on
 * every architecture.
 *
 * A device's report: fill fedstat_sketch_params (the task's R, w, H, k and 32-byte seed, or
 * fedstat_sketch_params_for_budget), create the sketch in caller memory, add the histogram (or
 * single updates), serialize.
 *
 * Memory (caller's, FEDSTAT_ALIGNMENT-aligned; fedstat_sketch_size):
 *   S + 8*R*w + 8*H + 4*(H + H/4 + 1) + 4*C bytes
 * where S is the handle (the C++ ShiftSketch object: 720 bytes on 64-bit hosts; the size
 * function includes it) and C the pre-aggregation buffer's slots. Report: 80 + 8*R*w + 4*(items in
 * the heap) + 4 bytes (fedstat_sketch_report_size; at most 84 + 8*R*w + 4*H). Paper: 001 §4.2-4.6,
 * Algorithm 1; §5.1 (parameters from a budget).
 */
#ifndef FEDSTAT_C_SKETCH_H_
#define FEDSTAT_C_SKETCH_H_

#include "base.h"
#include "histogram.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fedstat_sketch fedstat_sketch;

typedef struct fedstat_sketch_params {
  uint32_t rows;          /* R, 1..15 */
  uint32_t width;         /* w >= 1 */
  uint32_t heap_capacity; /* H >= 1 */
  uint32_t k;             /* the sampling parameter, >= 1 */
  uint32_t buffer_slots;  /* C: 0, or a power of two in 64..2^24 (device memory only) */
  uint8_t seed[32];       /* the task's seed */
} fedstat_sketch_params;

/* Parameters for a sketch of `budget_bytes` (sketch_budget.h's measured rule: 35% of the bytes
 * to the heap, k = 4H, the buffer in the bytes the heap index leaves free).
 * FEDSTAT_INVALID_ARGUMENT below 1 KiB; FEDSTAT_OUT_OF_RANGE above 2 GiB. */
fedstat_status fedstat_sketch_params_for_budget(size_t budget_bytes, const uint8_t seed[32],
                                                fedstat_sketch_params* params);

/* The memory fedstat_sketch_create needs: FEDSTAT_INVALID_ARGUMENT for parameters the sketch
 * refuses; FEDSTAT_RESOURCE_EXHAUSTED when the size exceeds SIZE_MAX. */
fedstat_status fedstat_sketch_size(const fedstat_sketch_params* params, size_t* bytes);
/* An empty sketch in `memory` (at least fedstat_sketch_size bytes, else
 * FEDSTAT_RESOURCE_EXHAUSTED and nothing written); no destroy is needed. */
fedstat_status fedstat_sketch_create(void* memory, size_t memory_bytes,
                                     const fedstat_sketch_params* params, fedstat_sketch** out);

/* One update: `count` (may be negative) of `item`. */
fedstat_status fedstat_sketch_add(fedstat_sketch* sketch, uint32_t item, int64_t count);
/* Every item of `histogram` with a count > 0, in its own order (dense: ascending items; sparse:
 * table order), as the Client's DATA_SHIFT contribution does. */
fedstat_status fedstat_sketch_add_histogram(fedstat_sketch* sketch,
                                            const fedstat_histogram* histogram);
/* The report: its size now, and the bytes (header "FSK1", the counters, the heap's items, CRC-32;
 * FEDSTAT_RESOURCE_EXHAUSTED when `capacity` is smaller). */
fedstat_status fedstat_sketch_report_size(fedstat_sketch* sketch, size_t* bytes);
fedstat_status fedstat_sketch_serialize(fedstat_sketch* sketch, uint8_t* out, size_t capacity,
                                        size_t* written);

const char* fedstat_sketch_last_error(const fedstat_sketch* sketch);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_SKETCH_H_ */
