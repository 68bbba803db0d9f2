// Fuzz target: the histogram blob (sdk/histogram/histogram_blob.h) as stored or received —
// read_blob_header for each BlobKind, DenseHistogram::deserialize and SparseHistogram::deserialize.
// The first input byte is the mode, the rest the blob:
//   bit 0: repair the CRC-32 (recompute it over the blob and store it in its last 4 bytes), so
//          that mutations get past the CRC; clear: the bytes raw;
//   bit 1: the dense histogram's domain is the blob's n (when 1..2^16), else 16;
//   bits 2..4: the sparse histogram's capacity, 2^(1 + value).
// Invariants beyond "no crash":
//   - read_blob_header: accepted only for the kind in byte 4, with the header's fields and a
//     length of 28 + n·(bytes per n) + 4; refused with kDataLoss, or kInvalidArgument for an
//     intact blob of the other kind;
//   - a dense histogram holding counts and dropped mass that refuses the blob is exactly as it was
//     (every count, total, dropped); one that accepts it holds the blob's counts, total (= Σ
//     counts) and dropped, and serializes to the blob itself (the header's zero bytes 6..7
//     aside: the reader ignores them);
//   - a sparse histogram that is not empty refuses every blob (kFailedPrecondition), unchanged;
//     an empty one that refuses it is empty again (every slot, total, dropped); one that accepts
//     it holds exactly the blob's (id, count) pairs, total and dropped; its serialization is
//     canonical (it deserializes and serializes to the same bytes), and its table is the one
//     add()ing the same items in another order gives (history independence).
#include <algorithm>
#include <cstring>
#include <vector>

#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "sdk/histogram/dense_histogram.h"
#include "sdk/histogram/histogram_blob.h"
#include "sdk/histogram/sparse_histogram.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::Span;
using fedstat::StatusCode;
using fedstat::histogram::BlobHeader;
using fedstat::histogram::BlobKind;
using fedstat::histogram::DenseHistogram;
using fedstat::histogram::kBlobHeaderBytes;
using fedstat::histogram::SparseEntry;
using fedstat::histogram::SparseHistogram;

constexpr int kRepairCrc = 1;
constexpr int kDomainFromBlob = 2;
constexpr uint32_t kFixedDomain = 16;
constexpr uint32_t kMaxFuzzDomain = 1u << 16;

void repair(int mode, std::vector<uint8_t>& blob) {
  if ((mode & kRepairCrc) != 0) fedstat::fuzz::repair_trailing_crc(blob);
}

// The blob with its header's zero bytes zeroed and the CRC recomputed: what a writer makes of it.
std::vector<uint8_t> canonical(std::vector<uint8_t> blob) {
  blob[6] = 0;
  blob[7] = 0;
  repair(kRepairCrc, blob);
  return blob;
}

void check_header(const std::vector<uint8_t>& blob) {
  const ByteSpan span(blob.data(), blob.size());
  for (BlobKind kind : {BlobKind::kDense, BlobKind::kSparse}) {
    for (size_t per_n : {size_t{4}, size_t{8}}) {
      const auto h = fedstat::histogram::read_blob_header(span, kind, per_n);
      if (!h.ok()) {
        FUZZ_CHECK(h.status().code() == StatusCode::kDataLoss ||
                   h.status().code() == StatusCode::kInvalidArgument);
        if (h.status().code() == StatusCode::kInvalidArgument) {
          FUZZ_CHECK(blob[4] != static_cast<uint8_t>(kind));
        }
        continue;
      }
      const uint8_t* p = blob.data();
      // The kind byte is the kind asked for, so no blob is ever accepted as both kinds.
      FUZZ_CHECK(std::memcmp(p, "FHG1", 4) == 0 && p[4] == static_cast<uint8_t>(kind) &&
                 p[5] == fedstat::histogram::kBlobVersion);
      FUZZ_CHECK(h->kind == kind && h->n == fedstat::load_le32(p + 8) &&
                 h->total == fedstat::load_le64(p + 12) &&
                 h->dropped == fedstat::load_le64(p + 20));
      FUZZ_CHECK(blob.size() == kBlobHeaderBytes + uint64_t{h->n} * per_n + 4);
      FUZZ_CHECK(fedstat::crc32(ByteSpan(p, blob.size() - 4)) ==
                 fedstat::load_le32(p + blob.size() - 4));
    }
  }
}

