#include "sdk/secagg/shamir.h"

#include <string.h>

#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"

namespace fedstat {
namespace secagg {
namespace {

constexpr uint64_t kP = kShamirPrime;

uint32_t power(uint32_t base, uint64_t exponent) {
  uint32_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = field_mul(result, base);
    base = field_mul(base, base);
    exponent >>= 1;
  }
  return result;
}

unsigned piece_bits(size_t k) {
  return k + 1 < kShamirPieces ? 31 : 256 - 31 * 8;
}

// Bits [31k, 31k + width) of the little-endian secret.
uint32_t read_piece(const uint8_t* secret, size_t k) {
  uint32_t value = 0;
  const unsigned width = piece_bits(k);
  for (unsigned b = 0; b < width; ++b) {
    const size_t bit = 31 * k + b;
    value |= static_cast<uint32_t>((secret[bit / 8] >> (bit % 8)) & 1u) << b;
  }
  return value;
}

void write_piece(uint8_t* secret, size_t k, uint32_t value) {
  const unsigned width = piece_bits(k);
  for (unsigned b = 0; b < width; ++b) {
    const size_t bit = 31 * k + b;
    if ((value >> b) & 1u)
      secret[bit / 8] = static_cast<uint8_t>(secret[bit / 8] | (1u << (bit % 8)));
  }
}

}  // namespace

uint32_t field_inverse(uint32_t a) {
  return power(a, kP - 2);  // Fermat; 0^(p−2) = 0
}

Status ShamirDealer::init(ByteSpan secret, uint32_t threshold, ByteSpan polynomial_seed) {
  if (secret.size() != kSecretBytes || polynomial_seed.size() != 32) {
    return invalid_argument("Shamir: the secret and the polynomial seed are 32 bytes each");
  }
  if (threshold == 0) return invalid_argument("Shamir: the threshold must be at least 1");
  for (size_t k = 0; k < kShamirPieces; ++k) pieces_[k] = read_piece(secret.data(), k);
  memcpy(seed_, polynomial_seed.data(), 32);
  threshold_ = threshold;
  return Status();
}

Status ShamirDealer::share_for(uint32_t x, ShamirShare& out) const {
  if (threshold_ == 0) return failed_precondition("Shamir: dealer used before init");
  if (x == 0 || x >= kShamirPrime) {
    return invalid_argument("Shamir: a share's x (the client id) must lie in [1, 2^31 + 10]");
  }
  Seed256 key;  // the polynomial's seed: with one share it gives the secret, so it is wiped
  const crypto::ScopedWipe wipe_key(&key, sizeof(key));
  memcpy(key.bytes, seed_, 32);
  SeededStream stream(key, 0);
  RandomBits bits(stream);
  out.x = x;
  for (size_t k = 0; k < kShamirPieces; ++k) {
    uint32_t y = pieces_[k];
    uint32_t x_power = 1;
    for (uint32_t degree = 1; degree < threshold_; ++degree) {
      FEDSTAT_ASSIGN_OR_RETURN(const uint64_t coefficient, bits.uniform_below(kP));
      x_power = field_mul(x_power, x);
      y = field_add(y, field_mul(static_cast<uint32_t>(coefficient), x_power));
    }
    out.y[k] = y;
  }
  return Status();
}

Status shamir_reconstruct(Span<const ShamirShare> shares, uint32_t threshold,
                          MutableByteSpan secret_out) {
  if (secret_out.size() != kSecretBytes) return invalid_argument("Shamir: secrets are 32 bytes");
  if (threshold == 0 || shares.size() < threshold) {
    return failed_precondition("Shamir: fewer shares than the threshold");
  }
  for (size_t i = 0; i < threshold; ++i) {
    if (shares[i].x == 0 || shares[i].x >= kShamirPrime) {
      return invalid_argument("Shamir: a share has an invalid x");
    }
    for (size_t j = 0; j < i; ++j) {
      if (shares[i].x == shares[j].x) return invalid_argument("Shamir: two shares share an x");
    }
  }
  uint32_t pieces[kShamirPieces] = {};
  const crypto::ScopedWipe wipe_pieces(pieces, sizeof(pieces));
  for (size_t i = 0; i < threshold; ++i) {
    // Lagrange basis at 0: Π_{j≠i} x_j / (x_j − x_i).
    uint32_t numerator = 1, denominator = 1;
    for (size_t j = 0; j < threshold; ++j) {
      if (j == i) continue;
      numerator = field_mul(numerator, shares[j].x);
      denominator = field_mul(denominator, field_sub(shares[j].x, shares[i].x));
    }
    const uint32_t basis = field_mul(numerator, field_inverse(denominator));
    for (size_t k = 0; k < kShamirPieces; ++k) {
      if (shares[i].y[k] >= kShamirPrime)
        return data_loss("Shamir: a share is not a field element");
      pieces[k] = field_add(pieces[k], field_mul(basis, shares[i].y[k]));
    }
  }
  memset(secret_out.data(), 0, kSecretBytes);
  for (size_t k = 0; k < kShamirPieces; ++k) {
    if (pieces[k] >> piece_bits(k) != 0) {
      return data_loss("Shamir: the shares do not fit one secret (corrupt or mismatched)");
    }
    write_piece(secret_out.data(), k, pieces[k]);
  }
  return Status();
}

namespace {

bool valid_x(uint32_t x) {
  return x != 0 && x < kShamirPrime;
}

// Every x in [1, p) and no two equal: O(m log m) would need memory; O(m²) comparisons are cheap
// next to the O(m²) field products every caller does anyway.
Status check_points(Span<const uint32_t> xs) {
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!valid_x(xs[i])) return invalid_argument("Shamir: a share has an invalid x");
    for (size_t j = 0; j < i; ++j) {
      if (xs[i] == xs[j]) return invalid_argument("Shamir: two shares share an x");
    }
  }
  return Status();
}

}  // namespace

