#include "sdk/histogram/dense_histogram.h"

#include "sdk/base/bytes.h"

namespace fedstat {
namespace histogram {
namespace {
// A function, not an inline comparison: on 32-bit targets the test is trivially true.
constexpr bool fits_u32(uint64_t n) {
  return n <= UINT32_MAX;
}
}  // namespace

Status DenseHistogram::init(Span<uint32_t> counts) {
  if (counts.empty()) return invalid_argument("a dense histogram needs a domain of at least 1");
  if (!fits_u32(counts.size())) return invalid_argument("domain larger than 2^32 items");
  counts_ = counts;
  clear();
  return Status();
}

void DenseHistogram::clear() {
  for (uint32_t& c : counts_) c = 0;
  total_ = 0;
  dropped_ = 0;
}

Status DenseHistogram::add(uint32_t item, uint32_t count) {
  if (counts_.empty()) return failed_precondition("histogram used before init()");
  if (item >= counts_.size()) {
    dropped_ = saturating_add(dropped_, count);
    return out_of_range("item outside the histogram's domain: its mass is counted as dropped");
  }
  if (count > UINT32_MAX - counts_[item]) {
    dropped_ = saturating_add(dropped_, count);
    return resource_exhausted("the item's 32-bit counter would overflow: mass counted as dropped");
  }
  counts_[item] += count;
  total_ += count;
  return Status();
}

Result<size_t> DenseHistogram::serialize(MutableByteSpan out) const {
  const size_t size = serialized_bytes(counts_.size());
  if (out.size() < size) return resource_exhausted("buffer smaller than serialized_bytes(domain)");
  write_blob_header(
      BlobHeader{BlobKind::kDense, static_cast<uint32_t>(counts_.size()), total_, dropped_}, out);
  for (size_t i = 0; i < counts_.size(); ++i) {
    store_le32(out.data() + kBlobHeaderBytes + 4 * i, counts_[i]);
  }
  seal_blob(out.first(size));
  return size;
}

Status DenseHistogram::deserialize(ByteSpan blob) {
  if (counts_.empty()) return failed_precondition("histogram used before init()");
  FEDSTAT_ASSIGN_OR_RETURN(const BlobHeader header, read_blob_header(blob, BlobKind::kDense, 4));
  if (header.n != counts_.size()) {
    return invalid_argument("blob's domain differs from this histogram's: init with that domain");
  }
  uint64_t sum = 0;
  for (size_t i = 0; i < header.n; ++i) sum += load_le32(blob.data() + kBlobHeaderBytes + 4 * i);
  if (sum != header.total) return data_loss("histogram blob's counts do not add up to its total");
  for (size_t i = 0; i < header.n; ++i) {
    counts_[i] = load_le32(blob.data() + kBlobHeaderBytes + 4 * i);
  }
  total_ = header.total;
  dropped_ = header.dropped;
  return Status();
}

Status DenseHistogram::save(const char* name, MutableByteSpan scratch) const {
  return save_histogram(*this, name, scratch);
}

Status DenseHistogram::load(const char* name, MutableByteSpan scratch) {
  return load_histogram(*this, name, scratch);
}

}  // namespace histogram
}  // namespace fedstat
