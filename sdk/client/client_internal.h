/// @file
/// What the pieces of Client (client*.cpp) share: a bounded string copy. Internal to
/// sdk/client, never installed (FEDSTAT_INTERNAL_HEADERS).
///
/// @memory none (functions only).
/// @paper none.
#ifndef FEDSTAT_SDK_CLIENT_CLIENT_INTERNAL_H_
#define FEDSTAT_SDK_CLIENT_CLIENT_INTERNAL_H_

#include <stddef.h>

namespace fedstat {
namespace client {

/// `text` (nullptr: empty) into `out`, cut to capacity − 1 characters, always terminated.
inline void copy_string(char* out, size_t capacity, const char* text) {
  size_t n = 0;
  for (; text != nullptr && text[n] != '\0' && n + 1 < capacity; ++n) out[n] = text[n];
  out[n] = '\0';
}

}  // namespace client
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CLIENT_CLIENT_INTERNAL_H_
