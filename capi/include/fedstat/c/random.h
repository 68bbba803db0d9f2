/** @file
 * fedstat C ABI: a random source, where every noise draw, shuffle and key comes from. Two kinds,
 * as in C++: a CSPRNG (sdk/base/csprng.h: CTR_DRBG seeded from the platform's entropy) for
 * production, and a seeded stream (sdk/base/seeded_stream.h: AES-256-CTR keystream of a 32-byte
 * seed and a stream id) for tests and public task randomness, which gives the same draws on
 * every architecture.
 *
 * The handle holds the source and one bit reader over it (sdk/base/random_bits.h), which every
 * noise draw made through this ABI reads, in call order: a C program that makes the same calls
 * as a C++ program holding one RandomBits over the same source gets the same draws. The Client
 * reads the source itself. After a failed draw, discard the handle (random_bits.h: never retry a
 * draw on the same reader).
 *
 * @memory caller's, FEDSTAT_ALIGNMENT-aligned: fedstat_random_size bytes, the same for both
 * kinds (the larger of the two C++ objects, the reader and its 64-byte buffer: 680 bytes on
 * 64-bit hosts).
 * @paper 002 §2.2-2.3, 000 Algorithm 3 (noise from a CSPRNG); 001 §3 (public seeded hashes).
 */
#ifndef FEDSTAT_C_RANDOM_H_
#define FEDSTAT_C_RANDOM_H_

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A random source (opaque): a CSPRNG or a seeded stream, and the bit reader over it. */
typedef struct fedstat_random fedstat_random;

/** The memory a random source needs (either kind), in `*bytes`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `bytes` is NULL. */
fedstat_status fedstat_random_size(size_t* bytes);
/** A seeded stream in `memory`: the AES-256-CTR keystream under `seed`, counter block
 * BE64(stream) || BE64(0). *out points into `memory`, which must outlive it.
 * @errors FEDSTAT_INVALID_ARGUMENT: `seed`, `memory` or `out` is NULL, or `memory` is not
 * FEDSTAT_ALIGNMENT-aligned. FEDSTAT_RESOURCE_EXHAUSTED: `memory_bytes` is below
 * fedstat_random_size. Nothing is written into `memory` on either. */
fedstat_status fedstat_random_create_seeded(void* memory, size_t memory_bytes,
                                            const uint8_t seed[32], uint64_t stream,
                                            fedstat_random** out);
/** A CSPRNG in `memory`: CTR_DRBG seeded from the platform's entropy; `personalization` (up to
 * 256 bytes, may be NULL with length 0) should tell devices apart.
 * @errors FEDSTAT_INVALID_ARGUMENT: `personalization` is NULL with a nonzero length or longer
 * than 256 bytes; `memory` or `out` is NULL, or `memory` is not FEDSTAT_ALIGNMENT-aligned.
 * FEDSTAT_RESOURCE_EXHAUSTED: `memory_bytes` is below fedstat_random_size. FEDSTAT_UNAVAILABLE:
 * the platform has no working entropy source (bare metal: no entropy hook installed, or the
 * hook's own error code). FEDSTAT_INTERNAL: mbedTLS failed to seed. A refusal after the memory
 * checks (entropy, seeding) has used `memory` but gives no handle. */
fedstat_status fedstat_random_create_csprng(void* memory, size_t memory_bytes,
                                            const uint8_t* personalization,
                                            size_t personalization_bytes, fedstat_random** out);
/** Wipes the source's state (keys, DRBG state, buffered bits). The handle is unusable after.
 * @errors FEDSTAT_INVALID_ARGUMENT: `random` is NULL, already destroyed or not a random source. */
fedstat_status fedstat_random_destroy(fedstat_random* random);

/** Writes `size` bytes straight from the source to `out` (not through the bit reader).
 * @errors FEDSTAT_INVALID_ARGUMENT: `random` is NULL or not a random source, or `out` is NULL with
 * a nonzero `size`. FEDSTAT_UNAVAILABLE: a CSPRNG's reseed found no entropy (bare metal: or the
 * entropy hook's own code). FEDSTAT_INTERNAL: mbedTLS failed (AES or CTR_DRBG). */
fedstat_status fedstat_random_fill(fedstat_random* random, uint8_t* out, size_t size);
/** values[i] += an exact Skellam Sk(lambda) draw, i < n, lambda rounded up to the sampler's
 * rational grid (sdk/noise/add_noise.h), drawn through the handle's bit reader.
 * @errors FEDSTAT_INVALID_ARGUMENT: `random` is NULL or not a random source, `values` is NULL with
 * a nonzero `n`, or lambda is NaN or <= 0. FEDSTAT_OUT_OF_RANGE: lambda is 2^31 or more, or a sum
 * would overflow int64 (the values before that index already hold noise: discard the vector).
 * FEDSTAT_UNAVAILABLE, FEDSTAT_INTERNAL: the source failed, as in fedstat_random_fill (values
 * before the failing index already hold noise). After a failed draw, discard the handle too. */
fedstat_status fedstat_random_add_skellam(fedstat_random* random, int64_t* values, size_t n,
                                          double lambda);

/** The message of the last call on `random` that failed ("" if none; a fixed message when
 * `random` is NULL or not a random source). */
const char* fedstat_random_last_error(const fedstat_random* random);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_RANDOM_H_ */
