/// @file
/// Shamir t-of-n secret sharing of 256-bit secrets over the prime field p = 2^31 + 11.
///
/// A microcontroller has no big-integer unit to spare, so (as in Google's federated-compute) the
/// secret is cut into nine 31-bit pieces — bits [31k, 31k + 31) of the secret read as a
/// little-endian integer, the last piece 8 bits — and each piece is shared with its own random
/// polynomial of degree t − 1 over GF(p). Every piece is below 2^31 < p, products of two field
/// elements fit 64 bits, and a share is nine 32-bit words (36 bytes). The x-coordinate of a share
/// is the recipient's client id (1 ≤ id < p), so shares are bound to who holds them.
///
/// ShamirDealer does not store the polynomials: their coefficients are drawn (uniform in [0, p),
/// by rejection) from a SeededStream keyed by a secret 32-byte polynomial seed, regenerated for
/// each recipient, so dealing to n clients needs O(1) memory and O(n·t) field operations.
/// shamir_reconstruct interpolates at 0 from exactly `threshold` shares with distinct x, and
/// rejects a result whose pieces exceed their bit widths (inconsistent shares: kDataLoss).
///
/// @memory ShamirDealer 80 bytes + a SeededStream on the stack while dealing; reconstruction
/// stack only.
/// @paper Bonawitz et al. CCS 2017 §4 (SS.share, SS.recon); 000–004 Dist models.
#ifndef FEDSTAT_SDK_SECAGG_SHAMIR_H_
#define FEDSTAT_SDK_SECAGG_SHAMIR_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace secagg {

/// The field's prime p = 2^31 + 11.
constexpr uint32_t kShamirPrime = 2147483659u;  // 2^31 + 11
/// Bytes of a shared secret (256 bits).
constexpr size_t kSecretBytes = 32;
/// 31-bit pieces a secret is cut into (the last one 8 bits), each shared separately.
constexpr size_t kShamirPieces = 9;
/// Bytes of a share's wire form (share_to_bytes()): nine little-endian 32-bit words.
constexpr size_t kShareBytes = 4 * kShamirPieces;

/// One recipient's share: the value of each piece's polynomial at x.
struct ShamirShare {
  uint32_t x = 0;                  ///< the recipient's client id, in [1, p)
  uint32_t y[kShamirPieces] = {};  ///< the polynomials' values at x, each in [0, p)
};

/// Deals shares of one 256-bit secret with threshold t, regenerating the polynomials per share
/// from a secret seed (O(1) memory).
class ShamirDealer {
 public:
  /// Sets the secret (32 bytes), the threshold t ≥ 1 (1: every share is the secret itself) and
  /// the 32-byte polynomial seed, which must stay secret: with one share it gives the secret.
  /// @errors kInvalidArgument: `secret` or `polynomial_seed` is not 32 bytes, or threshold = 0
  /// (the dealer unchanged).
  Status init(ByteSpan secret, uint32_t threshold, ByteSpan polynomial_seed);
  /// The share for recipient x (its client id): every piece's polynomial evaluated at x.
  /// @errors kFailedPrecondition: no successful init(). kInvalidArgument: x = 0 or x ≥ p.
  /// kInternal: the seeded AES keystream failed inside mbedTLS (not expected).
  Status share_for(uint32_t x, ShamirShare& out) const;

 private:
  uint32_t pieces_[kShamirPieces] = {};
  uint8_t seed_[32] = {};
  uint32_t threshold_ = 0;
};

/// Interpolates the secret at 0 from shares[0 .. threshold) into `secret_out` (32 bytes); needs
/// shares.size() ≥ threshold.
/// @errors kInvalidArgument: secret_out is not 32 bytes, a share's x is 0 or ≥ p, or two shares
/// have the same x. kFailedPrecondition: threshold = 0 or fewer shares than the threshold.
/// kDataLoss: a share value is not a field element, or the result's pieces exceed their bit
/// widths (corrupt or mismatched shares; `secret_out` is then partly written).
Status shamir_reconstruct(Span<const ShamirShare> shares, uint32_t threshold,
                          MutableByteSpan secret_out);

// ---- The host's side: reconstruction of many secrets, and checking shares against them ------
// A server rebuilding n secrets revealed by the same holders shares the work: the Lagrange
// coefficients of a holder set (shamir_lagrange_at_zero, O(t²) once) rebuild each secret in O(t)
// per piece (shamir_combine). With m > t shares of one secret, every share is checked against the
// polynomial of degree t − 1 the others fix, in O(m) per piece, by the dual code of the
// Reed–Solomon code (SCRAPE, Cascudo–David 2017, §3): for any polynomial g of degree ≤ m − t − 1,
//     Σ_i v_i · g(x_i) · y_i = 0,   v_i = Π_{j≠i} 1/(x_i − x_j),
// holds for every share set on one polynomial of degree ≤ t − 1, and fails with probability
// 1 − 1/p for a set that is not, when g is drawn at random after the shares are fixed. The
// weights w_i = v_i · g(x_i) are computed once per holder set (shamir_check_weights, O(m²)), the
// sum per secret and piece (shamir_syndrome, O(m)). One wrong share y_c + δ gives the syndromes
// δ·w_c and δ·w'_c under two polynomials g, g': shamir_locate_one finds c as the one holder
// whose w_i / w'_i matches (needs m ≥ t + 2; with m = t + 1 a wrong share is seen, not located).
// What these say is only sound within (m − t)/2 wrong shares — past that, other share sets fit
// other polynomials — so the host never uses a secret they give without verifying it (its
// owner's commitment or public key: host_server/secagg/share_decoder.h, which also resolves one
// wrong share among t + 1 by trying the t + 1 subsets against that verification).

