// sketch_stream_bench: the data-shift sketch on THE key stream of ../shared/bench/README.md (the
// Zipf stream every anchor consumes: n = 10^7 keys over 350,000 items, s = 1.2, seed 0x5EEDF00D,
// FNV-1a fingerprint 7f22e02bfa195f13), so that its speed can be put next to the performance
// anchors (Apache DataSketches' count-min, measured by a program outside the project) as a ratio
// from one run. A plain program, not Google Benchmark; scripts/bench_pair.sh runs it alternately
// with the references and prints the ratios.
//
// Benches (one line each per shape; --json: the shared README's JSON line format):
//   stream_update          anchor "fedstat": ShiftSketch::add(id, 1) for every key of the stream
//   stream_update          anchor "baseline": a plain signed CountSketch (int64 counters, the
//                          shape's rows, all the memory in counters, multiply-shift hashing
//                          h = a_r·key + b_r mod 2^64, bucket = ((h >> 32)·w) >> 32, sign = bit 31)
//                          on the same stream in the same run, so fedstat/baseline is a ratio too
//   sketch_from_histogram  anchor "fedstat": the device's real path. The stream is first counted
//                          in a histogram::SparseHistogram (untimed; capacity the power of two
//                          ≥ 4/3 of the domain, so every distinct key fits), then timed: init a
//                          fresh sketch, add(id, count) once per distinct item in table order,
//                          serialize the report. ops = distinct items (unit "item"); t_median_s
//                          is the time for one whole report.
// Shapes (the issue's): memory budget B = 40 KiB / 5 rows, 160 KiB / 5 rows, 400 KiB / 3 rows.
// fedstat's parameters are sketch::params_for_budget(B) (heap H, k = 4H), with R overridden to
// the shape's rows and w = ⌊(B − heap bytes)/(8R)⌋ when the rule chose other rows (it does not
// for these three); memory_bytes = sketch::shift_sketch_memory_bytes ≤ B. The baseline and the
// references spend all of B on 8-byte counters: w = ⌊B/(8R)⌋.
//
// Keys are 64-bit in the stream (values < domain = 350,000); the sketch and the histogram take
// uint32 ids: id = static_cast<uint32_t>(key), the same value (the references hash the uint64
// key itself); a static_assert keeps the domain within uint32. --n is at most 2^32 − 1 (the
// histogram's counts are 32-bit); larger is refused as a bad argument (exit 2).
//
// Timing: std::chrono::steady_clock; per bench and shape one untimed warm-up, then --reps timed
// repetitions over the whole stream, each on a freshly initialised sketch (stream_update: the
// init is outside the timed loop, as for the references; sketch_from_histogram: inside, it is
// part of a report). The fingerprint is computed before anything is timed; with the default
// parameters it must be 7f22e02bfa195f13, with --expect-fp it must be the given value, or the
// program refuses to report. With other --n and no --expect-fp it is printed, unchecked.
//
// Options: --n N (10000000), --reps R (5), --json, --only stream_update|baseline|
// sketch_from_histogram, --shape 40KiB/5rows|160KiB/5rows|400KiB/3rows (e.g. for perf record),
// --expect-fp HEX. Memory: 8·n bytes of keys + the histogram
// (8·capacity) + the sketch. Run it from a Release build (build/host-release/tests/bench/).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "sdk/histogram/sparse_histogram.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/sketch/sketch_budget.h"
#include "tests/bench/stream_bench_line.h"
#include "tests/bench/zipf_stream.h"

