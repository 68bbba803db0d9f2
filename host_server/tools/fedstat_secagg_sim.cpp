// fedstat-secagg-sim: one secure-aggregation session (Bonawitz et al. 2017) in one process —
// SDK clients and the host server exchanging real encoded messages — with A, B, C clients
// dropping before rounds 1, 2, 3. Prints whether the unmasked sum equals the plain sum of the
// inputs the server received (or that the round aborted), bytes sent per client and time per round.
//
//   fedstat-secagg-sim --clients N [--graph complete|sparse] [--threshold T] [--degree K]
//                      [--dropout-rate D] [--corrupt-fraction G] --length L [--bits 32|64]
//                      [--drop-r1 A] [--drop-r2 B] [--drop-r3 C] [--seed S] [--threads P] [--json]
//                      [--signed [--drop-consistency D]]
//
// --graph: complete (every client shares with every other; N ≤ 1024; T required) or sparse
// (SecAgg+: each client shares with its K ring neighbours, sdk/secagg/graph.h; K and T chosen by
// sdk/secagg/graph_parameters.h for N, the dropout rate D and the corrupt fraction G, both 0.05 by
// default — or given; with --signed the smallest (K, T) that also meets the devices' signed rule
// 2T > K + ⌈G·N⌉, secagg::choose_signed_sparse_graph). The default: sparse above 1024 clients,
// complete otherwise.
// Bounds (host_server/secagg/secagg_simulation.h), refused with a message and a non-zero exit
// status, so that no request does unbounded work: 2 ≤ N ≤ 1024 (complete) or ≤ 100,000 (sparse),
// 2 ≤ T ≤ N, 1 ≤ L ≤ 2^20 = 1048576, N·(roster entries) ≤ 2^27 shares; droppers A + B + C ≤ N.
//
// --signed (protocol 5, issue 42): a signed session — a seeded CA issues every client a credential,
// keys are signed and checked, and the consistency round runs between U3 and the reveals; D more
// clients sign U3 and then drop (--drop-consistency). It then also runs the same session unsigned
// and prints both, bytes and client CPU per surviving client (the cost of signing).
//
// JSON keys: ok, aborted, bytes_per_client, seconds (total), plus survivors, abort_reason, graph,
// degree, threshold, roster_entries, bytes_per_round, client_seconds_per_round,
// server_seconds_per_round, server_seconds, client_seconds, peak_rss_bytes (the whole process:
// the server and every simulated client); with --signed also consistency_bytes,
// consistency_received_bytes, consistency_client_seconds, consistency_server_seconds and
// "unsigned": {ok, bytes_per_client, client_seconds} of the same session without signing.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "host_server/secagg/secagg_simulation.h"
#include "host_server/tools/cli_conventions.h"
#include "nlohmann/json.hpp"
#include "sdk/secagg/graph_parameters.h"
#include "sdk/secagg/signed_keys.h"

