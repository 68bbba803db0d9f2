// ShiftSketch (shift_sketch.h): its parameters and hashes, init, and the count sketch itself —
// updates queued and drained R rows at a time, counters, the median estimate. The heap of
// heavy hitters is in shift_sketch_heap.cpp, combining and scaling in shift_sketch_merge.cpp,
// the report's bytes in shift_sketch_report.cpp.
#include "sdk/sketch/shift_sketch.h"

#include <string.h>

#include "sdk/sketch/sampling_weight.h"
#include "sdk/sketch/shift_sketch_internal.h"

namespace fedstat {
namespace sketch {

namespace {

// A hint to the cache; no effect on any value.
inline void prefetch(const void* p) {
#if defined(__GNUC__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}

// Compare-exchange: afterwards a ≤ b. Written as selects, so the compiler emits conditional moves:
// the medians' inputs are data and branches on them mispredict.
inline void order(int64_t& a, int64_t& b) {
  const int64_t low = a < b ? a : b;
  b = a < b ? b : a;
  a = low;
}

// The median (lower median for even n) of values[0..n), 1 ≤ n ≤ kMaxRows; values may be
// reordered. n = 3 and n = 5 (the budget rule's row counts) by compare-exchange networks
// (Devillard's opt_med5 for five: seven exchanges), other n by insertion sort.
inline int64_t median(int64_t* v, uint32_t n) {
  if (n == 3) {
    order(v[0], v[1]);
    const int64_t upper = v[1] < v[2] ? v[1] : v[2];
    return v[0] < upper ? upper : v[0];
  }
  if (n == 5) {
    order(v[0], v[1]);
    order(v[3], v[4]);
    order(v[0], v[3]);
    order(v[1], v[4]);
    order(v[1], v[2]);
    order(v[2], v[3]);
    order(v[1], v[2]);
    return v[2];
  }
  for (uint32_t i = 1; i < n; ++i) {
    const int64_t x = v[i];
    uint32_t j = i;
    while (j > 0 && v[j - 1] > x) {
      v[j] = v[j - 1];
      --j;
    }
    v[j] = x;
  }
  return v[(n - 1) / 2];
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
  if (p.buffer_slots != 0 &&
      (p.buffer_slots < kMinBufferSlots || p.buffer_slots > kMaxBufferSlots ||
       (p.buffer_slots & (p.buffer_slots - 1)) != 0)) {
    return invalid_argument("sketch: buffer slots must be 0 or a power of two from 64 to 2^24");
  }
  return Status();
}

SketchHashes::SketchHashes(const ShiftSketchParams& p)
    : item_hasher_(ItemHasher::from_key_bytes(p.seed.bytes)), weight_(p.k), width_(p.width) {
  const ItemHasher row_hasher = ItemHasher::from_key_bytes(p.seed.bytes + 16);
  for (uint32_t r = 0; r < kMaxRows; ++r) {
    row_a_[r] = row_hasher.hash_id(3 * uint64_t{r});
    row_b_[r] = row_hasher.hash_id(3 * uint64_t{r} + 1);
    row_c_[r] = row_hasher.hash_id(3 * uint64_t{r} + 2);
  }
  index_multiplier_ = row_hasher.hash_id(3 * uint64_t{kMaxRows}) | 1;
}

uint64_t SketchHashes::weight_of_hash(uint64_t hash) const {
  return weight_.fixed(hash);
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
  uint8_t* at = memory.data() + 8 * size_t{params.rows} * params.width;
  heap_ = reinterpret_cast<HeapEntry*>(at);
  at += 8 * size_t{params.heap_capacity};
  index_ = reinterpret_cast<uint32_t*>(at);
  index_slots_ = heap_index_slots(params.heap_capacity);
  position_bits_ = 1;  // enough bits for H (positions + 1 run to H)
  while (position_bits_ < 32 && (uint64_t{1} << position_bits_) <= params.heap_capacity) {
    ++position_bits_;
  }
  position_mask_ = position_bits_ == 32 ? ~uint32_t{0} : (uint32_t{1} << position_bits_) - 1;
  // Homes from the tag alone when it has at least log2(8·S) bits (at least 8 tag values per slot:
  // homes spread within 1/8 of even), else from the whole index hash.
  tag_homes_ = (uint64_t{1} << (32 - position_bits_)) >= 8 * uint64_t{index_slots_};
  at += 4 * index_slots_;
  buffer_ = nullptr;
  set_bits_ = set_shift_ = count_mask_ = 0;
  buffer_half_ = 0;
  if (params.buffer_slots != 0) {
    buffer_ = reinterpret_cast<uint32_t*>(at);
    while ((uint32_t{1} << set_bits_) < params.buffer_slots / kBufferWays) ++set_bits_;
    set_shift_ = 32 - set_bits_;
    count_mask_ = (uint32_t{1} << set_bits_) - 1;
    buffer_half_ = int64_t{1} << (set_bits_ - 1);
  }
  ready_ = true;
  clear();
  return Status();
}

void ShiftSketch::clear() {
  if (!ready_) return;
  memset(counters_, 0, 8 * size_t{params_.rows} * params_.width);
  memset(index_, 0, 4 * index_slots_);
  for (uint32_t i = 0; i < params_.buffer_slots; ++i) buffer_[i] = entry_of(0, 0);
  heap_size_ = 0;
  dirty_ = false;
  queued_ = 0;
  total_ = 0;
}

int64_t ShiftSketch::counter(uint32_t row, uint32_t bucket) const {
  settle();
  return static_cast<int64_t>(counters_[size_t{row} * params_.width + bucket]);
}

int64_t ShiftSketch::estimate(uint32_t item) const {
  settle();
  const uint64_t h = hashes_.item_hash(item);
  int64_t values[kMaxRows];
  for (uint32_t r = 0; r < params_.rows; ++r) {
    const uint32_t g = hashes_.row_value(h, r);
    const uint64_t negate = 0 - uint64_t{g & 1};  // all ones for the sign −1
    const uint64_t c = counters_[size_t{r} * params_.width + hashes_.bucket_of(g)];
    values[r] = static_cast<int64_t>((c ^ negate) - negate);
  }
  return median(values, params_.rows);
}

Status ShiftSketch::add_slow(uint32_t item, int64_t count) {
  if (!ready_) return failed_precondition("sketch: add before init");
  total_ = static_cast<int64_t>(static_cast<uint64_t>(total_) + static_cast<uint64_t>(count));
  if (count == 0) return Status();
  if (buffer_ == nullptr) {
    apply(item, count);
    return Status();
  }
  const uint32_t mix = item * kBufferMix;
  uint32_t* set = buffer_ + kBufferWays * (mix >> set_shift_);
  const uint32_t key = mix << set_bits_;
  // The inline path did not finish: the item is held but the sum does not fit its slot, or the
  // count alone does not fit one.
  const bool fits = count >= -buffer_half_ && count < buffer_half_;
  for (uint32_t w = 0; w < kBufferWays; ++w) {
    if (((set[w] ^ key) >> set_bits_) != 0) continue;
    // Modulo 2^64, as the counters add: a count near ±2^63 must not overflow int64 here (it
    // then does not fit, keep is 0 and the wrapped sum is what the counters would get anyway).
    const int64_t sum = static_cast<int64_t>(static_cast<uint64_t>(int64_t{entry_count(set[w])}) +
                                             static_cast<uint64_t>(count));
    // A held item whose sum outgrew its slot keeps a quarter of the range there (so that it stays
    // held: the heavy items are the ones that overflow) and the rest goes to the sketch. A count
    // that does not fit at all empties the slot and goes to the sketch with what it held.
    const int64_t keep = !fits ? 0 : sum > 0 ? buffer_half_ / 2 : -(buffer_half_ / 2);
    set[w] = entry_of(key, keep);
    if (sum != keep) defer(item, sum - keep);
    dirty_ = true;
    return Status();
  }
  defer(item, count);  // not held and too large for a slot
  return Status();
}

void ShiftSketch::drain() {
#if UINTPTR_MAX > 0xFFFFFFFFu
  // On 64-bit targets (those of the longer queue, kQueueLength) the budget rule's row counts have
  // their loops unrolled (+5 % at 400 KiB, paired in one process); 32-bit devices keep the flash
  // that costs (about 1 KiB). A preprocessor test, so that 32-bit builds never instantiate them.
  if (params_.rows == 3) return drain_rows<3>();
  if (params_.rows == 5) return drain_rows<5>();
#endif
  drain_rows<0>();
}

template <uint32_t R>
void ShiftSketch::drain_rows() {
  // In stages over the whole queue, so that independent work overlaps in the processor: the
  // SipHash of every item (in vector lanes where the processor has them), then its buckets (with
  // the counters fetched into the cache while the weights are computed), then the weights, then
  // the counter updates, then the heap. The heap comes last because it never reads a counter:
  // each item's magnitude is the one its own update left, so placing them afterwards, in order,
  // gives the same heap as placing each after its update.
  uint64_t hash[kQueueLength], weight[kQueueLength];
  Location at[kQueueLength];
  float magnitude[kQueueLength];
  hashes_.item_hashes(queued_item_, hash, queued_);
  locate<R>(queued_item_, hash, at, queued_);
  hashes_.weights_of_hashes(hash, weight, queued_);
  update<R>(queued_count_, weight, at, magnitude, queued_);
  place_queued(magnitude, queued_);
  queued_ = 0;
}

void ShiftSketch::flush() {
  if (dirty_) {
    for (uint32_t i = 0; i < params_.buffer_slots; ++i) {
      const uint32_t e = buffer_[i];
      const int32_t c = entry_count(e);
      if (c == 0) continue;
      buffer_[i] = entry_of(e & ~count_mask_, 0);
      const uint32_t mix = ((i / kBufferWays) << set_shift_) | (e >> set_bits_);
      defer(mix * kBufferMixInverse, c);
    }
    dirty_ = false;
  }
  drain();
}

void ShiftSketch::apply(uint32_t item, int64_t count) {
  const uint64_t hash = hashes_.item_hash(item);
  const uint64_t weight = hashes_.weight_of_hash(hash);
  Location at;
  float magnitude;
  locate<0>(&item, &hash, &at, 1);
  update<0>(&count, &weight, &at, &magnitude, 1);
  place(item, magnitude);
}

template <uint32_t R>
void ShiftSketch::locate(const uint32_t* item, const uint64_t* hash, Location* at, size_t n) const {
  const uint32_t rows = R != 0 ? R : params_.rows;
  for (size_t j = 0; j < n; ++j) {
    uint32_t signs = 0;
    for (uint32_t r = 0; r < rows; ++r) {
      const uint32_t g = hashes_.row_value(hash[j], r);
      signs |= (g & 1u) << r;
      at[j].offset[r] = r * params_.width + hashes_.bucket_of(g);
      prefetch(counters_ + at[j].offset[r]);
    }
    at[j].signs = signs;
    prefetch(index_ + index_home(item[j]));
  }
}

template <uint32_t R>
void ShiftSketch::update(const int64_t* count, const uint64_t* weight, const Location* at,
                         float* magnitude, size_t n) {
  const uint32_t rows = R != 0 ? R : params_.rows;
  for (size_t j = 0; j < n; ++j) {
    const uint64_t delta = static_cast<uint64_t>(count[j]) * weight[j];  // mod 2^64
    // Each row's counter moves by ±delta and is read back, signed, for the median. Signs are
    // applied without branches: (x ^ m) − m is x for m = 0 and −x for m = all ones.
    int64_t values[kMaxRows];
    for (uint32_t r = 0; r < rows; ++r) {
      const uint64_t negate = 0 - uint64_t{(at[j].signs >> r) & 1u};
      uint64_t& c = counters_[at[j].offset[r]];
      c += (delta ^ negate) - negate;
      values[r] = static_cast<int64_t>((c ^ negate) - negate);
    }
    magnitude[j] = magnitude_of(median(values, rows));
  }
}

void ShiftSketch::place_queued(const float* magnitude, size_t n) {
  if (heap_size_ != params_.heap_capacity) {
    for (size_t j = 0; j < n; ++j) place(queued_item_[j], magnitude[j]);
    return;
  }
  // A full heap: place() changes nothing for a magnitude at or below the heap's minimum, which is
  // most of them. The others are listed first, without a branch per item (so no mispredicted
  // one), against the minimum now, `floor`, and only they are placed. That skips exactly what
  // place() would skip, because with a full heap place() never lowers the minimum: it acts only
  // on a magnitude above it, which then replaces the root or raises or lowers a held entry to a
  // value still above it (the buffered golden reports pin the result).
  const float floor = heap_[0].magnitude;
  uint32_t above[kQueueLength];
  size_t count = 0;
  for (size_t j = 0; j < n; ++j) {
    above[count] = static_cast<uint32_t>(j);
    count += magnitude[j] > floor ? 1 : 0;
  }
  for (size_t i = 0; i < count; ++i) place(queued_item_[above[i]], magnitude[above[i]]);
}

}  // namespace sketch
}  // namespace fedstat
