/// @file
/// ShiftSketch: the Cormode–Ting data-shift sketch (001 Algorithm 1) in caller memory, with
/// integer counters so that sketches add exactly and can be summed modulo 2^64 under secure
/// aggregation.
///
/// Applying an update (item i, count c) adds c·ω_i·s_r(i) to counter (r, h_r(i)) of each of R rows
/// of a CountSketch of width w, where ω_i is the fixed-point L1-sampling weight (sampling_weight.h:
/// round(W_i·2^4), W_i = 1/(1 − u_i^(1/k))); it then re-estimates v̂_i (the median over the rows
/// of s_r(i)·counter) and offers i to the heap. The heap (an 8-ary min-heap of H entries,
/// kHeapArity) holds the items with the largest |v̂_i| as estimated when each was last offered; an
/// offer at or below a full heap's minimum changes nothing, even for an item the heap holds (its
/// entry keeps the larger magnitude it had), which skips the heap's index for most updates. Hashes:
/// one keyed SipHash of the item, from which the weight and every row's bucket and sign derive
/// (SketchHashes below). Cost of applying one update: one SipHash, one weight, R counter updates, a
/// median of R, and O(log_8 H) heap work when the item reaches the heap — independent of k. The
/// heap's index finds an item with one probe sequence from its home slot; an entry a sift passes is
/// found by its exact index entry (tag and position), so a sift reads no other heap entry, and for
/// H < 2^14 an entry's home follows from its tag, so a deletion reads none either.
///
/// Pre-aggregation buffer (C > 0 slots, params.buffer_slots; params_for_budget gives it the bytes
/// its denser heap index saves): add() first looks the item up in a 4-way set-associative table of
/// C 4-byte entries (the item's tag, its count so far). If it is there and the sum fits the slot
/// (s-bit counts, s = log2(C/4)), only the slot changes: a few integer operations, no hash (on
/// x86-64 one 16-byte SSE2 load, compare, add and store for the whole set; elsewhere way by way;
/// the same entries either way, pinned by a golden report on every target). If
/// not, it takes the way of its set with the smallest |count| and that way's item and count are
/// applied (a heavy item, with a large count, stays); a held item whose sum outgrows its slot
/// keeps a quarter of the range there and the rest is applied; a count too large for a slot is
/// applied directly. Applied updates wait in a queue of kQueueLength in the object and are applied
/// together (their SipHashes and weights overlap in the processor). Counts are linear, so the
/// counters end exactly as if every update were applied at once (integer addition mod 2^64 is
/// order-free); only the heap sees the buffer: an item is offered when its gathered count is
/// applied, with its estimate at that moment. flush() applies everything the buffer and queue
/// hold; every reader (estimate, counter, heap, heap_size, serialize) and every linear operation
/// flushes first, so they always see every update. A ShiftSketch is therefore not safe to use from
/// two threads at once, even through its const readers. total() follows add() at once.
///
/// Counters are int64 held as two's complement, updated modulo 2^64: linear operations are exact
/// (sketch(P) + sketch(Q) == sketch(P + Q) bit for bit) and the host reads a counter as signed,
/// which is exact while |Σ c·ω| < 2^63, i.e. for totals below 2^28 per summed sketch (ω ≤ 2^35).
/// The host turns counters into v = counter/(2^4·N) with N the summed total.
///
/// Linear operations (Fact 4.11) — add, subtract, scale by an integer — need equal parameters and
/// seed (kInvalidArgument otherwise); add/subtract then merge the heaps (§4.6): the union of both
/// heaps' items, re-estimated on the combined counters, the H largest kept.
///
/// Reports from peers: parse_sketch_report checks the magic, version, parameters, length and CRC
/// before it gives a view (kDataLoss otherwise, the output untouched; kUnimplemented for another
/// version: version 1 reports used other hashes and must not be mixed with these); parameters
/// whose report would not fit in size_t — 8·R·w ≥ 2^32 on a 32-bit device — are refused, never
/// wrapped.
///
///
/// @memory caller's: shift_sketch_memory_bytes(p) = 8·R·w + 8·H + 4·S + 4·C, S = H + ⌊H/4⌋ + 1
/// (heap index, load below 0.8). The object itself holds the row constants, the queue and the
/// bookkeeping: sizeof(ShiftSketch), 960 bytes on 64-bit hosts and 640 on the Cortex-M4 (the queue
/// is longer where pointers have 64 bits, kQueueLength). The report (serialize) is
/// shift_sketch_report_bytes(p, heap items) = 80 + 8·R·w + 4·(items in the heap) + 4 (CRC): the
/// counters and the heap's item ids. Both return kSizeOverflow (sdk/base/checked_size.h) when the
/// size does not fit in size_t; init() refuses such parameters.
/// @paper 001 §4.2–4.6, Algorithm 1, Fact 4.11.
#ifndef FEDSTAT_SDK_SKETCH_SHIFT_SKETCH_H_
#define FEDSTAT_SDK_SKETCH_SHIFT_SKETCH_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sdk/base/checked_size.h"
#include "sdk/base/item_hash.h"
#include "sdk/base/result.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/base/span.h"
#include "sdk/sketch/sampling_weight.h"

