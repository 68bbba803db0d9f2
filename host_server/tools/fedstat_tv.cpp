// fedstat-tv: total variation distance D_TV(P, Q) from data-shift sketches (001), end to end on
// one machine: each file's counts are split across N emulated clients, every client sketches
// its histogram through the SDK (optionally after the local-DP stability histogram), the host
// merges the reports and estimates D_TV with the HH and top-k estimators.
//
//   fedstat-tv --p P.txt --q Q.txt [--budget BYTES] [--estimator topk|hh|both] [--epsilon E]
//              [--clients N] [--seed S] [--evaluate [--noise-seed N]] [--json]
//              [--domain D] [--rows R --width W --heap H --k K] [--no-least-squares]
//              [--secure] [--rank R0 --window KAPPA --tau TAU --heap-fraction F --max-candidates M
//               --noise-margin C]
//
// Default budget 160 KiB of device memory per client (sketch/sketch_budget.h). --domain D takes
// the candidates from every id below D instead of the heaps (as under secure aggregation);
// --secure (with --domain) sums the clients' counters through a real secure-aggregation session.
// Privacy: with --epsilon every client applies the local-DP stability histogram (noise from the
// platform CSPRNG) before it sketches, and everything the host prints is post-processing of those
// reports; without it the sketches are not noised and the tool says so. --evaluate adds the exact
// D_TV, the errors and the times, computed from the raw files: for measuring the estimators, never
// for a release; --noise-seed N (with --evaluate) seeds the clients' noise for reproducible
// measurements. --seed S is the task seed (hashes) and the split into clients.
// Bounds: clients ≤ 10^4 and clients × sketch memory (dist --secure: × B × 8 bytes) ≤ 2 GiB per
// distribution; candidates
// (--domain, --max-candidates) ≤ 2^24. Every numeric option is checked where it enters.
// JSON keys: topk, hh, bytes, params, report_bytes, privacy, noise; with --evaluate also exact,
// topk_error, hh_error, seconds, sketch_seconds, estimate_seconds.
//
// --trust none|local|dist (default: local with --epsilon, none without, as before). dist emulates
// the DIST data-shift task (issue 41, host_server/estimate/dist_shift.h): no sketch; each client's
// vector is the SDK's own (client::build_data_shift_dist): its counts folded into --buckets B
// public buckets (default --budget / (bits/8): 40,960 at 160 KiB and 32 bits), each bucket clamped
// to ⌊(2^(bits−1) − 1)/max(2, clients)⌋, plus one Pólya share
// of the discrete Laplace of scale T = Δ/ε split s ways, s the threshold the server's plan would
// give a round of `clients` (default_dist_threshold: any s honest shares make one whole Laplace,
// so the sum carries clients/s of them), each word modulo 2^--bits (32 or 64);
// the sum (or, with --secure, a real secure-aggregation session's) is estimated with
// estimate_hashed_tv against the other side's. --epsilon is required (item level, Δ = 1);
// --max-events m > 0: user level, each client bounds its events to m, Δ = 2m. The sketch options
// (--rows, --width, --heap, --k, --domain, --rank, --window, --tau, --max-candidates,
// --noise-margin, --heap-fraction, --no-least-squares, --estimator) are refused with dist, and
// --buckets, --max-events, --bits without it. JSON keys (dist): tv, bytes (per device), buckets,
// params, privacy, noise, negative_buckets, threshold; with --evaluate also exact, error, seconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/dist_shift.h"
#include "host_server/estimate/hashed_tv.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/tv_estimator.h"
#include "host_server/secagg/secagg_simulation.h"
#include "host_server/tasks/task_plan.h"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/cli_numbers.h"
#include "host_server/tools/evaluation_options.h"
#include "nlohmann/json.hpp"

namespace tools = fedstat::tools;
#include "sdk/sketch/sketch_budget.h"

