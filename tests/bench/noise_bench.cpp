// Sampler throughput, reported as a ratio against the baseline measured in the same run: one raw
// 64-bit draw from the same random source (BM_RawDraw64). The "x raw draw" column says how many
// raw draws one sample costs; items_per_second gives absolute samples per second.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "platform/platform.h"
#include "sdk/base/csprng.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/noise/bernoulli.h"
#include "sdk/noise/discrete_gaussian.h"
#include "sdk/noise/discrete_laplace.h"
#include "sdk/noise/poisson.h"
#include "sdk/noise/polya.h"
#include "sdk/noise/tabulated_poisson.h"
#include "tests/bench/counting_source.h"
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

// ---- Exact Skellam against its bit source (issue 15 item 3) ------------------------------------
// The exact Skellam sampler at λ = 10, 10^4, 10^6 with (a) the production CSPRNG (CTR_DRBG) and
// (b) a seeded AES-CTR stream, both through RandomBits; and (c) the bit source alone, one 64-bit
// word through RandomBits. Each Skellam run reports words_per_sample (bytes the source produced
// / 8 / samples), so that time in the bit source ≈ words_per_sample × (c)'s time per word.
// Sources (src): 0 = Csprng through RandomBits' own 64-byte buffer, 1 = SeededStream (same
// buffer), 2 = Csprng through a RandomBits::kLargeBufferBytes caller buffer (1024-byte requests).
// The anchor, numpy's inexact difference of two Poisson draws, is timed in the same session with
// /usr/bin/python3 (numpy 1.24, PCG64): for each λ the median of 7 runs of
// rng.poisson(λ, 10**7) − rng.poisson(λ, 10**7) under time.perf_counter().

using bench::CountingSource;  // counts the bytes the source hands out

// A bit source and the reader over it.
struct Source {
  explicit Source(int64_t kind)
      : stream(Seed256{}, 9),
        counting(select(kind)),
        bits(kind == 2 ? RandomBits(counting, MutableByteSpan(large, sizeof(large)))
                       : RandomBits(counting)) {}
  RandomSource& select(int64_t kind) {
    if (kind == 1) return stream;
    ok = csprng.init().ok();
    return csprng;
  }
  Csprng csprng;
  SeededStream stream;
  bool ok = true;
  CountingSource counting;
  uint8_t large[RandomBits::kLargeBufferBytes];
  RandomBits bits;
};

const char* source_name(int64_t kind) {
  return kind == 0 ? "csprng, 64 B requests" : kind == 1 ? "seeded" : "csprng, 1 KiB requests";
}

// (c): one 64-bit word from RandomBits over the source.
void BM_BitSourceWord(benchmark::State& state) {
  Source source(state.range(0));
  if (!source.ok) {
    state.SkipWithError("Csprng init failed");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(source.bits.bits(64).value());
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(source_name(state.range(0)));
}
BENCHMARK(BM_BitSourceWord)->ArgName("src")->Arg(0)->Arg(1)->Arg(2);

// The source's own fill() at a request size (bytes): the per-call overhead of CTR_DRBG.
void BM_SourceFill(benchmark::State& state) {
  Source source(state.range(0));
  std::vector<uint8_t> buffer(static_cast<size_t>(state.range(1)));
  if (!source.ok) {
    state.SkipWithError("Csprng init failed");
    return;
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(source.counting.fill(MutableByteSpan(buffer.data(), buffer.size())));
  }
  state.SetBytesProcessed(state.iterations() * state.range(1));
  state.SetLabel(source_name(state.range(0)));
}
BENCHMARK(BM_SourceFill)->ArgNames({"src", "bytes"})->ArgsProduct({{0, 1}, {8, 64, 1024}});

void set_words_per_sample(benchmark::State& state, const CountingSource& counting,
                          int64_t samples_per_iteration = 1) {
  state.counters["words_per_sample"] =
      static_cast<double>(counting.bytes()) / 8 /
      static_cast<double>(state.iterations() * samples_per_iteration);
}

// Table and scratch for the tabulated sampler at λ.
struct TabulatedMemory {
  TabulatedMemory(Rational lambda, TabulatedSkellamSampler::Method method) {
    auto sizes = TabulatedSkellamSampler::sizes_for(lambda, method);
    ok = sizes.ok();
    if (!ok) return;
    table.resize(sizes->table_entries);
    scratch.resize(sizes->scratch_limbs);
  }
  std::vector<PoissonThreshold> table;
  std::vector<uint64_t> scratch;
  bool ok = false;
};

bool init_skellam(benchmark::State& state, const Source& source, TabulatedSkellamSampler& sampler,
                  Rational lambda, TabulatedMemory& memory,
                  TabulatedSkellamSampler::Method method = TabulatedSkellamSampler::Method::kAuto) {
  if (!source.ok || !memory.ok ||
      !sampler
           .init(lambda, Span<PoissonThreshold>(memory.table.data(), memory.table.size()),
                 Span<uint64_t>(memory.scratch.data(), memory.scratch.size()), method)
           .ok()) {
    state.SkipWithError("init failed");
    return false;
  }
  state.counters["table_bytes"] =
      static_cast<double>(memory.table.size() * sizeof(PoissonThreshold));
  state.counters["scratch_bytes"] = static_cast<double>(memory.scratch.size() * sizeof(uint64_t));
  return true;
}

// (a), (b): exact Skellam, one sample() per item. Args: source, λ.
void BM_ExactSkellam(benchmark::State& state) {
  Source source(state.range(0));
  const Rational lambda{static_cast<uint64_t>(state.range(1)), 1};
  TabulatedMemory memory(lambda, TabulatedSkellamSampler::Method::kAuto);
  TabulatedSkellamSampler sampler;
  if (!init_skellam(state, source, sampler, lambda, memory)) return;
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(source.bits).value());
  state.SetItemsProcessed(state.iterations());
  set_words_per_sample(state, source.counting);
  state.SetLabel(source_name(state.range(0)));
}
BENCHMARK(BM_ExactSkellam)
    ->ArgNames({"src", "lambda"})
    ->ArgsProduct({{0, 1, 2}, {10, 10000, 1000000}});

