// fedstat-kl: PRIEST-KLD (000) end to end on one machine. P is split across N emulated clients
// (SDK histograms), the host samples T points from the reference Π, the clients answer through
// the SDK, and the host estimates D_KL(Π‖P) under the chosen trust model.
//
//   fedstat-kl --pi PI.txt --p P.txt [--T 1000] [--lambda 0.1] [--tau 1e-6]
//              [--model none|trusted|tagg|dist] [--epsilon 2] [--delta 1e-6] [--clients 10]
//              [--rate 1] [--calibration analytic|classical] [--seed 1] [--runs 1] [--secure]
//              [--json]
//
// Files: `<item_id> <count>` per line. --rate: the chance a client answers a round (1: every
// client answers every point). --runs R repeats the plan and the noise with seeds S..S+R−1 and
// reports the mean and the mean squared error against the exact value.
// --secure (dist) sums the answers through a real secure-aggregation session. JSON keys: estimate,
// exact (null when infinite), model, T, lambda, plus error, mse, runs, support_mass, warnings,
// sensitivity, sigma, estimate_sd, dist_lambda, clamped, seconds.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/kl_estimator.h"
#include "nlohmann/json.hpp"

namespace {

using namespace fedstat::host;  // NOLINT: a small tool

struct Run {
  KlEstimate estimate;
  std::string error;  // a refusal (e.g. zero mass at a sampled point)
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fedstat-kl: private KL divergence D_KL(reference || P) with PRIEST-KLD"};
  std::string pi_path, p_path, model_name = "none", calibration = "analytic";
  uint32_t rounds = 1000, clients = 10, runs = 1;
  double rate = 1;
  uint64_t seed = 1;
  KlOptions options;
  options.epsilon = 2;
  bool json = false, secure = false;
  app.add_option("--pi", pi_path, "reference distribution Pi: '<item_id> <count>' lines")
      ->required();
  app.add_option("--p", p_path, "the clients' data P: '<item_id> <count>' lines")->required();
  app.add_option("--T", rounds, "number of points sampled from Pi")->capture_default_str();
  app.add_option("--lambda", options.lambda, "variance parameter lambda")->capture_default_str();
  app.add_option("--tau", options.tau, "floor of P'(x) in the dist model")->capture_default_str();
  app.add_option("--model", model_name, "trust model: none, trusted, tagg or dist")
      ->capture_default_str();
  app.add_option("--epsilon", options.epsilon, "privacy epsilon")->capture_default_str();
  app.add_option("--delta", options.delta, "privacy delta")->capture_default_str();
  app.add_option("--clients", clients, "emulated clients P is split across")->capture_default_str();
  app.add_option("--rate", rate, "chance that a client answers a round, in (0, 1]")
      ->capture_default_str();
  app.add_option("--calibration", calibration, "Gaussian calibration: analytic or classical")
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of the plan, the split and the noise")
      ->capture_default_str();
  app.add_option("--runs", runs, "repeat with seeds S..S+R-1 and report the MSE")
      ->capture_default_str();
  app.add_flag("--secure", secure,
               "dist: sum the clients' noised answers through secure aggregation");
  app.add_flag("--json", json, "print one JSON object");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto start = std::chrono::steady_clock::now();
    options.model = parse_kl_model(model_name);
    if (calibration != "analytic" && calibration != "classical") {
      throw std::invalid_argument("--calibration must be analytic or classical");
    }
    options.calibration = calibration == "analytic" ? GaussianCalibration::kAnalytic
                                                    : GaussianCalibration::kClassical;
    validate_kl_options(options);
    if (runs == 0) throw std::invalid_argument("--runs must be >= 1");
    const ItemCounts pi = read_item_counts(pi_path);
    const ItemCounts p = read_item_counts(p_path);
    const KlExact exact = exact_kl(pi, p);
    SeededBits split_bits(seed, 0);
    const EmulatedClients emulated = split_across_clients(p, clients, split_bits.bits());