namespace fedstat {
namespace {

using bench::fingerprint;
using bench::SplitMix64;
using bench::zipf_keys;
constexpr uint64_t kDomain = bench::kZipfDomain;

// ---- Timing and the JSON line ------------------------------------------------------------------
using bench::Clock;
using bench::parse_u64;
using bench::seconds_since;

struct Shape {
  const char* name;
  size_t budget;
  uint32_t rows;
};
constexpr Shape kShapes[] = {{"40KiB/5rows", 40 * 1024, 5},
                             {"160KiB/5rows", 160 * 1024, 5},
                             {"400KiB/3rows", 400 * 1024, 3}};

struct Options : bench::CommonOptions {
  std::string only;
  std::string shape;  // "": all three
  bool expect_given = false;
  uint64_t expect_fp = 0;
};

struct Measurement {
  std::string anchor, bench, shape, params;  // params: the JSON object
  uint64_t ops = 0;
  std::string unit;
  std::vector<double> seconds;  // the timed repetitions
};

double median_of(const std::vector<double>& seconds) {
  return bench::RepetitionTimes(seconds).median;
}

void report(const Options& o, const Measurement& m, uint64_t fp) {
  if (o.json) {
    bench::print_json_line(m.anchor.c_str(), m.bench.c_str(), m.params, m.ops, m.unit.c_str(),
                           m.seconds, bench::fingerprint_json(fp));
    return;
  }
  const bench::RepetitionTimes t(m.seconds);
  const double ops = static_cast<double>(m.ops);
  std::printf(
      "%-9s %-22s %-13s %6.2f M %s/s median (best %.2f, worst %.2f), %.1f ns/%s, "
      "%.4g s median of %zu\n",
      m.anchor.c_str(), m.bench.c_str(), m.shape.c_str(), ops / t.median / 1e6, m.unit.c_str(),
      ops / t.min / 1e6, ops / t.max / 1e6, 1e9 * t.median / ops, m.unit.c_str(), t.median,
      m.seconds.size());
  std::fflush(stdout);
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "sketch_stream_bench: %s\n", what);
  std::exit(1);
}

// ---- fedstat's sketch at a shape ---------------------------------------------------------------
sketch::ShiftSketchParams params_for(const Shape& shape) {
  Seed256 seed;
  SplitMix64 g(0x5EED5EED);
  for (uint8_t& b : seed.bytes) b = static_cast<uint8_t>(g.next());
  Result<sketch::ShiftSketchParams> r = sketch::params_for_budget(shape.budget, seed);
  if (!r.ok()) fail("params_for_budget refused a shape");
  sketch::ShiftSketchParams p = r.value();
  if (p.rows != shape.rows) {  // keep H and k, spend the rest of the budget on R rows
    const size_t heap_bytes = sketch::shift_sketch_memory_bytes(p) - 8 * size_t{p.rows} * p.width;
    p.rows = shape.rows;
    p.width = static_cast<uint32_t>((shape.budget - heap_bytes) / (8 * size_t{p.rows}));
  }
  if (!sketch::validate_params(p).ok()) fail("the shape's parameters are invalid");
  return p;
}

std::string fedstat_params(const Shape& shape, const sketch::ShiftSketchParams& p) {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "{\"shape\":\"%s\",\"budget_bytes\":%zu,\"memory_bytes\":%zu,\"rows\":%u,"
                "\"width\":%u,\"heap\":%u,\"k\":%u,\"id\":\"uint32(key)\"}",
                shape.name, shape.budget, sketch::shift_sketch_memory_bytes(p), p.rows, p.width,
                p.heap_capacity, p.k);
  return buf;
}

// Caller memory for a sketch, 8-byte aligned.
struct SketchMemory {
  explicit SketchMemory(size_t bytes) : words((bytes + 7) / 8), size(bytes) {}
  MutableByteSpan span() { return MutableByteSpan(reinterpret_cast<uint8_t*>(words.data()), size); }
  std::vector<uint64_t> words;
  size_t size;
};

Measurement bench_stream_update(const Options& o, const Shape& shape,
                                const std::vector<uint64_t>& keys) {
  const sketch::ShiftSketchParams p = params_for(shape);
  SketchMemory memory(sketch::shift_sketch_memory_bytes(p));
  sketch::ShiftSketch s;
  Measurement m{"fedstat",   "stream_update", shape.name, fedstat_params(shape, p),
                keys.size(), "update",        {}};
  for (int rep = -1; rep < o.reps; ++rep) {  // rep -1: the warm-up
    if (!s.init(p, memory.span()).ok()) fail("ShiftSketch::init refused");
    uint64_t refused = 0;
    const Clock::time_point start = Clock::now();
    for (const uint64_t key : keys) refused += !s.add(static_cast<uint32_t>(key), 1).ok();
    const double t = seconds_since(start);
    if (refused != 0 || s.total() != static_cast<int64_t>(keys.size())) {
      fail("ShiftSketch::add refused an update");
    }
    if (rep >= 0) m.seconds.push_back(t);
  }
  return m;
}

