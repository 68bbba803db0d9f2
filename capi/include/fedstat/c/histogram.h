/* fedstat C ABI: a device's local histogram, dense (items 0..domain-1) or sparse (up to
 * `capacity` distinct 32-bit ids), in caller memory; its versioned CRC-checked blob; and the KL
 * answer read from it. The C form of sdk/histogram/dense_histogram.h, sparse_histogram.h and
 * sdk/tasks/kl_answer_task.h: the same refusals, the same blob bytes.
 *
 * Memory (caller's, FEDSTAT_ALIGNMENT-aligned; fedstat_histogram_dense_size/_sparse_size):
 *   dense:  H + 4*domain bytes      sparse: H + 8*capacity bytes
 * where H is the handle (96 bytes on 64-bit hosts; the size functions include it). Blob:
 * 32 + 4*domain (dense) or 32 + 8*entries (sparse) bytes (fedstat_histogram_serialized_size).
 * A refused add changes no count (its mass is counted in `dropped`); a refused load changes
 * nothing. Paper: 001 §3 (the local histograms); 000 Algorithms 1-3 (KL answers).
 */
#ifndef FEDSTAT_C_HISTOGRAM_H_
#define FEDSTAT_C_HISTOGRAM_H_

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fedstat_histogram fedstat_histogram;
struct fedstat_random;

enum fedstat_histogram_kind { FEDSTAT_HISTOGRAM_DENSE = 1, FEDSTAT_HISTOGRAM_SPARSE = 2 };

typedef struct fedstat_histogram_info {
  int32_t kind;     /* enum fedstat_histogram_kind */
  size_t slots;     /* dense: the domain; sparse: the capacity */
  size_t items;     /* items with a count > 0 */
  uint64_t total;   /* the mass held, sum of the counts */
  uint64_t dropped; /* the mass refused (held at 2^64-1) */
} fedstat_histogram_info;

/* The memory a histogram needs. FEDSTAT_INVALID_ARGUMENT: domain 0, a capacity that is not a
 * power of two >= 2, or a NULL `bytes`; FEDSTAT_RESOURCE_EXHAUSTED when it exceeds SIZE_MAX. */
fedstat_status fedstat_histogram_dense_size(size_t domain, size_t* bytes);
fedstat_status fedstat_histogram_sparse_size(size_t capacity, size_t* bytes);

/* An empty histogram in `memory` (at least the size above, FEDSTAT_ALIGNMENT-aligned; too small:
 * FEDSTAT_RESOURCE_EXHAUSTED and nothing written). *out points into `memory`, which must outlive
 * it; no destroy is needed (the histogram holds nothing else). */
fedstat_status fedstat_histogram_create_dense(void* memory, size_t memory_bytes, size_t domain,
                                              fedstat_histogram** out);
fedstat_status fedstat_histogram_create_sparse(void* memory, size_t memory_bytes, size_t capacity,
                                               fedstat_histogram** out);

/* Adds `count` to `item`. FEDSTAT_OUT_OF_RANGE: an item outside a dense domain;
 * FEDSTAT_RESOURCE_EXHAUSTED: a 32-bit count would overflow, or a new id finds the sparse table
 * full. */
fedstat_status fedstat_histogram_add(fedstat_histogram* histogram, uint32_t item, uint32_t count);
fedstat_status fedstat_histogram_clear(fedstat_histogram* histogram);
fedstat_status fedstat_histogram_count(const fedstat_histogram* histogram, uint32_t item,
                                       uint32_t* count);
fedstat_status fedstat_histogram_get_info(const fedstat_histogram* histogram,
                                          fedstat_histogram_info* info);

/* The blob (histogram_blob.h): its size now; serialize writes it (FEDSTAT_RESOURCE_EXHAUSTED
 * when `capacity` is smaller; *written = its size); deserialize replaces the contents after
 * checking the whole blob (FEDSTAT_DATA_LOSS for a corrupt one; a sparse histogram must be
 * empty first, else FEDSTAT_FAILED_PRECONDITION). */
fedstat_status fedstat_histogram_serialized_size(const fedstat_histogram* histogram, size_t* bytes);
fedstat_status fedstat_histogram_serialize(fedstat_histogram* histogram, uint8_t* out,
                                           size_t capacity, size_t* written);
fedstat_status fedstat_histogram_deserialize(fedstat_histogram* histogram, const uint8_t* blob,
                                             size_t blob_bytes);
/* The same blob persisted as the named blob `name` (platform storage; names: 1-64 characters of
 * [A-Za-z0-9_.-]). `scratch` holds the blob: at least fedstat_histogram_serialized_size bytes to
 * save, and the stored blob's size to load (FEDSTAT_RESOURCE_EXHAUSTED otherwise). */
fedstat_status fedstat_histogram_save(fedstat_histogram* histogram, const char* name,
                                      uint8_t* scratch, size_t scratch_bytes);
fedstat_status fedstat_histogram_load(fedstat_histogram* histogram, const char* name,
                                      uint8_t* scratch, size_t scratch_bytes);

/* KL answers (PRIEST-KLD, client side): counts[t] = the count at points[t] (t < n) and *total =
 * the mass held. The _noised form (Dist model) adds to each count a Skellam share Sk(lambda),
 * lambda rounded up to the sampler's rational grid, drawn from `noise`. On an error the counts
 * hold no complete answer. */
fedstat_status fedstat_histogram_kl_answer(fedstat_histogram* histogram, const uint32_t* points,
                                           size_t n, int64_t* counts, uint64_t* total);
fedstat_status fedstat_histogram_kl_answer_noised(fedstat_histogram* histogram,
                                                  const uint32_t* points, size_t n, double lambda,
                                                  struct fedstat_random* noise, int64_t* counts,
                                                  uint64_t* total);

/* The message of the last call on `histogram` that failed ("" if none). */
const char* fedstat_histogram_last_error(const fedstat_histogram* histogram);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_HISTOGRAM_H_ */
