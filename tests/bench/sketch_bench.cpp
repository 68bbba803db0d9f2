// Data-shift sketch costs: device updates per second at two budgets (48 KiB, 400 KiB) and two
// sampling parameters k (cost flat in k), as a ratio against a plain array increment of the same
// items in the same run; the shared Zipf key stream (../shared/bench/README.md: 10^7 keys over
// 350,000 ids, s = 1.2, fingerprint 7f22e02bfa195f13) through ShiftSketch::add(key, 1) at the
// issue's three shapes (40 KiB/5 rows, 160 KiB/5 rows, 400 KiB/3 rows: params_for_budget), with
// and without the pre-aggregation buffer, against a plain array increment of the same stream; the
// device's real path (the stream counted into a histogram, untimed; then init, add(id, count) once
// per distinct id, serialize); and the host's estimation time (merge, least squares, HH and
// top-k) for one pair at each budget.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "host_server/estimate/tv_estimator.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/sketch/sketch_budget.h"
#include "tests/bench/same_run_reporter.h"
#include "tests/bench/zipf_stream.h"

namespace fedstat {
namespace {

constexpr uint32_t kItems = 1 << 16;

uint32_t item_at(uint64_t i) {
  return static_cast<uint32_t>((i * 0x9E3779B97F4A7C15ull) >> 40);
}

void BM_PlainIncrement(benchmark::State& state) {
  std::vector<int64_t> counts(kItems);
  uint64_t i = 0;
  for (auto _ : state) {
    counts[item_at(i++) % kItems] += 3;
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PlainIncrement);

void BM_SketchUpdate(benchmark::State& state) {
  const size_t budget = static_cast<size_t>(state.range(0));
  sketch::ShiftSketchParams p = sketch::params_for_budget(budget, Seed256{}).value();
  p.k = static_cast<uint32_t>(state.range(1));
  std::vector<uint64_t> memory((sketch::shift_sketch_memory_bytes(p) + 7) / 8);
  sketch::ShiftSketch s;
  (void)s.init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()),
                                  sketch::shift_sketch_memory_bytes(p)));
  uint64_t i = 0;
  for (auto _ : state) {
    (void)s.add(item_at(i++) % kItems, 3);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SketchUpdate)
    ->Args({49152, 1024})
    ->Args({49152, 1 << 20})
    ->Args({409600, 1024})
    ->Args({409600, 1 << 20});

// ---- The shared Zipf stream ------------------------------------------------------------------

constexpr uint64_t kStreamDomain = bench::kZipfDomain;

// zipf_keys(10^7, 350000, 1.2, 0x5EEDF00D) exactly as ../shared/bench/README.md defines it; the
// program stops if the FNV-1a fingerprint differs.
const std::vector<uint64_t>& zipf_stream() {
  static const std::vector<uint64_t> keys = [] {
    std::vector<uint64_t> out =
        bench::zipf_keys(bench::kZipfKeys, bench::kZipfDomain, bench::kZipfS, bench::kZipfSeed);
    const uint64_t h = bench::fingerprint(out);
    if (h != bench::kZipfFingerprint) {
      std::fprintf(stderr, "zipf stream: fingerprint %016llx, expected 7f22e02bfa195f13\n",
                   static_cast<unsigned long long>(h));
      std::exit(1);
    }
    return out;
  }();
  return keys;
}

// The same keys into a plain array of counts: the baseline of the stream benches.
void BM_ZipfPlainIncrement(benchmark::State& state) {
  const std::vector<uint64_t>& keys = zipf_stream();
  std::vector<int64_t> counts(kStreamDomain);
  for (auto _ : state) {
    for (uint64_t key : keys) counts[key] += 1;
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * keys.size()));
}
BENCHMARK(BM_ZipfPlainIncrement)->Unit(benchmark::kMillisecond)->Iterations(5);

struct OwnedSketch {
  explicit OwnedSketch(const sketch::ShiftSketchParams& p)
      : params(p), memory((sketch::shift_sketch_memory_bytes(p) + 7) / 8) {}
  Status init() {
    return sketch.init(params, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()),
                                               sketch::shift_sketch_memory_bytes(params)));
  }
  sketch::ShiftSketchParams params;
  std::vector<uint64_t> memory;
  sketch::ShiftSketch sketch;
};

// Arguments: the budget in bytes, and 1 for the rule's buffer, 0 for none (its bytes unused).
void BM_ZipfStream(benchmark::State& state) {
  const std::vector<uint64_t>& keys = zipf_stream();
  sketch::ShiftSketchParams p =
      sketch::params_for_budget(static_cast<size_t>(state.range(0)), Seed256{}).value();
  if (state.range(1) == 0) p.buffer_slots = 0;
  OwnedSketch s(p);
  for (auto _ : state) {
    state.PauseTiming();
    const bool ready = s.init().ok();
    state.ResumeTiming();
    if (!ready) {
      state.SkipWithError("init");
      break;
    }
    for (uint64_t key : keys) (void)s.sketch.add(static_cast<uint32_t>(key), 1);
    s.sketch.flush();  // every update in the counters and heap
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * keys.size()));
  state.counters["R"] = p.rows;
  state.counters["w"] = p.width;
  state.counters["H"] = p.heap_capacity;
  state.counters["C"] = p.buffer_slots;
}
BENCHMARK(BM_ZipfStream)
    ->Args({40960, 1})
    ->Args({163840, 1})
    ->Args({409600, 1})
    ->Args({40960, 0})
    ->Args({163840, 0})
    ->Args({409600, 0})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

