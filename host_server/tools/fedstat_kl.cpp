// fedstat-kl: PRIEST-KLD (000) end to end on one machine. P is split across N emulated clients
// (SDK histograms), the host samples T points from the reference Π, the clients answer through
// the SDK, and the host estimates D_KL(Π‖P) under the chosen trust model.
//
//   fedstat-kl --pi PI.txt --p P.txt [--T 1000] [--lambda 0.1] [--tau 1e-6]
//              [--model dist|trusted|tagg|none] [--epsilon 2] [--delta 1e-6] [--clients 10]
//              [--rate 1] [--calibration analytic|classical] [--seed 1] [--secure]
//              [--evaluate [--runs R] [--noise-seed N]] [--json]
//
// Files: `<item_id> <count>` per line. --rate: the chance a client answers a round (1: every
// client answers every point; rate × clients must be ≥ 1). --secure (dist) sums the answers
// through a real secure-aggregation session. --seed makes the plan and the split of P into
// clients; the noise (the host's and the clients' shares) comes from the platform CSPRNG, since
// anyone who knows a seed recomputes seeded noise and removes it.
//
// What is printed is the release: the estimate and public parameters (model, T, λ, ε, δ, the
// noise's sensitivity, σ and grid, Dist's μ and clamped rounds — all public or post-processing of
// the noised values). The default model is dist; under --model none there is no privacy, and
// --epsilon/--delta are refused there rather than silently ignored. --evaluate adds what only a
// simulation that holds the raw data can print, for measuring the estimator and never for a
// release: the exact divergence, the error, P's mass outside Π's support and its warnings, the
// time taken; with --runs R it repeats the plan with seeds S..S+R−1 and fresh noise (each run
// spends the privacy budget again) and reports the mean and the mean squared error; with
// --noise-seed N the noise is seeded (N..N+R−1), for reproducible measurements.
// The guarantee is for one client's record substituted (the totals N_t stay public); the split
// of the file into clients is the simulation's.
//
// Bounds (refused outside, so no argument makes unbounded work): T ≤ 10^6, clients ≤ 10^5,
// runs ≤ 10^4, T × clients ≤ 10^8, runs × T ≤ 10^8, rate × clients ≥ 1, |λ| ≤ 1000.
//
// JSON keys: estimate, model, T, lambda, clients, rate, epsilon, delta, sensitivity, sigma, grid,
// estimate_sd, dist_lambda, clamped, noise ("csprng" or "seeded"); with --evaluate also exact
// (null when infinite), error, mse, runs, support_mass, warnings, seconds.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/kl_estimator.h"
#include "host_server/estimate/noise_bits.h"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/cli_numbers.h"
#include "host_server/tools/evaluation_options.h"
#include "host_server/tools/progress.h"
#include "nlohmann/json.hpp"

namespace tools = fedstat::tools;