namespace fedstat {
namespace sketch {

/// The most rows R a sketch may have.
constexpr uint32_t kMaxRows = 15;
/// Counters read as signed int64 are exact while a summed sketch's total stays below this.
constexpr int64_t kMaxSketchTotal = int64_t{1} << 28;

/// A sketch's parameters; validate_params states which are allowed.
struct ShiftSketchParams {
  uint32_t rows = 5;              ///< R, 1..15 (odd is best: a true median)
  uint32_t width = 1024;          ///< w ≥ 1
  uint32_t heap_capacity = 1024;  ///< H, 1..2^30
  uint32_t k = 4096;              ///< sampling parameter k ≥ 1
  Seed256 seed;                   ///< the task's 256-bit seed
  /// C, the pre-aggregation buffer's slots: 0 (none) or a power of two from 64 to 2^24. Device
  /// memory only: it is not in the report, and sketches with different C combine.
  uint32_t buffer_slots = 0;
};

// The size formulas follow sdk/base/checked_size.h: kSizeOverflow when the true size does not
// fit in size_t (on a 32-bit device, e.g. 8·R·w ≥ 2^32), never a wrapped value.
/// The heap index's slots S(H) = H + ⌊H/4⌋ + 1: open addressing at a load below 0.8
/// (kSizeOverflow if that does not fit in size_t).
constexpr size_t heap_index_slots(uint32_t heap_capacity) {
  return size_from_u64(uint64_t{heap_capacity} + uint64_t{heap_capacity} / 4 + 1);
}
/// The caller memory a sketch with `p` needs, 8·R·w + 8·H + 4·S(H) + 4·C bytes; kSizeOverflow
/// when that does not fit in size_t (on a 32-bit device, e.g. 8·R·w ≥ 2^32), never a wrapped
/// value.
constexpr size_t shift_sketch_memory_bytes(const ShiftSketchParams& p) {
  return size_add(
      size_add(size_mul(size_mul(8, p.rows), p.width), size_mul(4, p.buffer_slots)),
      size_add(size_mul(8, p.heap_capacity), size_mul(4, heap_index_slots(p.heap_capacity))));
}
/// The report's fixed header: magic, version, R, w, H, k, the seed, total and heap count.
constexpr size_t kSketchHeaderBytes = 80;
/// The length of a report with `heap_items` heap ids, 80 + 8·R·w + 4·heap_items + 4 (CRC);
/// kSizeOverflow when that does not fit in size_t, never a wrapped value.
constexpr size_t shift_sketch_report_bytes(const ShiftSketchParams& p, size_t heap_items) {
  return size_add(size_add(kSketchHeaderBytes, size_mul(size_mul(8, p.rows), p.width)),
                  size_add(size_mul(4, heap_items), 4));
}

/// Checks `p` against the limits ShiftSketch::init and parse_sketch_report apply.
/// @errors kInvalidArgument: rows outside 1..kMaxRows; width, heap_capacity or k is 0;
/// heap_capacity > 2^30 or R·w > 2^32 (too large for 32-bit indices); buffer_slots not 0 and
/// not a power of two from kMinBufferSlots (64) to kMaxBufferSlots (2^24).
Status validate_params(const ShiftSketchParams& p);
/// Equal parameters and seed (buffer_slots aside): only such sketches combine (Fact 4.11).
bool same_params(const ShiftSketchParams& a, const ShiftSketchParams& b);

/// The hashes both sides use (device and host): ONE keyed hash per item, everything else derived
/// from it.
///
///   h(i) = SipHash-2-4 of LE64(i) keyed by seed bytes 0–15 (item_hash.h);
///   ω_i = fixed_sampling_weight(h(i), k): u_i from the top 52 bits of h (sampling_weight.h);
///   row r: g_r(i) = ⌊((a_r·lo32(h) + b_r·hi32(h) + c_r) mod 2^64) / 2^32⌋, a 32-bit value;
///     sign s_r(i) = −1 if g_r(i) is odd, else +1; bucket h_r(i) = ⌊⌊g_r(i)/2⌋·w / 2^31⌋;
///   (a_r, b_r, c_r) = SipHash-2-4 of LE64(3r), LE64(3r + 1), LE64(3r + 2) keyed by seed bytes
///     16–31, drawn once when the sketch (or the host's estimator) is set up.
/// Independence (what CountSketch and the estimators need): model SipHash with the task seed as a
/// random function (it is a PRF). Then the h(i) of distinct items are independent uniform 64-bit
/// values (equal for two of N items with probability ≤ N²/2^65), and the row constants are
/// independent uniform 64-bit values from other key bytes, independent of every h(i). For
/// distinct hash values, g_r is the vector multiply-shift family of Dietzfelbinger (1996) on two
/// 32-bit characters with 64-bit arithmetic (Thorup, "High speed hashing for integers and
/// strings", 2015): strongly universal on 32-bit outputs, i.e. for h(i) ≠ h(j) the pair
/// (g_r(i), g_r(j)) is uniform on [2^32]². Hence, even conditioned on every weight (on the h's):
/// each sign is ±1 with probability ½ and independent of the bucket; the signs and buckets of two
/// items are independent; a bucket is uniform up to a relative bias below w/2^31 (each takes
/// ⌊2^31/w⌋ or ⌈2^31/w⌉ of the 2^31 values); and the rows are independent of each other. That is
/// pairwise independence within a row and independent rows: the CountSketch guarantee for the
/// fixed vector v = ω ⊙ x. Two items share a bucket in every row only if their full 64-bit hashes
/// collide (2^-64 per pair) or by independent chance in each row (≈ w^-R). Cost per item: one
/// SipHash (8 SipRounds), the weight (sampling_weight.h) and 3 integer multiplications per row.
class SketchHashes {
 public:
  /// The hashes of `p`'s seed, k and width (the row constants are drawn here).
  explicit SketchHashes(const ShiftSketchParams& p);
  /// h(i): the item's one keyed hash.
  uint64_t item_hash(uint32_t item) const { return item_hasher_.hash_id(item); }
  /// `out[j]` = item_hash(`items[j]`) for j < n, computed together (ItemHasher::hash_ids: vector
  /// lanes where the processor has them; the same values).
  void item_hashes(const uint32_t* items, uint64_t* out, size_t n) const {
    item_hasher_.hash_ids(items, out, n);
  }
  /// ω_i of an item (fixed_sampling_weight of its hash).
  uint64_t weight(uint32_t item) const { return weight_of_hash(item_hash(item)); }
  /// ω_i from the item's hash h(i).
  uint64_t weight_of_hash(uint64_t hash) const;
  /// `out[j]` = weight_of_hash(`hashes[j]`) for j < n, computed together (the same values).
  void weights_of_hashes(const uint64_t* hashes, uint64_t* out, size_t n) const {
    weight_.fixed_batch(hashes, out, n);
  }
  /// The bucket in [0, width) and sign ±1 of `item` in row `row` (< kMaxRows).
  void locate(uint32_t item, uint32_t row, uint32_t& bucket, int& sign) const {
    locate_hash(item_hash(item), row, bucket, sign);
  }
  /// The bucket and sign in row `row` (< kMaxRows) of the item whose hash h(i) is `hash`.
  void locate_hash(uint64_t hash, uint32_t row, uint32_t& bucket, int& sign) const {
    const uint32_t g = row_value(hash, row);
    bucket = bucket_of(g);
    sign = (g & 1) ? -1 : 1;
  }
  /// g_r(i) of the definition above, for the hash `hash` and row `row` (< kMaxRows).
  uint32_t row_value(uint64_t hash, uint32_t row) const {
    const uint64_t v =
        row_a_[row] * (hash & 0xFFFFFFFFu) + row_b_[row] * (hash >> 32) + row_c_[row];
    return static_cast<uint32_t>(v >> 32);
  }
  /// The bucket ⌊⌊g/2⌋·w / 2^31⌋ in [0, width) that g_r(i)'s top 31 bits select.
  uint32_t bucket_of(uint32_t g) const {
    return static_cast<uint32_t>((uint64_t{g >> 1} * width_) >> 31);
  }
  /// The heap index's 32-bit hash of `item`: multiply-shift with an odd multiplier drawn from the
  /// seed (SipHash of LE64(3·kMaxRows) keyed by bytes 16–31). Keyed, so that no order of arrival
  /// — e.g. a histogram's own hash order, or ids an adversary picks — clusters the index's linear
  /// probing. The index takes an item's home slot from it, and its entry's tag too where tags are
  /// long enough for the home to follow from the tag (ShiftSketch, H < 2^14). Speed only: no
  /// output depends on where the index keeps an item.
  uint32_t index_hash(uint32_t item) const {
    return static_cast<uint32_t>((uint64_t{item} * index_multiplier_) >> 32);
  }