void check_dense(int mode, const std::vector<uint8_t>& blob) {
  uint32_t domain = kFixedDomain;
  if ((mode & kDomainFromBlob) != 0 && blob.size() >= 12) {
    const uint32_t n = fedstat::load_le32(blob.data() + 8);
    if (n >= 1 && n <= kMaxFuzzDomain) domain = n;
  }
  std::vector<uint32_t> counts(domain);
  DenseHistogram h;
  const ByteSpan span(blob.data(), blob.size());
  FUZZ_CHECK(h.deserialize(span).code() == StatusCode::kFailedPrecondition);  // before init()
  FUZZ_CHECK(h.init(Span<uint32_t>(counts.data(), counts.size())).ok());
  // Some counts and some dropped mass, so that a change shows.
  for (uint32_t i = 0; i < domain && i < 64; ++i) FUZZ_CHECK(h.add(i, i * 3 + 1).ok());
  FUZZ_CHECK(h.add(domain, 5).code() == StatusCode::kOutOfRange);
  const std::vector<uint32_t> before = counts;
  const uint64_t total = h.total(), dropped = h.dropped();

  const fedstat::Status s = h.deserialize(span);
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == StatusCode::kDataLoss || s.code() == StatusCode::kInvalidArgument);
    FUZZ_CHECK(counts == before && h.total() == total && h.dropped() == dropped);
    return;
  }
  FUZZ_CHECK(blob.size() == DenseHistogram::serialized_bytes(domain));
  uint64_t sum = 0;
  for (uint32_t i = 0; i < domain; ++i) {
    const uint32_t c = fedstat::load_le32(blob.data() + kBlobHeaderBytes + 4 * size_t{i});
    FUZZ_CHECK(h.count(i) == c);
    sum += c;
  }
  FUZZ_CHECK(h.total() == sum && h.total() == fedstat::load_le64(blob.data() + 12));
  FUZZ_CHECK(h.dropped() == fedstat::load_le64(blob.data() + 20));
  std::vector<uint8_t> again(blob.size());
  const auto n = h.serialize(MutableByteSpan(again.data(), again.size()));
  FUZZ_CHECK(n.ok() && n.value() == blob.size());
  FUZZ_CHECK(again == canonical(blob));
}

struct Sparse {
  std::vector<SparseEntry> table;
  SparseHistogram h;
  explicit Sparse(size_t capacity) : table(capacity) {
    FUZZ_CHECK(h.init(Span<SparseEntry>(table.data(), table.size())).ok());
  }
  bool same_table(const Sparse& other) const {
    return std::memcmp(table.data(), other.table.data(), table.size() * sizeof(SparseEntry)) == 0;
  }
  bool empty() const {
    if (h.size() != 0 || h.total() != 0 || h.dropped() != 0) return false;
    for (const SparseEntry& e : table) {
      if (e.id != 0 || e.count != 0) return false;
    }
    return true;
  }
  std::vector<uint8_t> serialize() const {
    std::vector<uint8_t> out(SparseHistogram::serialized_bytes(h.size()));
    const auto n = h.serialize(MutableByteSpan(out.data(), out.size()));
    FUZZ_CHECK(n.ok() && n.value() == out.size());
    return out;
  }
};

void check_sparse(int mode, const std::vector<uint8_t>& blob) {
  const size_t capacity = size_t{2} << ((mode >> 2) & 7);
  const ByteSpan span(blob.data(), blob.size());
  {
    SparseHistogram uninitialised;
    FUZZ_CHECK(uninitialised.deserialize(span).code() == StatusCode::kFailedPrecondition);
  }
  // Not empty: refused, unchanged.
  Sparse filled(capacity);
  for (uint32_t i = 0; i < capacity / 2; ++i) FUZZ_CHECK(filled.h.add(i * 1000003u, i + 1).ok());
  const std::vector<SparseEntry> filled_table = filled.table;
  const size_t filled_size = filled.h.size();
  const uint64_t filled_total = filled.h.total();
  FUZZ_CHECK(filled.h.deserialize(span).code() == StatusCode::kFailedPrecondition);
  FUZZ_CHECK(filled.h.size() == filled_size && filled.h.total() == filled_total &&
             filled.h.dropped() == 0);
  FUZZ_CHECK(
      std::memcmp(filled.table.data(), filled_table.data(), capacity * sizeof(SparseEntry)) == 0);
  // Only dropped mass (from a blob of no items): not empty either.
  Sparse dropped_only(2);
  uint8_t no_items[kBlobHeaderBytes + 4];
  fedstat::histogram::write_blob_header(BlobHeader{BlobKind::kSparse, 0, 0, 5},
                                        MutableByteSpan(no_items));
  fedstat::histogram::seal_blob(MutableByteSpan(no_items));
  FUZZ_CHECK(dropped_only.h.deserialize(ByteSpan(no_items)).ok());
  FUZZ_CHECK(dropped_only.h.size() == 0 && dropped_only.h.dropped() == 5);
  FUZZ_CHECK(dropped_only.h.deserialize(span).code() == StatusCode::kFailedPrecondition);
  FUZZ_CHECK(dropped_only.h.size() == 0 && dropped_only.h.dropped() == 5);

  // Empty: refused → empty again; accepted → the blob's items.
  Sparse empty(capacity);
  const fedstat::Status s = empty.h.deserialize(span);
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == StatusCode::kDataLoss || s.code() == StatusCode::kInvalidArgument ||
               s.code() == StatusCode::kResourceExhausted);
    FUZZ_CHECK(empty.empty());
    return;
  }
  const uint32_t n = fedstat::load_le32(blob.data() + 8);
  FUZZ_CHECK(n <= capacity && empty.h.size() == n);
  FUZZ_CHECK(blob.size() == SparseHistogram::serialized_bytes(n));
  FUZZ_CHECK(empty.h.total() == fedstat::load_le64(blob.data() + 12));
  FUZZ_CHECK(empty.h.dropped() == fedstat::load_le64(blob.data() + 20));
  uint64_t sum = 0;
  Sparse reversed(capacity);  // the same items added in reverse order
  for (uint32_t i = n; i-- > 0;) {
    const uint8_t* e = blob.data() + kBlobHeaderBytes + 8 * size_t{i};
    const uint32_t id = fedstat::load_le32(e), count = fedstat::load_le32(e + 4);
    FUZZ_CHECK(count != 0 && empty.h.count(id) == count);
    sum += count;
    FUZZ_CHECK(reversed.h.add(id, count).ok());
  }
  size_t occupied = 0;
  uint64_t held = 0;
  for (const SparseEntry& e : empty.h.slots()) {
    if (e.count == 0) continue;
    ++occupied;
    held += e.count;
  }
  FUZZ_CHECK(occupied == n && held == sum && empty.h.total() == sum);
  FUZZ_CHECK(empty.same_table(reversed));
  // Canonical: the serialization reloads to itself; it is the blob when the blob listed the
  // items in table order.
  const std::vector<uint8_t> once = empty.serialize();
  Sparse reloaded(capacity);
  FUZZ_CHECK(reloaded.h.deserialize(ByteSpan(once.data(), once.size())).ok());
  FUZZ_CHECK(reloaded.same_table(empty) && reloaded.serialize() == once);
  FUZZ_CHECK(std::memcmp(once.data() + 8, blob.data() + 8, 20) == 0);
}

