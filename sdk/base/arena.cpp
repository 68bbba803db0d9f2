#include "sdk/base/arena.h"

namespace fedstat {

Result<void*> Arena::allocate_bytes(size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return invalid_argument("arena: alignment must be a power of two");
  }
  const uintptr_t base = reinterpret_cast<uintptr_t>(memory_.data());
  const uintptr_t cursor = base + used_;
  const uintptr_t aligned = (cursor + (alignment - 1)) & ~static_cast<uintptr_t>(alignment - 1);
  const size_t padding = static_cast<size_t>(aligned - cursor);
  if (padding > remaining() || size > remaining() - padding) {
    return resource_exhausted(
        "arena exhausted: the caller's buffer is smaller than this feature's memory formula "
        "requires; give the Arena a larger buffer (see the header of the feature for the formula)");
  }
  used_ += padding + size;
  if (used_ > high_water_) high_water_ = used_;
  return reinterpret_cast<void*>(aligned);
}

Status Arena::rewind(Mark mark) {
  if (mark.offset > used_) {
    return invalid_argument("arena: cannot rewind to a mark past the current position");
  }
  used_ = mark.offset;
  return Status();
}

}  // namespace fedstat
