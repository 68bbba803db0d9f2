// CRC-32 (IEEE 802.3 / zlib: reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF) for
// integrity checks of stored blobs and serialised state; crc32("123456789") = 0xCBF43926.
// Detects accidental corruption only; it is not a MAC.
//
// Memory: a 64-byte nibble table in flash; 4 bytes of state. Paper: none.
#ifndef FEDSTAT_SDK_BASE_CRC32_H_
#define FEDSTAT_SDK_BASE_CRC32_H_

#include <stdint.h>

#include "sdk/base/span.h"

namespace fedstat {

class Crc32 {
 public:
  void update(ByteSpan data);
  uint32_t value() const { return ~state_; }

 private:
  uint32_t state_ = 0xFFFFFFFFu;
};

inline uint32_t crc32(ByteSpan data) {
  Crc32 crc;
  crc.update(data);
  return crc.value();
}

}  // namespace fedstat

#endif  // FEDSTAT_SDK_BASE_CRC32_H_
