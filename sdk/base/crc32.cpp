#include "sdk/base/crc32.h"

namespace fedstat {
namespace {
// CRC of each 4-bit value under the reflected polynomial 0xEDB88320 (half-byte table: 64 bytes).
constexpr uint32_t kNibbleTable[16] = {0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu,
                                       0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
                                       0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
                                       0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};
}  // namespace

void Crc32::update(ByteSpan data) {
  uint32_t crc = state_;
  for (uint8_t byte : data) {
    crc ^= byte;
    crc = (crc >> 4) ^ kNibbleTable[crc & 0x0F];
    crc = (crc >> 4) ^ kNibbleTable[crc & 0x0F];
  }
  state_ = crc;
}

}  // namespace fedstat
