// Data-shift sketch costs: device updates per second at two budgets (48 KiB, 400 KiB) and two
// sampling parameters k (cost flat in k), as a ratio against a plain array increment of the same
// items in the same run; and the host's estimation time (merge, least squares, HH and top-k) for
// one pair at each budget.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "host_server/estimate/tv_estimator.h"
#include "sdk/sketch/shift_sketch.h"
#include "sdk/sketch/sketch_budget.h"
#include "tests/bench/same_run_reporter.h"

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
    if (name.rfind("BM_HostEstimate", 0) == 0) {  // milliseconds
      std::snprintf(line, sizeof(line), "%s: %.1f ms per estimate (both estimators)\n",
                    name.c_str(), time);
      return line;
    }
    return "";
  }

 private:
  double plain_ns_ = 0;
};

}  // namespace
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::RatioReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
