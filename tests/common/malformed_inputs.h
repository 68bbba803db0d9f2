// Hostile inputs every architecture must refuse, shared by the host unit tests
// (tests/unit/malformed_inputs_test.cpp) and the Cortex-M4 self-test (tests/cross/), where
// size_t is 32 bits and a size formula that wraps (8·R·w, 4·n, a prefix length) shows.
//
// Each case builds its bytes in static memory (under 1 KiB in all), calls the SDK's parser or
// formula and returns true when the input was refused with the documented status and the
// output left untouched (or the formula saturated instead of wrapping). Freestanding: no heap,
// no exceptions, no standard library beyond the C headers. Memory: the static buffers below.
// Paper: none (robustness of 001's reports, Bonawitz et al.'s messages, the wire framing).
#ifndef FEDSTAT_TESTS_COMMON_MALFORMED_INPUTS_H_
#define FEDSTAT_TESTS_COMMON_MALFORMED_INPUTS_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sdk/base/arena.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crc32.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/histogram/dense_histogram.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/secagg/shamir.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace malformed {

struct Case {
  const char* id;    // a test name (letters and digits)
  const char* name;  // what is checked, for the self-test's log
  bool (*refused)();
};

// ---- Sketch reports ------------------------------------------------------------------------

// A report header (magic "FSK1", version 2, R, w, H, k = 1, zero seed and total, heap count n),
// `payload` zero bytes, then the CRC of everything before it; returns the report's length.
inline size_t forge_sketch_report(uint8_t* out, uint32_t rows, uint32_t width, uint32_t heap,
                                  uint32_t heap_count, size_t payload) {
  memset(out, 0, 80 + payload);
  memcpy(out, "FSK1", 4);
  out[4] = 2;
  store_le32(out + 8, rows);
  store_le32(out + 12, width);
  store_le32(out + 16, heap);
  store_le32(out + 20, 1);
  store_le32(out + 64, heap_count);
  store_le32(out + 80 + payload, crc32(ByteSpan(out, 80 + payload)));
  return 80 + payload + 4;
}

// Refused with kDataLoss, and `out` (pre-set to a sentinel) untouched.
inline bool sketch_report_refused(const uint8_t* blob, size_t size) {
  sketch::SketchReport out;
  out.total = 12345;
  const Status s = sketch::parse_sketch_report(ByteSpan(blob, size), out);
  return s.code() == StatusCode::kDataLoss && out.total == 12345 && out.counters.empty();
}

// 8·R·w = 2^32 wraps to 0 in a 32-bit size_t: the 84-byte report "fits" a 0-byte counter view.
inline bool sketch_report_r1_w2to29() {
  static uint8_t blob[96];
  return sketch_report_refused(blob, forge_sketch_report(blob, 1, 1u << 29, 1, 0, 0));
}
// R·w = 2^32 exactly (the largest validate_params allows), 8·R·w = 2^35.
inline bool sketch_report_r2_w2to31() {
  static uint8_t blob[96];
  return sketch_report_refused(blob, forge_sketch_report(blob, 2, 1u << 31, 1, 0, 0));
}
// 2^30 heap items: 4·n = 2^32 wraps to 0, so 80 + 8 + 0 + 4 = 92 bytes would match.
inline bool sketch_report_heap_2to30() {
  static uint8_t blob[96];
  return sketch_report_refused(blob, forge_sketch_report(blob, 1, 1, 1u << 30, 1u << 30, 8));
}

// init with the parameters of the 84-byte report and the 16 bytes their wrapped formula asks for.
inline bool sketch_init_wrapped_memory() {
  alignas(8) static uint8_t memory[16];
  static sketch::ShiftSketch s;
  sketch::ShiftSketchParams p;
  p.rows = 1;
  p.width = 1u << 29;
  p.heap_capacity = 1;
  p.k = 1;
  return !s.init(p, MutableByteSpan(memory)).ok() && !s.add(1, 1).ok();
}

