#include "sdk/sketch/shift_sketch.h"

#include <string.h>

#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "sdk/sketch/sampling_weight.h"

namespace fedstat {
namespace sketch {
namespace {

constexpr size_t kNotFound = ~size_t{0};
constexpr uint8_t kMagic[4] = {'F', 'S', 'K', '1'};
constexpr uint8_t kVersion = 1;

size_t slot_of(uint32_t item, size_t mask) {
  return static_cast<size_t>((uint64_t{item} * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

int64_t median(int64_t* values, uint32_t n) {
  for (uint32_t i = 1; i < n; ++i) {  // insertion sort: n ≤ 15
    const int64_t v = values[i];
    uint32_t j = i;
    while (j > 0 && values[j - 1] > v) {
      values[j] = values[j - 1];
      --j;
    }
    values[j] = v;
  }
  return values[(n - 1) / 2];
}

float magnitude_of(int64_t v) {
  return static_cast<float>(v < 0 ? -static_cast<double>(v) : static_cast<double>(v));
}

}  // namespace

bool same_params(const ShiftSketchParams& a, const ShiftSketchParams& b) {
  return a.rows == b.rows && a.width == b.width && a.heap_capacity == b.heap_capacity &&
         a.k == b.k && memcmp(a.seed.bytes, b.seed.bytes, 32) == 0;
}

Status validate_params(const ShiftSketchParams& p) {
  if (p.rows == 0 || p.rows > kMaxRows) return invalid_argument("sketch: rows must lie in 1..15");
  if (p.width == 0 || p.heap_capacity == 0 || p.k == 0) {
    return invalid_argument("sketch: width, heap capacity and k must be at least 1");
  }
  if (p.heap_capacity > (1u << 30) || uint64_t{p.rows} * p.width > (uint64_t{1} << 32)) {
    return invalid_argument("sketch: too large for 32-bit indices");
  }
  return Status();
}

SketchHashes::SketchHashes(const ShiftSketchParams& p)
    : weight_hasher_(ItemHasher::from_key_bytes(p.seed.bytes)),
      row_hasher_(ItemHasher::from_key_bytes(p.seed.bytes + 16)),
      k_(p.k),
      width_(p.width) {}

uint64_t SketchHashes::weight(uint32_t item) const {
  return fixed_sampling_weight(weight_hasher_.hash_id(item), k_);
}

void SketchHashes::locate(uint32_t item, uint32_t row, uint32_t& bucket, int& sign) const {
  const ItemHasher hasher(row_hasher_.k0() ^ (0x9E3779B97F4A7C15ull * (uint64_t{row} + 1)),
                          row_hasher_.k1());
  const uint64_t h = hasher.hash_id(item);
  bucket = static_cast<uint32_t>(((h >> 32) * width_) >> 32);
  sign = (h & 1) ? -1 : 1;
}

Status ShiftSketch::init(const ShiftSketchParams& params, MutableByteSpan memory) {
  FEDSTAT_RETURN_IF_ERROR(validate_params(params));
  const size_t needed = shift_sketch_memory_bytes(params);
  if (needed == kSizeOverflow) {
    return invalid_argument(
        "sketch: these parameters need more memory than this machine can address: lower R, w "
        "or H");
  }
  if (memory.size() != needed) {
    return invalid_argument("sketch: memory must be exactly shift_sketch_memory_bytes(params)");
  }
  if (reinterpret_cast<uintptr_t>(memory.data()) % 8 != 0) {
    return invalid_argument("sketch: memory must be 8-byte aligned");
  }
  params_ = params;
  hashes_ = SketchHashes(params);
  counters_ = reinterpret_cast<uint64_t*>(memory.data());
  heap_ = reinterpret_cast<HeapEntry*>(memory.data() + 8 * size_t{params.rows} * params.width);
  index_ = reinterpret_cast<uint32_t*>(reinterpret_cast<uint8_t*>(heap_) +
                                       8 * size_t{params.heap_capacity});
  index_mask_ = heap_index_slots(params.heap_capacity) - 1;
  ready_ = true;
  clear();
  return Status();
}

void ShiftSketch::clear() {
  if (!ready_) return;
  memset(counters_, 0, 8 * size_t{params_.rows} * params_.width);
  memset(index_, 0, 4 * (index_mask_ + 1));
  heap_size_ = 0;
  total_ = 0;
}

int64_t ShiftSketch::counter(uint32_t row, uint32_t bucket) const {
  return static_cast<int64_t>(counters_[size_t{row} * params_.width + bucket]);
}

int64_t ShiftSketch::signed_counter(uint32_t row, uint32_t bucket, int sign) const {
  const int64_t c = counter(row, bucket);
  return sign > 0 ? c : static_cast<int64_t>(0 - static_cast<uint64_t>(c));
}

int64_t ShiftSketch::estimate(uint32_t item) const {
  int64_t values[kMaxRows];
  for (uint32_t r = 0; r < params_.rows; ++r) {
    uint32_t bucket = 0;
    int sign = 1;
    hashes_.locate(item, r, bucket, sign);
    values[r] = signed_counter(r, bucket, sign);
  }
  return median(values, params_.rows);
}

Status ShiftSketch::add(uint32_t item, int64_t count) {
  if (!ready_) return failed_precondition("sketch: add before init");
  const uint64_t delta = static_cast<uint64_t>(count) * hashes_.weight(item);  // mod 2^64
  // One pass: update each row's counter and read it back for the median, so the R hashes are
  // computed once per update.
  int64_t values[kMaxRows];
  for (uint32_t r = 0; r < params_.rows; ++r) {
    uint32_t bucket = 0;
    int sign = 1;
    hashes_.locate(item, r, bucket, sign);
    uint64_t& c = counters_[size_t{r} * params_.width + bucket];
    c = sign > 0 ? c + delta : c - delta;
    values[r] = signed_counter(r, bucket, sign);
  }
  total_ = static_cast<int64_t>(static_cast<uint64_t>(total_) + static_cast<uint64_t>(count));
  place(item, magnitude_of(median(values, params_.rows)));
  return Status();
}

size_t ShiftSketch::find(uint32_t item) const {
  size_t slot = slot_of(item, index_mask_);
  while (index_[slot] != 0) {
    if (heap_[index_[slot] - 1].item == item) return slot;
    slot = (slot + 1) & index_mask_;
  }
  return kNotFound;
}

void ShiftSketch::index_set(uint32_t item, uint32_t position) {
  size_t slot = find(item);
  if (slot == kNotFound) {
    slot = slot_of(item, index_mask_);
    while (index_[slot] != 0) slot = (slot + 1) & index_mask_;
  }
  index_[slot] = position + 1;
}

void ShiftSketch::index_erase(uint32_t item) {
  size_t hole = find(item);
  if (hole == kNotFound) return;
  index_[hole] = 0;
  // Backward-shift deletion keeps every remaining key reachable from its home slot.
  size_t next = (hole + 1) & index_mask_;
  while (index_[next] != 0) {
    const size_t home = slot_of(heap_[index_[next] - 1].item, index_mask_);
    const bool movable = ((next - home) & index_mask_) >= ((next - hole) & index_mask_);
    if (movable) {
      index_[hole] = index_[next];
      index_[next] = 0;
      hole = next;
    }
    next = (next + 1) & index_mask_;
  }
}

void ShiftSketch::swap_entries(size_t a, size_t b) {
  // The index finds an item through the heap entry it points at, so look both up first.
  const size_t slot_a = find(heap_[a].item), slot_b = find(heap_[b].item);
  const HeapEntry t = heap_[a];
  heap_[a] = heap_[b];
  heap_[b] = t;
  index_[slot_a] = static_cast<uint32_t>(b + 1);
  index_[slot_b] = static_cast<uint32_t>(a + 1);
}

void ShiftSketch::sift_up(size_t position) {
  while (position > 0) {
    const size_t parent = (position - 1) / 2;
    if (!(heap_[position].magnitude < heap_[parent].magnitude)) break;
    swap_entries(position, parent);
    position = parent;
  }
}

void ShiftSketch::sift_down(size_t position) {
  while (true) {
    const size_t left = 2 * position + 1, right = left + 1;
    size_t smallest = position;
    if (left < heap_size_ && heap_[left].magnitude < heap_[smallest].magnitude) smallest = left;
    if (right < heap_size_ && heap_[right].magnitude < heap_[smallest].magnitude) smallest = right;
    if (smallest == position) return;
    swap_entries(position, smallest);
    position = smallest;
  }
}

void ShiftSketch::offer(uint32_t item) {
  place(item, magnitude_of(estimate(item)));
}

void ShiftSketch::place(uint32_t item, float magnitude) {
  const size_t slot = find(item);
  if (slot != kNotFound) {
    const size_t position = index_[slot] - 1;
    const float old = heap_[position].magnitude;
    heap_[position].magnitude = magnitude;
    if (magnitude < old) {
      sift_up(position);
    } else {
      sift_down(position);
    }
    return;
  }
  if (heap_size_ < params_.heap_capacity) {
    heap_[heap_size_] = HeapEntry{item, magnitude};
    index_set(item, static_cast<uint32_t>(heap_size_));
    ++heap_size_;
    sift_up(heap_size_ - 1);
    return;
  }
  if (magnitude > heap_[0].magnitude) {
    index_erase(heap_[0].item);
    heap_[0] = HeapEntry{item, magnitude};
    index_set(item, 0);
    sift_down(0);
  }
}

Status ShiftSketch::combine(const ShiftSketch& other, int64_t sign) {
  if (!ready_ || !other.ready_) return failed_precondition("sketch: combine before init");
  if (!same_params(params_, other.params_)) {
    return invalid_argument("sketch: only sketches with equal parameters and seed combine");
  }
  const size_t cells = size_t{params_.rows} * params_.width;
  for (size_t i = 0; i < cells; ++i) {
    counters_[i] = sign > 0 ? counters_[i] + other.counters_[i] : counters_[i] - other.counters_[i];
  }
  const uint64_t t = static_cast<uint64_t>(other.total_);
  total_ = static_cast<int64_t>(sign > 0 ? static_cast<uint64_t>(total_) + t
                                         : static_cast<uint64_t>(total_) - t);
  // Heap merge (001 §4.6): re-estimate this heap's items on the new counters, then offer the
  // other heap's items; the H largest of the union remain.
  for (size_t i = 0; i < heap_size_; ++i)
    heap_[i].magnitude = magnitude_of(estimate(heap_[i].item));
  for (size_t i = heap_size_ / 2; i-- > 0;) sift_down(i);
  for (size_t i = 0; i < other.heap_size_; ++i) offer(other.heap_[i].item);
  return Status();
}

Status ShiftSketch::add_sketch(const ShiftSketch& other) {
  return combine(other, 1);
}
Status ShiftSketch::subtract_sketch(const ShiftSketch& other) {
  return combine(other, -1);
}

Status ShiftSketch::scale(int64_t factor) {
  if (!ready_) return failed_precondition("sketch: scale before init");
  const size_t cells = size_t{params_.rows} * params_.width;
  for (size_t i = 0; i < cells; ++i) counters_[i] *= static_cast<uint64_t>(factor);
  total_ = static_cast<int64_t>(static_cast<uint64_t>(total_) * static_cast<uint64_t>(factor));
  for (size_t i = 0; i < heap_size_; ++i)
    heap_[i].magnitude = magnitude_of(estimate(heap_[i].item));
  for (size_t i = heap_size_ / 2; i-- > 0;) sift_down(i);
  return Status();
}

Result<size_t> ShiftSketch::serialize(MutableByteSpan out) const {
  if (!ready_) return failed_precondition("sketch: serialize before init");
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
