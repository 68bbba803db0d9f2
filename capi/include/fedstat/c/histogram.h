/** @file
 * fedstat C ABI: a device's local histogram, dense (items 0..domain-1) or sparse (up to
 * `capacity` distinct 32-bit ids), in caller memory; its versioned CRC-checked blob; and the KL
 * answer read from it. The C form of sdk/histogram/dense_histogram.h, sparse_histogram.h and
 * sdk/tasks/kl_answer_task.h: the same refusals, the same blob bytes.
 *
 * A refused add changes no count (its mass is counted in `dropped`); a refused load changes
 * nothing.
 *
 * @memory caller's, FEDSTAT_ALIGNMENT-aligned; fedstat_histogram_dense_size/_sparse_size:
 *   dense:  H + 4*domain bytes      sparse: H + 8*capacity bytes
 * where H is the handle (96 bytes on 64-bit hosts; the size functions include it). Blob:
 * 32 + 4*domain (dense) or 32 + 8*entries (sparse) bytes (fedstat_histogram_serialized_size).
 * @paper 001 §3 (the local histograms); 000 Algorithms 1-3 (KL answers).
 */
#ifndef FEDSTAT_C_HISTOGRAM_H_
#define FEDSTAT_C_HISTOGRAM_H_

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A dense or sparse histogram (opaque), in caller memory. */
typedef struct fedstat_histogram fedstat_histogram;
struct fedstat_random;

/** The two kinds of histogram (fedstat_histogram_info.kind). */
enum fedstat_histogram_kind {
  FEDSTAT_HISTOGRAM_DENSE = 1, /**< counters for items 0..domain-1 */
  FEDSTAT_HISTOGRAM_SPARSE = 2 /**< a hash table of up to `capacity` (id, count) entries */
};

/** What a histogram holds (fedstat_histogram_get_info). */
typedef struct fedstat_histogram_info {
  int32_t kind;     /**< enum fedstat_histogram_kind */
  size_t slots;     /**< dense: the domain; sparse: the capacity */
  size_t items;     /**< items with a count > 0 */
  uint64_t total;   /**< the mass held, sum of the counts */
  uint64_t dropped; /**< the mass refused (held at 2^64-1) */
} fedstat_histogram_info;

/** The memory a dense histogram of `domain` items needs, in `*bytes`.
 * @errors FEDSTAT_INVALID_ARGUMENT: domain 0 or above 2^32-1, or a NULL `bytes`.
 * FEDSTAT_RESOURCE_EXHAUSTED: the size exceeds SIZE_MAX. */
fedstat_status fedstat_histogram_dense_size(size_t domain, size_t* bytes);
/** As fedstat_histogram_dense_size, for a sparse histogram of `capacity` entries.
 * @errors FEDSTAT_INVALID_ARGUMENT: a capacity that is not a power of two >= 2, or a NULL
 * `bytes`. FEDSTAT_RESOURCE_EXHAUSTED: the size exceeds SIZE_MAX. */
fedstat_status fedstat_histogram_sparse_size(size_t capacity, size_t* bytes);

/** An empty dense histogram in `memory` (at least fedstat_histogram_dense_size bytes,
 * FEDSTAT_ALIGNMENT-aligned). *out points into `memory`, which must outlive it; no destroy is
 * needed (the histogram holds nothing else).
 * @errors FEDSTAT_INVALID_ARGUMENT: domain 0 or above 2^32-1; `memory` or `out` is NULL, or
 * `memory` is not FEDSTAT_ALIGNMENT-aligned. FEDSTAT_RESOURCE_EXHAUSTED: `memory_bytes` is too
 * small (or the size exceeds SIZE_MAX). Nothing is written into `memory` on any of these. */
fedstat_status fedstat_histogram_create_dense(void* memory, size_t memory_bytes, size_t domain,
                                              fedstat_histogram** out);
/** As fedstat_histogram_create_dense, for an empty sparse histogram of `capacity` entries (at
 * least fedstat_histogram_sparse_size bytes).
 * @errors FEDSTAT_INVALID_ARGUMENT: a capacity that is not a power of two >= 2; `memory` or
 * `out` is NULL, or `memory` is not FEDSTAT_ALIGNMENT-aligned. FEDSTAT_RESOURCE_EXHAUSTED:
 * `memory_bytes` is too small (or the size exceeds SIZE_MAX). Nothing is written into `memory`
 * on any of these. */
fedstat_status fedstat_histogram_create_sparse(void* memory, size_t memory_bytes, size_t capacity,
                                               fedstat_histogram** out);

/** Adds `count` to `item`; a refused add changes no count and adds its mass to `dropped`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram (nothing counted).
 * FEDSTAT_OUT_OF_RANGE: an item outside a dense domain. FEDSTAT_RESOURCE_EXHAUSTED: a 32-bit
 * count would overflow, or a new id finds the sparse table full. */
fedstat_status fedstat_histogram_add(fedstat_histogram* histogram, uint32_t item, uint32_t count);
/** Sets every count, the total and the dropped mass to 0.
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram. */
fedstat_status fedstat_histogram_clear(fedstat_histogram* histogram);
/** The count of `item` in `*count` (0 for an item not held, or outside a dense domain).
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram, or `count` is NULL. */
fedstat_status fedstat_histogram_count(const fedstat_histogram* histogram, uint32_t item,
                                       uint32_t* count);