 private:
  ItemHasher item_hasher_;
  SamplingWeight weight_;
  uint64_t row_a_[kMaxRows] = {}, row_b_[kMaxRows] = {}, row_c_[kMaxRows] = {};
  uint64_t index_multiplier_ = 1;
  uint32_t width_;
};

/// The pre-aggregation buffer is 4-way set-associative.
constexpr uint32_t kBufferWays = 4;
/// The smallest non-zero buffer (ShiftSketchParams::buffer_slots).
constexpr uint32_t kMinBufferSlots = 64;
/// The largest buffer (ShiftSketchParams::buffer_slots), 2^24 slots.
constexpr uint32_t kMaxBufferSlots = uint32_t{1} << 24;
/// Counts leaving the buffer wait in a queue of this many in the ShiftSketch object, so that
/// their hashes and weights are computed together: 32 where pointers have 64 bits (hosts and
/// phones), 8 on 32-bit devices (a smaller object and flush stack). Speed only: the queue is
/// applied in order, so every length gives the same counters, heap and report.
constexpr size_t kQueueLength = sizeof(void*) >= 8 ? 32 : 8;
/// The heap is 8-ary: an entry's children are the 8 at 8·position + 1 … 8·position + 8 (one or two
/// cache lines), so a sift passes log_8 H levels instead of log_2 H.
constexpr size_t kHeapArity = 8;

/// One heap entry: an item and its estimated magnitude.
struct HeapEntry {
  uint32_t item = 0;    ///< the item id
  float magnitude = 0;  ///< |v̂| when last estimated (counter units)
};

/// The data-shift sketch of 001 Algorithm 1 in caller memory (see the file description).
/// Not safe to use from two threads at once, even through its const readers (they flush).
class ShiftSketch {
 public:
  /// A sketch that holds nothing until init().
  ShiftSketch() : hashes_(ShiftSketchParams()) {}
  ShiftSketch(const ShiftSketch&) = delete;             ///< Not copyable (it views memory).
  ShiftSketch& operator=(const ShiftSketch&) = delete;  ///< Not copyable (it views memory).