namespace {

using namespace fedstat;        // NOLINT: a small tool
using namespace fedstat::host;  // NOLINT

constexpr uint32_t kMaxClients = 10000;
constexpr uint64_t kMaxClientBytes = uint64_t{1} << 31;  // clients × sketch memory, per side
constexpr uint32_t kMaxCandidates = 1u << 24;

struct DistOptions {
  uint32_t buckets = 0;  // 0: from the budget
  uint32_t max_events = 0;
  uint32_t bits = 32;
};

// --trust dist: both sides' fleets through the DIST data-shift task's devices, one estimate.
int run_dist(const std::string& p_path, const std::string& q_path, size_t budget, double epsilon,
             uint32_t clients, uint64_t seed, bool secure, bool json, const DistOptions& dist,
             fedstat::tools::EvaluationOptions& evaluation) {
  const bool evaluate = evaluation.evaluate();
  if (epsilon <= 0) {
    throw std::invalid_argument(
        "--trust dist needs --epsilon E (item level; with --max-events m, user level)");
  }
  if (secure && clients < 2) {
    throw std::invalid_argument("--secure sums through secure aggregation: give --clients >= 2");
  }
  if (dist.bits != 32 && dist.bits != 64) throw std::invalid_argument("--bits must be 32 or 64");
  DistShiftConfig config;
  config.bits = dist.bits;
  config.buckets = dist.buckets != 0 ? dist.buckets
                                     : static_cast<uint32_t>(std::min<uint64_t>(
                                           budget / (dist.bits / 8), sketch::kMaxHashedBuckets));
  config.max_events = dist.max_events;
  config.max_clients = clients;
  // s as the server's plan sets it (task_plan.cpp): the threshold of a round of `clients` on the
  // default graph — complete up to 1,024, the SecAgg+ bound's t beyond (or from max_clients/8) —
  // so the emulated sum carries the n/s Laplaces a real round would, not the one Laplace of an
  // ideal all-honest split.
  config.shares = default_dist_threshold(clients);
  config.noise_scale = dist_shift_noise_scale(epsilon, dist.max_events);
  check_dist_shift(config);
  const uint64_t device_bytes = uint64_t{config.buckets} * (config.bits / 8);
  if (secure && uint64_t{clients} * config.buckets * 8 > kMaxClientBytes) {
    throw std::invalid_argument(
        "--secure holds every client's vector: --clients x --buckets x 8 bytes is at most 2 GiB "
        "per distribution: lower --clients or --buckets");
  }
  const auto start = std::chrono::steady_clock::now();
  const ItemCounts p = read_item_counts(p_path);
  const ItemCounts q = read_item_counts(q_path);
  const Seed256 task_seed = seed_from_u64(seed ^ 0x7A5C0FFEEull);
  SeededBits split_bits(seed, 7);
  const EmulatedClients p_clients = split_across_clients(p, clients, split_bits.bits());
  const EmulatedClients q_clients = split_across_clients(q, clients, split_bits.bits());
  NoiseBits& p_noise = evaluation.noise(0, 0);
  const std::vector<uint64_t> p_sum =
      dist_shift_fleet_sum(p_clients, task_seed, config, p_noise, secure);
  NoiseBits& q_noise = evaluation.noise(0, 1);
  const std::vector<uint64_t> q_sum =
      dist_shift_fleet_sum(q_clients, task_seed, config, q_noise, secure);
  const HashedTvEstimate e =
      estimate_hashed_tv(signed_sum(p_sum, config.bits), signed_sum(q_sum, config.bits),
                         config.noise_scale, static_cast<double>(clients) / config.shares);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double exact = evaluate ? exact_tv(p, q) : 0;
  char privacy[256];
  std::snprintf(privacy, sizeof(privacy),
                "distributed DP: epsilon %g %s, delta 0 (any %u of the clients' shares make one "
                "discrete Laplace of scale %g per bucket%s)",
                epsilon, dist.max_events ? "per client (user level)" : "per event (item level)",
                config.shares, config.noise_scale,
                secure ? ", summed through secure aggregation" : "");
  if (json) {
    nlohmann::json out;
    out["tv"] = e.tv;
    if (evaluate) {
      out["exact"] = exact;
      out["error"] = e.tv - exact;
      out["seconds"] = seconds;
    }
    out["buckets"] = config.buckets;
    out["bytes"] = device_bytes;
    out["negative_buckets"] = e.negative_p;
    out["threshold"] = e.threshold;
    out["params"] = {
        {"trust", "dist"},
        {"clients", clients},
        {"epsilon", epsilon},
        {"max_events", config.max_events},
        {"noise_scale", config.noise_scale},
        {"shares", config.shares},
        {"bits", config.bits},
        {"bucket_clamp", dist_shift_bucket_clamp(config.bits, std::max<uint32_t>(2, clients))},
        {"secure", secure}};
    out["privacy"] = privacy;
    out["noise"] = evaluation.noise_name();
    std::printf("%s\n", out.dump().c_str());
  } else {
    if (evaluate) std::printf("exact D_TV   %.6f (evaluation)\n", exact);
    std::printf("D_TV         %.6f", e.tv);
    if (evaluate) std::printf("  (error %+.6f)", e.tv - exact);
    std::printf("\n");
    std::printf("bytes        %llu per device (%u buckets of %u bits)\n",
                static_cast<unsigned long long>(device_bytes), config.buckets, config.bits);
    std::printf("privacy      %s\n", privacy);
    if (evaluate) std::printf("time         %.3f s\n", seconds);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fedstat-tv: total variation distance from federated data-shift sketches"};
  fedstat::tools::apply_conventions(
      app, "fedstat-tv",
      {"fedstat-tv --p P.txt --q Q.txt                      D_TV at 160 KiB per client, no noise",
       "fedstat-tv --p P.txt --q Q.txt --clients 100 --budget 40960 --epsilon 4 --json",
       "fedstat-tv --p P.txt --q Q.txt --evaluate           also the exact value and the "
       "errors",
       "fedstat-tv --p P.txt --q Q.txt --trust dist --epsilon 3 --clients 20   distributed DP"});
  std::string p_path, q_path, estimator = "both";
  size_t budget = 160 * 1024;
  double epsilon = 0;
  uint32_t clients = 1, rows = 0, width = 0, heap = 0, k = 0, domain = 0, rank = 0, window = 0;
  double tau = 0, heap_fraction = 0.35, noise_margin = 4;
  size_t max_candidates = 0;
  uint64_t seed = 1;
  bool json = false, no_ls = false, secure = false;
  std::string trust;
  DistOptions dist;
  tools::EvaluationOptions evaluation;
  app.add_option("--p", p_path, "distribution P: '<item_id> <count>' lines")->required();
  app.add_option("--q", q_path, "distribution Q: '<item_id> <count>' lines")->required();
  app.add_option("--budget", budget, "device memory per client sketch, bytes")
      ->check(tools::whole_number(1024, kMaxClientBytes))
      ->capture_default_str();
  app.add_option("--estimator", estimator, "topk, hh or both")
      ->check(CLI::IsMember({"topk", "hh", "both"}))
      ->capture_default_str();
  app.add_option("--trust", trust,
                 "none, local (stability histogram per client) or dist (hashed histogram with "
                 "distributed noise); default: local with --epsilon, none without")
      ->check(CLI::IsMember({"none", "local", "dist"}));
  app.add_option("--epsilon", epsilon,
                 "local: the stability histogram's epsilon; dist: epsilon per event (per client "
                 "with --max-events); omit: none")
      ->check(tools::positive_number());
  CLI::Option* buckets_option =
      app.add_option("--buckets", dist.buckets, "dist: buckets B (default: budget / (bits/8))")
          ->check(tools::whole_number(1, sketch::kMaxHashedBuckets));
  CLI::Option* max_events_option =
      app.add_option("--max-events", dist.max_events,
                     "dist: each client adds at most m events (user-level privacy); 0: item level")
          ->check(tools::whole_number(0, 1u << 30));
  CLI::Option* bits_option =
      app.add_option("--bits", dist.bits, "dist: word size of the secure sum, 32 or 64")
          ->check(tools::whole_number(32, 64));
  app.add_option("--clients", clients, "emulated clients per distribution")
      ->check(tools::whole_number(1, kMaxClients))
      ->capture_default_str();
  app.add_option("--seed", seed, "task seed (hashes) and the split into clients")
      ->capture_default_str();
  app.add_option("--domain", domain, "candidates: every id below D instead of the heaps")
      ->check(tools::whole_number(1, kMaxCandidates));
  app.add_option("--rows", rows, "override R");
  app.add_option("--width", width, "override w");
  app.add_option("--heap", heap, "override H");
  app.add_option("--k", k, "override k");
  app.add_option("--rank", rank, "override the top-k rank r0");
  app.add_option("--window", window, "override the top-k window");
  app.add_option("--tau", tau, "override the HH threshold (a finite number above 0)")
      ->check(tools::positive_number());
  app.add_option("--max-candidates", max_candidates, "prune candidates (0: 1.25 w)")
      ->check(tools::whole_number(0, kMaxCandidates));
  app.add_option("--noise-margin", noise_margin, "adaptive rank: threshold over residual noise")
      ->check(tools::positive_number())
      ->capture_default_str();
  app.add_option("--heap-fraction", heap_fraction, "budget share of the heap, in (0, 1)")
      ->check(tools::open_unit_interval())
      ->capture_default_str();
  app.add_flag("--no-least-squares", no_ls, "skip the least-squares re-estimation");
  app.add_flag("--secure", secure,
               "sum the clients' counters through secure aggregation (heaps stay hidden: "
               "needs --domain)");
  evaluation.add_to(app, /*max_runs=*/0);
  app.add_flag("--json", json, "print one JSON object");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;
  try {
    evaluation.check();
    if (trust.empty()) trust = epsilon > 0 ? "local" : "none";
    if (trust == "dist") {
      for (const char* name : {"--rows", "--width", "--heap", "--k", "--domain", "--rank",
                               "--window", "--tau", "--max-candidates", "--noise-margin",
                               "--heap-fraction", "--no-least-squares", "--estimator"}) {
        if (app.count(name)) {
          throw std::invalid_argument(std::string(name) +
                                      " is a sketch option: --trust dist sends no sketch (it "
                                      "takes --buckets, --max-events, --bits)");
        }
      }
      return run_dist(p_path, q_path, budget, epsilon, clients, seed, secure, json, dist,
                      evaluation);
    }
    for (const CLI::Option* o : {buckets_option, max_events_option, bits_option}) {
      if (o->count()) {
        throw std::invalid_argument(o->get_name() + " is for --trust dist only");
      }
    }
    if (trust == "none" && epsilon > 0) {
      throw std::invalid_argument("--trust none adds no noise: drop --epsilon, or use local/dist");
    }
    if (trust == "local" && epsilon <= 0) {
      throw std::invalid_argument("--trust local needs --epsilon E (the stability histogram's)");
    }
    const bool evaluate = evaluation.evaluate();
    if (secure && (domain == 0 || clients < 2)) {
      throw std::invalid_argument(
          "--secure hides the heaps: give --domain D (candidates) and --clients >= 2");
    }
    const auto start = std::chrono::steady_clock::now();
    const ItemCounts p = read_item_counts(p_path);
    const ItemCounts q = read_item_counts(q_path);
    Seed256 task_seed = seed_from_u64(seed ^ 0x7A5C0FFEEull);
    sketch::ShiftSketchParams params = value_or_throw(
        sketch::params_for_budget(budget, task_seed, sketch::BudgetRule{heap_fraction, 4}),
        "budget");
    if (rows) params.rows = rows;
    if (width) params.width = width;
    if (heap) params.heap_capacity = heap;
    if (k) params.k = k;
    check(sketch::validate_params(params), "parameters");
    if (uint64_t{clients} * sketch::shift_sketch_memory_bytes(params) > kMaxClientBytes) {
      throw std::invalid_argument(
          "--clients x the sketch's memory is at most 2 GiB per distribution: lower --clients or "
          "the budget");
    }

    SeededBits split_bits(seed, 7);
    const EmulatedClients p_clients = split_across_clients(p, clients, split_bits.bits());
    const EmulatedClients q_clients = split_across_clients(q, clients, split_bits.bits());
    const auto sketch_start = std::chrono::steady_clock::now();
    NoiseBits& p_noise = evaluation.noise(0, 0);
    NoiseBits& q_noise = evaluation.noise(0, 1);
    const auto p_reports = sketch_clients(p_clients, params, epsilon, p_noise);
    const auto q_reports = sketch_clients(q_clients, params, epsilon, q_noise);
    const double sketch_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sketch_start).count();
    const std::vector<sketch::SketchReport> p_parsed = parse_reports(p_reports);
    const std::vector<sketch::SketchReport> q_parsed = parse_reports(q_reports);
    size_t report = 0;  // the largest report a client sent
    for (const auto* reports : {&p_reports, &q_reports}) {
      for (const auto& bytes : *reports) report = std::max(report, bytes.size());
    }
    const auto estimate_start = std::chrono::steady_clock::now();
    TvOptions options;
    options.least_squares = !no_ls;
    options.domain = domain;
    options.rank = rank;
    options.window = window;
    options.tau = tau;
    options.noise_margin = noise_margin;
    options.max_candidates = max_candidates;
    // Secure aggregation reveals only the summed counters: the heaps stay on the devices, so the
    // candidates come from the known domain.
    auto merge = [&](const std::vector<sketch::SketchReport>& parsed, NoiseBits& noise) {
      if (!secure) return merge_reports(parsed);
      MergedSketch m = merge_reports(parsed);  // validates parameters; counters replaced below
      std::vector<std::vector<uint64_t>> words;
      for (const auto& r : parsed) {
        std::vector<uint64_t> w(m.counters.size());
        for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint64_t>(r.counter(i));
        words.push_back(std::move(w));
      }
      const std::vector<uint64_t> sum = secure_sum(words, 64, noise.session_seed());
      for (size_t i = 0; i < sum.size(); ++i) m.counters[i] = static_cast<int64_t>(sum[i]);
      m.heap_items.clear();
      return m;
    };
    const TvEstimate e = estimate_tv(merge(p_parsed, p_noise), merge(q_parsed, q_noise), options);
    const auto end = std::chrono::steady_clock::now();
    const double estimate_seconds = std::chrono::duration<double>(end - estimate_start).count();
    const double seconds = std::chrono::duration<double>(end - start).count();
    const double exact = evaluate ? exact_tv(p, q) : 0;
    const size_t memory = sketch::shift_sketch_memory_bytes(params);
    const bool want_topk = estimator != "hh", want_hh = estimator != "topk";
    const std::string privacy =
        epsilon > 0 ? "local DP (stability histogram), epsilon " + std::to_string(epsilon) +
                          ", delta 1e-6 per client"
                    : "none: the sketches are not noised (give --epsilon for local DP)";
    if (json) {
      nlohmann::json out;
      out["topk"] = want_topk ? nlohmann::json(e.topk) : nlohmann::json(nullptr);
      out["hh"] = want_hh ? nlohmann::json(e.hh) : nlohmann::json(nullptr);
      if (evaluate) {
        out["exact"] = exact;
        out["topk_error"] = want_topk ? nlohmann::json(e.topk - exact) : nlohmann::json(nullptr);
        out["hh_error"] = want_hh ? nlohmann::json(e.hh - exact) : nlohmann::json(nullptr);
      }
      out["bytes"] = memory;
      out["report_bytes"] = report;
      out["params"] = {
          {"rows", params.rows},
          {"width", params.width},
          {"heap", params.heap_capacity},
          {"k", params.k},
          {"rank", e.rank},
          {"window", e.window},
          {"tau", e.tau},
          {"candidates", e.candidates},
          {"clients", clients},
          {"epsilon", epsilon > 0 ? nlohmann::json(epsilon) : nlohmann::json(nullptr)}};
      out["privacy"] = privacy;
      out["noise"] = evaluation.noise_name();
      if (evaluate) {
        out["seconds"] = seconds;
        out["sketch_seconds"] = sketch_seconds;
        out["estimate_seconds"] = estimate_seconds;
      }
      std::printf("%s\n", out.dump().c_str());
    } else {
      if (evaluate) std::printf("exact D_TV   %.6f (evaluation)\n", exact);
      if (want_topk) {
        std::printf("top-k        %.6f", e.topk);
        if (evaluate) std::printf("  (error %+.6f)", e.topk - exact);
        std::printf("\n");
      }
      if (want_hh) {
        std::printf("HH           %.6f", e.hh);
        if (evaluate) std::printf("  (error %+.6f)", e.hh - exact);
        std::printf("\n");
      }
      std::printf("bytes        %zu of device memory per client sketch, report %zu bytes\n", memory,
                  report);
      std::printf(
          "params       R %u, w %u, H %u, k %u; top-k ranks %u..%u; HH tau %.3g; "
          "%zu candidates\n",
          params.rows, params.width, params.heap_capacity, params.k, e.rank, e.rank + e.window - 1,
          e.tau, e.candidates);
      std::printf("privacy      %s\n", privacy.c_str());
      if (evaluate) {
        std::printf("time         %.3f s (clients sketching %.3f s, host estimation %.3f s)\n",
                    seconds, sketch_seconds, estimate_seconds);
      }
    }
    return 0;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "fedstat-tv: %s\n", ex.what());
    return 1;
  }
}