// The device's real path: a histogram (the stream counted, untimed), then init, add(id, count)
// once per distinct id in id order, serialize.
void BM_HistogramToReport(benchmark::State& state) {
  static const std::vector<std::pair<uint32_t, int64_t>> histogram = [] {
    std::vector<int64_t> counts(kStreamDomain);
    for (uint64_t key : zipf_stream()) ++counts[key];
    std::vector<std::pair<uint32_t, int64_t>> out;
    for (uint32_t id = 0; id < kStreamDomain; ++id) {
      if (counts[id] != 0) out.push_back({id, counts[id]});
    }
    return out;
  }();
  const sketch::ShiftSketchParams p =
      sketch::params_for_budget(static_cast<size_t>(state.range(0)), Seed256{}).value();
  OwnedSketch s(p);
  std::vector<uint8_t> report(sketch::shift_sketch_report_bytes(p, p.heap_capacity));
  for (auto _ : state) {
    if (!s.init().ok()) {
      state.SkipWithError("init");
      break;
    }
    for (const auto& entry : histogram) (void)s.sketch.add(entry.first, entry.second);
    const Result<size_t> bytes = s.sketch.serialize(MutableByteSpan(report.data(), report.size()));
    benchmark::DoNotOptimize(bytes.ok());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * histogram.size()));
}
BENCHMARK(BM_HistogramToReport)
    ->Arg(40960)
    ->Arg(163840)
    ->Arg(409600)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(10);

void BM_HostEstimate(benchmark::State& state) {
  const size_t budget = static_cast<size_t>(state.range(0));
  const sketch::ShiftSketchParams p = sketch::params_for_budget(budget, Seed256{}).value();
  std::vector<uint64_t> mp((sketch::shift_sketch_memory_bytes(p) + 7) / 8), mq(mp.size());
  sketch::ShiftSketch sp, sq;
  (void)sp.init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(mp.data()),
                                   sketch::shift_sketch_memory_bytes(p)));
  (void)sq.init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(mq.data()),
                                   sketch::shift_sketch_memory_bytes(p)));
  for (uint32_t i = 1; i <= 50000; ++i) {  // Zipf-like P and a shifted Q
    (void)sp.add(i, 1 + 100000 / i);
    (void)sq.add(i + 500, 1 + 80000 / i);
  }
  std::vector<uint8_t> rp(sketch::shift_sketch_report_bytes(p, sp.heap_size()));
  std::vector<uint8_t> rq(sketch::shift_sketch_report_bytes(p, sq.heap_size()));
  (void)sp.serialize(MutableByteSpan(rp.data(), rp.size()));
  (void)sq.serialize(MutableByteSpan(rq.data(), rq.size()));
  sketch::SketchReport a, b;
  (void)sketch::parse_sketch_report(ByteSpan(rp.data(), rp.size()), a);
  (void)sketch::parse_sketch_report(ByteSpan(rq.data(), rq.size()), b);
  for (auto _ : state) {
    const host::TvEstimate e =
        host::estimate_tv(host::merge_reports({a}), host::merge_reports({b}), host::TvOptions{});
    benchmark::DoNotOptimize(e.topk);
  }
}
BENCHMARK(BM_HostEstimate)->Arg(49152)->Arg(409600)->Unit(benchmark::kMillisecond);

class RatioReporter : public bench::SameRunReporter {
 public:
  RatioReporter() : SameRunReporter("same run:") {}

 protected:
  std::string describe(const Run& run) override {
    const std::string name = run.benchmark_name();
    const double time = run.GetAdjustedRealTime();  // in the benchmark's unit
    char line[200];
    if (name == "BM_PlainIncrement") plain_ns_ = time;
    if (name.rfind("BM_SketchUpdate", 0) == 0 && plain_ns_ > 0) {
      std::snprintf(line, sizeof(line), "%s: %.1f x a plain increment, %.3g updates/s\n",
                    name.c_str(), time / plain_ns_, 1e9 / time);
      return line;
    }
    const double per_second = run.counters.count("items_per_second")
                                  ? static_cast<double>(run.counters.at("items_per_second"))
                                  : 0;
    if (name.rfind("BM_ZipfPlainIncrement", 0) == 0) zipf_plain_ = per_second;
    if (name.rfind("BM_ZipfStream", 0) == 0 && zipf_plain_ > 0) {
      std::snprintf(line, sizeof(line),
                    "%s: %.3g updates/s, %.2f x the plain increment's time (%.3g/s)\n",
                    name.c_str(), per_second, zipf_plain_ / per_second, zipf_plain_);
      return line;
    }
    if (name.rfind("BM_HistogramToReport", 0) == 0) {
      std::snprintf(line, sizeof(line), "%s: %.2f ms per report, %.3g distinct items/s\n",
                    name.c_str(), time, per_second);
      return line;
    }
    if (name.rfind("BM_HostEstimate", 0) == 0) {  // milliseconds
      std::snprintf(line, sizeof(line), "%s: %.1f ms per estimate (both estimators)\n",
                    name.c_str(), time);
      return line;
    }
    return "";
  }

 private:
  double plain_ns_ = 0;
  double zipf_plain_ = 0;
};

}  // namespace
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::RatioReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
