/// @file
/// CRC-32 (IEEE 802.3 / zlib: reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF) for
/// integrity checks of stored blobs and serialised state; crc32("123456789") = 0xCBF43926.
/// Detects accidental corruption only; it is not a MAC.
///
/// @memory a 64-byte nibble table in flash; 4 bytes of state.
/// @paper none (infrastructure).
#ifndef FEDSTAT_SDK_BASE_CRC32_H_
#define FEDSTAT_SDK_BASE_CRC32_H_

#include <stdint.h>

#include "sdk/base/span.h"

namespace fedstat {

/// An incremental CRC-32: update() with the message in any number of pieces, then value().
class Crc32 {
 public:
  /// Feeds the next bytes of the message (two nibble-table steps per byte).
  void update(ByteSpan data);
  /// The CRC-32 of everything fed so far (the final XOR applied; the state is not changed).
  uint32_t value() const { return ~state_; }

 private:
  uint32_t state_ = 0xFFFFFFFFu;
};

/// The CRC-32 of one buffer (crc32 of no bytes is 0).
inline uint32_t crc32(ByteSpan data) {
  Crc32 crc;
  crc.update(data);
  return crc.value();
}

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_CRC32_H_
