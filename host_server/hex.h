// Hex text on the host: 256-bit keys, secrets and seeds read from 64 hex digits (either case),
// other byte strings (device credentials' keys and signatures) from any even number of digits,
// and bytes written as lowercase hex (digests). Header-only. Memory: the returned values.
// Paper: none.
#ifndef FEDSTAT_HOST_HEX_H_
#define FEDSTAT_HOST_HEX_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fedstat {
namespace host {

// Bytes from an even number of hex digits (either case); nullopt for odd length or any other
// character. An empty text gives no bytes.
inline std::optional<std::vector<uint8_t>> decode_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) return std::nullopt;
  std::vector<uint8_t> out(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); ++i) {
    const char c = hex[i];
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    if (v < 0) return std::nullopt;
    out[i / 2] = static_cast<uint8_t>(out[i / 2] * 16 + v);
  }
  return out;
}

// 32 bytes from exactly 64 hex digits; nullopt for any other text.
inline std::optional<std::array<uint8_t, 32>> decode_hex32(const std::string& hex) {
  if (hex.size() != 64) return std::nullopt;
  const std::optional<std::vector<uint8_t>> bytes = decode_hex(hex);
  if (!bytes) return std::nullopt;
  std::array<uint8_t, 32> out{};
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return out;
}

inline std::string encode_hex(const uint8_t* bytes, size_t size) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * size);
  for (size_t i = 0; i < size; ++i) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_HEX_H_