int main(int argc, char** argv) {
  CLI::App app{"fedstat-secagg-sim: a secure-aggregation session with dropouts"};
  fedstat::tools::apply_conventions(app, "fedstat-secagg-sim",
                                    {"fedstat-secagg-sim --clients 7 --threshold 4 --length 130",
                                     "fedstat-secagg-sim --clients 100 --threshold 60 --length "
                                     "1000 --drop-r1 5 --drop-r2 5 --drop-r3 5 --json"});
  fedstat::host::SecAggSimConfig config;
  config.threshold = 0;
  config.threads = std::max(1u, std::min(64u, std::thread::hardware_concurrency()));
  bool json = false;
  std::string graph;
  double dropout_rate = 0.05, corrupt_fraction = 0.05;
  using fedstat::host::kMaxSimLength;
  using fedstat::host::kMaxSimSparseClients;
  app.add_option("--clients", config.clients,
                 "number of clients N (2..1024 complete, 2..100000 sparse)")
      ->required()
      ->check(CLI::Range(2u, kMaxSimSparseClients));
  app.add_option("--graph", graph, "complete or sparse (default: sparse above 1024 clients)")
      ->check(CLI::IsMember({"complete", "sparse"}));
  app.add_option("--threshold", config.threshold,
                 "threshold T (complete: N/2 < T <= N, required; sparse: chosen unless given)")
      ->check(CLI::Range(2u, kMaxSimSparseClients));
  app.add_option("--degree", config.degree, "sparse: the degree K (even; chosen unless given)")
      ->check(CLI::Range(2u, 1022u));
  app.add_option("--dropout-rate", dropout_rate, "sparse: the dropout rate the graph is chosen for")
      ->check(CLI::Range(0.0, 0.99))
      ->capture_default_str();
  app.add_option("--corrupt-fraction", corrupt_fraction,
                 "sparse: the corrupt fraction the graph is chosen for")
      ->check(CLI::Range(0.0, 0.99))
      ->capture_default_str();
  app.add_option("--length", config.length, "vector length L (1..2^20)")
      ->required()
      ->check(CLI::Range(1u, kMaxSimLength));
  app.add_option("--bits", config.bits, "sum modulo 2^bits (32 or 64)")
      ->check(CLI::IsMember({32, 64}))
      ->capture_default_str();
  app.add_option("--drop-r1", config.drop_before_sharing, "clients dropping before round 1");
  app.add_option("--drop-r2", config.drop_before_masking, "clients dropping before round 2");
  app.add_option("--drop-r3", config.drop_before_unmasking, "clients dropping before round 3");
  app.add_option("--seed", config.seed, "seed of keys, inputs and droppers")->capture_default_str();
  app.add_option("--threads", config.threads, "clients computing at once (1..64; default: cores)")
      ->check(CLI::Range(1u, 64u));
  app.add_flag("--json", json, "print one JSON object");
  app.add_flag("--signed", config.signed_keys,
               "a signed session with the consistency round (protocol 5); also runs it unsigned");
  app.add_option("--drop-consistency", config.drop_after_consistency,
                 "signed: clients dropping after signing U3, before revealing");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;
  if (graph.empty()) graph = config.clients > fedstat::host::kMaxSimClients ? "sparse" : "complete";
  if (graph == "complete") {
    if (config.degree != 0) {
      std::fprintf(stderr, "fedstat-secagg-sim: --degree is for --graph sparse\n");
      return 2;
    }
    if (config.threshold == 0) {
      std::fprintf(stderr, "fedstat-secagg-sim: --graph complete needs --threshold\n");
      return 2;
    }
  } else {
    if (config.degree % 2 != 0) {
      std::fprintf(stderr,
                   "fedstat-secagg-sim: --degree %u is odd; the sparse graph's degree is even (K/2 "
                   "neighbours on each side of the ring): use %u or %u\n",
                   config.degree, config.degree - 1, config.degree + 1);
      return 2;
    }
    fedstat::secagg::SecAggThreatModel model;
    model.dropout_ppm = static_cast<uint32_t>(std::lround(dropout_rate * 1e6));
    model.corrupt_ppm = static_cast<uint32_t>(std::lround(corrupt_fraction * 1e6));
    // Signed: the devices' rule 2t > k + ceil(gamma n) too (sdk/secagg/signed_keys.h), as the
    // server plans a signed sparse task.
    const auto chosen = config.signed_keys
                            ? fedstat::secagg::choose_signed_sparse_graph(config.clients, model)
                            : fedstat::secagg::choose_sparse_graph(config.clients, model);
    if (config.degree == 0 || config.threshold == 0) {
      if (!chosen.ok()) {
        std::fprintf(stderr,
                     "fedstat-secagg-sim: no %ssparse graph meets the bound for %u clients at "
                     "dropout rate %g and corrupt fraction %g (%s); use --graph complete or %s\n",
                     config.signed_keys ? "signed " : "", config.clients, dropout_rate,
                     corrupt_fraction, chosen.status().message(),
                     config.signed_keys ? "fewer --clients" : "give --degree and --threshold");
        return 2;
      }
      if (config.degree == 0) config.degree = chosen.value().degree;
      if (config.threshold == 0) config.threshold = chosen.value().threshold;
    }
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    const fedstat::host::SecAggSimResult r = fedstat::host::run_secagg_simulation(config);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto client_total = [](const fedstat::host::SecAggSimResult& result) {
      double total = result.consistency_client_seconds;
      for (int k = 0; k < 4; ++k) total += result.client_seconds[k];
      return total;
    };
    fedstat::host::SecAggSimResult plain;
    if (config.signed_keys) {  // the same session unsigned: what signing costs
      fedstat::host::SecAggSimConfig unsigned_config = config;
      unsigned_config.signed_keys = false;
      unsigned_config.drop_before_unmasking += unsigned_config.drop_after_consistency;
      unsigned_config.drop_after_consistency = 0;
      plain = fedstat::host::run_secagg_simulation(unsigned_config);
    }
    const char* rounds[4] = {"advertise keys", "share keys", "masked input", "unmasking"};
    if (json) {
      nlohmann::json out;
      out["ok"] = r.ok;
      out["graph"] = config.degree == 0 ? "complete" : "sparse";
      out["degree"] = config.degree;
      out["threshold"] = config.threshold;
      out["roster_entries"] = r.roster_entries;
      double server = 0, client = 0;
      for (int k = 0; k < 4; ++k) {
        server += r.server_seconds[k];
        client += r.client_seconds[k];
      }
      out["server_seconds"] = server;
      out["client_seconds"] = client;
      struct rusage usage {};
      getrusage(RUSAGE_SELF, &usage);
      out["peak_rss_bytes"] = static_cast<double>(usage.ru_maxrss) * 1024.0;
      out["aborted"] = r.aborted;
      out["abort_reason"] = r.abort_reason;
      out["survivors"] = r.survivors;
      out["bytes_per_client"] = r.bytes_per_client;
      out["seconds"] = seconds;
      out["bytes_per_round"] = r.bytes_per_round;
      out["client_seconds_per_round"] = r.client_seconds;
      out["server_seconds_per_round"] = r.server_seconds;
      if (config.signed_keys) {
        out["consistency_bytes"] = r.consistency_bytes;
        out["consistency_received_bytes"] = r.consistency_received_bytes;
        out["consistency_client_seconds"] = r.consistency_client_seconds;
        out["consistency_server_seconds"] = r.consistency_server_seconds;
        out["client_seconds"] = client_total(r);
        out["unsigned"] = {{"ok", plain.ok},
                           {"bytes_per_client", plain.bytes_per_client},
                           {"client_seconds", client_total(plain)}};
      }
      std::printf("%s\n", out.dump().c_str());
    } else if (r.aborted) {
      std::printf("aborted: %s (nothing was unmasked)\n", r.abort_reason.c_str());
    } else {
      std::printf("%s: the unmasked sum %s the plain sum of the %u inputs the server received\n",
                  r.ok ? "ok" : "MISMATCH", r.ok ? "equals" : "differs from", r.survivors);
      if (config.degree != 0) {
        std::printf("sparse graph: degree %u, threshold %u (roster of %u entries per client)\n",
                    config.degree, config.threshold, r.roster_entries);
      }
      std::printf("bytes sent per surviving client: %.0f\n", r.bytes_per_client);
      for (int k = 0; k < 4; ++k) {
        std::printf("round %d (%s): %.0f bytes, client %.4f s, server %.4f s\n", k, rounds[k],
                    r.bytes_per_round[k], r.client_seconds[k], r.server_seconds[k]);
      }
      if (config.signed_keys) {
        std::printf(
            "consistency round: %.0f bytes sent, %.0f bytes received, client %.4f s, server "
            "%.4f s\n",
            r.consistency_bytes, r.consistency_received_bytes, r.consistency_client_seconds,
            r.consistency_server_seconds);
        std::printf("signed:   %.0f bytes sent per surviving client, client CPU %.4f s\n",
                    r.bytes_per_client, client_total(r));
        std::printf("unsigned: %.0f bytes sent per surviving client, client CPU %.4f s (%s)\n",
                    plain.bytes_per_client, client_total(plain),
                    plain.aborted ? "aborted"
                    : plain.ok    ? "ok"
                                  : "MISMATCH");
      }
      std::printf("total %.3f s\n", seconds);
    }
    return r.aborted || r.ok ? 0 : 1;
  } catch (const std::invalid_argument& e) {
    // Name the graph the request came to, with what was chosen for it.
    if (config.degree != 0) {
      std::fprintf(stderr, "fedstat-secagg-sim: %s (sparse graph: degree %u, threshold %u)\n",
                   e.what(), config.degree, config.threshold);
    } else {
      std::fprintf(stderr, "fedstat-secagg-sim: %s\n", e.what());
    }
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-secagg-sim: %s\n", e.what());
    return 2;
  }
}