/// Arithmetic in GF(p) on field elements (values below p; products fit 64 bits), for the host's
/// decoder of revealed shares (host_server/secagg/share_decoder.h), which builds on the functions
/// below.
inline uint32_t field_mul(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((uint64_t{a} * b) % kShamirPrime);
}
/// a + b mod p.
inline uint32_t field_add(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((uint64_t{a} + b) % kShamirPrime);
}
/// a − b mod p.
inline uint32_t field_sub(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>((uint64_t{a} + kShamirPrime - b) % kShamirPrime);
}
/// The inverse of a ≠ 0 (a^(p−2), Fermat); 0 for a = 0.
uint32_t field_inverse(uint32_t a);

/// Writes nine pieces (each below p) as the 32-byte secret they cut (the layout of the file
/// comment), as shamir_combine's last step.
/// @errors kInvalidArgument: `secret_out` is not 32 bytes. kDataLoss: a piece exceeds its bit
/// width (31 bits, the last 8): not the pieces of any secret (`secret_out` is then partly written).
Status shamir_pieces_to_secret(const uint32_t (&pieces)[kShamirPieces], MutableByteSpan secret_out);

/// Lagrange coefficients at 0 of the points xs (distinct, in [1, p)): out[i] = Π_{j≠i} x_j /
/// (x_j − x_i), so that Σ out[i]·f(x_i) = f(0) for every f of degree < xs.size().
/// @errors kInvalidArgument: xs is empty, `out` has another size, an x is 0 or ≥ p, or two are
/// equal (`out` may be partly written).
Status shamir_lagrange_at_zero(Span<const uint32_t> xs, Span<uint32_t> out);

/// The secret Σ_i coefficients[i] · shares[i].y, piece by piece, into `secret_out` (32 bytes):
/// with shamir_lagrange_at_zero's coefficients of the shares' x, the interpolation at 0.
/// @errors kInvalidArgument: `secret_out` is not 32 bytes, or the spans' sizes differ or are 0.
/// kDataLoss: a share value is not a field element, or a piece exceeds its bit width (the shares
/// are not of one secret; `secret_out` is then partly written).
Status shamir_combine(Span<const ShamirShare> shares, Span<const uint32_t> coefficients,
                      MutableByteSpan secret_out);

/// The check weights w_i = g(x_i) · Π_{j≠i} 1/(x_i − x_j) of the holder set xs, for shares of
/// threshold t, with g's coefficients (constant first) in `g`: 1 ≤ g.size() ≤ xs.size() − t.
/// @errors kInvalidArgument: xs has no more than `threshold` points or `weights_out` another size,
/// g's size is outside [1, xs.size() − threshold], a coefficient is not a field element, an x is 0
/// or ≥ p, or two are equal.
Status shamir_check_weights(Span<const uint32_t> xs, uint32_t threshold, Span<const uint32_t> g,
                            Span<uint32_t> weights_out);

/// Σ_i weights[i] · shares[i].y[piece] mod p: 0 when the shares lie on one polynomial of degree
/// < threshold (see above). Reads min(weights.size(), shares.size()) shares; share values must be
/// field elements (share_from_bytes checks them); piece < kShamirPieces.
uint32_t shamir_syndrome(Span<const uint32_t> weights, Span<const ShamirShare> shares,
                         size_t piece);

/// The one share that is off the polynomial, from one piece's syndromes s, s2 (not both 0) under
/// the weights w, w2 of two independent random polynomials: the index i with w[i]·s2 = w2[i]·s.
/// @errors kInvalidArgument: the weights' sizes differ, or s = s2 = 0 (nothing to locate).
/// kNotFound: no index matches, or more than one does (several wrong shares, or too few shares
/// to tell: m = t + 1).
Result<size_t> shamir_locate_one(Span<const uint32_t> w, Span<const uint32_t> w2, uint32_t s,
                                 uint32_t s2);

/// Little-endian byte form of a share's nine words (36 bytes), for the wire; x is not written
/// (the recipient's id travels separately). Writes only the whole words that fit in `out`.
void share_to_bytes(const ShamirShare& share, MutableByteSpan out);
/// Parses the 36-byte wire form into `out`, with x as its x; `out` changes only on success.
/// @errors kDataLoss: `bytes` is not 36 bytes long, or a word is not a field element (≥ p).
Status share_from_bytes(uint32_t x, ByteSpan bytes, ShamirShare& out);

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_SHAMIR_H_
