#include "sdk/secagg/mask.h"

#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"

namespace fedstat {
namespace secagg {
namespace {

constexpr char kLabel[] = "fedstat secagg mask v1";

// A function, not an inline comparison: on 32-bit targets the test is trivially true.
constexpr bool fits_u32(uint64_t n) {
  return n <= UINT32_MAX;
}

template <typename Word>
Status apply(ByteSpan session_hash, ByteSpan seed, MaskKind kind, bool subtract, unsigned bits,
             Span<Word> vector) {
  if (bits == 0 || bits > 8 * sizeof(Word)) {
    return invalid_argument("secagg mask: bits must lie in 1..the word width");
  }
  const size_t length = vector.size();
  if (!fits_u32(length)) {
    return invalid_argument(
        "secagg mask: at most 2^32 - 1 words (the key binds the length as 32 bits); split it");
  }
  uint8_t info[sizeof(kLabel) - 1 + 6];
  for (size_t i = 0; i + 1 < sizeof(kLabel); ++i) info[i] = static_cast<uint8_t>(kLabel[i]);
  size_t at = sizeof(kLabel) - 1;
  info[at++] = static_cast<uint8_t>(kind);
  for (int b = 3; b >= 0; --b) info[at++] = static_cast<uint8_t>(length >> (8 * b));
  info[at++] = static_cast<uint8_t>(bits);
  uint8_t key[crypto::kAes256KeyBytes];
  FEDSTAT_RETURN_IF_ERROR(crypto::hkdf_sha256(session_hash, seed, ByteSpan(info, at),
                                              MutableByteSpan(key, sizeof(key))));
  const uint8_t zero_block[crypto::kAesBlockBytes] = {};
  crypto::Aes256Ctr cipher;
  FEDSTAT_RETURN_IF_ERROR(
      cipher.start(ByteSpan(key, sizeof(key)), ByteSpan(zero_block, sizeof(zero_block))));
  const size_t width = bits <= 32 ? 4 : 8;
  const uint64_t modulus_mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint8_t buffer[256];
  size_t i = 0;
  while (i < length) {
    const size_t words =
        (length - i) < sizeof(buffer) / width ? (length - i) : sizeof(buffer) / width;
    FEDSTAT_RETURN_IF_ERROR(cipher.keystream(MutableByteSpan(buffer, words * width)));
    for (size_t k = 0; k < words; ++k, ++i) {
      const uint8_t* word = buffer + k * width;
      const uint64_t r = width == 4 ? load_le32(word) : load_le64(word);
      const uint64_t v = static_cast<uint64_t>(vector[i]);
      vector[i] = static_cast<Word>((subtract ? v - r : v + r) & modulus_mask);
    }
  }
  return Status();
}

}  // namespace

Status apply_mask(ByteSpan session_hash, ByteSpan seed, MaskKind kind, bool subtract, unsigned bits,
                  Span<uint64_t> vector) {
  return apply(session_hash, seed, kind, subtract, bits, vector);
}

Status apply_mask(ByteSpan session_hash, ByteSpan seed, MaskKind kind, bool subtract, unsigned bits,
                  Span<uint32_t> vector) {
  return apply(session_hash, seed, kind, subtract, bits, vector);
}

}  // namespace secagg
}  // namespace fedstat