  /// Sets the sketch up, empty, in `memory`, which must be exactly
  /// shift_sketch_memory_bytes(params) bytes, 8-byte aligned, and outlive the sketch.
  /// @errors kInvalidArgument: `params` fail validate_params; their memory does not fit in
  /// size_t; `memory` has another size or is not 8-byte aligned.
  Status init(const ShiftSketchParams& params, MutableByteSpan memory);
  /// Empties the sketch (counters, heap, buffer, queue, total); nothing before init().
  void clear();

  /// Adds `count` of `item`. `count` may be negative (a difference); the total follows it at
  /// once, the counters and heap when the count leaves the buffer (see the file description).
  /// add(item, 0) changes nothing. The common case — the item already in the buffer with room
  /// for the sum — is inline: a few integer operations.
  /// @errors kFailedPrecondition: the sketch was not init()ed.
  Status add(uint32_t item, int64_t count) {
    if (buffer_ != nullptr && count != 0 &&
        static_cast<uint64_t>(count) + static_cast<uint64_t>(buffer_half_) <
            2 * static_cast<uint64_t>(buffer_half_)) {  // −2^(s−1) ≤ count < 2^(s−1)
      const uint32_t mix = item * kBufferMix;
      uint32_t* set = buffer_ + kBufferWays * (mix >> set_shift_);
      const uint32_t key = mix << set_bits_;  // the tag in an entry's high bits, zeros below
      switch (add_to_held(set, key, static_cast<uint32_t>(count))) {
        case BufferOutcome::kAdded:
          total_ =
              static_cast<int64_t>(static_cast<uint64_t>(total_) + static_cast<uint64_t>(count));
          dirty_ = true;
          return Status();
        case BufferOutcome::kNotHeld:
          evict_and_hold(set, key, mix, count);
          return Status();
        case BufferOutcome::kOutgrown:
          break;
      }
    }
    return add_slow(item, count);
  }
  /// Applies every count the buffer and queue hold (in slot order) and empties them. Every
  /// reader below does this first, so it is never needed for correctness; call it to choose the
  /// moment.
  void flush();

