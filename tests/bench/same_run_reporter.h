// A console reporter for fedstat's benchmarks: each program derives from it, turns the runs it
// cares about into lines (ratios against a baseline measured in the same run) with describe(),
// and the lines are printed after Google Benchmark's table under a heading.
// run_benchmarks() is the programs' main(). Host only.
#ifndef FEDSTAT_TESTS_BENCH_SAME_RUN_REPORTER_H_
#define FEDSTAT_TESTS_BENCH_SAME_RUN_REPORTER_H_

#include <benchmark/benchmark.h>

#include <cstdio>
#include <string>
#include <vector>

namespace fedstat {
namespace bench {

class SameRunReporter : public benchmark::ConsoleReporter {
 public:
  explicit SameRunReporter(std::string heading) : heading_(std::move(heading)) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) lines_ += describe(run);
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%s\n%s", heading_.c_str(), lines_.c_str());
  }

 protected:
  // The line(s) for one run, each ending in '\n'; "" to skip it.
  virtual std::string describe(const Run& run) = 0;

 private:
  std::string heading_;
  std::string lines_;
};

// "BM_Name/1000" → "1000" (everything after the first '/'; "" without one).
inline std::string argument_of(const std::string& benchmark_name) {
  const auto slash = benchmark_name.find('/');
  return slash == std::string::npos ? "" : benchmark_name.substr(slash + 1);
}

inline int run_benchmarks(int argc, char** argv, SameRunReporter& reporter) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

}  // namespace bench
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_BENCH_SAME_RUN_REPORTER_H_
