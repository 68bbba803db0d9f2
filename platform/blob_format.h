// The on-storage format of a platform blob, the same on every backend:
//
//   offset 0   4 bytes  magic "FSB1"
//   offset 4   4 bytes  payload length n, little-endian
//   offset 8   n bytes  payload
//   offset 8+n 4 bytes  CRC-32 (sdk/base/crc32.h) of bytes [0, 8+n), little-endian
//
// Memory: none. Paper: none.
#ifndef FEDSTAT_PLATFORM_BLOB_FORMAT_H_
#define FEDSTAT_PLATFORM_BLOB_FORMAT_H_

#include <stddef.h>
#include <stdint.h>

namespace fedstat {
namespace platform {

constexpr uint8_t kBlobMagic[4] = {'F', 'S', 'B', '1'};
constexpr size_t kBlobHeaderBytes = 8;
constexpr size_t kBlobTrailerBytes = 4;
constexpr size_t kBlobOverheadBytes = kBlobHeaderBytes + kBlobTrailerBytes;
// Largest payload a blob may hold (keeps 8 + n + 4 inside 32 bits everywhere).
constexpr size_t kMaxBlobPayloadBytes = 0x7FFFFFF0u;

}  // namespace platform
}  // namespace fedstat

#endif  // FEDSTAT_PLATFORM_BLOB_FORMAT_H_
