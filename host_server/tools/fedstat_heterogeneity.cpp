// fedstat-heterogeneity: private dispersion, Cochran's Q and I² (004) of client vectors, with the
// paper's 95% intervals beside each statistic.
//
//   fedstat-heterogeneity --vectors V.csv [--p 2] [--epsilon 0.25] [--delta 0.1]
//                         [--mechanism agm|classical|skellam|none] [--max-weight 100] [--seed 1]
//                         [--secure] [--evaluate [--runs R] [--noise-seed N]] [--json]
//
// V.csv: one client vector per row, values in [0, 1]. What is printed is the release: each
// statistic's estimate, interval and noise s.d., and the public parameters (n, d, ε, δ, σ of
// each release). Under --mechanism none there is no privacy, and --epsilon/--delta are refused
// there rather than silently ignored. The noise (central, or the clients' Skellam shares) comes
// from the platform CSPRNG. --evaluate adds what only a simulation holding the raw vectors can
// print, for measurement and never for a release: the exact statistics, the number of clipped
// weights, the time taken, and with --runs R (fresh noise each run; each run spends the budget
// again) each statistic's mean squared error; --noise-seed N seeds the noise (N..N+R−1) for
// reproducible measurements. Bounds: runs ≤ 10^4.
//
// JSON keys: dispersion, q, i2 (each with estimate, ci, noise_sd; with --evaluate also exact and
// mse), n, d, mechanism, epsilon, delta, sigma, grid, noise; with --evaluate clipped_weights,
// runs, seconds.
#include <chrono>
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "host_server/estimate/heterogeneity.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/noise_bits.h"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/cli_numbers.h"
#include "host_server/tools/evaluation_options.h"
#include "host_server/tools/progress.h"
#include "nlohmann/json.hpp"

namespace tools = fedstat::tools;

