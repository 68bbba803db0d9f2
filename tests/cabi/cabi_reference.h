/* The C ABI tests' reference: the same computations through the C++ API directly (never through
 * capi/), callable from C and Rust, so a test can compare the C ABI's bytes with the C++ API's
 * for the same inputs and seeds. Also the golden values of tests/common/golden_vectors.h, which
 * were pinned independently of the C ABI. Every function returns 0 on success, else the C++
 * status code. Memory: each call's own stack and the caller's buffers. Paper: none.
 */
#ifndef FEDSTAT_TESTS_CABI_CABI_REFERENCE_H_
#define FEDSTAT_TESTS_CABI_CABI_REFERENCE_H_

#include <stddef.h>
#include <stdint.h>

#include <fedstat/fedstat.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Golden values (tests/common/golden_vectors.h). */
uint32_t cabi_ref_golden_sketch_report_crc(void); /* 400 updates, see shift_sketch_test.cpp */
uint32_t cabi_ref_golden_buffered_sketch_report_crc(void); /* the same through a 64-slot buffer */
uint32_t cabi_ref_golden_sparse_blob_crc(void);            /* 200 adds into a capacity-256 table */
void cabi_ref_golden_seeded_stream0(uint8_t out[32]);      /* SeededStream(00..1f, stream 0) */
uint32_t cabi_ref_crc32(const uint8_t* bytes, size_t size);

/* A sketch report from single updates (items[i], counts[i]) in order. */
int cabi_ref_sketch_from_updates(const fedstat_sketch_params* params, const uint32_t* items,
                                 const int64_t* counts, size_t n, uint8_t* out, size_t capacity,
                                 size_t* written);
/* A histogram (kind FEDSTAT_HISTOGRAM_DENSE or _SPARSE, slots = domain or capacity) built by
 * adding (ids[i], counts[i]) in order; then its blob, or the sketch report of its items. */
int cabi_ref_histogram_blob(int32_t kind, size_t slots, const uint32_t* ids, const uint32_t* counts,
                            size_t n, uint8_t* out, size_t capacity, size_t* written);
int cabi_ref_sketch_from_histogram(const fedstat_sketch_params* params, int32_t kind, size_t slots,
                                   const uint32_t* ids, const uint32_t* counts, size_t n,
                                   uint8_t* out, size_t capacity, size_t* written);
/* KL answers from that histogram at `points`: exact (lambda 0) or with Sk(lambda) shares drawn
 * through one RandomBits over SeededStream(seed, stream). */
int cabi_ref_kl_answer(int32_t kind, size_t slots, const uint32_t* ids, const uint32_t* counts,
                       size_t n, const uint32_t* points, size_t n_points, double lambda,
                       const uint8_t seed[32], uint64_t stream, int64_t* answers, uint64_t* total);
/* A heterogeneity contribution: round `stage` (1: out_length 2d + 2; 2: 2, with the host's
 * means), encoded at `scale`, plus Sk(lambda) shares (lambda 0: none) from SeededStream(seed,
 * stream). */
int cabi_ref_heterogeneity(const fedstat_heterogeneity_config* config, int stage, const double* x,
                           size_t d, const double* mean, const double* weighted_mean, double scale,
                           double lambda, const uint8_t seed[32], uint64_t stream, int64_t* out,
                           size_t out_length);
/* tasks::model_update_report with one RandomBits over SeededStream(seed, stream), in 32-bit
 * words (widened) when bits <= 32 as the Client does, else 64-bit words. */
int cabi_ref_model_update(const fedstat_model_update_config* config, const float* features,
                          const int8_t* labels, size_t n, size_t d, const double* model,
                          double lambda, const uint8_t seed[32], uint64_t stream, uint64_t* out,
                          size_t out_length);
/* A BudgetLedger of `capacity` spends stored as blob `config->blob_name` in `directory`: loaded,
 * then charged spends[i] at now[i] (every charge's status in statuses[i]). The storage
 * directory stays `directory`. */
int cabi_ref_ledger(const char* directory, const fedstat_ledger_config* config, size_t capacity,
                    const fedstat_privacy_spend* spends, const uint64_t* now, size_t n,
                    int32_t* statuses);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_TESTS_CABI_CABI_REFERENCE_H_ */
