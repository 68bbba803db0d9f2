// Internal to the C ABI (never installed): the strict hex text its calls take (c/credential.h's
// keys and certificate fields, c/tls.h's private key), parsed in place with no heap.
//
// Memory: none beyond the caller's output. Paper: none.
#ifndef FEDSTAT_CAPI_HEX_H_
#define FEDSTAT_CAPI_HEX_H_

#include <stddef.h>
#include <stdint.h>

namespace fedstat {
namespace capi {

inline bool hex_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

inline const char* skip_space(const char* p) {
  while (hex_space(*p)) ++p;
  return p;
}

// The digit's value, or −1 for anything else (upper and lower case taken).
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A field of exactly 2·size hex digits at p, ending at whitespace or the string's end, into
// `out`; advances p past it. False otherwise (`out` then partly written: a caller holding key
// material wipes it). Never reads past the string's NUL.
inline bool take_hex(const char*& p, uint8_t* out, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    const int high = hex_value(p[2 * i]);
    const int low = high < 0 ? -1 : hex_value(p[2 * i + 1]);
    if (low < 0) return false;
    out[i] = static_cast<uint8_t>(high * 16 + low);
  }
  p += 2 * size;
  return *p == '\0' || hex_space(*p);
}

}  // namespace capi
}  // namespace fedstat

#endif  // FEDSTAT_CAPI_HEX_H_