namespace {

using namespace fedstat::host;  // NOLINT: a small tool

constexpr uint32_t kMaxRounds = 1000000;
constexpr uint32_t kMaxClients = 100000;
constexpr uint32_t kMaxRuns = 10000;
constexpr uint64_t kMaxRoundClients = 100000000;  // T × clients: the plan and the answers
constexpr uint64_t kMaxRunRounds = 100000000;     // runs × T

struct Run {
  KlEstimate estimate;
  std::string error;  // a refusal of the non-private model (zero mass at a sampled point)
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fedstat-kl: private KL divergence D_KL(reference || P) with PRIEST-KLD"};
  fedstat::tools::apply_conventions(
      app, "fedstat-kl",
      {"fedstat-kl --pi PI.txt --p P.txt --model dist --epsilon 1 --clients 200",
       "fedstat-kl --pi PI.txt --p P.txt --model trusted --epsilon 4 --json",
       "fedstat-kl --pi PI.txt --p P.txt --evaluate --runs 200 --noise-seed 1   measure the "
       "MSE"});
  std::string pi_path, p_path, model_name = kl_model_name(kKlDefaultModel),
                               calibration = "analytic";
  uint32_t rounds = 1000, clients = 10;
  double rate = 1;
  uint64_t seed = 1;
  KlOptions options;
  options.epsilon = kKlDefaultEpsilon;
  bool json = false, secure = false;
  tools::EvaluationOptions evaluation;
  app.add_option("--pi", pi_path, "reference distribution Pi: '<item_id> <count>' lines")
      ->required();
  app.add_option("--p", p_path, "the clients' data P: '<item_id> <count>' lines")->required();
  app.add_option("--T", rounds, "number of points sampled from Pi")
      ->check(tools::whole_number(1, kMaxRounds))
      ->capture_default_str();
  app.add_option("--lambda", options.lambda, "variance parameter lambda, |lambda| <= 1000")
      ->check(tools::finite_number(tools::NumberRange{-1000, 1000, false, false, "[-1000, 1000]"}))
      ->capture_default_str();
  app.add_option("--tau", options.tau, "floor of P'(x) in the dist model, in (0, 1)")
      ->check(tools::open_unit_interval())
      ->capture_default_str();
  app.add_option("--model", model_name, "trust model: dist, trusted, tagg or none (no privacy)")
      ->capture_default_str();
  auto* epsilon_option = app.add_option("--epsilon", options.epsilon, "privacy epsilon")
                             ->check(tools::positive_number())
                             ->capture_default_str();
  auto* delta_option = app.add_option("--delta", options.delta, "privacy delta, in (0, 1)")
                           ->check(tools::open_unit_interval())
                           ->capture_default_str();
  app.add_option("--clients", clients, "emulated clients P is split across")
      ->check(tools::whole_number(1, kMaxClients))
      ->capture_default_str();
  app.add_option("--rate", rate, "chance that a client answers a round, in (0, 1]")
      ->check(tools::finite_number(tools::NumberRange{0, 1, true, false, "(0, 1]"}))
      ->capture_default_str();
  app.add_option("--calibration", calibration, "Gaussian calibration: analytic or classical")
      ->check(CLI::IsMember({"analytic", "classical"}))
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of the plan and the split (the noise is the CSPRNG's)")
      ->capture_default_str();
  app.add_flag("--secure", secure,
               "dist: sum the clients' noised answers through secure aggregation");
  evaluation.add_to(app, kMaxRuns);
  app.add_flag("--json", json, "print one JSON object");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;

  try {
    const auto start = std::chrono::steady_clock::now();
    options.model = parse_kl_model(model_name);
    options.calibration = calibration == "analytic" ? GaussianCalibration::kAnalytic
                                                    : GaussianCalibration::kClassical;
    if (options.model == KlModel::kNone && (epsilon_option->count() || delta_option->count())) {
      throw std::invalid_argument(
          "--model none adds no noise: --epsilon and --delta apply to trusted, tagg and dist");
    }
    evaluation.check();
    const bool evaluate = evaluation.evaluate();
    const uint32_t runs = evaluation.runs();
    if (rate * clients < 1) {
      throw std::invalid_argument("--rate x --clients must be at least 1 (a client per round)");
    }
    if (uint64_t{rounds} * clients > kMaxRoundClients) {
      throw std::invalid_argument("--T x --clients is at most 10^8 (the plan and the answers)");
    }
    if (uint64_t{runs} * rounds > kMaxRunRounds) {
      throw std::invalid_argument("--runs x --T is at most 10^8");
    }
    validate_kl_options(options);
    const ItemCounts pi = read_item_counts(pi_path);
    const ItemCounts p = read_item_counts(p_path);
    SeededBits split_bits(seed, 0);
    const EmulatedClients emulated = split_across_clients(p, clients, split_bits.bits());

    std::vector<Run> results;
    fedstat::tools::Progress progress("fedstat-kl", "run", runs);
    for (uint32_t r = 0; r < runs; ++r) {
      progress.update(r);
      SeededBits plan_bits(seed + r, 1ull << 32);
      NoiseBits& noise = evaluation.noise(r);
      const KlPlan plan = plan_kl(pi, rounds, clients, rate, plan_bits.bits());
      const KlSums sums = collect_kl_sums(plan, emulated, options, noise, secure);
      Run run;
      try {
        run.estimate = estimate_kl(plan, sums, options, noise.stream(0));
      } catch (const std::runtime_error& refusal) {
        run.error = refusal.what();
      }
      results.push_back(run);
    }
    progress.finish();  // before anything is printed on the terminal it shares
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    size_t usable = 0;
    double sum = 0;
    for (const Run& run : results) {
      if (!run.error.empty()) continue;
      ++usable;
      sum += run.estimate.estimate;
    }
    if (usable == 0) throw std::runtime_error(results.front().error);
    const double mean = sum / static_cast<double>(usable);
    const KlEstimate& first =
        results.front().error.empty() ? results.front().estimate : results.back().estimate;
    const bool noised = options.model != KlModel::kNone;

    // Evaluation: values computed from the raw data.
    KlExact exact;
    double squared_error = 0;
    std::vector<std::string> warnings;
    if (evaluate) {
      exact = exact_kl(pi, p);
      for (const Run& run : results) {
        if (!run.error.empty()) continue;
        const double e = run.estimate.estimate - exact.divergence;
        squared_error += e * e;
      }
      if (!exact.covered) {
        warnings.push_back(
            "P has no mass at some items of the reference's support: "
            "D_KL(reference || P) is infinite and no finite estimate is unbiased");
      }
      if (exact.support_mass < 1 && options.lambda != 0) {
        warnings.push_back("P puts " + std::to_string(100 * (1 - exact.support_mass)) +
                           "% of its mass outside the reference's support: the lambda term "
                           "biases the estimate by " +
                           std::to_string(options.lambda * (exact.support_mass - 1)) +
                           " (use --lambda 0)");
      }
      const size_t refused = results.size() - usable;
      if (refused > 0) {
        warnings.push_back(std::to_string(refused) + " of " + std::to_string(runs) +
                           " runs were refused: " + results.front().error);
      }
    }
    const double mse = squared_error / static_cast<double>(usable);

    if (json) {
      nlohmann::json out;
      out["estimate"] = mean;
      out["model"] = kl_model_name(options.model);
      out["T"] = rounds;
      out["lambda"] = options.lambda;
      out["clients"] = clients;
      out["rate"] = rate;
      out["epsilon"] = noised ? nlohmann::json(options.epsilon) : nlohmann::json(nullptr);
      out["delta"] = noised ? nlohmann::json(options.delta) : nlohmann::json(nullptr);
      out["sensitivity"] = first.sensitivity;
      out["sigma"] = first.sigma;
      out["grid"] = first.grid;
      out["estimate_sd"] = first.estimate_sd;
      out["dist_lambda"] = first.dist_lambda;
      out["clamped"] = first.clamped;
      out["clamped_above"] = first.clamped_above;
      out["noise"] = evaluation.noise_name();
      if (evaluate) {
        out["seconds"] = seconds;
        out["exact"] = exact.covered ? nlohmann::json(exact.divergence) : nlohmann::json(nullptr);
        out["error"] =
            exact.covered ? nlohmann::json(mean - exact.divergence) : nlohmann::json(nullptr);
        out["mse"] = exact.covered ? nlohmann::json(mse) : nlohmann::json(nullptr);
        out["runs"] = usable;
        out["support_mass"] = exact.support_mass;
        out["warnings"] = warnings;
      }
      std::printf("%s\n", out.dump().c_str());
      return 0;
    }
    std::printf("model      %s (T %u, lambda %g, %u clients, rate %g", kl_model_name(options.model),
                rounds, options.lambda, clients, rate);
    if (noised) std::printf(", epsilon %g, delta %g", options.epsilon, options.delta);
    std::printf(")%s\n", noised ? "" : "  -- no privacy: the estimate is not noised");
    std::printf("estimate   %.9g%s\n", mean, runs > 1 ? "  (mean over the runs)" : "");
    if (options.model == KlModel::kTrusted || options.model == KlModel::kTagg) {
      std::printf(
          "noise      sigma %.6g for sensitivity %.6g on grid %.3g; sd %.6g on the estimate\n",
          first.sigma, first.sensitivity, first.grid, first.estimate_sd);
    } else if (options.model == KlModel::kDist) {
      std::printf(
          "noise      Skellam mu %.6g in every sum; %u of %u rounds clamped to tau, %u to 1\n",
          first.dist_lambda, first.clamped, rounds, first.clamped_above);
    }
    if (evaluate) {
      if (exact.covered) {
        std::printf("exact      %.6f (evaluation)\nerror      %+.6f\n", exact.divergence,
                    mean - exact.divergence);
        if (runs > 1) std::printf("mse        %.6g over %zu runs\n", mse, usable);
      } else {
        std::printf("exact      infinite (P is zero somewhere on the reference's support)\n");
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