// The formulas equal the true size when it fits in size_t and saturate at SIZE_MAX otherwise.
inline size_t expected_size(uint64_t true_size) {
  return true_size >= static_cast<uint64_t>(SIZE_MAX) ? SIZE_MAX : static_cast<size_t>(true_size);
}
inline bool sketch_formulas_saturate() {
  sketch::ShiftSketchParams p;
  p.rows = 15;
  p.width = 1u << 28;  // R·w < 2^32, but 8·R·w = 30 GiB
  p.heap_capacity = 1u << 30;
  p.k = 1;
  const uint64_t counters = 8ull * 15 * (1ull << 28);
  const uint64_t index = (1ull << 30) + (1ull << 28) + 1;  // S(H) = H + ⌊H/4⌋ + 1
  const uint64_t memory = counters + 8ull * (1ull << 30) + 4ull * index;
  return sketch::shift_sketch_memory_bytes(p) == expected_size(memory) &&
         sketch::shift_sketch_report_bytes(p, 7) == expected_size(80 + counters + 28 + 4) &&
         sketch::shift_sketch_report_bytes(p, SIZE_MAX / 2) == SIZE_MAX;
}

// ---- Histogram blobs -----------------------------------------------------------------------

// A histogram blob header claiming n entries, `payload` bytes, then the CRC.
inline size_t forge_histogram_blob(uint8_t* out, uint8_t kind, uint32_t n, size_t payload) {
  memset(out, 0, 28 + payload);
  memcpy(out, "FHG1", 4);
  out[4] = kind;
  out[5] = 1;
  store_le32(out + 8, n);
  store_le32(out + 28 + payload, crc32(ByteSpan(out, 28 + payload)));
  return 28 + payload + 4;
}
// 2^29 sparse entries (8·n = 2^32) in an empty payload: refused, the histogram still empty.
inline bool sparse_blob_2to29_entries() {
  static histogram::SparseEntry table[4];
  static uint8_t blob[64];
  histogram::SparseHistogram h;
  if (!h.init(Span<histogram::SparseEntry>(table)).ok() || !h.add(9, 2).ok()) return false;
  h.clear();
  const size_t size = forge_histogram_blob(blob, 2, 1u << 29, 0);
  return h.deserialize(ByteSpan(blob, size)).code() == StatusCode::kDataLoss && h.size() == 0 &&
         h.total() == 0;
}
// 2^30 dense counts (4·n = 2^32) in an empty payload: refused, the counts kept.
inline bool dense_blob_2to30_counts() {
  static uint32_t counts[4];
  static uint8_t blob[64];
  histogram::DenseHistogram h;
  if (!h.init(Span<uint32_t>(counts)).ok() || !h.add(1, 5).ok()) return false;
  const size_t size = forge_histogram_blob(blob, 1, 1u << 30, 0);
  return h.deserialize(ByteSpan(blob, size)).code() == StatusCode::kDataLoss && h.count(1) == 5 &&
         h.total() == 5;
}
inline bool histogram_formulas_saturate() {
  return histogram::DenseHistogram::serialized_bytes(SIZE_MAX / 2) == SIZE_MAX &&
         histogram::SparseHistogram::serialized_bytes(SIZE_MAX / 4) == SIZE_MAX &&
         histogram::DenseHistogram::serialized_bytes(3) == 44;
}
// dropped() from a blob is any 64-bit number; a refused add must not wrap it to a small one.
inline bool dense_dropped_does_not_wrap() {
  static uint32_t counts[2];
  static uint8_t blob[64];
  histogram::DenseHistogram h;
  if (!h.init(Span<uint32_t>(counts)).ok()) return false;
  const size_t size = forge_histogram_blob(blob, 1, 2, 8);
  store_le64(blob + 20, UINT64_MAX);  // dropped
  store_le32(blob + 36, crc32(ByteSpan(blob, 36)));
  if (!h.deserialize(ByteSpan(blob, size)).ok()) return false;
  return h.add(7, 3).code() == StatusCode::kOutOfRange && h.dropped() == UINT64_MAX;
}