std::vector<uint8_t> with_mode(int mode, const std::vector<uint8_t>& blob) {
  std::vector<uint8_t> input(1, static_cast<uint8_t>(mode));
  input.insert(input.end(), blob.begin(), blob.end());
  return input;
}

void write_seeds(fedstat::fuzz::SeedWriter& out) {
  // Dense: domains 1, 5, 16 (the fixed domain), 40; counts and dropped mass.
  for (uint32_t domain : {1u, 5u, 16u, 40u}) {
    std::vector<uint32_t> counts(domain);
    DenseHistogram h;
    FUZZ_CHECK(h.init(Span<uint32_t>(counts.data(), counts.size())).ok());
    for (uint32_t i = 0; i < domain; i += 2) FUZZ_CHECK(h.add(i, i + 1).ok());
    if (domain > 1) FUZZ_CHECK(h.add(domain + 3, 7).code() == StatusCode::kOutOfRange);
    std::vector<uint8_t> blob(DenseHistogram::serialized_bytes(domain));
    FUZZ_CHECK(h.serialize(MutableByteSpan(blob.data(), blob.size())).ok());
    const int domain_bit = domain == kFixedDomain ? 0 : kDomainFromBlob;
    out.add(with_mode(domain_bit, blob));
    out.add(with_mode(domain_bit | kRepairCrc, blob));
    if (domain == 5) {  // truncated
      out.add(
          with_mode(domain_bit | kRepairCrc, std::vector<uint8_t>(blob.begin(), blob.end() - 4)));
    }
  }
  // Sparse: capacities 2, 8, 64 holding 0..capacity items (one full), some dropped mass.
  struct Shape {
    int capacity_bits;  // capacity 2^(1 + bits)
    uint32_t items;
  };
  for (const Shape& shape : {Shape{0, 0}, Shape{0, 2}, Shape{2, 5}, Shape{5, 40}}) {
    Sparse s(size_t{2} << shape.capacity_bits);
    for (uint32_t i = 0; i < shape.items; ++i) FUZZ_CHECK(s.h.add(i * 2654435761u, i % 7 + 1).ok());
    if (shape.items == s.table.size()) {
      FUZZ_CHECK(s.h.add(12345, 9).code() == StatusCode::kResourceExhausted);
    }
    const std::vector<uint8_t> blob = s.serialize();
    out.add(with_mode(shape.capacity_bits << 2, blob));
    out.add(with_mode((shape.capacity_bits << 2) | kRepairCrc, blob));
  }
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int mode = data[0];
  // The blob in a buffer of exactly its size, so that ASan catches any read past it.
  std::vector<uint8_t> blob(data + 1, data + size);
  repair(mode, blob);
  check_header(blob);
  check_dense(mode, blob);
  check_sparse(mode, blob);
  return 0;
}
