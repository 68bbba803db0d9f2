// fedstat-netfault: one hostile peer (or crowd of them) against a running fedstat-server, one
// attack per run, and what the server did about it — for the network-fault tests
// (tests/emulation/netfault_test.sh, label netfault) and for trying a server by hand.
//
//   fedstat-netfault --attack KIND --server HOST:PORT [--fleet-secret HEX --id ID]
//                    [--seconds S] [--count N] [--interval-ms MS] [--wait-seconds W]
//                    [--source ADDRESS] [--no-reopen] [--ready-file PATH] [--stop-file PATH]
//                    [--watch-pid PID] [--json]
//
// Attacks (each runs for --seconds — then, with --stop-file, until that file exists — and then
// waits up to --wait-seconds for the server to close what is still open; a connection the server
// closes while the attack runs is opened again, unless --no-reopen or slot_hog):
//   silent            --count (1) TCP connections that send nothing
//   slowloris         --count (1) TCP connections sending a real TLS ClientHello (an mbedTLS
//                     client's, as a device's) one byte every --interval-ms (1000)
//   idle_flood        --count (1000) TCP connections opened at once, sending nothing
//   huge_frame        a device (--id, --fleet-secret) completes the TLS-PSK handshake and sends,
//                     inside TLS, a frame prefix announcing 2^32 bytes (the varint 80 80 80 80 10);
//                     again every --interval-ms (200)
//   hello_flood       --count (1) workers, each checking in as device --id back to back as fast as
//                     they can: TLS-PSK (the SDK's TlsPskChannel), ClientHello, the first answer,
//                     close
//   drop_every_round  device --id checks in, takes its Task and TaskData, and drops without a
//                     reply; again every --interval-ms (100)
//   handshake_flood   --count (1) workers, each opening a TCP connection, sending a real TLS
//                     ClientHello (no credential needed) in one write, reading the server's first
//                     answer (its ServerHello .. ServerHelloDone: the server made a key pair) or
//                     its close, and closing — back to back as fast as they can
//   slot_hog          --count (1) connections as device --id, opened one after another, each
//                     completing the TLS-PSK handshake and then sending, every --interval-ms
//                     (500), a frame that is not a ClientHello (an Ack) — never checking in, never
//                     idle; the server's answers are read and dropped, and a connection the
//                     server closes is not opened again (how many it keeps is what this measures)
// --source ADDRESS   the local address the attack's TCP connections are made from (e.g. a
//                    non-loopback one, which a per-address limit applies to)
// --no-reopen        silent, slowloris, idle_flood: a connection the server closes is not opened
//                    again (what the server keeps of one wave is then what still_open counts)
// --ready-file PATH  written ("ready") once the attack is under way: every connection of the first
//                    wave open (raw attacks), or the first session done (the others)
// --stop-file PATH   after --seconds, the attack goes on until PATH exists (at most 600 s in all)
// --watch-pid PID    samples the server's VmRSS, open descriptors and CPU time (/proc/PID) every
//                    50 ms
//
// --json prints one object. Always: attack, seconds, connections (opened), connect_failures.
// Raw attacks (silent, slowloris, idle_flood): closed_by_server, still_open (open when the wait
// ended: the server never closed them), peak_open, lifetime_ms {min, median, max} (connect to
// the server's close), bytes_sent, bytes_received. huge_frame: attempts, handshake_failures,
// closed_by_server, still_open, close_ms {min, median, max} (prefix sent to the server's close),
// bytes_received (plaintext the server sent before closing). hello_flood, drop_every_round:
// sessions, sessions_per_second, handshake_failures, offered (answered with a Task), rate_limited
// (RETRY_LATER for too many check-ins), refused (any other ServerError, by detail in
// "refusals"), errors, offered_before_first_limit, task_id. handshake_flood: attempts, answered
// (the server sent its handshake answer), closed_unanswered (closed with no byte: refused before
// any TLS work), attempts_per_second, answered_per_second. slot_hog: handshake_failures,
// handshake_errors, closed_by_server, still_open, lifetime_ms {min, median, max} (the handshake's
// end to the server's close), frames_sent, bytes_received. With --watch-pid: server
// {rss_before_kb, rss_max_kb, fds_before, fds_max, cpu_seconds (user + system during the
// attack), samples}.
// Exit codes: 0 the attack ran (whatever the server did: see the JSON); 1 a runtime failure; 2
// usage.

