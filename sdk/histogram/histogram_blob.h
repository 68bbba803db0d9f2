// The serialised form shared by DenseHistogram and SparseHistogram: a versioned, CRC-checked blob
// (little-endian), safe to persist (platform::save_blob adds its own frame) or to send.
//
//   offset 0   4 B  magic "FHG1"
//   offset 4   1 B  kind (1 dense, 2 sparse)   offset 5  1 B  version (1)   offset 6  2 B  zero
//   offset 8   4 B  n: dense — the domain size; sparse — the number of (id, count) entries
//   offset 12  8 B  total (Σ counts)            offset 20  8 B  dropped (mass refused)
//   offset 28  dense: n × u32 count;  sparse: n × (u32 id, u32 count), counts > 0, ids distinct
//   end        4 B  CRC-32 (sdk/base/crc32.h) of every byte before it
//
// Sizes follow sdk/base/checked_size.h: blob_bytes and the histograms' serialized_bytes return
// kSizeOverflow instead of wrapping. Memory: none. Paper: 001 §3 (the local histograms).
#ifndef FEDSTAT_SDK_HISTOGRAM_HISTOGRAM_BLOB_H_
#define FEDSTAT_SDK_HISTOGRAM_HISTOGRAM_BLOB_H_

#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"
#include "sdk/base/checked_size.h"
#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace histogram {

enum class BlobKind : uint8_t { kDense = 1, kSparse = 2 };

constexpr size_t kBlobHeaderBytes = 28;
constexpr size_t kBlobCrcBytes = 4;
constexpr uint8_t kBlobVersion = 1;

struct BlobHeader {
  BlobKind kind = BlobKind::kDense;
  uint32_t n = 0;
  uint64_t total = 0;
  uint64_t dropped = 0;
};

// The blob's size; kSizeOverflow (sdk/base/checked_size.h) when it does not fit in size_t.
constexpr size_t blob_bytes(size_t payload_bytes) {
  return size_add(size_add(kBlobHeaderBytes, payload_bytes), kBlobCrcBytes);
}

// a + b, held at UINT64_MAX instead of wrapping (dropped() counts from a blob can be anything).
constexpr uint64_t saturating_add(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// Writes the header at out[0, 28); the caller writes the payload; then seal() appends the CRC.
void write_blob_header(const BlobHeader& header, MutableByteSpan out);
void seal_blob(MutableByteSpan blob);  // blob = header + payload + 4 bytes for the CRC
// Checks magic, version, kind, the CRC and that the payload has `payload_bytes_per_n`·n bytes
// (computed without overflow, so a hostile n cannot wrap onto the blob's real length); returns
// the header. kDataLoss for anything corrupt or truncated.
Result<BlobHeader> read_blob_header(ByteSpan blob, BlobKind kind, size_t payload_bytes_per_n);

// Persist / reload any histogram with serialize()/deserialize() through platform storage;
// `scratch` must hold its serialised size.
template <typename Histogram>
Status save_histogram(const Histogram& histogram, const char* name, MutableByteSpan scratch) {
  FEDSTAT_ASSIGN_OR_RETURN(const size_t size, histogram.serialize(scratch));
  return platform::save_blob(name, scratch.first(size));
}
template <typename Histogram>
Status load_histogram(Histogram& histogram, const char* name, MutableByteSpan scratch) {
  FEDSTAT_ASSIGN_OR_RETURN(const size_t size, platform::load_blob(name, scratch));
  return histogram.deserialize(scratch.first(size));
}

}  // namespace histogram
}  // namespace fedstat

#endif  // FEDSTAT_SDK_HISTOGRAM_HISTOGRAM_BLOB_H_