// The baseline: a plain signed CountSketch, everything inline.
class PlainCountSketch {
 public:
  PlainCountSketch(uint32_t rows, uint32_t width) : rows_(rows), width_(width) {
    SplitMix64 g(0xC0FFEE);
    for (uint32_t r = 0; r < rows; ++r) {
      a_[r] = g.next() | 1;
      b_[r] = g.next();
    }
    counters_.assign(size_t{rows} * width, 0);
  }
  void add(uint64_t key, int64_t count) {
    int64_t* row = counters_.data();
    for (uint32_t r = 0; r < rows_; ++r, row += width_) {
      const uint64_t h = a_[r] * key + b_[r];
      const uint64_t bucket = ((h >> 32) * width_) >> 32;
      row[bucket] += (h >> 31) & 1 ? -count : count;
    }
  }
  uint64_t checksum() const {  // modulo 2^64
    uint64_t sum = 0;
    for (const int64_t c : counters_) sum = sum * 31 + static_cast<uint64_t>(c);
    return sum;
  }

 private:
  uint32_t rows_, width_;
  uint64_t a_[sketch::kMaxRows] = {}, b_[sketch::kMaxRows] = {};
  std::vector<int64_t> counters_;
};

volatile uint64_t g_sink = 0;  // keeps the baseline's counters alive

Measurement bench_baseline(const Options& o, const Shape& shape,
                           const std::vector<uint64_t>& keys) {
  const uint32_t width = static_cast<uint32_t>(shape.budget / (8 * size_t{shape.rows}));
  char params[200];
  std::snprintf(params, sizeof(params),
                "{\"shape\":\"%s\",\"budget_bytes\":%zu,\"memory_bytes\":%zu,\"rows\":%u,"
                "\"width\":%u,\"hash\":\"multiply-shift\"}",
                shape.name, shape.budget, 8 * size_t{shape.rows} * width, shape.rows, width);
  Measurement m{"baseline", "stream_update", shape.name, params, keys.size(), "update", {}};
  for (int rep = -1; rep < o.reps; ++rep) {
    PlainCountSketch s(shape.rows, width);
    const Clock::time_point start = Clock::now();
    for (const uint64_t key : keys) s.add(key, 1);
    const double t = seconds_since(start);
    g_sink = g_sink + s.checksum();
    if (rep >= 0) m.seconds.push_back(t);
  }
  return m;
}

Measurement bench_from_histogram(const Options& o, const Shape& shape,
                                 const histogram::SparseHistogram& hist, uint64_t stream_n) {
  const sketch::ShiftSketchParams p = params_for(shape);
  SketchMemory memory(sketch::shift_sketch_memory_bytes(p));
  std::vector<uint8_t> out(sketch::shift_sketch_report_bytes(p, p.heap_capacity));
  sketch::ShiftSketch s;
  Measurement m{"fedstat", "sketch_from_histogram", shape.name, "", hist.size(), "item", {}};
  size_t report_bytes = 0;
  for (int rep = -1; rep < o.reps; ++rep) {
    uint64_t refused = 0;
    const Clock::time_point start = Clock::now();
    if (!s.init(p, memory.span()).ok()) fail("ShiftSketch::init refused");
    for (const histogram::SparseEntry& e : hist.slots()) {
      if (e.count != 0) refused += !s.add(e.id, e.count).ok();
    }
    const Result<size_t> bytes = s.serialize(MutableByteSpan(out.data(), out.size()));
    const double t = seconds_since(start);
    if (refused != 0 || !bytes.ok() || s.total() != static_cast<int64_t>(stream_n)) {
      fail("the histogram -> sketch -> report path failed");
    }
    report_bytes = bytes.value();
    if (rep >= 0) m.seconds.push_back(t);
  }
  m.params = fedstat_params(shape, p);
  char extra[160];
  std::snprintf(extra, sizeof(extra),
                ",\"distinct\":%zu,\"stream_n\":%" PRIu64 ",\"report_bytes\":%zu}", hist.size(),
                stream_n, report_bytes);
  m.params.pop_back();  // the closing brace
  m.params += extra;
  return m;
}

