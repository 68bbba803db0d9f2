/// @file
/// Mask expansion for secure aggregation: PRG(seed) added to or subtracted from a vector modulo
/// 2^bits (Bonawitz et al. 2017 §4: y_u = x_u + PRG(b_u) + Σ_{v<u} PRG(s_uv) − Σ_{v>u} PRG(s_uv)).
///
/// PRG(seed): key = HKDF-SHA256(salt = the session hash, ikm = seed, info = "fedstat secagg mask
/// v1" || kind || BE32(length) || bits), then the AES-256-CTR keystream from a zero counter block;
/// word i is bytes [w·i, w·i + w) little-endian with w = 4 when bits ≤ 32 and 8 otherwise,
/// reduced modulo 2^bits. Binding the session, the kind (self or pairwise), the length and the
/// width into the key means two vectors never share a keystream.
///
/// @memory a 256-byte keystream buffer and an Aes256Ctr on the stack.
/// @paper Bonawitz et al. 2017 §4 (masking); 000 Algorithm 3, 001 §4.7, 002 §2.2 (SecAgg in the
/// Dist models).
#ifndef FEDSTAT_SDK_SECAGG_MASK_H_
#define FEDSTAT_SDK_SECAGG_MASK_H_

#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace secagg {

/// Which mask a PRG stream is for (bound into its key, so the two never share a keystream).
enum class MaskKind : uint8_t {
  kSelf = 1,     ///< the self mask PRG(b_u)
  kPairwise = 2  ///< a pairwise mask PRG(s_uv)
};

/// vector[i] = (vector[i] ± PRG(seed)[i]) mod 2^bits (− when `subtract`), for 64-bit words;
/// bits in 1..64; at most 2^32 − 1 words (the length enters the key as 32 bits).
/// @errors kInvalidArgument: bits outside 1..64, or more than 2^32 − 1 words (vector unchanged).
/// kInternal: HKDF or AES failed inside mbedTLS (not expected).
Status apply_mask(ByteSpan session_hash, ByteSpan seed, MaskKind kind, bool subtract, unsigned bits,
                  Span<uint64_t> vector);
/// vector[i] = (vector[i] ± PRG(seed)[i]) mod 2^bits (− when `subtract`), for 32-bit words;
/// bits in 1..32; at most 2^32 − 1 words.
/// @errors kInvalidArgument: bits outside 1..32, or more than 2^32 − 1 words (vector unchanged).
/// kInternal: HKDF or AES failed inside mbedTLS (not expected).
Status apply_mask(ByteSpan session_hash, ByteSpan seed, MaskKind kind, bool subtract, unsigned bits,
                  Span<uint32_t> vector);

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_MASK_H_
