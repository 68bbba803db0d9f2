// SparseHistogram: counts of up to `capacity` distinct 32-bit item ids, in a caller-provided
// open-addressing table (linear probing; capacity a power of two; slot = Fibonacci hash of the
// id; a slot with count 0 is empty, so every stored count is ≥ 1).
//
// History independence: entries are kept in Robin Hood order with ties broken by id (along a
// probe run, an entry precedes those closer to their home slot, and an equally distant one with a
// larger id). That order is unique for a set of ids, so the table's layout — and the order in
// which slots() and the serialised blob list the items — depends only on which ids are held, never
// on the order they arrived in or on ids held earlier and gone since (Blelloch & Golovin 2007).
// A device's stored histogram therefore does not reveal when each item was first seen, and a
// histogram built from another (the local-DP one of sketch/stability_histogram.h) does not reveal
// the items that were dropped on the way.
//
// add(id, count): a new id when every slot is taken is refused (kResourceExhausted) and its mass
// is counted in dropped() (held at 2^64 − 1, never wrapped); so is a count that would overflow
// an item's 32-bit counter. Items already held keep counting; a refusal changes nothing else.
// Lookups and updates cost O(1) expected at load ≤ 3/4 and stay bounded (≤ capacity probes) when
// full. Serialisation (histogram_blob.h) lists the occupied slots in table order, so equal sets
// give equal bytes on every architecture. deserialize() needs an empty histogram
// (call clear()): it validates the blob whole (CRC, Σ counts = total, counts ≥ 1, fits) before
// inserting, and empties the table again if the blob repeats an id.
//
// Memory: 8·capacity bytes (caller's) + 32 bytes; blob: serialized_bytes(size) = 32 + 8·size.
// Paper: 001 §3 (bounded per-client histograms over a large item universe).
#ifndef FEDSTAT_SDK_HISTOGRAM_SPARSE_HISTOGRAM_H_
#define FEDSTAT_SDK_HISTOGRAM_SPARSE_HISTOGRAM_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/histogram/histogram_blob.h"

namespace fedstat {
namespace histogram {

struct SparseEntry {
  uint32_t id = 0;
  uint32_t count = 0;  // 0: empty slot
};

class SparseHistogram {
 public:
  static constexpr size_t serialized_bytes(size_t entries) {
    return blob_bytes(size_mul(8, entries));
  }

  // capacity = table.size(), a power of two ≥ 2; the table is cleared.
  Status init(Span<SparseEntry> table);
  Status add(uint32_t id, uint32_t count = 1);
  void clear();

  uint32_t count(uint32_t id) const;
  size_t size() const { return size_; }
  size_t capacity() const { return table_.size(); }
  uint64_t total() const { return total_; }
  uint64_t dropped() const { return dropped_; }
  // The slots, for iteration: skip those with count 0.
  Span<const SparseEntry> slots() const { return Span<const SparseEntry>(table_); }

  Result<size_t> serialize(MutableByteSpan out) const;
  Status deserialize(ByteSpan blob);
  Status save(const char* name, MutableByteSpan scratch) const;
  Status load(const char* name, MutableByteSpan scratch);

 private:
  size_t slot_of(uint32_t id) const;
  size_t distance(size_t slot, uint32_t id) const;  // from id's home slot to `slot`
  // The slot holding `id`, or capacity() when it is not there.
  size_t find(uint32_t id) const;
  // Places a new id (size_ < capacity) in Robin Hood order.
  void insert_new(SparseEntry entry);

  Span<SparseEntry> table_;
  unsigned shift_ = 0;  // 64 − log2(capacity)
  size_t size_ = 0;
  uint64_t total_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace histogram
}  // namespace fedstat

#endif  // FEDSTAT_SDK_HISTOGRAM_SPARSE_HISTOGRAM_H_
