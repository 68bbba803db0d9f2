/// @file
/// What the pieces of ShiftSketch (shift_sketch*.cpp) share: a counter's magnitude as the heap
/// orders it. Internal to sdk/sketch, never installed (FEDSTAT_INTERNAL_HEADERS).
///
/// @memory none (functions only).
/// @paper none.
#ifndef FEDSTAT_SDK_SKETCH_SHIFT_SKETCH_INTERNAL_H_
#define FEDSTAT_SDK_SKETCH_SHIFT_SKETCH_INTERNAL_H_

#include <stdint.h>

namespace fedstat {
namespace sketch {

/// |v| as a float (through double: no overflow at INT64_MIN).
inline float magnitude_of(int64_t v) {
  return static_cast<float>(v < 0 ? -static_cast<double>(v) : static_cast<double>(v));
}

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_SHIFT_SKETCH_INTERNAL_H_