/** The histogram's kind, size and mass, in `*info`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram, or `info` is NULL. */
fedstat_status fedstat_histogram_get_info(const fedstat_histogram* histogram,
                                          fedstat_histogram_info* info);

/** The size of the histogram's blob (sdk/histogram/histogram_blob.h) now, in `*bytes`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram, or `bytes` is NULL.
 * FEDSTAT_RESOURCE_EXHAUSTED: the size exceeds SIZE_MAX. */
fedstat_status fedstat_histogram_serialized_size(const fedstat_histogram* histogram, size_t* bytes);
/** Writes the blob to `out` (`capacity` bytes); *written = its size.
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram, `out` is NULL with a
 * nonzero `capacity`, or `written` is NULL. FEDSTAT_RESOURCE_EXHAUSTED: `capacity` is smaller
 * than fedstat_histogram_serialized_size. */
fedstat_status fedstat_histogram_serialize(fedstat_histogram* histogram, uint8_t* out,
                                           size_t capacity, size_t* written);
/** Replaces the contents with the blob's, after checking the whole blob; a refusal changes
 * nothing. A sparse histogram must be empty first (fedstat_histogram_clear).
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram, `blob` is NULL with a
 * nonzero `blob_bytes`, the blob holds the other kind, or a dense blob another domain.
 * FEDSTAT_DATA_LOSS: the blob is corrupt or truncated (magic, version, CRC, length, counts that
 * do not add up to the total; sparse: a zero count or a repeated id).
 * FEDSTAT_FAILED_PRECONDITION: a sparse histogram that is not empty (items or dropped mass).
 * FEDSTAT_RESOURCE_EXHAUSTED: a sparse blob with more items than the table's capacity. */
fedstat_status fedstat_histogram_deserialize(fedstat_histogram* histogram, const uint8_t* blob,
                                             size_t blob_bytes);
/** The same blob persisted as the named blob `name` (platform storage; names: 1-64 characters of
 * [A-Za-z0-9_.-], not starting with '.'). `scratch` holds the blob: at least
 * fedstat_histogram_serialized_size bytes to save, and the stored blob's size to load.
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram, `name` is NULL,
 * `scratch` is NULL with a nonzero `scratch_bytes`, or storage refuses the name (POSIX: or the
 * path it makes is too long), or the blob exceeds storage's limit (0x7FFFFFF0 bytes).
 * FEDSTAT_RESOURCE_EXHAUSTED: `scratch` is smaller than
 * fedstat_histogram_serialized_size. FEDSTAT_UNAVAILABLE: storage could not be written. */
fedstat_status fedstat_histogram_save(fedstat_histogram* histogram, const char* name,
                                      uint8_t* scratch, size_t scratch_bytes);
/** Reads the blob stored as `name` (see fedstat_histogram_save) into `scratch` and replaces the
 * contents with it, as fedstat_histogram_deserialize; a refusal changes nothing.
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram, `name` is NULL,
 * `scratch` is NULL with a nonzero `scratch_bytes`, storage refuses the name, or the stored blob
 * holds the other kind or (dense) another domain. FEDSTAT_NOT_FOUND: no blob is stored as
 * `name`. FEDSTAT_RESOURCE_EXHAUSTED: `scratch` is smaller than the stored blob, or a sparse blob
 * holds more items than the table's capacity. FEDSTAT_DATA_LOSS: the stored blob is corrupt or
 * truncated. FEDSTAT_FAILED_PRECONDITION: a sparse histogram that is not empty.
 * FEDSTAT_UNAVAILABLE: storage could not be read. FEDSTAT_INTERNAL: the storage backend
 * misbehaved. */
fedstat_status fedstat_histogram_load(fedstat_histogram* histogram, const char* name,
                                      uint8_t* scratch, size_t scratch_bytes);

/** The KL answer (PRIEST-KLD, client side): counts[t] = the count at points[t] (t < n) and
 * *total = the mass held. On an error the counts hold no complete answer.
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram, `points` or `counts`
 * is NULL with a nonzero `n`, or `total` is NULL. */
fedstat_status fedstat_histogram_kl_answer(fedstat_histogram* histogram, const uint32_t* points,
                                           size_t n, int64_t* counts, uint64_t* total);
/** As fedstat_histogram_kl_answer, in the Dist model: adds to each count a Skellam share
 * Sk(lambda), lambda rounded up to the sampler's rational grid, drawn from `noise` (its bit
 * reader). On an error the counts hold no complete answer (and after a failed draw `noise` must
 * be discarded); the error is recorded in `histogram`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `histogram` is NULL or not a histogram; `points` or `counts`
 * is NULL with a nonzero `n`, or `total` is NULL; `noise` is NULL or not a random source; lambda
 * is NaN or <= 0. FEDSTAT_OUT_OF_RANGE: lambda is 2^31 or more, or a noised count would
 * overflow int64. FEDSTAT_UNAVAILABLE, FEDSTAT_INTERNAL: the random source failed (as
 * fedstat_random_fill). */
fedstat_status fedstat_histogram_kl_answer_noised(fedstat_histogram* histogram,
                                                  const uint32_t* points, size_t n, double lambda,
                                                  struct fedstat_random* noise, int64_t* counts,
                                                  uint64_t* total);

/** The message of the last call on `histogram` that failed ("" if none; a fixed message when
 * `histogram` is NULL or not a histogram). */
const char* fedstat_histogram_last_error(const fedstat_histogram* histogram);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_HISTOGRAM_H_ */
