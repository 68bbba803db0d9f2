#include "sdk/base/seeded_stream.h"

namespace fedstat {

SeededStream::SeededStream(const Seed256& seed, uint64_t stream_id) {
  uint8_t counter_block[crypto::kAesBlockBytes] = {};
  for (int i = 0; i < 8; ++i) {
    counter_block[i] = static_cast<uint8_t>(stream_id >> (56 - 8 * i));  // big-endian stream id
  }
  init_status_ = cipher_.start(ByteSpan(seed.bytes), ByteSpan(counter_block));
}

Status SeededStream::fill(MutableByteSpan out) {
  FEDSTAT_RETURN_IF_ERROR(init_status_);
  FEDSTAT_RETURN_IF_ERROR(cipher_.keystream(out));
  position_ += out.size();
  return Status();
}

}  // namespace fedstat
