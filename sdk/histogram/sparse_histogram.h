/// @file
/// SparseHistogram: counts of up to `capacity` distinct 32-bit item ids, in a caller-provided
/// open-addressing table (linear probing; capacity a power of two; slot = Fibonacci hash of the
/// id; a slot with count 0 is empty, so every stored count is ≥ 1).
///
/// History independence: entries are kept in Robin Hood order with ties broken by id (along a
/// probe run, an entry precedes those closer to their home slot, and an equally distant one with a
/// larger id). That order is unique for a set of ids, so the table's layout — and the order in
/// which slots() and the serialised blob list the items — depends only on which ids are held, never
/// on the order they arrived in or on ids held earlier and gone since (Blelloch & Golovin 2007).
/// A device's stored histogram therefore does not reveal when each item was first seen, and a
/// histogram built from another (the local-DP one of sketch/stability_histogram.h) does not reveal
/// the items that were dropped on the way.
///
/// add(id, count): a new id when every slot is taken is refused (kResourceExhausted) and its mass
/// is counted in dropped() (held at 2^64 − 1, never wrapped); so is a count that would overflow
/// an item's 32-bit counter. Items already held keep counting; a refusal changes nothing else.
/// Lookups and updates cost O(1) expected at load ≤ 3/4 and stay bounded (≤ capacity probes) when
/// full. Serialisation (histogram_blob.h) lists the occupied slots in table order, so equal sets
/// give equal bytes on every architecture. deserialize() needs an empty histogram
/// (call clear()): it validates the blob whole (CRC, Σ counts = total, counts ≥ 1, fits) before
/// inserting, and empties the table again if the blob repeats an id.
///
/// @memory 8·capacity bytes (caller's) + sizeof(SparseHistogram) (32 bytes on 32-bit targets, 48
/// on 64-bit); blob: serialized_bytes(size) = 32 + 8·size.
/// @paper 001 §3 (bounded per-client histograms over a large item universe).
#ifndef FEDSTAT_SDK_HISTOGRAM_SPARSE_HISTOGRAM_H_
#define FEDSTAT_SDK_HISTOGRAM_SPARSE_HISTOGRAM_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/histogram/histogram_blob.h"

namespace fedstat {
namespace histogram {

/// One slot of a SparseHistogram's table.
struct SparseEntry {
  uint32_t id = 0;     ///< the item id (meaningless in an empty slot)
  uint32_t count = 0;  ///< its count; 0: empty slot
};

/// Counts of up to capacity() distinct 32-bit item ids in a caller-provided, history-independent
/// open-addressing table, with the total mass held and the mass refused (dropped()).
class SparseHistogram {
 public:
  /// Bytes of the blob of a histogram holding `entries` items: 32 + 8·entries, or kSizeOverflow.
  static constexpr size_t serialized_bytes(size_t entries) {
    return blob_bytes(size_mul(8, entries));
  }

  /// The histogram's table is `table` (cleared here, with total() and dropped()); capacity =
  /// table.size(), a power of two ≥ 2. `table` must outlive the histogram's use.
  /// @errors kInvalidArgument: table.size() is not a power of two ≥ 2 (nothing changes).
  Status init(Span<SparseEntry> table);
  /// Adds `count` to `id` (a count of 0 does nothing); a refused add changes no count and adds
  /// its mass to dropped().
  /// @errors kFailedPrecondition: before init(). kResourceExhausted: `id` is new and every slot
  /// is taken, or its 32-bit counter would overflow.
  Status add(uint32_t id, uint32_t count = 1);
  /// Empties the table and zeroes total() and dropped(); the capacity stays.
  void clear();

  /// The count of `id`; 0 when it is not held.
  uint32_t count(uint32_t id) const;
  /// Number of distinct ids held.
  size_t size() const { return size_; }
  /// Number of slots (table.size() given to init(); 0 before init()).
  size_t capacity() const { return table_.size(); }
  /// Σ counts: the mass held.
  uint64_t total() const { return total_; }
  /// Mass refused by add() (or recorded in a loaded blob), held at 2^64 − 1.
  uint64_t dropped() const { return dropped_; }
  /// The slots in table order, for iteration: skip those with count 0.
  Span<const SparseEntry> slots() const { return Span<const SparseEntry>(table_); }

  /// Writes the histogram's blob (histogram_blob.h; occupied slots in table order) to the front
  /// of `out`; returns its size, serialized_bytes(size()).
  /// @errors kResourceExhausted: `out` is smaller than serialized_bytes(size()).
  Result<size_t> serialize(MutableByteSpan out) const;
  /// Fills an empty histogram (after init() or clear()) with a blob's items, total and dropped
  /// mass, after checking the whole blob; after any other error than kFailedPrecondition the
  /// histogram is empty again.
  /// @errors kFailedPrecondition: before init(), or the histogram is not empty (size() or
  /// dropped() ≠ 0: call clear()). kDataLoss: the blob is truncated, corrupt (magic, version, CRC,
  /// length), holds a zero count, repeats an id, or its counts do not add up to its total.
  /// kInvalidArgument: it holds a dense histogram. kResourceExhausted: it holds more items than
  /// capacity().
  Status deserialize(ByteSpan blob);
  /// Persists the histogram under `name` through platform storage; `scratch` holds
  /// serialized_bytes(size()).
  /// @errors kResourceExhausted: `scratch` is smaller than serialized_bytes(size()).
  /// kInvalidArgument: `name` is not a valid blob name, or the blob is larger than
  /// platform::kMaxBlobPayloadBytes. kUnavailable: the platform's storage failed or is absent.
  Status save(const char* name, MutableByteSpan scratch) const;
  /// Reloads a histogram saved under `name` into this empty one (as deserialize()); `scratch`
  /// holds the stored blob.
  /// @errors kFailedPrecondition: the histogram is not empty (call clear()), or (after reading
  /// the blob) before init(). kInvalidArgument: `name` is not a valid blob name, or (as
  /// deserialize()) the blob holds a dense histogram. kNotFound: no blob has that name.
  /// kResourceExhausted: `scratch` is smaller than the stored blob, or (as deserialize()) the blob
  /// holds more items than capacity(). kDataLoss: the stored blob is corrupt, truncated or
  /// inconsistent. kUnavailable: the platform's storage failed or is absent. kInternal: the storage
  /// backend misbehaved.
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
