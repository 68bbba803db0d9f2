#include "sdk/base/random_source.h"

#include "sdk/base/bytes.h"

namespace fedstat {

Result<uint32_t> RandomSource::next_u32() {
  uint8_t bytes[4];
  FEDSTAT_RETURN_IF_ERROR(fill(MutableByteSpan(bytes)));
  return load_le32(bytes);
}

Result<uint64_t> RandomSource::next_u64() {
  uint8_t bytes[8];
  FEDSTAT_RETURN_IF_ERROR(fill(MutableByteSpan(bytes)));
  return load_le64(bytes);
}

Result<uint64_t> RandomSource::uniform_below(uint64_t bound) {
  if (bound == 0) return invalid_argument("uniform_below: the bound must be at least 1");
  // 2^64 mod bound values at the bottom would make low results more likely: reject them.
  const uint64_t rejected_below = (0 - bound) % bound;
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t x, next_u64());
    if (x >= rejected_below) return x % bound;
  }
}

Status fill_from_random_source(void* source, MutableByteSpan out) {
  if (source == nullptr) return invalid_argument("random source is null");
  return static_cast<RandomSource*>(source)->fill(out);
}

}  // namespace fedstat