    std::vector<Run> results;
    for (uint32_t r = 0; r < runs; ++r) {
      SeededBits plan_bits(seed + r, 1ull << 32), noise_bits(seed + r, (1ull << 32) + 1);
      const KlPlan plan = plan_kl(pi, rounds, clients, rate, plan_bits.bits());
      const KlSums sums = collect_kl_sums(plan, emulated, options, seed + r, secure);
      Run run;
      try {
        run.estimate = estimate_kl(plan, sums, options, noise_bits.bits());
      } catch (const std::runtime_error& refusal) {
        run.error = refusal.what();
      }
      results.push_back(run);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::vector<std::string> warnings;
    if (!exact.covered) {
      warnings.push_back(
          "P has no mass at some items of the reference's support: "
          "D_KL(reference || P) is infinite and no finite estimate is unbiased");
    }
    if (exact.support_mass < 1 && options.lambda != 0) {
      warnings.push_back("P puts " + std::to_string(100 * (1 - exact.support_mass)) +
                         "% of its mass outside the reference's support: the lambda term biases "
                         "the estimate by " +
                         std::to_string(options.lambda * (exact.support_mass - 1)) +
                         " (use --lambda 0)");
    }
    double sum = 0, squared_error = 0;
    size_t usable = 0;
    for (const Run& run : results) {
      if (!run.error.empty()) continue;
      ++usable;
      sum += run.estimate.estimate;
      const double e = run.estimate.estimate - exact.divergence;
      squared_error += e * e;
    }
    if (usable == 0) throw std::runtime_error(results.front().error);
    const double mean = sum / static_cast<double>(usable);
    const double mse = squared_error / static_cast<double>(usable);
    const KlEstimate& first =
        results.front().error.empty() ? results.front().estimate : results.back().estimate;
    size_t refused = results.size() - usable;
    if (refused > 0) {
      warnings.push_back(std::to_string(refused) + " of " + std::to_string(runs) +
                         " runs were refused: " + results.front().error);
    }

    if (json) {
      nlohmann::json out;
      out["estimate"] = mean;
      out["exact"] = exact.covered ? nlohmann::json(exact.divergence) : nlohmann::json(nullptr);
      out["model"] = kl_model_name(options.model);
      out["T"] = rounds;
      out["lambda"] = options.lambda;
      out["error"] =
          exact.covered ? nlohmann::json(mean - exact.divergence) : nlohmann::json(nullptr);
      out["mse"] = exact.covered ? nlohmann::json(mse) : nlohmann::json(nullptr);
      out["runs"] = usable;
      out["clients"] = clients;
      out["rate"] = rate;
      out["epsilon"] = options.model == KlModel::kNone ? nlohmann::json(nullptr)
                                                       : nlohmann::json(options.epsilon);
      out["delta"] =
          options.model == KlModel::kNone ? nlohmann::json(nullptr) : nlohmann::json(options.delta);
      out["support_mass"] = exact.support_mass;
      out["sensitivity"] = first.sensitivity;
      out["sigma"] = first.sigma;
      out["estimate_sd"] = first.estimate_sd;
      out["dist_lambda"] = first.dist_lambda;
      out["clamped"] = first.clamped;
      out["warnings"] = warnings;
      out["seconds"] = seconds;
      std::printf("%s\n", out.dump().c_str());
    } else {
      std::printf("model      %s (T %u, lambda %g, %u clients, rate %g",
                  kl_model_name(options.model), rounds, options.lambda, clients, rate);
      if (options.model != KlModel::kNone) {
        std::printf(", epsilon %g, delta %g", options.epsilon, options.delta);
      }
      std::printf(")\n");
      std::printf("estimate   %.6f%s\n", mean, runs > 1 ? "  (mean over the runs)" : "");
      if (exact.covered) {
        std::printf("exact      %.6f\nerror      %+.6f\n", exact.divergence,
                    mean - exact.divergence);
        if (runs > 1) std::printf("mse        %.6g over %zu runs\n", mse, usable);
      } else {
        std::printf("exact      infinite (P is zero somewhere on the reference's support)\n");
      }
      if (options.model == KlModel::kTrusted || options.model == KlModel::kTagg) {
        std::printf("noise      sigma %.6g for sensitivity %.6g; sd %.6g on the estimate\n",
                    first.sigma, first.sensitivity, first.estimate_sd);
      } else if (options.model == KlModel::kDist) {
        std::printf("noise      Skellam mu %.6g in every sum; %u of %u rounds clamped to tau\n",
                    first.dist_lambda, first.clamped, rounds);
      }
      for (const auto& w : warnings) std::printf("warning    %s\n", w.c_str());
      std::printf("time       %.3f s\n", seconds);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-kl: %s\n", e.what());
    return 1;
  }
}