// ---- Secure aggregation ---------------------------------------------------------------------

inline bool shamir_share_parse() {
  uint8_t bytes[secagg::kShareBytes];
  memset(bytes, 0, sizeof(bytes));
  secagg::ShamirShare out;
  out.x = 99;
  out.y[0] = 7;
  const bool short_refused =
      secagg::share_from_bytes(5, ByteSpan(bytes, sizeof(bytes) - 1), out).code() ==
      StatusCode::kDataLoss;
  store_le32(bytes + 32, 0xFFFFFFFFu);  // the last piece is not a field element
  const bool large_refused =
      secagg::share_from_bytes(5, ByteSpan(bytes), out).code() == StatusCode::kDataLoss;
  return short_refused && large_refused && out.x == 99 && out.y[0] == 7;
}

// The session's numbers come from the server: every hostile one is refused before anything
// changes, and a roster entry claiming 2^32 − 1 clients is refused too.
inline bool secagg_client_hostile_numbers() {
  static SeededStream stream(Seed256{}, 3);
  static secagg::SecAggPeer peers[4];
  static secagg::SecAggClient client;
  if (!client.init(2, Span<secagg::SecAggPeer>(peers), stream).ok()) return false;
  fedstat_v1_SecAggStart start = fedstat_v1_SecAggStart_init_zero;
  start.session = 5;
  start.threshold = 3;  // of at most 4: more than half, as the client requires
  start.vector_length = 3;
  start.bits = 32;
  static fedstat_v1_SecAggKeys keys;
  bool ok = true;
  fedstat_v1_SecAggStart bad = start;
  bad.max_clients = UINT32_MAX;
  ok = ok && !client.on_start(bad, keys).ok();
  bad = start;
  bad.max_clients = 4;
  bad.threshold = UINT32_MAX;
  ok = ok && !client.on_start(bad, keys).ok();
  bad.threshold = 3;
  bad.bits = UINT32_MAX;
  ok = ok && !client.on_start(bad, keys).ok();
  bad.bits = 32;
  bad.vector_length = 0;
  ok = ok && !client.on_start(bad, keys).ok();
  ok = ok && client.stage() == secagg::SecAggStage::kIdle;
  start.max_clients = 4;
  ok = ok && client.on_start(start, keys).ok();
  static fedstat_v1_SecAggPeerKeys entry;
  entry = fedstat_v1_SecAggPeerKeys_init_zero;
  entry.has_keys = true;
  entry.keys = keys;
  entry.count = UINT32_MAX;
  ok = ok && !client.on_peer_keys(entry).ok();
  entry.count = 3;
  entry.index = UINT32_MAX;
  ok = ok && !client.on_peer_keys(entry).ok();
  return ok && client.roster_size() == 0 && client.stage() == secagg::SecAggStage::kAdvertised;
}

inline bool secagg_memory_formula_saturates() {
  return secagg::secagg_client_memory_bytes(SIZE_MAX / 64) == SIZE_MAX &&
         secagg::secagg_client_memory_bytes(4) == 4 * sizeof(secagg::SecAggPeer);
}

// ---- Arena ---------------------------------------------------------------------------------

inline bool arena_hostile_sizes() {
  alignas(8) static uint8_t buffer[32];
  Arena arena{MutableByteSpan(buffer)};
  const size_t top_bit = ~(SIZE_MAX >> 1);
  const bool refused = !arena.allocate_bytes(1, top_bit).ok() &&
                       !arena.allocate_bytes(SIZE_MAX, 1).ok() &&
                       !arena.allocate_array<uint64_t>(SIZE_MAX / 4).ok() && arena.used() == 0;
  return refused && Arena::bytes_needed<uint64_t>(SIZE_MAX / 3) == SIZE_MAX &&
         Arena::bytes_needed<uint64_t>(3) == 31;
}

