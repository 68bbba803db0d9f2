// Fuzz target: parse_sketch_report (sdk/sketch/shift_sketch.h), which takes a ShiftSketch report
// from a peer. The first input byte is the mode, the rest the report:
//   bit 0: repair the CRC-32 (recompute it over the report and store it in its last 4 bytes), so
//          that mutations get past the CRC to the checks behind it; clear: parse the bytes raw;
//   bit 1: first set the heap count (bytes 64..67) to what the report's length implies for its
//          R and w, when that is a whole number of ids, so that the length check passes too.
// Invariants beyond "no crash":
//   - a refused report leaves the output SketchReport untouched (a byte-pattern sentinel), with
//     kDataLoss, or kUnimplemented exactly when the magic is right and the version is not 2;
//   - an accepted report has valid parameters (validate_params) with buffer_slots 0, a heap count
//     ≤ H and the length shift_sketch_report_bytes(params, heap count); its fields are the header's
//     bytes; its counters and heap ids view the blob right after the header, and reading every one
//     of them (SketchReport::counter / heap_item) stays inside the blob, which lies in a buffer of
//     exactly its size (ASan);
//   - an accepted report is a report ShiftSketch::serialize could write: rebuilt from its fields
//     it gives the same bytes, apart from the header's unused bytes (5..7, 68..79).
#include <cstring>
#include <vector>

#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "sdk/sketch/shift_sketch.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::StatusCode;
using fedstat::sketch::kSketchHeaderBytes;
using fedstat::sketch::ShiftSketch;
using fedstat::sketch::ShiftSketchParams;
using fedstat::sketch::SketchReport;

constexpr int kRepairCrc = 1;
constexpr int kRepairHeapCount = 2;

// A report filled with a byte pattern: an untouched output is still exactly this.
SketchReport sentinel() {
  SketchReport r;
  std::memset(static_cast<void*>(&r), 0xA5, sizeof r);
  return r;
}
bool is_sentinel(const SketchReport& r) {
  const SketchReport s = sentinel();
  return std::memcmp(static_cast<const void*>(&r), static_cast<const void*>(&s), sizeof r) == 0;
}

// Applies the mode's repairs to `blob` in place.
void repair(int mode, std::vector<uint8_t>& blob) {
  if ((mode & kRepairHeapCount) != 0 && blob.size() >= kSketchHeaderBytes + 4) {
    const uint64_t cells =
        uint64_t{fedstat::load_le32(blob.data() + 8)} * fedstat::load_le32(blob.data() + 12);
    const uint64_t fixed = kSketchHeaderBytes + 4;
    if (cells <= (blob.size() - fixed) / 8) {
      const uint64_t rest = blob.size() - fixed - 8 * cells;
      if (rest % 4 == 0 && rest / 4 <= UINT32_MAX) {
        fedstat::store_le32(blob.data() + 64, static_cast<uint32_t>(rest / 4));
      }
    }
  }
  if ((mode & kRepairCrc) != 0) fedstat::fuzz::repair_trailing_crc(blob);
}

void check_accepted(const std::vector<uint8_t>& blob, const SketchReport& r) {
  const uint8_t* p = blob.data();
  FUZZ_CHECK(fedstat::sketch::validate_params(r.params).ok());
  FUZZ_CHECK(r.params.buffer_slots == 0);
  FUZZ_CHECK(r.heap_count <= r.params.heap_capacity);
  const size_t expected = fedstat::sketch::shift_sketch_report_bytes(r.params, r.heap_count);
  FUZZ_CHECK(expected != fedstat::kSizeOverflow && blob.size() == expected);
  // The fields are the header's bytes.
  FUZZ_CHECK(std::memcmp(p, "FSK1", 4) == 0 && p[4] == 2);
  FUZZ_CHECK(r.params.rows == fedstat::load_le32(p + 8));
  FUZZ_CHECK(r.params.width == fedstat::load_le32(p + 12));
  FUZZ_CHECK(r.params.heap_capacity == fedstat::load_le32(p + 16));
  FUZZ_CHECK(r.params.k == fedstat::load_le32(p + 20));
  FUZZ_CHECK(std::memcmp(r.params.seed.bytes, p + 24, 32) == 0);
  FUZZ_CHECK(static_cast<uint64_t>(r.total) == fedstat::load_le64(p + 56));
  FUZZ_CHECK(r.heap_count == fedstat::load_le32(p + 64));
  // The views: counters right after the header, the heap ids right after them, then the CRC.
  const size_t cells = size_t{r.params.rows} * r.params.width;
  FUZZ_CHECK(r.counters.data() == p + kSketchHeaderBytes && r.counters.size() == 8 * cells);
  FUZZ_CHECK(r.heap_items.data() == r.counters.end() && r.heap_items.size() == 4 * r.heap_count);
  FUZZ_CHECK(r.heap_items.end() + 4 == p + blob.size());
  // Every counter and heap id read through the report (ASan: inside the exact-size blob), and the
  // report rebuilt from them as serialize() writes it.
  std::vector<uint8_t> rebuilt(blob.size(), 0);
  uint8_t* q = rebuilt.data();
  std::memcpy(q, "FSK1", 4);
  q[4] = 2;
  fedstat::store_le32(q + 8, r.params.rows);
  fedstat::store_le32(q + 12, r.params.width);
  fedstat::store_le32(q + 16, r.params.heap_capacity);
  fedstat::store_le32(q + 20, r.params.k);
  std::memcpy(q + 24, r.params.seed.bytes, 32);
  fedstat::store_le64(q + 56, static_cast<uint64_t>(r.total));
  fedstat::store_le32(q + 64, static_cast<uint32_t>(r.heap_count));
  size_t at = kSketchHeaderBytes;
  for (size_t i = 0; i < cells; ++i, at += 8) {
    fedstat::store_le64(q + at, static_cast<uint64_t>(r.counter(i)));
  }
  for (size_t i = 0; i < r.heap_count; ++i, at += 4) fedstat::store_le32(q + at, r.heap_item(i));
  FUZZ_CHECK(at + 4 == blob.size());
  // The header's unused bytes are the input's (the parser ignores them), then the CRC over all.
  std::memcpy(q + 5, p + 5, 3);
  std::memcpy(q + 68, p + 68, kSketchHeaderBytes - 68);
  fedstat::store_le32(q + at, fedstat::crc32(ByteSpan(q, at)));
  FUZZ_CHECK(rebuilt == blob);
}