Status shamir_lagrange_at_zero(Span<const uint32_t> xs, Span<uint32_t> out) {
  if (xs.size() == 0 || out.size() != xs.size()) {
    return invalid_argument("Shamir: one coefficient per point, at least one point");
  }
  FEDSTAT_RETURN_IF_ERROR(check_points(xs));
  for (size_t i = 0; i < xs.size(); ++i) {
    uint32_t numerator = 1, denominator = 1;
    for (size_t j = 0; j < xs.size(); ++j) {
      if (j == i) continue;
      numerator = field_mul(numerator, xs[j]);
      denominator = field_mul(denominator, field_sub(xs[j], xs[i]));
    }
    out[i] = field_mul(numerator, field_inverse(denominator));
  }
  return Status();
}

Status shamir_combine(Span<const ShamirShare> shares, Span<const uint32_t> coefficients,
                      MutableByteSpan secret_out) {
  if (secret_out.size() != kSecretBytes) return invalid_argument("Shamir: secrets are 32 bytes");
  if (shares.size() == 0 || coefficients.size() != shares.size()) {
    return invalid_argument("Shamir: one coefficient per share, at least one share");
  }
  uint32_t pieces[kShamirPieces] = {};
  const crypto::ScopedWipe wipe_pieces(pieces, sizeof(pieces));
  for (size_t i = 0; i < shares.size(); ++i) {
    for (size_t k = 0; k < kShamirPieces; ++k) {
      if (shares[i].y[k] >= kShamirPrime) {
        return data_loss("Shamir: a share is not a field element");
      }
      pieces[k] = field_add(pieces[k], field_mul(coefficients[i], shares[i].y[k]));
    }
  }
  return shamir_pieces_to_secret(pieces, secret_out);
}