// ---- Wire frames ---------------------------------------------------------------------------

struct Verdict {
  StatusCode code = StatusCode::kOk;
  bool complete = false;
  size_t consumed = 0;
  bool operator==(const Verdict& o) const {
    return code == o.code && complete == o.complete && consumed == o.consumed;
  }
};
inline Verdict verdict_of(const uint8_t* bytes, size_t n) {
  static wire::Envelope out;
  const Result<wire::FrameResult> r = wire::decode_frame(ByteSpan(bytes, n), out);
  Verdict v;
  v.code = r.status().code();
  if (r.ok()) {
    v.complete = r->complete;
    v.consumed = r->consumed;
  }
  return v;
}
// Fed one byte more at a time, the receiver sees "incomplete" until one length gives a verdict,
// and from then on that same verdict (the whole input's); returns it.
inline bool same_verdict_at_every_split(const uint8_t* bytes, size_t n, Verdict& whole) {
  whole = verdict_of(bytes, n);
  bool decided = false;
  for (size_t k = 0; k <= n; ++k) {
    const Verdict v = verdict_of(bytes, k);
    const bool incomplete = v.code == StatusCode::kOk && !v.complete;
    if (decided || !incomplete) {
      if (!(v == whole)) return false;
      decided = true;
    }
  }
  return true;
}