int main(int argc, char** argv) {
  using namespace fedstat::host;  // NOLINT: a small tool
  constexpr uint32_t kMaxRuns = 10000;
  CLI::App app{"fedstat-heterogeneity: private dispersion, Cochran's Q and I^2"};
  fedstat::tools::apply_conventions(
      app, "fedstat-heterogeneity",
      {"fedstat-heterogeneity --vectors V.csv --mechanism agm --epsilon 8",
       "fedstat-heterogeneity --vectors V.csv --mechanism skellam --epsilon 8 --secure --json",
       "fedstat-heterogeneity --vectors V.csv --evaluate --runs 500 --noise-seed 1   measure the "
       "MSE"});
  std::string path, mechanism = "agm";
  HeterogeneityOptions options;

  bool json = false;
  tools::EvaluationOptions evaluation;
  app.add_option("--vectors", path, "CSV, one client vector per row, values in [0, 1]")->required();
  app.add_option("--p", options.config.p, "dispersion exponent p >= 1")
      ->check(tools::at_least(1, "[1, inf)"))
      ->capture_default_str();
  auto* epsilon_option =
      app.add_option("--epsilon", options.epsilon, "privacy epsilon (whole release)")
          ->check(tools::positive_number())
          ->capture_default_str();
  auto* delta_option =
      app.add_option("--delta", options.delta, "privacy delta (whole release), in (0, 1)")
          ->check(tools::open_unit_interval())
          ->capture_default_str();
  app.add_option("--mechanism", mechanism,
                 "agm (analytic Gaussian), classical, skellam (clients add integer noise) or none")
      ->capture_default_str();
  app.add_option("--max-weight", options.config.max_weight,
                 "clip of the weights 1/s^2 (bounds one client's influence), >= 4")
      ->check(tools::at_least(4, "[4, inf)"))
      ->capture_default_str();
  app.add_flag("--secure", options.secure,
               "skellam: sum the clients' releases through secure aggregation");
  evaluation.add_to(app, kMaxRuns);
  app.add_flag("--json", json, "print one JSON object");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;

  try {
    const auto start = std::chrono::steady_clock::now();
    options.mechanism = parse_heterogeneity_mechanism(mechanism);
    const bool noised = options.mechanism != HeterogeneityMechanism::kNone;
    if (!noised && (epsilon_option->count() || delta_option->count())) {
      throw std::invalid_argument(
          "--mechanism none adds no noise: --epsilon and --delta apply to agm, classical and "
          "skellam");
    }
    evaluation.check();
    const bool evaluate = evaluation.evaluate();
    const uint32_t runs = evaluation.runs();
    const ClientVectors vectors = read_client_vectors(path);
    HeterogeneityExact exact;
    if (evaluate) exact = exact_heterogeneity(vectors, options.config);
    const double exact_values[3] = {exact.dispersion, exact.q, exact.i2};
    HeterogeneityEstimate first;
    double squared[3] = {0, 0, 0};
    fedstat::tools::Progress progress("fedstat-heterogeneity", "run", runs);
    for (uint32_t r = 0; r < runs; ++r) {
      progress.update(r);
      const HeterogeneityEstimate e =
          estimate_heterogeneity(vectors, options, evaluation.noise(r).stream(0));
      if (r == 0) first = e;
      const StatisticEstimate* stats[3] = {&e.dispersion, &e.q, &e.i2};
      for (int k = 0; k < 3; ++k) {
        const double err = stats[k]->estimate - exact_values[k];
        squared[k] += err * err;
      }
    }
    progress.finish();  // before anything is printed on the terminal it shares
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const char* names[3] = {"dispersion", "q", "i2"};
    const StatisticEstimate* stats[3] = {&first.dispersion, &first.q, &first.i2};
    if (json) {
      nlohmann::json out;
      for (int k = 0; k < 3; ++k) {
        out[names[k]] = {{"estimate", stats[k]->estimate},
                         {"ci", {stats[k]->ci.low, stats[k]->ci.high}},
                         {"noise_sd", stats[k]->noise_sd}};
        if (evaluate) {
          out[names[k]]["exact"] = exact_values[k];
          out[names[k]]["mse"] = squared[k] / runs;
        }
      }
      out["n"] = vectors.size();
      out["d"] = vectors[0].size();
      out["mechanism"] = heterogeneity_mechanism_name(options.mechanism);
      out["epsilon"] = noised ? nlohmann::json(options.epsilon) : nlohmann::json(nullptr);
      out["delta"] = noised ? nlohmann::json(options.delta) : nlohmann::json(nullptr);
      out["sigma"] = {first.sigma[0], first.sigma[1], first.sigma[2], first.sigma[3]};
      out["grid"] = {first.grid[0], first.grid[1], first.grid[2], first.grid[3]};
      out["noise"] = evaluation.noise_name();
      if (evaluate) {
        out["seconds"] = seconds;
        out["clipped_weights"] = exact.clipped;
        out["runs"] = runs;
      }
      std::printf("%s\n", out.dump().c_str());
      return 0;
    }
    std::printf("%zu clients, d = %zu, mechanism %s", vectors.size(), vectors[0].size(),
                heterogeneity_mechanism_name(options.mechanism));
    if (noised) {
      std::printf(", epsilon %g, delta %g\n", options.epsilon, options.delta);
    } else {
      std::printf("  -- no privacy: the statistics are not noised\n");
    }
    std::printf("%-11s %14s %12s   %s%s\n", "statistic", "estimate", "noise sd",
                "95% interval (004 Thms 4.7/4.15/4.19)", evaluate ? "   exact (evaluation)" : "");
    for (int k = 0; k < 3; ++k) {
      std::printf("%-11s %14.6g %12.4g   [%.6g, %.6g]", names[k], stats[k]->estimate,
                  stats[k]->noise_sd, stats[k]->ci.low, stats[k]->ci.high);
      if (evaluate) std::printf("   %.6g", exact_values[k]);
      if (evaluate && runs > 1) std::printf("   mse %.4g over %u runs", squared[k] / runs, runs);
      std::printf("\n");
    }
    if (evaluate && exact.clipped > 0) {
      std::printf("evaluation: %u clients' weights 1/s^2 were clipped at %g\n", exact.clipped,
                  options.config.max_weight);
    }
    if (evaluate) std::printf("time %.3f s\n", seconds);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-heterogeneity: %s\n", e.what());
    return 1;
  }
}
