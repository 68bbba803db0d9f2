#include "sdk/histogram/sparse_histogram.h"

#include "sdk/base/bytes.h"

namespace fedstat {
namespace histogram {

Status SparseHistogram::init(Span<SparseEntry> table) {
  const size_t n = table.size();
  if (n < 2 || (n & (n - 1)) != 0) {
    return invalid_argument("sparse histogram capacity must be a power of two >= 2");
  }
  table_ = table;
  unsigned log2 = 0;
  while ((size_t{1} << log2) < n) ++log2;
  shift_ = 64 - log2;
  clear();
  return Status();
}

void SparseHistogram::clear() {
  for (SparseEntry& e : table_) e = SparseEntry();
  size_ = 0;
  total_ = 0;
  dropped_ = 0;
}

size_t SparseHistogram::slot_of(uint32_t id) const {
  return static_cast<size_t>((static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull) >> shift_);
}

size_t SparseHistogram::distance(size_t slot, uint32_t id) const {
  return (slot - slot_of(id)) & (table_.size() - 1);
}

// Robin Hood order: along a probe run, an entry sits before every entry that is closer to its
// home slot, and before one at the same distance with a larger id. The search for `id` can stop
// at the first entry that `id` would come before.
size_t SparseHistogram::find(uint32_t id) const {
  const size_t mask = table_.size() - 1;
  size_t slot = slot_of(id);
  for (size_t d = 0; d < table_.size(); ++d, slot = (slot + 1) & mask) {
    const SparseEntry& e = table_[slot];
    if (e.count == 0) return table_.size();
    if (e.id == id) return slot;
    const size_t resident = distance(slot, e.id);
    if (resident < d || (resident == d && e.id > id)) return table_.size();
  }
  return table_.size();
}

void SparseHistogram::insert_new(SparseEntry entry) {
  const size_t mask = table_.size() - 1;
  size_t slot = slot_of(entry.id);
  for (size_t d = 0;; ++d, slot = (slot + 1) & mask) {
    SparseEntry& e = table_[slot];
    if (e.count == 0) {
      e = entry;
      ++size_;
      return;
    }
    const size_t resident = distance(slot, e.id);
    if (resident < d || (resident == d && e.id > entry.id)) {
      const SparseEntry displaced = e;  // it moves on; `entry` takes its place
      e = entry;
      entry = displaced;
      d = resident;
    }
  }
}

uint32_t SparseHistogram::count(uint32_t id) const {
  if (table_.empty()) return 0;
  const size_t slot = find(id);
  return slot < table_.size() ? table_[slot].count : 0;
}

Status SparseHistogram::add(uint32_t id, uint32_t count) {
  if (table_.empty()) return failed_precondition("histogram used before init()");
  if (count == 0) return Status();
  const size_t slot = find(id);
  if (slot == table_.size()) {
    if (size_ == table_.size()) {
      dropped_ = saturating_add(dropped_, count);
      return resource_exhausted(
          "sparse histogram is full: a new item was refused and its mass counted as dropped; "
          "give it a larger table");
    }
    insert_new(SparseEntry{id, count});
    total_ += count;
    return Status();
  }
  SparseEntry& e = table_[slot];
  if (count > UINT32_MAX - e.count) {
    dropped_ = saturating_add(dropped_, count);
    return resource_exhausted("the item's 32-bit counter would overflow: mass counted as dropped");
  }
  e.count += count;
  total_ += count;
  return Status();
}

Result<size_t> SparseHistogram::serialize(MutableByteSpan out) const {
  const size_t size = serialized_bytes(size_);
  if (out.size() < size) return resource_exhausted("buffer smaller than serialized_bytes(size)");
  write_blob_header(BlobHeader{BlobKind::kSparse, static_cast<uint32_t>(size_), total_, dropped_},
                    out);
  uint8_t* p = out.data() + kBlobHeaderBytes;
  for (const SparseEntry& e : table_) {
    if (e.count == 0) continue;
    store_le32(p, e.id);
    store_le32(p + 4, e.count);
    p += 8;
  }
  seal_blob(out.first(size));
  return size;
}

Status SparseHistogram::deserialize(ByteSpan blob) {
  if (table_.empty()) return failed_precondition("histogram used before init()");
  if (size_ != 0 || dropped_ != 0) {
    return failed_precondition("deserialize into an empty histogram: call clear() first");
  }
  FEDSTAT_ASSIGN_OR_RETURN(const BlobHeader header, read_blob_header(blob, BlobKind::kSparse, 8));
  if (header.n > table_.size()) {
    return resource_exhausted("the blob holds more items than this table's capacity");
  }
  const uint8_t* entries = blob.data() + kBlobHeaderBytes;
  uint64_t sum = 0;
  for (size_t i = 0; i < header.n; ++i) {
    const uint32_t c = load_le32(entries + 8 * i + 4);
    if (c == 0) return data_loss("histogram blob holds a zero count");
    sum += c;
  }
  if (sum != header.total) return data_loss("histogram blob's counts do not add up to its total");
  for (size_t i = 0; i < header.n; ++i) {
    const uint32_t id = load_le32(entries + 8 * i);
    if (find(id) != table_.size()) {
      clear();  // it was empty before: back to that
      return data_loss("histogram blob repeats an item id");
    }
    insert_new(SparseEntry{id, load_le32(entries + 8 * i + 4)});
  }
  total_ = header.total;
  dropped_ = header.dropped;
  return Status();
}

Status SparseHistogram::save(const char* name, MutableByteSpan scratch) const {
  return save_histogram(*this, name, scratch);
}

Status SparseHistogram::load(const char* name, MutableByteSpan scratch) {
  if (size_ != 0 || dropped_ != 0) {
    return failed_precondition("load into an empty histogram: call clear() first");
  }
  return load_histogram(*this, name, scratch);
}

}  // namespace histogram
}  // namespace fedstat
