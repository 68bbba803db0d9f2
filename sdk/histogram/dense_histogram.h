// DenseHistogram: counts of items 0..domain−1 in a caller-provided array of uint32 counters.
//
// add(item, count) refuses, with a specific status and without changing any count, an item
// outside the domain (kOutOfRange) or a count that would overflow its 32-bit counter
// (kResourceExhausted); the refused mass is added to dropped() (held at 2^64 − 1, never
// wrapped, even after loading a blob that claims that much), so a report can say what it left out.
// total() is the mass held. serialize()/deserialize() use histogram_blob.h; deserialize() checks
// the whole blob (CRC, domain, Σ counts = total) before it replaces anything. save()/load() go
// through platform storage.
//
// Memory: 4·domain bytes (caller's) + 24 bytes; blob: serialized_bytes(domain) = 32 + 4·domain.
// Paper: 001 §3 (the local histogram P_i of each client).
#ifndef FEDSTAT_SDK_HISTOGRAM_DENSE_HISTOGRAM_H_
#define FEDSTAT_SDK_HISTOGRAM_DENSE_HISTOGRAM_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/histogram/histogram_blob.h"

namespace fedstat {
namespace histogram {

class DenseHistogram {
 public:
  static constexpr size_t serialized_bytes(size_t domain) {
    return blob_bytes(size_mul(4, domain));
  }

  // The histogram's counters are `counts` (zeroed here); domain = counts.size() ≥ 1.
  Status init(Span<uint32_t> counts);
  Status add(uint32_t item, uint32_t count = 1);
  void clear();

  uint32_t count(uint32_t item) const { return item < counts_.size() ? counts_[item] : 0; }
  size_t domain() const { return counts_.size(); }
  uint64_t total() const { return total_; }
  uint64_t dropped() const { return dropped_; }
  Span<const uint32_t> counts() const { return Span<const uint32_t>(counts_); }

  Result<size_t> serialize(MutableByteSpan out) const;
  Status deserialize(ByteSpan blob);
  // Persist / reload under `name`; `scratch` holds serialized_bytes(domain()).
  Status save(const char* name, MutableByteSpan scratch) const;
  Status load(const char* name, MutableByteSpan scratch);

 private:
  Span<uint32_t> counts_;
  uint64_t total_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace histogram
}  // namespace fedstat

#endif  // FEDSTAT_SDK_HISTOGRAM_DENSE_HISTOGRAM_H_
