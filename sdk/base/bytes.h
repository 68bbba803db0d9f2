/// @file
/// Little-endian loads and stores of fixed-width integers into byte buffers.
///
/// Every byte format fedstat defines (hash inputs, blob headers, random words) is little-endian and
/// built with these, so the same values give the same bytes on x86-64, AArch64 and Cortex-M,
/// whatever the host's endianness or alignment rules. The pointers need no alignment; the caller
/// guarantees that the 4 or 8 bytes are there.
///
/// @memory none.
/// @paper none (infrastructure).
#ifndef FEDSTAT_SDK_BASE_BYTES_H_
#define FEDSTAT_SDK_BASE_BYTES_H_

#include <stdint.h>

namespace fedstat {

/// The 4 bytes at `p` read as a little-endian uint32.
inline uint32_t load_le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
/// The 8 bytes at `p` read as a little-endian uint64.
inline uint64_t load_le64(const uint8_t* p) {
  return static_cast<uint64_t>(load_le32(p)) | (static_cast<uint64_t>(load_le32(p + 4)) << 32);
}
/// Writes `v` as 4 little-endian bytes at `p`.
inline void store_le32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  p[2] = static_cast<uint8_t>(v >> 16);
  p[3] = static_cast<uint8_t>(v >> 24);
}
/// Writes `v` as 8 little-endian bytes at `p`.
inline void store_le64(uint8_t* p, uint64_t v) {
  store_le32(p, static_cast<uint32_t>(v));
  store_le32(p + 4, static_cast<uint32_t>(v >> 32));
}

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_BYTES_H_
