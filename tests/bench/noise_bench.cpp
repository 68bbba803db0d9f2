// Sampler throughput, reported as a ratio against the baseline measured in the same run: one raw
// 64-bit draw from the same random source (BM_RawDraw64). The "x raw draw" column says how many
// raw draws one sample costs; items_per_second gives absolute samples per second.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/noise/bernoulli.h"
#include "sdk/noise/discrete_gaussian.h"
#include "sdk/noise/discrete_laplace.h"
#include "sdk/noise/poisson.h"
#include "sdk/noise/polya.h"
#include "sdk/noise/tabulated_poisson.h"
#include "tests/bench/same_run_reporter.h"

namespace fedstat {
namespace noise {
namespace {

struct Bits {
  Bits() : stream(Seed256{}, 7), bits(stream) {}
  SeededStream stream;
  RandomBits bits;
};

void BM_RawDraw64(benchmark::State& state) {
  Bits b;
  for (auto _ : state) benchmark::DoNotOptimize(b.bits.bits(64).value());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RawDraw64);

void BM_BernoulliOneThird(benchmark::State& state) {
  Bits b;
  for (auto _ : state) benchmark::DoNotOptimize(bernoulli(b.bits, Rational{1, 3}).value());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BernoulliOneThird);

void BM_BernoulliExpMinusHalf(benchmark::State& state) {
  Bits b;
  for (auto _ : state)
    benchmark::DoNotOptimize(bernoulli_exp_minus(b.bits, Rational{1, 2}).value());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_BernoulliExpMinusHalf);

void BM_DiscreteLaplace(benchmark::State& state) {
  Bits b;
  const Rational scale{static_cast<uint64_t>(state.range(0)), 1};
  for (auto _ : state) benchmark::DoNotOptimize(discrete_laplace(b.bits, scale).value());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DiscreteLaplace)->Arg(10)->Arg(1000);

void BM_DiscreteGaussian(benchmark::State& state) {
  Bits b;
  const Rational sigma2{static_cast<uint64_t>(state.range(0)), 1};
  for (auto _ : state) benchmark::DoNotOptimize(discrete_gaussian(b.bits, sigma2).value());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DiscreteGaussian)->Arg(100)->Arg(10000);

void BM_Poisson(benchmark::State& state) {
  Bits b;
  PoissonSampler sampler;
  if (!sampler.init(Rational{static_cast<uint64_t>(state.range(0)), 1}).ok()) {
    state.SkipWithError("init failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(b.bits).value());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Poisson)->Arg(100)->Arg(10000)->Arg(1000000);

void BM_Skellam(benchmark::State& state) {
  Bits b;
  SkellamSampler sampler;
  if (!sampler.init(Rational{static_cast<uint64_t>(state.range(0)), 1}).ok()) {
    state.SkipWithError("init failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(b.bits).value());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Skellam)->Arg(100)->Arg(10000)->Arg(1000000);

// Skellam with the full factor cache (PoissonSampler::cache_groups_wanted()).
void BM_SkellamCached(benchmark::State& state) {
  Bits b;
  const Rational lambda{static_cast<uint64_t>(state.range(0)), 1};
  SkellamSampler probe;
  if (!probe.init(lambda).ok()) {
    state.SkipWithError("init failed");
    return;
  }
  std::vector<FactorGroup> cache(probe.cache_groups_wanted());
  SkellamSampler sampler;
  if (!sampler.init(lambda, Span<FactorGroup>(cache.data(), cache.size())).ok()) {
    state.SkipWithError("init failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(b.bits).value());
  state.SetItemsProcessed(state.iterations());
  state.counters["cache_bytes"] = static_cast<double>(cache.size() * sizeof(FactorGroup));
}
BENCHMARK(BM_SkellamCached)->Arg(100)->Arg(10000)->Arg(1000000);

// The tabulated exact sampler (table + scratch from sizes_for()).
void BM_SkellamTabulated(benchmark::State& state) {
  Bits b;
  const Rational lambda{static_cast<uint64_t>(state.range(0)), 1};
  auto sizes = TabulatedSkellamSampler::sizes_for(lambda);
  if (!sizes.ok()) {
    state.SkipWithError("sizes_for failed");
    return;
  }
  std::vector<PoissonThreshold> table(sizes->table_entries);
  std::vector<uint64_t> scratch(sizes->scratch_limbs);
  TabulatedSkellamSampler sampler;
  if (!sampler
           .init(lambda, Span<PoissonThreshold>(table.data(), table.size()),
                 Span<uint64_t>(scratch.data(), scratch.size()))
           .ok()) {
    state.SkipWithError("init failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(b.bits).value());
  state.SetItemsProcessed(state.iterations());
  state.counters["table_bytes"] = static_cast<double>(table.size() * sizeof(PoissonThreshold));
}
BENCHMARK(BM_SkellamTabulated)->Arg(100)->Arg(10000)->Arg(1000000)->Arg(10000000);

void BM_PolyaShare(benchmark::State& state) {
  Bits b;
  for (auto _ : state) {
    benchmark::DoNotOptimize(polya_share(b.bits, Rational{10, 1}, 10).value());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PolyaShare);

// Adds a "x raw draw" column: this benchmark's time per item over the baseline's.
class RatioReporter : public bench::SameRunReporter {
 public:
  RatioReporter()
      : SameRunReporter("ratios against one raw 64-bit draw (BM_RawDraw64), same run:") {}

 protected:
  std::string describe(const Run& run) override {
    const double per_item = run.GetAdjustedRealTime();
    if (run.benchmark_name() == "BM_RawDraw64") baseline_ = per_item;
    if (baseline_ <= 0) return "";
    char line[160];
    std::snprintf(line, sizeof(line), "%-32s %10.1f x raw draw   %12.0f samples/s\n",
                  run.benchmark_name().c_str(), per_item / baseline_, 1e9 / per_item);
    return line;
  }

 private:
  double baseline_ = 0;
};

}  // namespace
}  // namespace noise
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::noise::RatioReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