  /// This += `other` (counters and total, modulo 2^64), then the heaps merge (001 §4.6): this
  /// heap's items re-estimated on the new counters and `other`'s offered; the H largest remain.
  /// @errors kFailedPrecondition: either sketch was not init()ed. kInvalidArgument: the
  /// parameters or seed differ (same_params is false); nothing changes then.
  Status add_sketch(const ShiftSketch& other);
  /// This −= `other`, with the heap merge of add_sketch.
  /// @errors kFailedPrecondition: either sketch was not init()ed. kInvalidArgument: the
  /// parameters or seed differ (same_params is false); nothing changes then.
  Status subtract_sketch(const ShiftSketch& other);
  /// Multiplies every counter and the total by `factor` (modulo 2^64) and re-estimates the heap.
  /// @errors kFailedPrecondition: the sketch was not init()ed.
  Status scale(int64_t factor);

  /// v̂_i in counter units: the median over rows of s_r(i)·counter (lower median for even R).
  /// Call only after init().
  int64_t estimate(uint32_t item) const;
  /// The counter at (`row` < R, `bucket` < w), read as signed; unchecked, call only after init().
  int64_t counter(uint32_t row, uint32_t bucket) const;
  /// The sum of every count added (modulo 2^64, read as signed), buffered ones included.
  int64_t total() const { return total_; }
  /// How many items the heap holds (≤ H).
  size_t heap_size() const {
    settle();
    return heap_size_;
  }
  /// The heap's entries, a min-heap by magnitude (valid until the sketch next changes).
  Span<const HeapEntry> heap() const {
    settle();
    return Span<const HeapEntry>(heap_, heap_size_);
  }
  /// The parameters given to init() (the defaults before).
  const ShiftSketchParams& params() const { return params_; }
  /// The hashes this sketch uses.
  const SketchHashes& hashes() const { return hashes_; }

  /// Writes the report to `out` and returns its length, shift_sketch_report_bytes(params(),
  /// heap_size()): header (magic "FSK1", version, R, w, H, k, the seed, total, heap count), the
  /// counters (little-endian int64, row-major), the heap's item ids (in heap order), CRC-32.
  /// @errors kFailedPrecondition: the sketch was not init()ed. kResourceExhausted: `out` is
  /// shorter than the report.
  Result<size_t> serialize(MutableByteSpan out) const;

