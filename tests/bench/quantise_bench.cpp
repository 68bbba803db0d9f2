// Quantise-stage throughput (coordinates/s) for d = 10^3 and 10^5 as a ratio against a plain
// copy of the same floats in the same run (BM_PlainCopy), and the RSGD-AR trainer's epoch time.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/quantise/quantise.h"
#include "sdk/quantise/rotation.h"
#include "sdk/tasks/logistic_trainer.h"
#include "tests/bench/same_run_reporter.h"

namespace fedstat {
namespace {

std::vector<float> update_of(size_t d) {
  std::vector<float> v(quantise::padded_dimension(d));
  for (size_t i = 0; i < d; ++i) v[i] = std::sin(static_cast<float>(i)) * 0.01f;
  return v;
}

void BM_PlainCopy(benchmark::State& state) {
  const size_t d = static_cast<size_t>(state.range(0));
  const std::vector<float> source = update_of(d);
  std::vector<float> target(source.size());
  for (auto _ : state) {
    std::memcpy(target.data(), source.data(), d * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(d));
}
BENCHMARK(BM_PlainCopy)->Arg(1000)->Arg(100000);

void BM_Quantise(benchmark::State& state) {
  const size_t d = static_cast<size_t>(state.range(0));
  const std::vector<float> source = update_of(d);
  std::vector<float> work(source.size());
  quantise::QuantiseConfig config;
  const size_t length = quantise::encoded_length(d, config);
  std::vector<uint32_t> out(length);
  SeededStream stream(Seed256{}, 1);
  RandomBits bits(stream);
  for (auto _ : state) {
    std::memcpy(work.data(), source.data(), source.size() * sizeof(float));
    const Status s = quantise::quantise(Span<float>(work.data(), work.size()), d, config, nullptr,
                                        bits, Span<uint32_t>(out.data(), length));
    if (!s.ok()) state.SkipWithError(s.message());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(d));
}
BENCHMARK(BM_Quantise)->Arg(1000)->Arg(100000);

void BM_TrainerEpoch(benchmark::State& state) {  // n = 1000 examples, d = 31, one epoch
  const size_t n = 1000, d = 31;
  std::vector<float> features(n * d);
  std::vector<int8_t> labels(n);
  for (size_t i = 0; i < n; ++i) {
    double norm2 = 0;
    for (size_t k = 0; k < d; ++k) {
      features[i * d + k] = std::cos(static_cast<float>(i * d + k));
      norm2 += features[i * d + k] * features[i * d + k];
    }
    for (size_t k = 0; k < d; ++k) features[i * d + k] /= static_cast<float>(std::sqrt(norm2));
    labels[i] = features[i * d] > 0 ? 1 : -1;
  }
  const tasks::Examples examples{Span<const float>(features.data(), features.size()),
                                 Span<const int8_t>(labels.data(), n), d};
  std::vector<uint8_t> memory(tasks::trainer_memory_bytes(n, d));
  std::vector<double> start(d, 0), out(d);
  tasks::TrainerConfig config;
  config.epochs = 1;
  config.averaging_interval = 1;
  SeededStream stream(Seed256{}, 2);
  RandomBits bits(stream);
  for (auto _ : state) {
    Arena arena{MutableByteSpan(memory.data(), memory.size())};
    const Status s = tasks::train_logistic(examples, Span<const double>(start.data(), d), config,
                                           bits, arena, Span<double>(out.data(), d));
    if (!s.ok()) state.SkipWithError(s.message());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
}
BENCHMARK(BM_TrainerEpoch);

// Prints each quantise run's time per coordinate over the plain copy's at the same d.
class RatioReporter : public bench::SameRunReporter {
 public:
  RatioReporter() : SameRunReporter("same run:") {}

 protected:
  std::string describe(const Run& run) override {
    const std::string name = run.benchmark_name();
    const double per_item = run.GetAdjustedRealTime();  // ns per iteration
    const std::string arg = bench::argument_of(name);
    char line[200];
    if (name.rfind("BM_PlainCopy", 0) == 0) copy_ns_[arg] = per_item;
    if (name.rfind("BM_Quantise", 0) == 0 && copy_ns_.count(arg)) {
      std::snprintf(line, sizeof(line), "quantise d=%s: %.1f x a plain copy, %.3g coordinates/s\n",
                    arg.c_str(), per_item / copy_ns_[arg], std::stod(arg) * 1e9 / per_item);
      return line;
    }
    if (name == "BM_TrainerEpoch") {
      std::snprintf(line, sizeof(line), "trainer: one epoch over 1000 examples (d=31) %.1f us\n",
                    per_item / 1000);
      return line;
    }
    return "";
  }

 private:
  std::map<std::string, double> copy_ns_;
};

}  // namespace
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::RatioReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
