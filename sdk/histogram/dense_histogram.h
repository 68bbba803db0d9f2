/// @file
/// DenseHistogram: counts of items 0..domain−1 in a caller-provided array of uint32 counters.
///
/// add(item, count) refuses, with a specific status and without changing any count, an item
/// outside the domain (kOutOfRange) or a count that would overflow its 32-bit counter
/// (kResourceExhausted); the refused mass is added to dropped() (held at 2^64 − 1, never
/// wrapped, even after loading a blob that claims that much), so a report can say what it left out.
/// total() is the mass held. serialize()/deserialize() use histogram_blob.h; deserialize() checks
/// the whole blob (CRC, domain, Σ counts = total) before it replaces anything. save()/load() go
/// through platform storage.
///
/// @memory 4·domain bytes (caller's) + sizeof(DenseHistogram) (24 bytes on 32-bit targets, 32 on
/// 64-bit); blob: serialized_bytes(domain) = 32 + 4·domain.
/// @paper 001 §3 (the local histogram P_i of each client).
#ifndef FEDSTAT_SDK_HISTOGRAM_DENSE_HISTOGRAM_H_
#define FEDSTAT_SDK_HISTOGRAM_DENSE_HISTOGRAM_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/histogram/histogram_blob.h"

namespace fedstat {
namespace histogram {

/// Counts of items 0..domain−1 in a caller-provided array of uint32 counters, with the total
/// mass held and the mass refused (dropped()).
class DenseHistogram {
 public:
  /// Bytes of the blob of a histogram over `domain` items: 32 + 4·domain, or kSizeOverflow.
  static constexpr size_t serialized_bytes(size_t domain) {
    return blob_bytes(size_mul(4, domain));
  }

  /// The histogram's counters are `counts` (zeroed here, with total() and dropped()); domain =
  /// counts.size() ≥ 1. `counts` must outlive the histogram's use.
  /// @errors kInvalidArgument: `counts` is empty, or longer than 2^32 − 1 items (nothing
  /// changes).
  Status init(Span<uint32_t> counts);
  /// Adds `count` to `item`; a refused add changes no count and adds its mass to dropped().
  /// @errors kFailedPrecondition: before init(). kOutOfRange: `item` ≥ domain().
  /// kResourceExhausted: the item's 32-bit counter would overflow.
  Status add(uint32_t item, uint32_t count = 1);
  /// Zeroes every count, total() and dropped(); the domain stays.
  void clear();

  /// The count of `item`; 0 outside the domain.
  uint32_t count(uint32_t item) const { return item < counts_.size() ? counts_[item] : 0; }
  /// Number of items (counts.size() given to init(); 0 before init()).
  size_t domain() const { return counts_.size(); }
  /// Σ counts: the mass held.
  uint64_t total() const { return total_; }
  /// Mass refused by add() (or recorded in a loaded blob), held at 2^64 − 1.
  uint64_t dropped() const { return dropped_; }
  /// All the counters, item i at index i.
  Span<const uint32_t> counts() const { return Span<const uint32_t>(counts_); }

  /// Writes the histogram's blob (histogram_blob.h) to the front of `out`; returns its size,
  /// serialized_bytes(domain()).
  /// @errors kResourceExhausted: `out` is smaller than serialized_bytes(domain()).
  Result<size_t> serialize(MutableByteSpan out) const;
  /// Replaces the counts, total() and dropped() with a blob's, after checking the whole blob;
  /// on any error nothing changes.
  /// @errors kFailedPrecondition: before init(). kDataLoss: the blob is truncated, corrupt (magic,
  /// version, CRC, length) or its counts do not add up to its total. kInvalidArgument: it holds a
  /// sparse histogram, or its domain differs from domain().
  Status deserialize(ByteSpan blob);
  /// Persists the histogram under `name` through platform storage; `scratch` holds
  /// serialized_bytes(domain()).
  /// @errors kResourceExhausted: `scratch` is smaller than serialized_bytes(domain()).
  /// kInvalidArgument: `name` is not a valid blob name, or the blob is larger than
  /// platform::kMaxBlobPayloadBytes. kUnavailable: the platform's storage failed or is absent.
  Status save(const char* name, MutableByteSpan scratch) const;
  /// Reloads a histogram saved under `name` (as deserialize(): nothing changes on error);
  /// `scratch` holds serialized_bytes(domain()).
  /// @errors kInvalidArgument: `name` is not a valid blob name, or (as deserialize()) the
  /// blob holds a sparse histogram or another domain. kNotFound: no blob has that name.
  /// kResourceExhausted: `scratch` is smaller than the stored blob. kDataLoss: the stored blob is
  /// corrupt, truncated or inconsistent. kUnavailable: the platform's storage failed or is absent.
  /// kInternal: the storage backend misbehaved. kFailedPrecondition: before init().
  Status load(const char* name, MutableByteSpan scratch);

 private:
  Span<uint32_t> counts_;
  uint64_t total_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace histogram
}  // namespace fedstat

#endif  // FEDSTAT_SDK_HISTOGRAM_DENSE_HISTOGRAM_H_
