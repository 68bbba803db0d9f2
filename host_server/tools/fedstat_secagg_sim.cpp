// fedstat-secagg-sim: one secure-aggregation session (Bonawitz et al. 2017) in one process —
// SDK clients and the host server exchanging real encoded messages — with A, B, C clients
// dropping before rounds 1, 2, 3. Prints whether the unmasked sum equals the plain sum of the
// inputs the server received (or that the round aborted), bytes sent per client and time per round.
//
//   fedstat-secagg-sim --clients N --threshold T --length L [--bits 32|64] [--drop-r1 A]
//                      [--drop-r2 B] [--drop-r3 C] [--seed S] [--json]
//
// Bounds (host_server/secagg/secagg_simulation.h), refused with a message and a non-zero exit
// status, so that no request does unbounded work: 2 ≤ N ≤ 1024, 2 ≤ T ≤ N, 1 ≤ L ≤ 2^20 = 1048576,
// and N·L ≤ 2^26 = 67108864 words; droppers A + B + C ≤ N.
//
// JSON keys: ok, aborted, bytes_per_client, seconds (total), plus survivors, abort_reason,
// bytes_per_round, client_seconds_per_round, server_seconds_per_round.
#include <chrono>
#include <cstdio>

#include "CLI/CLI.hpp"
#include "host_server/secagg/secagg_simulation.h"
#include "host_server/tools/cli_conventions.h"
#include "nlohmann/json.hpp"

int main(int argc, char** argv) {
  CLI::App app{"fedstat-secagg-sim: a secure-aggregation session with dropouts"};
  fedstat::tools::apply_conventions(app, "fedstat-secagg-sim",
                                    {"fedstat-secagg-sim --clients 7 --threshold 4 --length 130",
                                     "fedstat-secagg-sim --clients 100 --threshold 60 --length "
                                     "1000 --drop-r1 5 --drop-r2 5 --drop-r3 5 --json"});
  fedstat::host::SecAggSimConfig config;
  bool json = false;
  using fedstat::host::kMaxSimClients;
  using fedstat::host::kMaxSimLength;
  app.add_option("--clients", config.clients, "number of clients N (2..1024)")
      ->required()
      ->check(CLI::Range(2u, kMaxSimClients));
  app.add_option("--threshold", config.threshold, "threshold T (N/2 < T <= N, T >= 2)")
      ->required()
      ->check(CLI::Range(2u, kMaxSimClients));
  app.add_option("--length", config.length, "vector length L (1..2^20; N*L <= 2^26)")
      ->required()
      ->check(CLI::Range(1u, kMaxSimLength));
  app.add_option("--bits", config.bits, "sum modulo 2^bits (32 or 64)")
      ->check(CLI::IsMember({32, 64}))
      ->capture_default_str();
  app.add_option("--drop-r1", config.drop_before_sharing, "clients dropping before round 1");
  app.add_option("--drop-r2", config.drop_before_masking, "clients dropping before round 2");
  app.add_option("--drop-r3", config.drop_before_unmasking, "clients dropping before round 3");
  app.add_option("--seed", config.seed, "seed of keys, inputs and droppers")->capture_default_str();
  app.add_flag("--json", json, "print one JSON object");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;
  try {
    const auto start = std::chrono::steady_clock::now();
    const fedstat::host::SecAggSimResult r = fedstat::host::run_secagg_simulation(config);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const char* rounds[4] = {"advertise keys", "share keys", "masked input", "unmasking"};
    if (json) {
      nlohmann::json out;
      out["ok"] = r.ok;
      out["aborted"] = r.aborted;
      out["abort_reason"] = r.abort_reason;
      out["survivors"] = r.survivors;
      out["bytes_per_client"] = r.bytes_per_client;
      out["seconds"] = seconds;
      out["bytes_per_round"] = r.bytes_per_round;
      out["client_seconds_per_round"] = r.client_seconds;
      out["server_seconds_per_round"] = r.server_seconds;
      std::printf("%s\n", out.dump().c_str());
    } else if (r.aborted) {
      std::printf("aborted: %s (nothing was unmasked)\n", r.abort_reason.c_str());
    } else {
      std::printf("%s: the unmasked sum %s the plain sum of the %u inputs the server received\n",
                  r.ok ? "ok" : "MISMATCH", r.ok ? "equals" : "differs from", r.survivors);
      std::printf("bytes sent per surviving client: %.0f\n", r.bytes_per_client);
      for (int k = 0; k < 4; ++k) {
        std::printf("round %d (%s): %.0f bytes, client %.4f s, server %.4f s\n", k, rounds[k],
                    r.bytes_per_round[k], r.client_seconds[k], r.server_seconds[k]);
      }
      std::printf("total %.3f s\n", seconds);
    }
    return r.aborted || r.ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-secagg-sim: %s\n", e.what());
    return 2;
  }
}