// A hello frame after `prefix` (prefix_bytes long; the body is 13 bytes).
inline size_t frame_with_prefix(uint8_t* out, const uint8_t* prefix, size_t prefix_bytes) {
  const uint8_t hello[] = {0x08, 0x01, 0x12, 0x09, 0x08, 0x2a, 0x12,
                           0x05, 0x30, 0x2e, 0x31, 0x2e, 0x30};
  memcpy(out, prefix, prefix_bytes);
  memcpy(out + prefix_bytes, hello, sizeof(hello));
  return prefix_bytes + sizeof(hello);
}
inline bool frame_verdict_is(const uint8_t* prefix, size_t prefix_bytes, StatusCode code) {
  static uint8_t frame[32];
  const size_t n = frame_with_prefix(frame, prefix, prefix_bytes);
  Verdict whole;
  return same_verdict_at_every_split(frame, n, whole) && whole.code == code;
}
inline bool frame_minimal_prefix_decodes() {
  const uint8_t prefix[] = {13};
  static uint8_t frame[32];
  const size_t n = frame_with_prefix(frame, prefix, 1);
  Verdict whole;
  return same_verdict_at_every_split(frame, n, whole) && whole.code == StatusCode::kOk &&
         whole.complete && whole.consumed == n;
}
inline bool frame_padded_prefix_3_bytes() {  // 13 as 8d 80 00
  const uint8_t prefix[] = {0x8d, 0x80, 0x00};
  return frame_verdict_is(prefix, sizeof(prefix), StatusCode::kDataLoss);
}
inline bool frame_padded_prefix_2_bytes() {  // 13 as 8d 00
  const uint8_t prefix[] = {0x8d, 0x00};
  return frame_verdict_is(prefix, sizeof(prefix), StatusCode::kDataLoss);
}
inline bool frame_padded_prefix_5_bytes() {  // 5 as 85 80 80 80 00, the example
  const uint8_t prefix[] = {0x85, 0x80, 0x80, 0x80, 0x00};
  return frame_verdict_is(prefix, sizeof(prefix), StatusCode::kDataLoss);
}
inline bool frame_padded_prefix_10_bytes() {  // 13 in the 10 bytes nanopb's reader accepts
  const uint8_t prefix[] = {0x8d, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
  return frame_verdict_is(prefix, sizeof(prefix), StatusCode::kDataLoss);
}
// 737 = kMaxEnvelopeBytes + 1 (e1 05): refused as soon as its second byte arrives.
inline bool frame_prefix_above_max() {
  const uint8_t prefix[] = {0xe1, 0x05};
  static uint8_t frame[4];
  memcpy(frame, prefix, 2);
  Verdict whole;
  return wire::kMaxEnvelopeBytes == 736 && same_verdict_at_every_split(frame, 2, whole) &&
         whole.code == StatusCode::kOutOfRange;
}
// The body is garbage: incomplete until the last byte arrives, then kDataLoss.
inline bool frame_garbage_body() {
  static uint8_t frame[8] = {0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  Verdict whole;
  return same_verdict_at_every_split(frame, 7, whole) && whole.code == StatusCode::kDataLoss &&
         verdict_of(frame, 6).code == StatusCode::kOk;
}

inline const Case* cases(size_t& count) {
  static const Case kCases[] = {
      {"SketchReportR1W2to29", "sketch report: 84 bytes with R=1, w=2^29 (8Rw = 2^32) refused",
       sketch_report_r1_w2to29},
      {"SketchReportR2W2to31", "sketch report: R=2, w=2^31 (Rw = 2^32) refused",
       sketch_report_r2_w2to31},
      {"SketchReportHeap2to30", "sketch report: 2^30 heap items (4n = 2^32) refused",
       sketch_report_heap_2to30},
      {"SketchInitWrappedMemory", "sketch init: R=1, w=2^29 with 16 bytes of memory refused",
       sketch_init_wrapped_memory},
      {"SketchFormulasSaturate", "sketch size formulas saturate instead of wrapping",
       sketch_formulas_saturate},
      {"SparseBlob2to29Entries", "sparse histogram blob claiming 2^29 entries refused",
       sparse_blob_2to29_entries},
      {"DenseBlob2to30Counts", "dense histogram blob claiming 2^30 counts refused",
       dense_blob_2to30_counts},
      {"HistogramFormulasSaturate", "histogram size formulas saturate",
       histogram_formulas_saturate},
      {"DenseDroppedDoesNotWrap", "histogram dropped() from a blob at 2^64-1 does not wrap",
       dense_dropped_does_not_wrap},
      {"ShamirShareParse", "Shamir share: short or non-field bytes refused, output kept",
       shamir_share_parse},
      {"SecaggClientHostileNumbers", "secagg client: hostile start and roster numbers refused",
       secagg_client_hostile_numbers},
      {"SecaggMemoryFormulaSaturates", "secagg client memory formula saturates",
       secagg_memory_formula_saturates},
      {"ArenaHostileSizes", "arena: hostile sizes and alignments refused, formula saturates",
       arena_hostile_sizes},
      {"FrameMinimalPrefixDecodes", "frame: a minimal prefix decodes the same at every split",
       frame_minimal_prefix_decodes},
      {"FramePaddedPrefix3Bytes", "frame: padded prefix 8d 80 00 refused at every split",
       frame_padded_prefix_3_bytes},
      {"FramePaddedPrefix2Bytes", "frame: padded prefix 8d 00 refused at every split",
       frame_padded_prefix_2_bytes},
      {"FramePaddedPrefix5Bytes", "frame: padded prefix 85 80 80 80 00 refused at every split",
       frame_padded_prefix_5_bytes},
      {"FramePaddedPrefix10Bytes", "frame: nanopb's 10-byte prefix refused at every split",
       frame_padded_prefix_10_bytes},
      {"FramePrefixAboveMax", "frame: prefix announcing 737 > kMaxEnvelopeBytes refused",
       frame_prefix_above_max},
      {"FrameGarbageBody", "frame: a garbage body is incomplete until whole, then kDataLoss",
       frame_garbage_body},
  };
  count = sizeof(kCases) / sizeof(kCases[0]);
  return kCases;
}

}  // namespace malformed
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_COMMON_MALFORMED_INPUTS_H_
