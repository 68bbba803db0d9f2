// Mask expansion for secure aggregation: PRG(seed) added to or subtracted from a vector modulo
// 2^bits (Bonawitz et al. 2017 §4: y_u = x_u + PRG(b_u) + Σ_{v<u} PRG(s_uv) − Σ_{v>u} PRG(s_uv)).
//
// PRG(seed): key = HKDF-SHA256(salt = the session hash, ikm = seed, info = "fedstat secagg mask
// v1" || kind || BE32(length) || bits), then the AES-256-CTR keystream from a zero counter block;
// word i is bytes [w·i, w·i + w) little-endian with w = 4 when bits ≤ 32 and 8 otherwise,
// reduced modulo 2^bits. Binding the session, the kind (self or pairwise), the length and the
// width into the key means two vectors never share a keystream.
//
// Memory: a 256-byte keystream buffer and an Aes256Ctr on the stack. Paper: Bonawitz et al. 2017
// §4 (masking); 000 Algorithm 3, 001 §4.7, 002 §2.2 (SecAgg in the Dist models).
#ifndef FEDSTAT_SDK_SECAGG_MASK_H_
#define FEDSTAT_SDK_SECAGG_MASK_H_

#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace secagg {

enum class MaskKind : uint8_t { kSelf = 1, kPairwise = 2 };

// vector[i] = (vector[i] ± PRG(seed)[i]) mod 2^bits; bits in 1..64 (1..32 for uint32 words);
// at most 2^32 − 1 words (the length enters the key as 32 bits), kInvalidArgument otherwise.
Status apply_mask(ByteSpan session_hash, ByteSpan seed, MaskKind kind, bool subtract, unsigned bits,
                  Span<uint64_t> vector);
Status apply_mask(ByteSpan session_hash, ByteSpan seed, MaskKind kind, bool subtract, unsigned bits,
                  Span<uint32_t> vector);

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_MASK_H_