 private:
  static constexpr size_t kNotFound = ~size_t{0};  // no index slot
  // Buffer entries: the item's tag (the low 32 − s bits of item·kBufferMix, whose high s bits
  // pick the set, s = log2(C/4)) above its count so far plus 2^(s−1) in s bits, so counts lie in
  // [−2^(s−1), 2^(s−1)) and an entry's low bits equal 2^(s−1) when it holds nothing. Biased, the
  // count is added to the whole entry: while the sum stays in range the tag above it is untouched,
  // and a sum out of range carries into (or borrows from) the tag, which then no longer matches.
  static constexpr uint32_t kBufferMix = 0x9E3779B1u;  // odd: item·kBufferMix is a bijection
  static constexpr uint32_t kBufferMixInverse = 0x0E8B2F51u;  // its inverse modulo 2^32
  int32_t entry_count(uint32_t entry) const {
    return static_cast<int32_t>(entry & count_mask_) - static_cast<int32_t>(buffer_half_);
  }
  uint32_t entry_of(uint32_t key, int64_t count) const {
    return key | (static_cast<uint32_t>(count + buffer_half_) & count_mask_);
  }
  enum class BufferOutcome { kAdded, kNotHeld, kOutgrown };
  // The hit path: if the set holds the item (its tag), adds `count` (as 32-bit two's complement,
  // |count| ≤ 2^(s−1)) to its entry and returns kAdded, or returns kOutgrown (nothing changed)
  // when the sum leaves the slot's range; kNotHeld when no way holds it. One 16-byte load,
  // compare, add and store with SSE2 (so that the next update of the set reads what this one
  // stored in one piece); way by way elsewhere and when more than one way matches.
  //
  // More than one way matches only for the one item whose tag is 0 in its set, while slots of
  // that set are still empty from clear() (tag 0, count 0): every tag-0 slot of the set holds
  // that item's counts, so any of them is right; the way taken is the OR of the matching ways'
  // numbers (way 3 while any empty one is left: the first smallest is evicted first), as the
  // buffer has always done, so that reports stay the same bytes.
  BufferOutcome add_to_held(uint32_t* set, uint32_t key, uint32_t count) const {
#if defined(__SSE2__)
    const __m128i entries = _mm_loadu_si128(reinterpret_cast<const __m128i*>(set));
    const __m128i keys = _mm_set1_epi32(static_cast<int>(key));
    const __m128i shift = _mm_cvtsi32_si128(static_cast<int>(set_bits_));
    const __m128i held =
        _mm_cmpeq_epi32(_mm_srl_epi32(_mm_xor_si128(entries, keys), shift), _mm_setzero_si128());
    const int held_mask = _mm_movemask_ps(_mm_castsi128_ps(held));
    if (held_mask == 0) return BufferOutcome::kNotHeld;
    if ((held_mask & (held_mask - 1)) != 0) return add_to_held_way_by_way(set, key, count);
    const __m128i sums =
        _mm_add_epi32(entries, _mm_and_si128(held, _mm_set1_epi32(static_cast<int>(count))));
    const __m128i still =
        _mm_cmpeq_epi32(_mm_srl_epi32(_mm_xor_si128(sums, keys), shift), _mm_setzero_si128());
    if (_mm_movemask_ps(_mm_castsi128_ps(still)) != held_mask) return BufferOutcome::kOutgrown;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(set), sums);
    return BufferOutcome::kAdded;
#else
    return add_to_held_way_by_way(set, key, count);
#endif
  }
  BufferOutcome add_to_held_way_by_way(uint32_t* set, uint32_t key, uint32_t count) const {
    uint32_t match = 0, way = 0;
    for (uint32_t w = 0; w < kBufferWays; ++w) {
      const uint32_t hit = static_cast<uint32_t>(((set[w] ^ key) >> set_bits_) == 0);
      match |= hit;
      way |= hit * w;
    }
    if (match == 0) return BufferOutcome::kNotHeld;
    const uint32_t sum = set[way] + count;
    if (((sum ^ key) >> set_bits_) != 0) return BufferOutcome::kOutgrown;
    set[way] = sum;
    return BufferOutcome::kAdded;
  }
  // The item is not held: its count takes the way with the smallest |count| (the first such),
  // whose item and count are applied (deferred). |count| ≤ 2^(s−1). Inline with add(), so that a
  // miss costs no call (+2 % on the Zipf stream, paired in one process).
  void evict_and_hold(uint32_t* set, uint32_t key, uint32_t mix, int64_t count) {
    // The first way with the smallest |count|: each way ranked by |count|·4 + way (|count| ≤
    // 2^(s−1) ≤ 2^21, so the rank fits), the least of the four by a tree of minimums (two steps
    // instead of a chain of four).
    static_assert(kBufferWays == 4,
                  "the tree of minimums and the rank's 2 way bits are for 4 ways");
    uint32_t rank[kBufferWays];
    for (uint32_t w = 0; w < kBufferWays; ++w) {
      const int32_t c = entry_count(set[w]);
      rank[w] = (static_cast<uint32_t>(c < 0 ? -c : c) << 2) | w;
    }
    const uint32_t low_pair = rank[0] < rank[1] ? rank[0] : rank[1];
    const uint32_t high_pair = rank[2] < rank[3] ? rank[2] : rank[3];
    const uint32_t least = low_pair < high_pair ? low_pair : high_pair;
    const uint32_t way = least & (kBufferWays - 1);
    const uint32_t smallest = least >> 2;
    const uint32_t old = set[way];
    set[way] = entry_of(key, count);
    if (smallest != 0) {
      const uint32_t old_mix = ((mix >> set_shift_) << set_shift_) | (old >> set_bits_);
      defer(old_mix * kBufferMixInverse, entry_count(old));
    }
    total_ = static_cast<int64_t>(static_cast<uint64_t>(total_) + static_cast<uint64_t>(count));
    dirty_ = true;
  }
  Status add_slow(uint32_t item, int64_t count);
  // Readers flush first. A sketch with pending counts was init()ed, so it is not a const object
  // and the const_cast in settle() is well defined.
  void settle() const {
    if (dirty_ || queued_ != 0) const_cast<ShiftSketch*>(this)->flush();
  }
  struct Location {
    uint32_t offset[kMaxRows];  // r·w + bucket
    uint32_t signs;             // bit r set: sign −1 in row r
  };
  // 001 Algorithm 1 for (item, count) pairs: one now (apply), or after up to kQueueLength − 1
  // others (defer; drain applies the queue). Both run locate (each item's R buckets and signs,
  // from its hash), then update (adds count·weight to the R counters, giving the item's new |v̂|,
  // its magnitude), then place. Their template argument is R when known at compile time, for
  // unrolled loops (3 and 5, the budget rule's row counts, on 64-bit targets: drain), or 0, rows
  // counted at run time: the same values either way.
  void apply(uint32_t item, int64_t count);
  template <uint32_t R>
  void drain_rows();
  template <uint32_t R>
  void locate(const uint32_t* item, const uint64_t* hash, Location* at, size_t n) const;
  template <uint32_t R>
  void update(const int64_t* count, const uint64_t* weight, const Location* at, float* magnitude,
              size_t n);
  // place() for queued item j with magnitude[j], j < n, in queue order: the same heap as n calls.
  void place_queued(const float* magnitude, size_t n);
  void defer(uint32_t item, int64_t count) {
    queued_item_[queued_] = item;
    queued_count_[queued_] = count;
    if (++queued_ == kQueueLength) drain();
  }
  void drain();
  Status combine(const ShiftSketch& other, int64_t sign);
  void offer(uint32_t item);                   // re-estimates and places `item` in the heap
  void place(uint32_t item, float magnitude);  // places `item` with a known |v̂|
  // Index entries: an item's tag above its heap position + 1; 0 is an empty slot. Its home slot is
  // ⌊h·S/2^32⌋ for h its index hash. When tags have at least log2(8·S) bits (tag_homes_), the tag
  // is h's high bits and h's low (position) bits are cleared for the home: then an entry gives its
  // home without a read of the heap (a deletion's backward shift reads none). With shorter tags
  // (H ≥ 2^14) the home takes the whole hash, so that homes stay spread over the slots, the heap
  // gives an entry's item, and the tag comes from another multiple of the id: a tag drawn from the
  // home's own bits would match most entries of a probe run there, and each match reads the heap.
  uint32_t index_tag(uint32_t item) const {
    const uint32_t bits = tag_homes_ ? hashes_.index_hash(item) : item * 0x2545F491u;
    return bits & ~position_mask_;
  }
  size_t home_of_hash(uint32_t hash) const {
    const uint32_t h = tag_homes_ ? hash & ~position_mask_ : hash;
    return static_cast<size_t>((uint64_t{h} * index_slots_) >> 32);
  }
  size_t home_of_entry(size_t slot) const {
    return tag_homes_ ? home_of_hash(index_[slot]) : index_home(heap_[position_of(slot)].item);
  }
  size_t position_of(size_t slot) const {
    return (index_[slot] & position_mask_) - 1;
  }
  void set_position(size_t slot, size_t position) {
    if (slot == kNotFound) return;  // a broken index (slot_at): nothing written out of bounds
    index_[slot] = (index_[slot] & ~position_mask_) | static_cast<uint32_t>(position + 1);
  }
  size_t index_home(uint32_t item) const {
    return home_of_hash(hashes_.index_hash(item));
  }
  size_t next_slot(size_t slot) const;
  size_t find(uint32_t item) const;  // the item's index slot, or kNotFound
  // The slot of the entry of `item` at heap `position` (it must be there): exact match of its
  // entry, no heap read.
  size_t slot_at(uint32_t item, size_t position) const;
  size_t index_insert(uint32_t item, size_t position);  // `item` not held; returns its slot
  void index_erase(size_t slot);
  // The heap entries with children, the first ⌈(n − 1)/kHeapArity⌉ positions.
  size_t heap_parents() const {
    return (heap_size_ + kHeapArity - 2) / kHeapArity;
  }
  void move_entry(size_t from, size_t to);
  void sift_up(size_t position, size_t slot);
  void sift_down(size_t position, size_t slot);