// The batch API: sample_many() into a 256-sample buffer (what add_noise does), per sample.
void BM_ExactSkellamBatch(benchmark::State& state) {
  Source source(state.range(0));
  const Rational lambda{static_cast<uint64_t>(state.range(1)), 1};
  TabulatedMemory memory(lambda, TabulatedSkellamSampler::Method::kAuto);
  TabulatedSkellamSampler sampler;
  if (!init_skellam(state, source, sampler, lambda, memory)) return;
  int64_t out[256];
  for (auto _ : state) {
    if (!sampler.sample_many(source.bits, Span<int64_t>(out)).ok()) {
      state.SkipWithError("draw");
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * 256);
  state.counters["samples_per_iteration"] = 256;
  set_words_per_sample(state, source.counting, 256);
  state.SetLabel(source_name(state.range(0)));
}
BENCHMARK(BM_ExactSkellamBatch)
    ->ArgNames({"src", "lambda"})
    ->ArgsProduct({{0, 1, 2}, {10, 10000, 1000000}});

// Where kAuto should stop splitting a Poisson(2λ) draw: both methods at small λ (CSPRNG, 1 KiB).
// method: 1 = the difference of two draws, 2 = the split.
void BM_SkellamMethod(benchmark::State& state) {
  Source source(2);
  const Rational lambda{static_cast<uint64_t>(state.range(0)), 1};
  const auto method = static_cast<TabulatedSkellamSampler::Method>(state.range(1));
  TabulatedMemory memory(lambda, method);
  TabulatedSkellamSampler sampler;
  if (!init_skellam(state, source, sampler, lambda, memory, method)) return;
  for (auto _ : state) benchmark::DoNotOptimize(sampler.sample(source.bits).value());
  state.SetItemsProcessed(state.iterations());
  set_words_per_sample(state, source.counting);
}
BENCHMARK(BM_SkellamMethod)
    ->ArgNames({"lambda", "method"})
    ->ArgsProduct({{4, 10, 20, 32, 64, 128}, {1, 2}});

void BM_PolyaShare(benchmark::State& state) {
  Bits b;
  for (auto _ : state) {
    benchmark::DoNotOptimize(polya_share(b.bits, Rational{10, 1}, 10).value());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PolyaShare);

// Adds a "x raw draw" column: this benchmark's time per item over the baseline's. With
// --benchmark_repetitions=N only the medians are described. For the exact Skellam runs a second
// line says the share of its time that the bit source takes: words_per_sample × the time of one
// word from the same source (BM_BitSourceWord, same run).
class RatioReporter : public bench::SameRunReporter {
 public:
  RatioReporter()
      : SameRunReporter("ratios against one raw 64-bit draw (BM_RawDraw64), same run:") {}

 protected:
  std::string describe(const Run& run) override {
    if (run.run_type == Run::RT_Aggregate ? run.aggregate_name != "median" : run.repetitions > 1) {
      return "";
    }
    const auto batch = run.counters.find("samples_per_iteration");
    const double per_item =  // ns (the default time unit)
        run.GetAdjustedRealTime() / (batch == run.counters.end() ? 1.0 : batch->second.value);
    const std::string& function = run.run_name.function_name;
    const std::string& args = run.run_name.args;
    if (function == "BM_RawDraw64") baseline_ = per_item;
    if (function == "BM_BitSourceWord") word_ns_[args] = per_item;
    if (baseline_ <= 0) return "";
    char line[320];
    std::snprintf(line, sizeof(line), "%-48s %10.1f x raw draw   %12.0f samples/s\n",
                  (function + "/" + args).c_str(), per_item / baseline_, 1e9 / per_item);
    std::string out = line;
    const auto words = run.counters.find("words_per_sample");
    if (function.rfind("BM_ExactSkellam", 0) == 0 && words != run.counters.end()) {
      const std::string source = args.substr(0, args.find('/'));  // "src:0"
      const auto word = word_ns_.find(source);
      if (word != word_ns_.end()) {
        const double bit_ns = words->second.value * word->second;
        std::snprintf(line, sizeof(line),
                      "    %.2f M/s, %.3f words/sample x %.2f ns/word = %.1f ns of %.1f ns: bit "
                      "source %.0f%%\n",
                      1e3 / per_item, words->second.value, word->second, bit_ns, per_item,
                      100 * bit_ns / per_item);
        out += line;
      }
    }
    return out;
  }

 private:
  double baseline_ = 0;
  std::map<std::string, double> word_ns_;
};

}  // namespace
}  // namespace noise
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::noise::RatioReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
