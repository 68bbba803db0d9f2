// ShiftSketch (shift_sketch.h): the report's bytes — serialize, and parse_sketch_report's
// checks (magic, version, parameters, length, CRC) before a SketchReport points into them.
#include "sdk/sketch/shift_sketch.h"

#include <string.h>

#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"

namespace fedstat {
namespace sketch {

namespace {

constexpr uint8_t kMagic[4] = {'F', 'S', 'K', '1'};
constexpr uint8_t kVersion = 2;  // 1: R + 1 SipHashes per update (other buckets and signs)

}  // namespace

Result<size_t> ShiftSketch::serialize(MutableByteSpan out) const {
  if (!ready_) return failed_precondition("sketch: serialize before init");
  settle();
  const size_t bytes = shift_sketch_report_bytes(params_, heap_size_);
  if (out.size() < bytes) return resource_exhausted("sketch: the output buffer is too small");
  uint8_t* p = out.data();
  memset(p, 0, kSketchHeaderBytes);
  memcpy(p, kMagic, 4);
  p[4] = kVersion;
  store_le32(p + 8, params_.rows);
  store_le32(p + 12, params_.width);
  store_le32(p + 16, params_.heap_capacity);
  store_le32(p + 20, params_.k);
  memcpy(p + 24, params_.seed.bytes, 32);
  store_le64(p + 56, static_cast<uint64_t>(total_));
  store_le32(p + 64, static_cast<uint32_t>(heap_size_));
  size_t at = kSketchHeaderBytes;
  const size_t cells = size_t{params_.rows} * params_.width;
  for (size_t i = 0; i < cells; ++i, at += 8) store_le64(p + at, counters_[i]);
  for (size_t i = 0; i < heap_size_; ++i, at += 4) store_le32(p + at, heap_[i].item);
  store_le32(p + at, crc32(ByteSpan(p, at)));
  return at + 4;
}

int64_t SketchReport::counter(size_t index) const {
  return static_cast<int64_t>(load_le64(counters.data() + 8 * index));
}
uint32_t SketchReport::heap_item(size_t index) const {
  return load_le32(heap_items.data() + 4 * index);
}

Status parse_sketch_report(ByteSpan blob, SketchReport& out) {
  if (blob.size() < kSketchHeaderBytes + 4) return data_loss("sketch report: truncated");
  const uint8_t* p = blob.data();
  if (memcmp(p, kMagic, 4) != 0) return data_loss("sketch report: not a sketch (bad magic)");
  if (p[4] != kVersion) return unimplemented("sketch report: unknown version");
  SketchReport r;
  r.params.rows = load_le32(p + 8);
  r.params.width = load_le32(p + 12);
  r.params.heap_capacity = load_le32(p + 16);
  r.params.k = load_le32(p + 20);
  memcpy(r.params.seed.bytes, p + 24, 32);
  r.total = static_cast<int64_t>(load_le64(p + 56));
  r.heap_count = load_le32(p + 64);
  if (!validate_params(r.params).ok() || r.heap_count > r.params.heap_capacity) {
    return data_loss("sketch report: invalid parameters");
  }
  // Both formulas saturate (checked_size.h): on a 32-bit device a report claiming 8·R·w ≥ 2^32
  // bytes is refused here instead of wrapping to a small length that the blob could match.
  const size_t expected = shift_sketch_report_bytes(r.params, r.heap_count);
  if (expected == kSizeOverflow) {
    return data_loss("sketch report: its R x w is larger than this machine can address");
  }
  if (blob.size() != expected) return data_loss("sketch report: wrong length (truncated?)");
  if (crc32(ByteSpan(p, expected - 4)) != load_le32(p + expected - 4)) {
    return data_loss("sketch report: CRC mismatch (corrupted)");
  }
  const size_t cells = size_t{r.params.rows} * r.params.width;
  r.counters = ByteSpan(p + kSketchHeaderBytes, 8 * cells);
  r.heap_items = ByteSpan(p + kSketchHeaderBytes + 8 * cells, 4 * r.heap_count);
  out = r;
  return Status();
}

}  // namespace sketch
}  // namespace fedstat