// The pieces (host_server/testing): netfault_support.h (clocks, TCP, pacing, TLS-PSK on
// mbedTLS), netfault_server_watch.h (--watch-pid), netfault_attacks.h (the attacks:
// netfault_raw.cpp, netfault_tls.cpp, netfault_check_in.cpp).

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "host_server/net/credentials.h"
#include "host_server/server_config.h"
#include "host_server/testing/netfault_attacks.h"
#include "host_server/testing/netfault_server_watch.h"
#include "host_server/testing/netfault_support.h"
#include "host_server/tools/cli_conventions.h"
#include "nlohmann/json.hpp"

using namespace fedstat;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

using netfault::captured_client_hello;
using netfault::check_in_attack;
using netfault::Endpoint;
using netfault::handshake_flood_attack;
using netfault::huge_frame_attack;
using netfault::PskClientConfig;
using netfault::raw_attack;
using netfault::RawOptions;
using netfault::ServerWatch;
using netfault::slot_hog_attack;
using netfault::split_endpoint;

namespace {

void raise_descriptor_limit(size_t wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t target = std::min<rlim_t>(limit.rlim_max, static_cast<rlim_t>(wanted));
  if (limit.rlim_cur < target) {
    limit.rlim_cur = target;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "fedstat-netfault: one network fault against a running fedstat-server (a silent peer, a "
      "slowloris, 1,000 idle connections, a 4 GiB frame header, a check-in flood, a device that "
      "drops in every round, one credential's connections that never check in) and what the "
      "server did about it."};
  fedstat::tools::apply_conventions(
      app, "fedstat-netfault",
      {"fedstat-netfault --attack idle_flood --server 127.0.0.1:7443 --count 1000 --seconds 10 "
       "--watch-pid $(pidof fedstat-server) --json",
       "fedstat-netfault --attack hello_flood --server 127.0.0.1:7443 --fleet-secret "
       "$(cat fleet.key) --id 9001 --seconds 10 --json"},
      {{0, "the attack ran, whatever the server did (see the JSON)"},
       {1, "a runtime failure (the reason is on stderr)"},
       {2, "the command line was wrong"}});
  std::string attack, server, secret_hex, ready_file, stop_file, source;
  uint64_t id = 900001;
  double seconds = 10, wait_seconds = 30;
  size_t count = 0;
  uint32_t interval_ms = 0;
  int watch_pid = 0;
  bool json_output = false;
  app.add_option("--attack", attack, "the fault")
      ->required()
      ->check(CLI::IsMember({"silent", "slowloris", "idle_flood", "huge_frame", "hello_flood",
                             "drop_every_round", "handshake_flood", "slot_hog"}));
  app.add_option("--server", server, "the server's HOST:PORT")->required();
  app.add_option("--fleet-secret", secret_hex,
                 "64 hex digits: the device key is HKDF(secret, id) (huge_frame, hello_flood, "
                 "drop_every_round, slot_hog)");
  app.add_option("--id", id, "the device id (PSK identity) the attack uses")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 62));
  app.add_option("--seconds", seconds, "how long the attack goes on")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--count", count,
                 "connections at once (silent, slowloris, slot_hog: 1; idle_flood: 1000) or "
                 "workers (hello_flood: 1)")
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  app.add_option("--interval-ms", interval_ms,
                 "slowloris: between bytes (1000); huge_frame: between attempts (200); "
                 "drop_every_round: between check-ins (100); hello_flood: between a worker's "
                 "check-ins (0); slot_hog: between frames (500)")
      ->check(CLI::Range(0u, 600000u));
  app.add_option("--wait-seconds", wait_seconds,
                 "after --seconds, how long to wait for the server to close what is still open")
      ->check(CLI::Range(0.0, 3600.0));
  app.add_option("--source", source, "the local address to connect from");
  bool no_reopen = false;
  app.add_flag("--no-reopen", no_reopen,
               "silent, slowloris, idle_flood: do not open again what the server closes");
  app.add_option("--ready-file", ready_file, "written once the attack is under way");
  app.add_option("--stop-file", stop_file,
                 "after --seconds, go on until this file exists (at most 600 s in all)");
  app.add_option("--watch-pid", watch_pid, "the server's process id: sample its memory and fds")
      ->check(CLI::Range(1, 1 << 30));
  app.add_flag("--json", json_output, "print one JSON object");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;
  try {
    const Endpoint endpoint = split_endpoint(server);
    // slowloris sends only a ClientHello, which carries no key (TLS 1.2 names the PSK identity
    // later, in the ClientKeyExchange): any key builds it.
    const bool needs_key = attack != "silent" && attack != "idle_flood" && attack != "slowloris" &&
                           attack != "handshake_flood";
    if (needs_key && secret_hex.empty()) {
      throw std::invalid_argument("--attack " + attack + " needs --fleet-secret");
    }
    const net::DevicePsk psk =
        needs_key ? net::derive_device_psk(host::parse_hex32(secret_hex, "--fleet-secret"), id)
                  : net::DevicePsk{};
    const std::string identity = std::to_string(id);
    if (count == 0) count = attack == "idle_flood" ? 1000 : 1;
    raise_descriptor_limit(count + 64);

    ServerWatch watch(watch_pid);
    json out;
    if (attack == "silent" || attack == "slowloris" || attack == "idle_flood") {
      RawOptions o;
      o.count = count;
      o.seconds = seconds;
      o.wait_seconds = wait_seconds;
      o.ready_file = ready_file;
      o.stop_file = stop_file;
      o.source = source;
      o.reopen = !no_reopen;
      if (attack == "slowloris") {
        PskClientConfig config(identity, psk);
        o.trickle = captured_client_hello(config);
        o.trickle_ms = interval_ms != 0 ? interval_ms : 1000;
      }
      out = raw_attack(endpoint, o);
      if (attack == "slowloris") out["client_hello_bytes"] = o.trickle.size();
    } else if (attack == "handshake_flood") {
      PskClientConfig config(identity, psk);
      out = handshake_flood_attack(endpoint, source, captured_client_hello(config), count, seconds,
                                   ready_file, stop_file);
    } else if (attack == "slot_hog") {
      out = slot_hog_attack(endpoint, source, identity, psk, count, seconds, wait_seconds,
                            interval_ms ? interval_ms : 500, ready_file, stop_file);
    } else if (attack == "huge_frame") {
      out = huge_frame_attack(endpoint, identity, psk, seconds, interval_ms ? interval_ms : 200,
                              ready_file, stop_file);
    } else {
      const bool drop = attack == "drop_every_round";
      const uint32_t pace = drop ? (interval_ms ? interval_ms : 100) : interval_ms;
      out = check_in_attack(server, id, psk, seconds, count, pace, drop, ready_file, stop_file);
    }
    watch.finish();
    out["attack"] = attack;
    out["id"] = needs_key ? json(id) : json();
    out["count"] = count;
    if (watch_pid != 0) out["server"] = watch.report();
    if (json_output) {
      std::cout << out.dump() << "\n";
    } else {
      std::cout << attack << ": " << out.dump(2) << "\n";
    }
    return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fedstat-netfault: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-netfault: %s\n", e.what());
    return 1;
  }
}
