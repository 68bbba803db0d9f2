/* fedstat C ABI: a random source, where every noise draw, shuffle and key comes from. Two kinds,
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
 * Memory (caller's, FEDSTAT_ALIGNMENT-aligned): fedstat_random_size bytes, the same for both
 * kinds (the larger of the two C++ objects, the reader and its 64-byte buffer: 680 bytes on
 * 64-bit hosts).
 * Paper: 002 §2.2-2.3, 000 Algorithm 3 (noise from a CSPRNG); 001 §3 (public seeded hashes).
 */
#ifndef FEDSTAT_C_RANDOM_H_
#define FEDSTAT_C_RANDOM_H_

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fedstat_random fedstat_random;

fedstat_status fedstat_random_size(size_t* bytes);
/* The AES-256-CTR keystream under `seed`, counter block BE64(stream) || BE64(0). */
fedstat_status fedstat_random_create_seeded(void* memory, size_t memory_bytes,
                                            const uint8_t seed[32], uint64_t stream,
                                            fedstat_random** out);
/* CTR_DRBG seeded from the platform's entropy; `personalization` (up to 256 bytes, may be NULL
 * with length 0) should tell devices apart. FEDSTAT_UNAVAILABLE when the platform has none. */
fedstat_status fedstat_random_create_csprng(void* memory, size_t memory_bytes,
                                            const uint8_t* personalization,
                                            size_t personalization_bytes, fedstat_random** out);
/* Wipes the source's state (keys, DRBG state, buffered bits). The handle is unusable after. */
fedstat_status fedstat_random_destroy(fedstat_random* random);

/* `size` bytes straight from the source (not through the bit reader). */
fedstat_status fedstat_random_fill(fedstat_random* random, uint8_t* out, size_t size);
/* values[i] += an exact Skellam Sk(lambda) draw, i < n, lambda rounded up to the sampler's
 * rational grid (sdk/noise/add_noise.h). FEDSTAT_INVALID_ARGUMENT for lambda NaN or <= 0,
 * FEDSTAT_OUT_OF_RANGE above 2^31 or for a sum that would overflow (the values before that index
 * already hold noise: discard the vector). */
fedstat_status fedstat_random_add_skellam(fedstat_random* random, int64_t* values, size_t n,
                                          double lambda);

const char* fedstat_random_last_error(const fedstat_random* random);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_RANDOM_H_ */
