/// @file
/// The serialised form shared by DenseHistogram and SparseHistogram: a versioned, CRC-checked blob
/// (little-endian), safe to persist (platform::save_blob adds its own frame) or to send.
///
/// | offset | bytes | field |
/// |---|---|---|
/// | 0 | 4 | magic "FHG1" |
/// | 4 | 1 | kind (1 dense, 2 sparse) |
/// | 5 | 1 | version (1) |
/// | 6 | 2 | zero |
/// | 8 | 4 | n: dense — the domain size; sparse — the number of (id, count) entries |
/// | 12 | 8 | total (Σ counts) |
/// | 20 | 8 | dropped (mass refused) |
/// | 28 | 4n, 8n | dense: n u32 counts; sparse: n (u32 id, u32 count), counts > 0, ids distinct |
/// | end | 4 | CRC-32 (sdk/base/crc32.h) of every byte before it |
///
/// Sizes follow sdk/base/checked_size.h: blob_bytes and the histograms' serialized_bytes return
/// kSizeOverflow instead of wrapping.
///
/// @memory none (the blob is in the caller's buffer: kBlobHeaderBytes + payload + kBlobCrcBytes).
/// @paper 001 §3 (the local histograms).
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

/// Which histogram a blob holds (byte 4 of the blob).
enum class BlobKind : uint8_t {
  kDense = 1,  ///< a DenseHistogram: n u32 counts
  kSparse = 2  ///< a SparseHistogram: n (u32 id, u32 count) entries
};

/// Bytes of the blob header (magic, kind, version, n, total, dropped).
constexpr size_t kBlobHeaderBytes = 28;
/// Bytes of the CRC-32 trailer.
constexpr size_t kBlobCrcBytes = 4;
/// The blob format version this build writes and reads.
constexpr uint8_t kBlobVersion = 1;

/// The header fields of a histogram blob.
struct BlobHeader {
  BlobKind kind = BlobKind::kDense;  ///< which histogram the blob holds
  uint32_t n = 0;                    ///< dense: the domain size; sparse: the number of entries
  uint64_t total = 0;                ///< Σ counts
  uint64_t dropped = 0;              ///< mass the histogram refused (its dropped())
};

/// The blob's size for a payload of `payload_bytes`; kSizeOverflow (sdk/base/checked_size.h) when
/// it does not fit in size_t.
constexpr size_t blob_bytes(size_t payload_bytes) {
  return size_add(size_add(kBlobHeaderBytes, payload_bytes), kBlobCrcBytes);
}

/// a + b, held at UINT64_MAX instead of wrapping (dropped() counts from a blob can be anything).
constexpr uint64_t saturating_add(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/// Writes the header at out[0, 28) (`out` must hold at least kBlobHeaderBytes; unchecked); the
/// caller writes the payload; then seal_blob() appends the CRC.
void write_blob_header(const BlobHeader& header, MutableByteSpan out);
/// Writes the CRC-32 of blob[0, size − 4) into its last 4 bytes; `blob` = header + payload +
/// 4 bytes for the CRC (at least 4 bytes; unchecked).
void seal_blob(MutableByteSpan blob);  // blob = header + payload + 4 bytes for the CRC
/// Checks magic, version, the CRC, kind and that the payload has `payload_bytes_per_n`·n bytes
/// (computed without overflow, so a hostile n cannot wrap onto the blob's real length); returns
/// the header.
/// @errors kDataLoss: the blob is shorter than a header and CRC, has the wrong magic, an unknown
/// version, a failed CRC, or a length that disagrees with n. kInvalidArgument: an intact blob of
/// the other kind (dense vs sparse).
Result<BlobHeader> read_blob_header(ByteSpan blob, BlobKind kind, size_t payload_bytes_per_n);

/// Persists any histogram under `name` through platform storage (platform::save_blob), with
/// serialize() into `scratch`, which must hold its serialised size.
/// @errors The histogram's serialize() errors (kResourceExhausted: `scratch` too small).
/// kInvalidArgument: `name` is not a valid blob name, or the blob is larger than
/// platform::kMaxBlobPayloadBytes. kUnavailable: the platform's storage failed or is absent.
template <typename Histogram>
Status save_histogram(const Histogram& histogram, const char* name, MutableByteSpan scratch) {
  FEDSTAT_ASSIGN_OR_RETURN(const size_t size, histogram.serialize(scratch));
  return platform::save_blob(name, scratch.first(size));
}
/// Reloads any histogram saved under `name` (platform::load_blob into `scratch`, then
/// deserialize()).
/// @errors kInvalidArgument: `name` is not a valid blob name. kNotFound: no blob has that name.
/// kResourceExhausted: `scratch` is smaller than the stored blob. kDataLoss: the stored blob is
/// corrupt or truncated. kUnavailable: the platform's storage failed or is absent. kInternal: the
/// storage backend misbehaved. Otherwise the histogram's deserialize() errors.
template <typename Histogram>
Status load_histogram(Histogram& histogram, const char* name, MutableByteSpan scratch) {
  FEDSTAT_ASSIGN_OR_RETURN(const size_t size, platform::load_blob(name, scratch));
  return histogram.deserialize(scratch.first(size));
}

}  // namespace histogram
}  // namespace fedstat

#endif  // FEDSTAT_SDK_HISTOGRAM_HISTOGRAM_BLOB_H_
