#include "sdk/sketch/shift_sketch.h"

#include <string.h>

#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "sdk/sketch/sampling_weight.h"

namespace fedstat {
namespace sketch {
namespace {

constexpr uint8_t kMagic[4] = {'F', 'S', 'K', '1'};
constexpr uint8_t kVersion = 2;  // 1: R + 1 SipHashes per update (other buckets and signs)

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

size_t ShiftSketch::next_slot(size_t slot) const {
  return slot + 1 == index_slots_ ? 0 : slot + 1;
}

size_t ShiftSketch::find(uint32_t item) const {
  size_t slot = index_home(item);
  const uint32_t tag = index_tag(item);
  while (index_[slot] != 0) {
    // The tag rejects most other items without reading their heap entry.
    if ((index_[slot] & ~position_mask_) == tag && heap_[position_of(slot)].item == item) {
      return slot;
    }
    slot = next_slot(slot);
  }
  return kNotFound;
}

size_t ShiftSketch::slot_at(uint32_t item, size_t position) const {
  // The entry is exactly the item's tag and position + 1; no other entry equals it (outside a sift
  // each position is claimed once; within one, see move_entry), so no heap entry is read. An empty
  // slot first would mean the index is already broken (the caller's memory overwritten): then
  // kNotFound, and no write out of bounds (set_position and index_erase ignore it).
  const uint32_t entry = index_tag(item) | static_cast<uint32_t>(position + 1);
  size_t slot = index_home(item);
  while (index_[slot] != entry) {
    if (index_[slot] == 0) return kNotFound;
    slot = next_slot(slot);
  }
  return slot;
}

size_t ShiftSketch::index_insert(uint32_t item, size_t position) {
  size_t slot = index_home(item);
  while (index_[slot] != 0) slot = next_slot(slot);
  index_[slot] = index_tag(item) | static_cast<uint32_t>(position + 1);
  return slot;
}

void ShiftSketch::index_erase(size_t hole) {
  if (hole == kNotFound) return;
  index_[hole] = 0;
  // Backward-shift deletion keeps every remaining key reachable from its home slot.
  const size_t n = index_slots_;
  auto distance = [n](size_t from, size_t to) { return to >= from ? to - from : to + n - from; };
  // An entry moves back into the hole unless its home lies cyclically in (hole, next]. Written
  // with masks, not a branch (the compiler turned selects back into one): whether an entry moves
  // is data and a branch on it mispredicts. The hole is empty, so writing 0 to it when nothing
  // moves changes nothing.
  size_t next = next_slot(hole);
  for (uint32_t entry = index_[next]; entry != 0; entry = index_[next]) {
    const bool moves = distance(home_of_entry(next), next) >= distance(hole, next);
    const uint32_t moved = 0u - static_cast<uint32_t>(moves);  // all ones when it moves
    index_[hole] = entry & moved;
    index_[next] = entry & ~moved;
    hole += (next - hole) & (0 - static_cast<size_t>(moves));
    next = next_slot(next);
  }
}

// The sifts move the entry at `position` (index slot `slot`, or kNotFound: looked up when needed)
// to its place with one index update per entry passed: the same heap as swapping it step by step,
// with half the index look-ups. The entry passed is found by its exact index entry (slot_at): until
// the sift ends, only the sift's start position is claimed twice (by the moving entry's stale
// entry and the entry moved into it), and `from`, a position further along, is not.
void ShiftSketch::move_entry(size_t from, size_t to) {
  const size_t slot = slot_at(heap_[from].item, from);
  heap_[to] = heap_[from];
  set_position(slot, to);
}

void ShiftSketch::sift_up(size_t position, size_t slot) {
  const HeapEntry moving = heap_[position];
  const size_t start = position;
  bool moved = false;
  while (position > 0) {
    const size_t parent = (position - 1) / kHeapArity;
    if (!(moving.magnitude < heap_[parent].magnitude)) break;
    if (slot == kNotFound) slot = slot_at(moving.item, start);
    move_entry(parent, position);
    moved = true;
    position = parent;
  }
  if (!moved) return;
  heap_[position] = moving;
  set_position(slot, position);
}

void ShiftSketch::sift_down(size_t position, size_t slot) {
  const HeapEntry moving = heap_[position];
  const size_t start = position;
  bool moved = false;
  while (true) {
    // The first child with the smallest magnitude, if it is below the moving entry's.
    // (No overflow: 8·H + 4·S(H) bytes fit size_t, so kHeapArity·position + 1 does.)
    const size_t first = kHeapArity * position + 1;
    if (first >= heap_size_) break;
    const size_t end = heap_size_ - first > kHeapArity ? first + kHeapArity : heap_size_;
    size_t smallest = position;
    float least = moving.magnitude;
    for (size_t child = first; child < end; ++child) {
      const bool below = heap_[child].magnitude < least;
      smallest = below ? child : smallest;
      least = below ? heap_[child].magnitude : least;
    }
    if (smallest == position) break;
    if (slot == kNotFound) slot = slot_at(moving.item, start);
    move_entry(smallest, position);
    moved = true;
    position = smallest;
  }
  if (!moved) return;
  heap_[position] = moving;
  set_position(slot, position);
}

void ShiftSketch::offer(uint32_t item) {
  place(item, magnitude_of(estimate(item)));
}

void ShiftSketch::place(uint32_t item, float magnitude) {
  // At or below a full heap's minimum nothing changes, not even for an item the heap holds (its
  // magnitude stays as it was: see the header). This skips the index for most updates.
  if (heap_size_ == params_.heap_capacity && !(magnitude > heap_[0].magnitude)) return;
  const size_t slot = find(item);
  if (slot != kNotFound) {
    const size_t position = position_of(slot);
    const float old = heap_[position].magnitude;
    heap_[position].magnitude = magnitude;
    if (magnitude < old) {
      sift_up(position, slot);
    } else {
      sift_down(position, slot);
    }
    return;
  }
  if (heap_size_ < params_.heap_capacity) {
    heap_[heap_size_] = HeapEntry{item, magnitude};
    const size_t at = index_insert(item, heap_size_);
    ++heap_size_;
    sift_up(heap_size_ - 1, at);
    return;
  }
  // Here magnitude > the minimum (checked above): the new item replaces the root.
  index_erase(slot_at(heap_[0].item, 0));
  heap_[0] = HeapEntry{item, magnitude};
  sift_down(0, index_insert(item, 0));
}

Status ShiftSketch::combine(const ShiftSketch& other, int64_t sign) {
  if (!ready_ || !other.ready_) return failed_precondition("sketch: combine before init");
  if (!same_params(params_, other.params_)) {
    return invalid_argument("sketch: only sketches with equal parameters and seed combine");
  }
  flush();
  other.settle();
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
  for (size_t i = heap_parents(); i-- > 0;) sift_down(i, kNotFound);
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
  flush();
  const size_t cells = size_t{params_.rows} * params_.width;
  for (size_t i = 0; i < cells; ++i) counters_[i] *= static_cast<uint64_t>(factor);
  total_ = static_cast<int64_t>(static_cast<uint64_t>(total_) * static_cast<uint64_t>(factor));
  for (size_t i = 0; i < heap_size_; ++i)
    heap_[i].magnitude = magnitude_of(estimate(heap_[i].item));
  for (size_t i = heap_parents(); i-- > 0;) sift_down(i, kNotFound);
  return Status();
}

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
