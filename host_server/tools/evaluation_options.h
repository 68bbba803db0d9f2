// The simulation tools' measurement options, shared so that every tool keeps a release apart from
// a measurement the same way:
//   --evaluate        also print what only a simulation holding the raw data can compute
//                     (exact values, errors, data warnings, times): never for a release
//   --runs R          (with --evaluate) repeat the release R times: each run spends the budget
//   --noise-seed N    (with --evaluate) seeded noise, run r from N + r, for reproducible
//                     measurements; without it the noise is the platform CSPRNG's
// check() refuses --runs or --noise-seed without --evaluate. Host code: errors are exceptions.
// Memory: one CSPRNG, or a seeded stream per run. Paper: none (how the tools present releases).
#ifndef FEDSTAT_HOST_TOOLS_EVALUATION_OPTIONS_H_
#define FEDSTAT_HOST_TOOLS_EVALUATION_OPTIONS_H_

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "CLI/CLI.hpp"
#include "host_server/estimate/noise_bits.h"
#include "host_server/tools/cli_numbers.h"

namespace fedstat {
namespace tools {

class EvaluationOptions {
 public:
  // max_runs = 0: the tool has no --runs.
  void add_to(CLI::App& app, uint32_t max_runs) {
    app.add_flag("--evaluate", evaluate_,
                 "also print values computed from the raw data (exact values, errors, warnings, "
                 "times): for measuring the estimators, never for a release");
    if (max_runs > 0) {
      runs_option_ =
          app.add_option("--runs", runs_, "with --evaluate: repeat R times, report the MSE")
              ->check(whole_number(1, max_runs))
              ->capture_default_str();
    }
    noise_seed_option_ = app.add_option(
        "--noise-seed", noise_seed_,
        "with --evaluate: seeded noise for reproducible measurements (never for a release)");
  }

  void check() const {
    if (runs_option_ != nullptr && runs_option_->count() && !evaluate_) {
      throw std::invalid_argument(
          "--runs repeats the release to measure it (each run spends the budget again): it needs "
          "--evaluate");
    }
    if (noise_seed_option_->count() && !evaluate_) {
      throw std::invalid_argument(
          "--noise-seed makes the noise recomputable by anyone who knows the seed: it is for "
          "measurements and needs --evaluate");
    }
  }

  bool evaluate() const { return evaluate_; }
  uint32_t runs() const { return runs_; }
  bool seeded() const { return noise_seed_option_->count() > 0; }
  const char* noise_name() const { return seeded() ? "seeded" : "csprng"; }

  // The noise of run `run` (stream `salt` for a tool that needs several sources per run): the one
  // CSPRNG, or a fresh seeded source from --noise-seed + run + salt. A seeded source lives until
  // noise() is asked for another run, so memory stays that of one run however many --runs.
  host::NoiseBits& noise(uint32_t run, uint64_t salt = 0) {
    if (!seeded()) {
      if (csprng_ == nullptr)
        csprng_ = std::make_unique<host::NoiseBits>(host::NoiseBits::csprng());
      return *csprng_;
    }
    if (run != seeded_run_) seeded_.clear();
    seeded_run_ = run;
    seeded_.push_back(std::make_unique<host::NoiseBits>(
        host::NoiseBits::seeded(noise_seed_ + run + (salt << 32))));
    return *seeded_.back();
  }

 private:
  bool evaluate_ = false;
  uint32_t runs_ = 1;
  uint64_t noise_seed_ = 0;
  CLI::Option* runs_option_ = nullptr;
  CLI::Option* noise_seed_option_ = nullptr;
  std::unique_ptr<host::NoiseBits> csprng_;
  std::vector<std::unique_ptr<host::NoiseBits>> seeded_;  // run seeded_run_'s sources
  uint32_t seeded_run_ = 0;
};

}  // namespace tools
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TOOLS_EVALUATION_OPTIONS_H_