// ---- Command line ------------------------------------------------------------------------------
const char kUsage[] =
    "usage: fedstat_sketch_stream_bench [--n N] [--reps R] [--json]\n"
    "         [--only stream_update|baseline|sketch_from_histogram]\n"
    "         [--shape 40KiB/5rows|160KiB/5rows|400KiB/3rows] [--expect-fp HEX]\n"
    "  The shared Zipf key stream (../shared/bench/README.md) into the data-shift sketch at\n"
    "  40 KiB/5 rows, 160 KiB/5 rows, 400 KiB/3 rows. --n keys (default 10000000, at most\n"
    "  2^32 - 1), --reps timed repetitions after one warm-up (default 5, 1..1000), --json one\n"
    "  line per measurement. With the default --n the stream's fingerprint must be\n"
    "  7f22e02bfa195f13, with --expect-fp the given one, or nothing is reported.\n";

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc;) {
    const int used = bench::parse_common_option(argc, argv, i, kUsage, o);
    if (used > 0) {
      i += used;
      continue;
    }
    const std::string a = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    uint64_t v = 0;
    if (a == "--only" && value != nullptr &&
        (std::strcmp(value, "stream_update") == 0 || std::strcmp(value, "baseline") == 0 ||
         std::strcmp(value, "sketch_from_histogram") == 0)) {
      o.only = value;
    } else if (a == "--shape" && value != nullptr &&
               std::any_of(std::begin(kShapes), std::end(kShapes),
                           [&](const Shape& s) { return std::strcmp(value, s.name) == 0; })) {
      o.shape = value;
    } else if (a == "--expect-fp" && parse_u64(value, v, 16)) {
      o.expect_given = true;
      o.expect_fp = v;
    } else {
      bench::refuse_argument("sketch_stream_bench", argv[i], kUsage);
    }
    i += 2;
  }
  return o;
}

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  static_assert(kDomain <= UINT32_MAX, "ids are uint32(key)");

  const Clock::time_point start = Clock::now();
  const std::vector<uint64_t> keys = zipf_keys(o.n, kDomain, bench::kZipfS, bench::kZipfSeed);
  const uint64_t fp = fingerprint(keys);
  FILE* info = o.json ? stderr : stdout;  // --json: stdout holds only the JSON lines
  std::fprintf(info,
               "stream: n = %" PRIu64 ", domain = %" PRIu64
               ", s = 1.2, seed 0x5EEDF00D: fingerprint %016" PRIx64 " (%.2f s to build)\n",
               o.n, kDomain, fp, seconds_since(start));
  const bool check = o.expect_given || o.n == bench::kZipfKeys;
  const uint64_t expected = o.expect_given ? o.expect_fp : bench::kZipfFingerprint;
  if (check && fp != expected) {
    std::fprintf(stderr,
                 "sketch_stream_bench: fingerprint %016" PRIx64 " differs from %016" PRIx64
                 ": not the shared stream, nothing reported\n",
                 fp, expected);
    return 1;
  }
  std::fprintf(info, "fingerprint %s\n",
               check ? "matches" : "not checked (no reference for this n)");
  std::fflush(info);

  const bool all = o.only.empty();
  std::vector<Measurement> fedstat_lines, baseline_lines;
  for (const Shape& shape : kShapes) {
    if (!o.shape.empty() && o.shape != shape.name) continue;
    if (all || o.only == "stream_update") {
      fedstat_lines.push_back(bench_stream_update(o, shape, keys));
      report(o, fedstat_lines.back(), fp);
    }
    if (all || o.only == "baseline") {
      baseline_lines.push_back(bench_baseline(o, shape, keys));
      report(o, baseline_lines.back(), fp);
    }
  }
  if (all || o.only == "sketch_from_histogram") {
    size_t capacity = 2;
    while (capacity < kDomain * 4 / 3 + 1) capacity *= 2;
    std::vector<histogram::SparseEntry> table(capacity);
    histogram::SparseHistogram hist;
    if (!hist.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok()) {
      fail("SparseHistogram::init refused");
    }
    for (const uint64_t key : keys) {
      if (!hist.add(static_cast<uint32_t>(key)).ok()) fail("SparseHistogram::add refused");
    }
    for (const Shape& shape : kShapes) {
      if (o.shape.empty() || o.shape == shape.name) {
        report(o, bench_from_histogram(o, shape, hist, o.n), fp);
      }
    }
  }
  if (!o.json && fedstat_lines.size() == baseline_lines.size()) {
    for (size_t i = 0; i < fedstat_lines.size(); ++i) {
      std::printf("same run: %s ShiftSketch::add takes %.1fx the plain CountSketch's time\n",
                  fedstat_lines[i].shape.c_str(),
                  median_of(fedstat_lines[i].seconds) / median_of(baseline_lines[i].seconds));
    }
  }
  return 0;
}

}  // namespace
}  // namespace fedstat

int main(int argc, char** argv) {
  return fedstat::run(argc, argv);
}
