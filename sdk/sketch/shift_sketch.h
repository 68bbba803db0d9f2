// ShiftSketch: the Cormode–Ting data-shift sketch (001 Algorithm 1) in caller memory, with
// integer counters so that sketches add exactly and can be summed modulo 2^64 under secure
// aggregation.
//
// An update (item i, count c) adds c·ω_i·s_r(i) to counter (r, h_r(i)) of each of R rows of a
// CountSketch of width w, where ω_i is the fixed-point L1-sampling weight (sampling_weight.h:
// round(W_i·2^4), W_i = 1/(1 − u_i^(1/k))); it then re-estimates v̂_i (the median over the rows
// of s_r(i)·counter) and keeps the H items with the largest |v̂_i| in a min-heap. Hashes are
// SipHash-2-4 (item_hash.h) keyed from the 256-bit task seed: bytes 0–15 key the weights, bytes
// 16–31 (with the row number folded into k0) the buckets and signs. Cost per update: R + 1
// hashes, R counter updates, a median of R, O(log H) heap work — independent of k.
//
// Counters are int64 held as two's complement, updated modulo 2^64: linear operations are exact
// (sketch(P) + sketch(Q) == sketch(P + Q) bit for bit) and the host reads a counter as signed,
// which is exact while |Σ c·ω| < 2^63, i.e. for totals below 2^28 per summed sketch (ω ≤ 2^35).
// The host turns counters into v = counter/(2^4·N) with N the summed total.
//
// Linear operations (Fact 4.11) — add, subtract, scale by an integer — need equal parameters and
// seed (kInvalidArgument otherwise); add/subtract then merge the heaps (§4.6): the union of both
// heaps' items, re-estimated on the combined counters, the H largest kept.
//
// Reports from peers: parse_sketch_report checks the magic, version, parameters, length and CRC
// before it gives a view (kDataLoss otherwise, the output untouched); parameters whose report
// would not fit in size_t — 8·R·w ≥ 2^32 on a 32-bit device — are refused, never wrapped.
//
// Memory (caller's): shift_sketch_memory_bytes(p) = 8·R·w + 8·H + 4·S, S = the power of two
// ≥ 2H (heap index). The report (serialize) is shift_sketch_report_bytes(p, heap items) =
// 80 + 8·R·w + 4·(items in the heap) + 4 (CRC): the counters and the heap's item ids. Both
// return kSizeOverflow (sdk/base/checked_size.h) when the size does not fit in size_t; init()
// refuses such parameters.
// Paper: 001 §4.2–4.6, Algorithm 1, Fact 4.11.
#ifndef FEDSTAT_SDK_SKETCH_SHIFT_SKETCH_H_
#define FEDSTAT_SDK_SKETCH_SHIFT_SKETCH_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/checked_size.h"
#include "sdk/base/item_hash.h"
#include "sdk/base/result.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace sketch {

constexpr uint32_t kMaxRows = 15;
// Counters read as signed int64 are exact while a summed sketch's total stays below this.
constexpr int64_t kMaxSketchTotal = int64_t{1} << 28;

struct ShiftSketchParams {
  uint32_t rows = 5;              // R, 1..15 (odd is best: a true median)
  uint32_t width = 1024;          // w ≥ 1
  uint32_t heap_capacity = 1024;  // H ≥ 1
  uint32_t k = 4096;              // sampling parameter k ≥ 1
  Seed256 seed;                   // the task's 256-bit seed
};

// The size formulas follow sdk/base/checked_size.h: kSizeOverflow when the true size does not
// fit in size_t (on a 32-bit device, e.g. 8·R·w ≥ 2^32), never a wrapped value.
constexpr size_t heap_index_slots(uint32_t heap_capacity) {
  uint64_t slots = 2;  // 64-bit: 2·H ≤ 2^33 for any 32-bit H
  while (slots < 2 * uint64_t{heap_capacity}) slots *= 2;
  return size_from_u64(slots);
}
constexpr size_t shift_sketch_memory_bytes(const ShiftSketchParams& p) {
  return size_add(
      size_mul(size_mul(8, p.rows), p.width),
      size_add(size_mul(8, p.heap_capacity), size_mul(4, heap_index_slots(p.heap_capacity))));
}
constexpr size_t kSketchHeaderBytes = 80;
constexpr size_t shift_sketch_report_bytes(const ShiftSketchParams& p, size_t heap_items) {
  return size_add(size_add(kSketchHeaderBytes, size_mul(size_mul(8, p.rows), p.width)),
                  size_add(size_mul(4, heap_items), 4));
}

