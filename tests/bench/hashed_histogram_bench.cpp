// The DIST data-shift device's CPU (docs/data_shift_dp.md, issue 41): one device's contribution
// from a 1,000-item histogram — sketch::add_bucket_counts into B words, then
// sketch::add_polya_shares (one Pólya share per bucket from the production Csprng through a
// RandomBits::kLargeBufferBytes buffer) — at B = 2,048 and 40,960 (160 KiB of 32-bit words), for
// the item-level scale T = 1/3 (ε = 3) and the user-level T = 100/3 (m = 100, ε = 3), with
// s = 11 shares (the threshold of 20 clients) and s = 501 (1,000 clients). The baseline, in the
// same run: building today's 160 KiB ShiftSketch (params_for_budget(163840)) of the same
// histogram — init, add(id, count) once per item, serialize — the data-shift device's work today.
// The report prints each case's time as a ratio against that baseline.
//
// Run from a Release build: build/host-release/tests/bench/fedstat_hashed_histogram_bench.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "sdk/base/csprng.h"
#include "sdk/base/random_bits.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/sketch/hashed_histogram.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/sketch/sketch_budget.h"
#include "tests/bench/same_run_reporter.h"

namespace fedstat {
namespace {

constexpr uint32_t kItems = 1000;
constexpr size_t kSketchBudget = 163840;

Seed256 task_seed() {
  Seed256 s;
  for (int i = 0; i < 32; ++i) s.bytes[i] = static_cast<uint8_t>(0x51 + 13 * i);
  return s;
}

// 1,000 items with Zipf-like counts 1 + 10^5/(rank + 1) (10^6 events in all, roughly).
struct Histogram {
  Histogram() : table(2048) {  // a power of two (SparseHistogram::init), load 0.49
    ok = local.init(Span<histogram::SparseEntry>(table.data(), table.size())).ok();
    for (uint32_t i = 0; i < kItems && ok; ++i) {
      ok = local.add(i * 2654435761u, 1 + 100000 / (i + 1)).ok();
    }
  }
  std::vector<histogram::SparseEntry> table;
  histogram::SparseHistogram local;
  bool ok = false;
};

const Histogram& histogram_once() {
  static const Histogram h;
  return h;
}

// Today's device work: the 160 KiB ShiftSketch of the histogram, serialised.
void BM_ShiftSketch160KiB(benchmark::State& state) {
  const Histogram& h = histogram_once();
  const sketch::ShiftSketchParams p = sketch::params_for_budget(kSketchBudget, task_seed()).value();
  const size_t bytes = sketch::shift_sketch_memory_bytes(p);
  std::vector<uint64_t> memory((bytes + 7) / 8);
  std::vector<uint8_t> report(sketch::shift_sketch_report_bytes(p, p.heap_capacity));
  sketch::ShiftSketch s;
  const Span<const histogram::SparseEntry> slots = h.local.slots();
  for (auto _ : state) {
    if (!h.ok ||
        !s.init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()), bytes)).ok()) {
      state.SkipWithError("histogram or sketch init");
      break;
    }
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].count != 0) (void)s.add(slots[i].id, slots[i].count);
    }
    const Result<size_t> written = s.serialize(MutableByteSpan(report.data(), report.size()));
    benchmark::DoNotOptimize(written.ok());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kItems));
}
BENCHMARK(BM_ShiftSketch160KiB)->Unit(benchmark::kMillisecond);

// Arguments: B, T's numerator and denominator, s.
void BM_HashedHistogram(benchmark::State& state) {
  const Histogram& h = histogram_once();
  const uint32_t buckets = static_cast<uint32_t>(state.range(0));
  const noise::Rational scale{static_cast<uint64_t>(state.range(1)),
                              static_cast<uint64_t>(state.range(2))};
  const uint32_t shares = static_cast<uint32_t>(state.range(3));
  const sketch::BucketMap map(task_seed(), buckets);
  std::vector<uint64_t> out(buckets);
  Csprng csprng;
  uint8_t buffer[RandomBits::kLargeBufferBytes];
  RandomBits bits(csprng, MutableByteSpan(buffer, sizeof(buffer)));
  if (!h.ok || !csprng.init().ok()) {
    state.SkipWithError("histogram or Csprng init");
    return;
  }
  for (auto _ : state) {
    std::fill(out.begin(), out.end(), 0);
    const Span<uint64_t> words(out.data(), out.size());
    if (!sketch::add_bucket_counts(map, h.local, 0, bits, words).ok() ||
        !sketch::add_polya_shares(scale, shares, bits, words).ok()) {
      state.SkipWithError("add_bucket_counts or add_polya_shares");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * buckets));
}
BENCHMARK(BM_HashedHistogram)
    ->ArgNames({"B", "Tnum", "Tden", "s"})
    ->Args({2048, 1, 3, 11})
    ->Args({40960, 1, 3, 11})
    ->Args({40960, 1, 3, 501})
    ->Args({2048, 100, 3, 11})
    ->Args({40960, 100, 3, 11})
    ->Args({40960, 100, 3, 501})
    ->Unit(benchmark::kMillisecond);

class RatioReporter : public bench::SameRunReporter {
 public:
  RatioReporter() : SameRunReporter("same run (ratio: time / the 160 KiB ShiftSketch's):") {}

 protected:
  std::string describe(const Run& run) override {
    const std::string name = run.benchmark_name();
    const double ms = run.GetAdjustedRealTime();
    char line[200];
    if (run.error_occurred) return "";
    // With --benchmark_repetitions, only the median of each case (and of the baseline) counts.
    if (run.run_type == Run::RT_Aggregate && run.aggregate_name != "median") return "";
    if (name.rfind("BM_ShiftSketch160KiB", 0) == 0) {
      sketch_ms_ = ms;
      std::snprintf(line, sizeof(line), "%s: %.3f ms per device report (baseline)\n", name.c_str(),
                    ms);
      return line;
    }
    if (name.rfind("BM_HashedHistogram", 0) == 0 && sketch_ms_ > 0) {
      std::snprintf(line, sizeof(line), "%s: %.3f ms per device vector, %.2f x the sketch\n",
                    name.c_str(), ms, ms / sketch_ms_);
      return line;
    }
    return "";
  }

 private:
  double sketch_ms_ = 0;
};

}  // namespace
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::RatioReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