// A report of a small sketch with `adds` updates, as ShiftSketch::serialize writes it.
std::vector<uint8_t> report_of(uint32_t rows, uint32_t width, uint32_t heap, uint32_t k,
                               uint32_t buffer_slots, uint32_t adds, uint8_t seed_byte) {
  ShiftSketchParams p;
  p.rows = rows;
  p.width = width;
  p.heap_capacity = heap;
  p.k = k;
  p.buffer_slots = buffer_slots;
  for (int i = 0; i < 32; ++i) p.seed.bytes[i] = static_cast<uint8_t>(seed_byte * 31 + i);
  const size_t bytes = fedstat::sketch::shift_sketch_memory_bytes(p);
  std::vector<uint64_t> memory((bytes + 7) / 8);
  ShiftSketch s;
  FUZZ_CHECK(s.init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()), bytes)).ok());
  for (uint32_t i = 0; i < adds; ++i) {
    FUZZ_CHECK(s.add(i * 7 + 1, static_cast<int64_t>(i % 5) - 1).ok());
    FUZZ_CHECK(s.add(3, 2).ok());  // one heavy item
  }
  std::vector<uint8_t> out(fedstat::sketch::shift_sketch_report_bytes(p, s.heap_size()));
  auto n = s.serialize(MutableByteSpan(out.data(), out.size()));
  FUZZ_CHECK(n.ok() && n.value() == out.size());
  return out;
}

void write_seeds(fedstat::fuzz::SeedWriter& out) {
  struct Shape {
    uint32_t rows, width, heap, k, buffer_slots, adds;
  };
  const Shape shapes[] = {
      {1, 1, 1, 1, 0, 0},   {1, 4, 2, 16, 0, 3},    {2, 3, 4, 64, 64, 5}, {3, 8, 4, 64, 0, 6},
      {4, 5, 3, 8, 128, 9}, {5, 16, 8, 256, 0, 12}, {5, 2, 1, 4, 64, 2},
  };
  std::vector<uint8_t> input;
  for (const Shape& s : shapes) {
    const std::vector<uint8_t> report = report_of(s.rows, s.width, s.heap, s.k, s.buffer_slots,
                                                  s.adds, static_cast<uint8_t>(s.rows + s.width));
    for (int mode : {0, kRepairCrc, kRepairCrc | kRepairHeapCount}) {
      input.assign(1, static_cast<uint8_t>(mode));
      input.insert(input.end(), report.begin(), report.end());
      out.add(input);
    }
  }
  const std::vector<uint8_t> report = report_of(3, 8, 4, 64, 0, 6, 9);
  // Truncated (raw, and with its last 4 bytes made a valid CRC of the rest).
  for (int mode : {0, kRepairCrc}) {
    input.assign(1, static_cast<uint8_t>(mode));
    input.insert(input.end(), report.begin(), report.end() - 8);
    out.add(input);
  }
  // Version 1, with its CRC fixed (as the unit test makes it) and raw.
  std::vector<uint8_t> v1 = report;
  v1[4] = 1;
  repair(kRepairCrc, v1);
  for (int mode : {0, kRepairCrc}) {
    input.assign(1, static_cast<uint8_t>(mode));
    input.insert(input.end(), v1.begin(), v1.end());
    out.add(input);
  }
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  // The report in a buffer of exactly its size, so that ASan catches any read past it.
  std::vector<uint8_t> blob(data + 1, data + size);
  repair(mode, blob);
  SketchReport r = sentinel();
  const fedstat::Status s =
      fedstat::sketch::parse_sketch_report(ByteSpan(blob.data(), blob.size()), r);
  if (!s.ok()) {
    FUZZ_CHECK(is_sentinel(r));
    const bool other_version = blob.size() >= kSketchHeaderBytes + 4 &&
                               std::memcmp(blob.data(), "FSK1", 4) == 0 && blob[4] != 2;
    FUZZ_CHECK(s.code() == (other_version ? StatusCode::kUnimplemented : StatusCode::kDataLoss));
    return 0;
  }
  check_accepted(blob, r);
  return 0;
}
