/** @file
 * fedstat C ABI: the data-shift sketch (Cormode-Ting CountSketch + heap with integer counters)
 * and its report, the bytes a device sends. The C form of sdk/sketch/shift_sketch.h and
 * sketch_budget.h: the same parameters, the same report bytes for the same updates and seed on
 * every architecture.
 *
 * A device's report: fill fedstat_sketch_params (the task's R, w, H, k and 32-byte seed, or
 * fedstat_sketch_params_for_budget), create the sketch in caller memory, add the histogram (or
 * single updates), serialize.
 *
 * @memory caller's, FEDSTAT_ALIGNMENT-aligned; fedstat_sketch_size:
 *   S + 8*R*w + 8*H + 4*(H + H/4 + 1) + 4*C bytes
 * where S is the handle (the C++ ShiftSketch object: 976 bytes on 64-bit hosts; the size
 * function includes it) and C the pre-aggregation buffer's slots. Report: 80 + 8*R*w + 4*(items in
 * the heap) + 4 bytes (fedstat_sketch_report_size; at most 84 + 8*R*w + 4*H).
 * @paper 001 §4.2-4.6, Algorithm 1; §5.1 (parameters from a budget).
 */
#ifndef FEDSTAT_C_SKETCH_H_
#define FEDSTAT_C_SKETCH_H_

#include "base.h"
#include "histogram.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A data-shift sketch (opaque), in caller memory. */
typedef struct fedstat_sketch fedstat_sketch;

/** A sketch's parameters: R, w, H, k and the seed are the task's; buffer_slots is the device's
 * own (memory only). Also refused: R*w above 2^32, H above 2^30. */
typedef struct fedstat_sketch_params {
  uint32_t rows;          /**< R, 1..15 */
  uint32_t width;         /**< w >= 1 */
  uint32_t heap_capacity; /**< H >= 1 */
  uint32_t k;             /**< the sampling parameter, >= 1 */
  uint32_t buffer_slots;  /**< C: 0, or a power of two in 64..2^24 (device memory only) */
  uint8_t seed[32];       /**< the task's seed */
} fedstat_sketch_params;

/** Parameters for a sketch of `budget_bytes` (sketch_budget.h's measured rule: 35% of the bytes
 * to the heap, k = 4H, the buffer in the bytes the heap index leaves free), in `*params`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `seed` or `params` is NULL, or `budget_bytes` is below
 * 1 KiB. FEDSTAT_OUT_OF_RANGE: `budget_bytes` is above 2 GiB. */
fedstat_status fedstat_sketch_params_for_budget(size_t budget_bytes, const uint8_t seed[32],
                                                fedstat_sketch_params* params);

/** The memory fedstat_sketch_create needs, in `*bytes`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `params` or `bytes` is NULL, or parameters the sketch refuses
 * (see fedstat_sketch_params). FEDSTAT_RESOURCE_EXHAUSTED: the size exceeds SIZE_MAX. */
fedstat_status fedstat_sketch_size(const fedstat_sketch_params* params, size_t* bytes);
/** An empty sketch in `memory` (at least fedstat_sketch_size bytes, FEDSTAT_ALIGNMENT-aligned);
 * *out points into `memory`, which must outlive it; no destroy is needed.
 * @errors FEDSTAT_INVALID_ARGUMENT: `params`, `memory` or `out` is NULL, parameters the sketch
 * refuses, or `memory` not FEDSTAT_ALIGNMENT-aligned. FEDSTAT_RESOURCE_EXHAUSTED: `memory_bytes`
 * is below fedstat_sketch_size (or that size exceeds SIZE_MAX). Nothing is written into `memory`
 * on any of these. */
fedstat_status fedstat_sketch_create(void* memory, size_t memory_bytes,
                                     const fedstat_sketch_params* params, fedstat_sketch** out);

/** One update: `count` (may be negative) of `item`. Counters wrap modulo 2^64: any item and
 * count is accepted.
 * @errors FEDSTAT_INVALID_ARGUMENT: `sketch` is NULL or not a sketch; nothing else fails. */
fedstat_status fedstat_sketch_add(fedstat_sketch* sketch, uint32_t item, int64_t count);
/** Adds every item of `histogram` with a count > 0, in its own order (dense: ascending items;
 * sparse: table order), as the Client's DATA_SHIFT contribution does.
 * @errors FEDSTAT_INVALID_ARGUMENT: `sketch` is NULL or not a sketch, or `histogram` is NULL or
 * not a histogram (recorded in `sketch`); nothing is added then. */
fedstat_status fedstat_sketch_add_histogram(fedstat_sketch* sketch,
                                            const fedstat_histogram* histogram);
/** The report's size now, in `*bytes` (it grows with the heap's items).
 * @errors FEDSTAT_INVALID_ARGUMENT: `sketch` is NULL or not a sketch, or `bytes` is NULL.
 * FEDSTAT_RESOURCE_EXHAUSTED: the size exceeds SIZE_MAX. */
fedstat_status fedstat_sketch_report_size(fedstat_sketch* sketch, size_t* bytes);
/** Writes the report to `out` (`capacity` bytes): header "FSK1", the counters, the heap's items,
 * CRC-32; *written = its size.
 * @errors FEDSTAT_INVALID_ARGUMENT: `sketch` is NULL or not a sketch, `out` is NULL with a
 * nonzero `capacity`, or `written` is NULL. FEDSTAT_RESOURCE_EXHAUSTED: `capacity` is smaller
 * than fedstat_sketch_report_size. */
fedstat_status fedstat_sketch_serialize(fedstat_sketch* sketch, uint8_t* out, size_t capacity,
                                        size_t* written);

/** The message of the last call on `sketch` that failed ("" if none; a fixed message when
 * `sketch` is NULL or not a sketch). */
const char* fedstat_sketch_last_error(const fedstat_sketch* sketch);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_SKETCH_H_ */
