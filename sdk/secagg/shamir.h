// Shamir t-of-n secret sharing of 256-bit secrets over the prime field p = 2^31 + 11.
//
// A microcontroller has no big-integer unit to spare, so (as in Google's federated-compute) the
// secret is cut into nine 31-bit pieces — bits [31k, 31k + 31) of the secret read as a
// little-endian integer, the last piece 8 bits — and each piece is shared with its own random
// polynomial of degree t − 1 over GF(p). Every piece is below 2^31 < p, products of two field
// elements fit 64 bits, and a share is nine 32-bit words (36 bytes). The x-coordinate of a share
// is the recipient's client id (1 ≤ id < p), so shares are bound to who holds them.
//
// ShamirDealer does not store the polynomials: their coefficients are drawn (uniform in [0, p),
// by rejection) from a SeededStream keyed by a secret 32-byte polynomial seed, regenerated for
// each recipient, so dealing to n clients needs O(1) memory and O(n·t) field operations.
// shamir_reconstruct interpolates at 0 from exactly `threshold` shares with distinct x, and
// rejects a result whose pieces exceed their bit widths (inconsistent shares: kDataLoss).
//
// Memory: ShamirDealer 80 bytes + a SeededStream on the stack while dealing; reconstruction
// stack only. Paper: Bonawitz et al. CCS 2017 §4 (SS.share, SS.recon); 000–004 Dist models.
#ifndef FEDSTAT_SDK_SECAGG_SHAMIR_H_
#define FEDSTAT_SDK_SECAGG_SHAMIR_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace secagg {

constexpr uint32_t kShamirPrime = 2147483659u;  // 2^31 + 11
constexpr size_t kSecretBytes = 32;
constexpr size_t kShamirPieces = 9;
constexpr size_t kShareBytes = 4 * kShamirPieces;

struct ShamirShare {
  uint32_t x = 0;
  uint32_t y[kShamirPieces] = {};
};

class ShamirDealer {
 public:
  // threshold ≥ 1 (1: every share is the secret itself).
  Status init(ByteSpan secret, uint32_t threshold, ByteSpan polynomial_seed);
  Status share_for(uint32_t x, ShamirShare& out) const;

 private:
  uint32_t pieces_[kShamirPieces] = {};
  uint8_t seed_[32] = {};
  uint32_t threshold_ = 0;
};

// secret_out: 32 bytes. Uses shares[0 .. threshold); needs shares.size() ≥ threshold.
Status shamir_reconstruct(Span<const ShamirShare> shares, uint32_t threshold,
                          MutableByteSpan secret_out);

// Little-endian byte form of a share's nine words (36 bytes), for the wire.
void share_to_bytes(const ShamirShare& share, MutableByteSpan out);
Status share_from_bytes(uint32_t x, ByteSpan bytes, ShamirShare& out);

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_SHAMIR_H_