Status validate_params(const ShiftSketchParams& p);
// Equal parameters and seed: only such sketches combine (Fact 4.11).
bool same_params(const ShiftSketchParams& a, const ShiftSketchParams& b);

// The hashes both sides use: the weight ω_i, and each row's bucket and sign.
class SketchHashes {
 public:
  explicit SketchHashes(const ShiftSketchParams& p);
  uint64_t weight(uint32_t item) const;
  // bucket in [0, width) and sign ±1 of item in row r.
  void locate(uint32_t item, uint32_t row, uint32_t& bucket, int& sign) const;

 private:
  ItemHasher weight_hasher_;
  ItemHasher row_hasher_;
  uint32_t k_, width_;
};

struct HeapEntry {
  uint32_t item = 0;
  float magnitude = 0;  // |v̂| when last estimated (counter units)
};

class ShiftSketch {
 public:
  ShiftSketch() : hashes_(ShiftSketchParams()) {}
  ShiftSketch(const ShiftSketch&) = delete;
  ShiftSketch& operator=(const ShiftSketch&) = delete;

  // memory.size() must be shift_sketch_memory_bytes(params), 8-byte aligned; the sketch is empty.
  Status init(const ShiftSketchParams& params, MutableByteSpan memory);
  void clear();

  // count may be negative (a difference); the total follows it.
  Status add(uint32_t item, int64_t count);

  Status add_sketch(const ShiftSketch& other);
  Status subtract_sketch(const ShiftSketch& other);
  Status scale(int64_t factor);

  // v̂_i in counter units: the median over rows of s_r(i)·counter (lower median for even R).
  int64_t estimate(uint32_t item) const;
  int64_t counter(uint32_t row, uint32_t bucket) const;
  int64_t total() const { return total_; }
  size_t heap_size() const { return heap_size_; }
  Span<const HeapEntry> heap() const { return Span<const HeapEntry>(heap_, heap_size_); }
  const ShiftSketchParams& params() const { return params_; }
  const SketchHashes& hashes() const { return hashes_; }

  // The report: header (magic "FSK1", version, R, w, H, k, the seed, total, heap count), the
  // counters (little-endian int64, row-major), the heap's item ids, CRC-32.
  Result<size_t> serialize(MutableByteSpan out) const;

 private:
  Status combine(const ShiftSketch& other, int64_t sign);
  void offer(uint32_t item);                   // re-estimates and places `item` in the heap
  void place(uint32_t item, float magnitude);  // places `item` with a known |v̂|
  int64_t signed_counter(uint32_t row, uint32_t bucket, int sign) const;
  size_t find(uint32_t item) const;
  void index_set(uint32_t item, uint32_t position);
  void index_erase(uint32_t item);
  void sift_up(size_t position);
  void sift_down(size_t position);
  void swap_entries(size_t a, size_t b);

  ShiftSketchParams params_;
  SketchHashes hashes_;
  uint64_t* counters_ = nullptr;  // R·w, modulo 2^64
  HeapEntry* heap_ = nullptr;     // min-heap by magnitude
  uint32_t* index_ = nullptr;     // open addressing: item → heap position + 1 (0 = empty)
  size_t index_mask_ = 0;
  size_t heap_size_ = 0;
  int64_t total_ = 0;
  bool ready_ = false;
};

// The parsed report, viewing the caller's bytes (the host reads counters and heap ids from it).
struct SketchReport {
  ShiftSketchParams params;
  int64_t total = 0;
  ByteSpan counters;    // R·w little-endian int64
  ByteSpan heap_items;  // heap count × little-endian u32
  size_t heap_count = 0;
  int64_t counter(size_t index) const;
  uint32_t heap_item(size_t index) const;
};
Status parse_sketch_report(ByteSpan blob, SketchReport& out);

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_SHIFT_SKETCH_H_