  ShiftSketchParams params_;
  SketchHashes hashes_;
  uint64_t* counters_ = nullptr;  // R·w, modulo 2^64
  HeapEntry* heap_ = nullptr;     // min-heap by magnitude
  uint32_t* index_ = nullptr;     // open addressing: item → heap position + 1 (0 = empty)
  uint32_t* buffer_ = nullptr;    // C entries in sets of 4; null when C = 0 or before init
  size_t index_slots_ = 0;
  uint32_t position_bits_ = 0;  // the index's low bits hold heap position + 1
  uint32_t position_mask_ = 0;
  uint32_t set_bits_ = 0;    // s
  uint32_t set_shift_ = 0;   // 32 − s
  uint32_t count_mask_ = 0;  // 2^s − 1
  int64_t buffer_half_ = 0;  // 2^(s−1): counts lie in [−2^(s−1), 2^(s−1))
  size_t heap_size_ = 0;
  int64_t total_ = 0;
  bool dirty_ = false;      // the buffer may hold counts
  bool tag_homes_ = false;  // an index entry's home comes from its tag (in padding: same size)
  uint32_t queued_item_[kQueueLength] = {};  // the queue, as two arrays (no padding)
  int64_t queued_count_[kQueueLength] = {};
  size_t queued_ = 0;
  bool ready_ = false;
};

/// The parsed report, viewing the caller's bytes (the host reads counters and heap ids from it).
struct SketchReport {
  ShiftSketchParams params;  ///< R, w, H, k and the seed (buffer_slots is 0: not reported)
  int64_t total = 0;         ///< the sketch's total
  ByteSpan counters;         ///< R·w little-endian int64
  ByteSpan heap_items;       ///< heap count × little-endian u32
  size_t heap_count = 0;     ///< how many heap ids the report holds
  /// Counter `index` (= r·w + bucket, < R·w; unchecked) as signed int64.
  int64_t counter(size_t index) const;
  /// Heap item `index` (< heap_count; unchecked).
  uint32_t heap_item(size_t index) const;
};
/// Checks a report from a peer and sets `out` to view it (`blob` must outlive `out`).
/// @errors kDataLoss: `blob` is truncated, has the wrong magic, invalid parameters, a heap count
/// above H, an R·w too large for this machine's size_t, the wrong length or a CRC mismatch.
/// kUnimplemented: another version (version 1 reports used other hashes and must not be mixed
/// with these). `out` is untouched on every error.
Status parse_sketch_report(ByteSpan blob, SketchReport& out);

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_SHIFT_SKETCH_H_
