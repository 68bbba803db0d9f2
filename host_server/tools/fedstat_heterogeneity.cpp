// fedstat-heterogeneity: private dispersion, Cochran's Q and I² (004) of client vectors, with the
// paper's 95% intervals beside each statistic and the exact values.
//
//   fedstat-heterogeneity --vectors V.csv [--p 2] [--epsilon 0.25] [--delta 0.1]
//                         [--mechanism agm|classical|skellam|none] [--max-weight 100] [--seed 1]
//                         [--runs 1] [--secure] [--json]
//
// V.csv: one client vector per row, values in [0, 1]. --runs R repeats the noise with seeds
// S..S+R−1 and adds each statistic's mean squared error. JSON keys: dispersion, q, i2 (each with
// estimate, exact, ci, noise_sd and mse), n, d, mechanism, epsilon, delta, sigma, clipped_weights,
// seconds.
#include <chrono>
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "host_server/estimate/heterogeneity.h"
#include "host_server/estimate/host_common.h"
#include "nlohmann/json.hpp"

int main(int argc, char** argv) {
  using namespace fedstat::host;  // NOLINT: a small tool
  CLI::App app{"fedstat-heterogeneity: private dispersion, Cochran's Q and I^2"};
  std::string path, mechanism = "agm";
  HeterogeneityOptions options;
  uint64_t seed = 1;
  uint32_t runs = 1;
  bool json = false;
  app.add_option("--vectors", path, "CSV, one client vector per row, values in [0, 1]")->required();
  app.add_option("--p", options.config.p, "dispersion exponent p >= 1")->capture_default_str();
  app.add_option("--epsilon", options.epsilon, "privacy epsilon (whole release)")
      ->capture_default_str();
  app.add_option("--delta", options.delta, "privacy delta (whole release)")->capture_default_str();
  app.add_option("--mechanism", mechanism,
                 "agm (analytic Gaussian), classical, skellam (clients add integer noise) or none")
      ->capture_default_str();
  app.add_option("--max-weight", options.config.max_weight,
                 "clip of the weights 1/s^2 (bounds one client's influence), >= 4")
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of the noise")->capture_default_str();
  app.add_option("--runs", runs, "repeat with seeds S..S+R-1 and report the MSE")
      ->capture_default_str();
  app.add_flag("--secure", options.secure,
               "skellam: sum the clients' releases through secure aggregation");
  app.add_flag("--json", json, "print one JSON object");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto start = std::chrono::steady_clock::now();
    options.mechanism = parse_heterogeneity_mechanism(mechanism);
    if (runs == 0) throw std::invalid_argument("--runs must be >= 1");
    const ClientVectors vectors = read_client_vectors(path);
    HeterogeneityEstimate first;
    double squared[3] = {0, 0, 0};
    for (uint32_t r = 0; r < runs; ++r) {
      SeededBits bits(seed + r, 0);
      const HeterogeneityEstimate e = estimate_heterogeneity(vectors, options, bits.bits());
      if (r == 0) first = e;
      const StatisticEstimate* stats[3] = {&e.dispersion, &e.q, &e.i2};
      for (int k = 0; k < 3; ++k) {
        const double err = stats[k]->estimate - stats[k]->exact;
        squared[k] += err * err;
      }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const char* names[3] = {"dispersion", "q", "i2"};
    const StatisticEstimate* stats[3] = {&first.dispersion, &first.q, &first.i2};
    if (json) {
      nlohmann::json out;
      for (int k = 0; k < 3; ++k) {
        out[names[k]] = {{"estimate", stats[k]->estimate},
                         {"exact", stats[k]->exact},
                         {"ci", {stats[k]->ci.low, stats[k]->ci.high}},
                         {"noise_sd", stats[k]->noise_sd},
                         {"mse", squared[k] / runs}};
      }
      out["n"] = vectors.size();
      out["d"] = vectors[0].size();
      out["mechanism"] = heterogeneity_mechanism_name(options.mechanism);
      out["epsilon"] = options.epsilon;
      out["delta"] = options.delta;
      out["sigma"] = {first.sigma[0], first.sigma[1], first.sigma[2], first.sigma[3]};
      out["clipped_weights"] = first.clipped;
      out["runs"] = runs;
      out["seconds"] = seconds;
      std::printf("%s\n", out.dump().c_str());
    } else {
      std::printf("%zu clients, d = %zu, mechanism %s", vectors.size(), vectors[0].size(),
                  heterogeneity_mechanism_name(options.mechanism));
      if (options.mechanism != HeterogeneityMechanism::kNone) {
        std::printf(", epsilon %g, delta %g", options.epsilon, options.delta);
      }
      std::printf("\n%-11s %14s %14s %12s   %s\n", "statistic", "estimate", "exact", "noise sd",
                  "95% interval (004 Thms 4.7/4.15/4.19)");
      for (int k = 0; k < 3; ++k) {
        std::printf("%-11s %14.6g %14.6g %12.4g   [%.6g, %.6g]", names[k], stats[k]->estimate,
                    stats[k]->exact, stats[k]->noise_sd, stats[k]->ci.low, stats[k]->ci.high);
        if (runs > 1) std::printf("   mse %.4g over %u runs", squared[k] / runs, runs);
        std::printf("\n");
      }
      if (first.clipped > 0) {
        std::printf("note: %u clients' weights 1/s^2 were clipped at %g\n", first.clipped,
                    options.config.max_weight);
      }
      std::printf("time %.3f s\n", seconds);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-heterogeneity: %s\n", e.what());
    return 1;
  }
}