Status shamir_pieces_to_secret(const uint32_t (&pieces)[kShamirPieces],
                               MutableByteSpan secret_out) {
  if (secret_out.size() != kSecretBytes) return invalid_argument("Shamir: secrets are 32 bytes");
  memset(secret_out.data(), 0, kSecretBytes);
  for (size_t k = 0; k < kShamirPieces; ++k) {
    if (pieces[k] >> piece_bits(k) != 0) {
      return data_loss("Shamir: the shares do not fit one secret (corrupt or mismatched)");
    }
    write_piece(secret_out.data(), k, pieces[k]);
  }
  return Status();
}

Status shamir_check_weights(Span<const uint32_t> xs, uint32_t threshold, Span<const uint32_t> g,
                            Span<uint32_t> weights_out) {
  if (xs.size() <= threshold || weights_out.size() != xs.size()) {
    return invalid_argument("Shamir: a check needs more shares than the threshold");
  }
  if (g.size() == 0 || g.size() > xs.size() - threshold) {
    return invalid_argument("Shamir: the check polynomial has degree <= shares - threshold - 1");
  }
  for (size_t k = 0; k < g.size(); ++k) {
    if (g[k] >= kShamirPrime) return invalid_argument("Shamir: a coefficient is not in the field");
  }
  FEDSTAT_RETURN_IF_ERROR(check_points(xs));
  for (size_t i = 0; i < xs.size(); ++i) {
    uint32_t product = 1;
    for (size_t j = 0; j < xs.size(); ++j) {
      if (j != i) product = field_mul(product, field_sub(xs[i], xs[j]));
    }
    uint32_t value = 0;  // g(x_i), Horner
    for (size_t k = g.size(); k-- > 0;) value = field_add(field_mul(value, xs[i]), g[k]);
    weights_out[i] = field_mul(value, field_inverse(product));
  }
  return Status();
}

uint32_t shamir_syndrome(Span<const uint32_t> weights, Span<const ShamirShare> shares,
                         size_t piece) {
  const size_t m = weights.size() < shares.size() ? weights.size() : shares.size();
  uint64_t sum = 0;
  for (size_t i = 0; i < m; ++i) {
    // Each product is below p² < 2^63: reduce it, then the running sum stays below 2p.
    sum = (sum + (uint64_t{weights[i]} * shares[i].y[piece]) % kP) % kP;
  }
  return static_cast<uint32_t>(sum);
}

Result<size_t> shamir_locate_one(Span<const uint32_t> w, Span<const uint32_t> w2, uint32_t s,
                                 uint32_t s2) {
  if (w.size() != w2.size()) return invalid_argument("Shamir: the weights' sizes differ");
  if (s == 0 && s2 == 0) return invalid_argument("Shamir: nothing to locate (syndromes are 0)");
  size_t found = w.size();
  for (size_t i = 0; i < w.size(); ++i) {
    if (field_mul(w[i], s2) != field_mul(w2[i], s)) continue;
    if (found != w.size()) return not_found("Shamir: the wrong share cannot be told apart");
    found = i;
  }
  if (found == w.size()) return not_found("Shamir: no single share explains the syndromes");
  return found;
}

void share_to_bytes(const ShamirShare& share, MutableByteSpan out) {
  for (size_t k = 0; k < kShamirPieces && 4 * k + 3 < out.size(); ++k) {
    store_le32(out.data() + 4 * k, share.y[k]);
  }
}

Status share_from_bytes(uint32_t x, ByteSpan bytes, ShamirShare& out) {
  if (bytes.size() != kShareBytes) return data_loss("Shamir: a share is 36 bytes");
  ShamirShare parsed;  // `out` changes only when every piece is valid
  parsed.x = x;
  for (size_t k = 0; k < kShamirPieces; ++k) {
    parsed.y[k] = load_le32(bytes.data() + 4 * k);
    if (parsed.y[k] >= kShamirPrime) return data_loss("Shamir: a share is not a field element");
  }
  out = parsed;
  return Status();
}

}  // namespace secagg
}  // namespace fedstat
