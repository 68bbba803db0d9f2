// The scale benchmark (issue 43 item 5, one node today, N nodes later): a fleet of 10^4–10^5
// lightweight emulated devices (scale_fleet.h: real Clients over real TLS-PSK, sharing worker
// threads, each reporting once) reports to fedstat-server child processes (the built binary),
// whose store is SQLite and then a throw-away PostgreSQL 15 cluster — the SQLite run is the
// baseline, run first in the same process, and the PostgreSQL figures are also printed as ratios
// against it.
//
//   fedstat_scale_bench [--devices 10000[,100000]] [--stores sqlite,postgresql]
//       [--kind kl|data_shift] [--trust trusted|none] [--workers 64] [--round-size 1000]
//       [--nodes 1] [--new] [--seed 17] [--postgres-dir DIR]
//
// A plain program, not Google Benchmark: one configuration is one fleet run of minutes (one
// iteration; repeating it costs a fleet of handshakes each time), the PostgreSQL one needs a
// cluster started and stopped around it, and the figures are per run, not per iteration.
//
// Per configuration it prints (text; the SQLite line first):
//   reports/s                  devices ÷ the fleet's wall time (first device starts → last Ack)
//   server us CPU/report       the server process's CPU clock (all threads) over the run ÷ reports
//   postgres us CPU/report     the cluster's processes (scale_meters.h) over the run ÷ reports
//   devices us CPU/report      this process (the devices: Client, TLS) over the run ÷ reports
//   db B/report                store bytes after − before ÷ reports: SQLite file + WAL; PostgreSQL
//                              pg_database_size, and its WAL written beside it
//   p50/p99 ack ms             per device: its last Report chunk sent → the Ack of the whole report
// Not measured: the warm-up (each returning device's first, full TLS handshake) and the server's
// start-up. The task: kl trusted (300 rounds, ≤ 301 words, 5 chunks) by default, or data_shift
// none (a 5 × 512 sketch, 40 chunks). A trusted or none task takes at most 1024 devices
// (task_plan.h), so the fleet reports into ⌈devices / round_size⌉ tasks (--round-size, 1000 by
// default), each min_clients = max_clients = its share, all open at once: the server offers a
// device the first with room, and each round closes as its last report is stored. The run fails
// (exit 1) unless every device's report was acknowledged, every returning device resumed its
// TLS session, every round completed (the server's log) and every server exited cleanly. On a
// shared machine the wall rates are bounds, the CPU figures are the measure: the load average is
// printed before and after.
//
// N nodes: --nodes N starts N servers on the same store and spreads the devices over their
// endpoints by the seed (ScaleFleet). Several nodes on one store are not built yet
// (docs/scale_out.md), so N > 1 is refused today.
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/hex.h"
#include "host_server/sim/emulated_device.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"
#include "platform/posix/posix_platform.h"
#include "sdk/client/client.h"
#include "tests/bench/scale_fleet.h"
#include "tests/bench/scale_meters.h"
#include "tests/common/server_process.h"

namespace fedstat {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

struct Options {
  std::vector<uint32_t> devices{10000};
  std::vector<std::string> stores{"sqlite", "postgresql"};
  std::string kind = "kl";
  std::string trust;  // default: trusted for kl, none for data_shift
  size_t workers = 64;
  uint32_t round_size = 1000;  // devices a task takes (≤ 1024 outside DIST: task_plan.h)
  uint32_t nodes = 1;
  bool returning = true;
  uint64_t seed = 17;
  std::string postgres_dir;  // the cluster's directory (default: a fresh one under /tmp)
};

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "fedstat_scale_bench: %s\nusage: fedstat_scale_bench [--devices N[,N...]] "
               "[--stores sqlite,postgresql] [--kind kl|data_shift] [--trust trusted|none] "
               "[--workers W] [--round-size R] [--nodes N] [--new] [--seed S] "
               "[--postgres-dir DIR]\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--new") {
      o.returning = false;
      continue;
    }
    if (i + 1 >= argc) usage(flag + " needs a value");
    const std::string value = argv[++i];
    try {
      if (flag == "--devices") {
        o.devices.clear();
        for (const std::string& n : split(value)) o.devices.push_back(std::stoul(n));
      } else if (flag == "--stores") {
        o.stores = split(value);
      } else if (flag == "--kind") {
        o.kind = value;
      } else if (flag == "--trust") {
        o.trust = value;
      } else if (flag == "--workers") {
        o.workers = std::stoul(value);
      } else if (flag == "--round-size") {
        o.round_size = static_cast<uint32_t>(std::stoul(value));
      } else if (flag == "--nodes") {
        o.nodes = static_cast<uint32_t>(std::stoul(value));
      } else if (flag == "--postgres-dir") {
        o.postgres_dir = value;
      } else if (flag == "--seed") {
        o.seed = std::stoull(value);
      } else {
        usage("unknown option " + flag);
      }
    } catch (const std::logic_error&) {
      usage("bad value for " + flag + ": " + value);
    }
  }
  if (o.kind != "kl" && o.kind != "data_shift") usage("--kind is kl or data_shift");
  if (o.trust.empty()) o.trust = o.kind == "kl" ? "trusted" : "none";
  if (o.trust != "trusted" && o.trust != "none") {
    usage("--trust is trusted or none (a DIST round of 10^5 devices costs hours of X25519)");
  }
  for (uint32_t n : o.devices) {
    if (n < 2 || n > 1000000) usage("--devices: 2 to 10^6 each");
  }
  for (const std::string& s : o.stores) {
    if (s != "sqlite" && s != "postgresql") usage("--stores: sqlite and/or postgresql");
  }
  if (o.workers < 1 || o.workers > 4000) usage("--workers: 1 to 4000");
  if (o.round_size < 2 || o.round_size > 1024) {
    usage("--round-size: 2 to 1024 (a trusted or none task takes at most 1024 devices)");
  }
  if (o.nodes < 1) usage("--nodes: at least 1");
  if (o.nodes > 1) {
    usage("--nodes " + std::to_string(o.nodes) +
          ": several fedstat-server nodes on one store are not built yet (docs/scale_out.md, "
          "status); only 1 runs today");
  }
  return o;
}

// Task `id`, a round of `devices`: min = max = devices, every time-out well beyond the run.
json declaration(const Options& o, uint32_t id, uint32_t devices) {
  json task{{"id", id},
            {"min_clients", devices},
            {"max_clients", devices},
            {"deadline_seconds", 3600},
            {"admission_seconds", 3600},
            {"phase_timeout_seconds", 3600},
            {"seed", std::string(62, '0') + "31"},
            {"kind", o.kind},
            {"trust", o.trust}};
  if (o.trust == "none") {
    task.update({{"epsilon", 0}, {"delta", 0}});
  } else {
    task.update({{"epsilon", 4.0}, {"delta", 1e-6}});
  }
  if (o.kind == "data_shift") {
    task["data_shift"] = {
        {"rows", 5},     {"width", 512},       {"heap_capacity", 64},         {"k", 1024},
        {"domain", 600}, {"local_epsilon", 0}, {"reference", "reference.txt"}};
  } else {
    task["kl"] = {{"reference", "reference.txt"}, {"rounds", 300}, {"lambda", 0.1}};
  }
  return task;
}

fs::path fresh_directory(const std::string& parent, const std::string& stem) {
  std::string pattern = parent + "/" + stem + "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern);
  return pattern;
}

// A throw-away PostgreSQL cluster (tests/store/postgres_cluster.sh) in `dir` (empty: a fresh
// directory under /tmp), stopped and removed at the end of its scope however the run ends — but
// for a kill: the smoke test's fixture then stops the one in its fixed directory.
class Cluster {
 public:
  explicit Cluster(const std::string& dir)
      : dir_(dir.empty() ? fresh_directory("/tmp", "fedstat-scale-pg") : fs::path(dir)) {
    script("start", " 54329");
  }
  ~Cluster() {
    try {
      script("stop", "");
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fedstat_scale_bench: %s\n", e.what());
    }
  }
  std::string uri() const {
    return "postgresql://fedstat@/fedstat?host=" + dir_.string() + "&port=54329";
  }
  std::string conninfo() const {
    return "host=" + dir_.string() + " port=54329 user=fedstat dbname=fedstat";
  }
  std::string data_dir() const { return (dir_ / "data").string(); }

 private:
  void script(const std::string& command, const std::string& extra) const {
    const std::string line = std::string("bash ") + FEDSTAT_POSTGRES_CLUSTER_SCRIPT + " " +
                             command + " " + dir_.string() + extra;
    if (std::system(line.c_str()) != 0) throw std::runtime_error("failed: " + line);
  }
  fs::path dir_;
};

struct Figures {
  bool ran = false;
  double reports = 0, rate = 0, server_us = 0, postgres_us = -1, device_us = 0;
  double db_bytes = 0, wal_bytes = -1, p50_ms = 0, p99_ms = 0;
  uint64_t resumed = 0;
};

// One configuration: `store` ("sqlite" or "postgresql"), `devices` devices. Throws on failure.
Figures run_one(const Options& o, const std::string& store, uint32_t devices) {
  const fs::path dir = fresh_directory("/tmp", "fedstat-scale");
  const fs::path device_state =
      fresh_directory(fs::is_directory("/dev/shm") ? "/dev/shm" : "/tmp", "fedstat-scale-devices");
  struct Cleanup {
    fs::path a, b;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(a, ignored);
      fs::remove_all(b, ignored);
    }
  } cleanup{dir, device_state};
  {
    std::ofstream items(dir / "items.txt"), reference(dir / "reference.txt");
    // A Zipf law over 300 items shifted by 15 ids, scaled with the fleet so that every device
    // holds some events; the reference: 320 items.
    const long scale = std::max<long>(100000, 8L * devices);
    for (int i = 0; i < 300; ++i) items << i + 15 << " " << std::max(1L, scale / (i + 1)) << "\n";
    for (int i = 0; i < 320; ++i) reference << i << " " << std::max(1, 100000 / (i + 1)) << "\n";
  }
  // The fleet's rounds: K = ⌈devices / round_size⌉ tasks (ids 1..K) of sizes differing by at most
  // one, all open from the start; the server offers a device the first task with room
  // (Coordinator), so the workers fill round 1, then round 2, ...
  const uint32_t rounds = (devices + o.round_size - 1) / o.round_size;
  json tasks = json::array();
  for (uint32_t k = 0; k < rounds; ++k) {
    const uint32_t size = devices / rounds + (k < devices % rounds ? 1 : 0);
    if (size < 2) throw std::runtime_error("a round of fewer than 2 devices");
    tasks.push_back(declaration(o, k + 1, size));
  }
  host::SeededBits split_bits(o.seed, 11);
  host::EmulatedClients fleet_data = host::split_across_clients(
      host::read_item_counts((dir / "items.txt").string()), devices, split_bits.bits());
  size_t client_memory = 0;  // the most any device needs in any round (two sizes at most)
  for (const json& round : {tasks.front(), tasks.back()}) {
    const host::TaskPlan plan = host::plan_task(round, dir.string(), 0, 0);
    for (const auto& device : fleet_data) {
      client_memory = std::max(
          client_memory, host::value_or_throw(client::Client::memory_bytes(
                                                  plan.task, host::local_size(plan.task, *device)),
                                              "the Client's memory"));
    }
  }
  std::array<uint8_t, 32> secret{};
  secret.fill(0x5a);

  std::unique_ptr<Cluster> cluster;
  std::string store_spec = (dir / "server.db").string();
  if (store == "postgresql") {
    cluster = std::make_unique<Cluster>(o.postgres_dir);
    store_spec = cluster->uri();
  }
  const json config{{"listen", "127.0.0.1:0"},
                    {"store", store_spec},
                    {"fleet_secret", host::encode_hex(secret.data(), secret.size())},
                    {"idle_timeout_ms", 900000},
                    {"check_ins_per_minute", 0},
                    {"tls_session_cache_entries", devices + 1024},
                    {"max_connections", std::max<size_t>(4096, 2 * o.workers)},
                    {"tasks", tasks}};
  std::ofstream(dir / "server.json") << config.dump();
  std::vector<std::unique_ptr<testing::ServerProcess>> nodes;
  std::vector<std::string> endpoints;
  for (uint32_t n = 0; n < o.nodes; ++n) {
    const std::string tag = std::to_string(n);
    nodes.push_back(std::make_unique<testing::ServerProcess>(
        dir / "server.json", dir / ("port-" + tag), dir / ("server-" + tag + ".log")));
    endpoints.push_back("127.0.0.1:" + std::to_string(nodes.back()->port()));
  }
  if (!platform::posix::set_storage_directory(device_state.c_str()).ok()) {
    throw std::runtime_error("the devices' state directory");
  }
  bench::FleetOptions fleet_options;
  fleet_options.endpoints = endpoints;
  fleet_options.fleet_secret = secret;
  fleet_options.seed = o.seed;
  fleet_options.memory_bytes = client_memory;
  fleet_options.workers = o.workers;
  bench::ScaleFleet fleet(fleet_options, fleet_data);
  if (o.returning) {
    const auto errors = fleet.warm_up();
    if (!errors.empty()) throw std::runtime_error(errors.begin()->first);
  }

  auto server_cpu = [&] {
    double total = 0;
    for (const auto& node : nodes) total += node->cpu_seconds();
    return total;
  };
  auto db_bytes = [&](double& wal) {
    if (!cluster) return bench::sqlite_bytes(store_spec);
    const bench::PostgresBytes b = bench::postgres_bytes(cluster->conninfo());
    wal = b.wal_position;
    return b.database;
  };
  double wal_before = 0, wal_after = 0;
  const double db_before = db_bytes(wal_before);
  const double pg_before = cluster ? bench::postgres_cpu_seconds(cluster->data_dir()) : 0;
  const double server_before = server_cpu();
  const double own_before = testing::own_cpu_seconds();
  const bench::FleetResult result = fleet.run();
  const double own_after = testing::own_cpu_seconds();
  const double server_after = server_cpu();
  const double pg_after = cluster ? bench::postgres_cpu_seconds(cluster->data_dir()) : 0;
  const double db_after = db_bytes(wal_after);
  if (!result.errors.empty() || result.reports != devices) {
    std::string why =
        std::to_string(result.reports) + " of " + std::to_string(devices) + " reports acknowledged";
    for (const auto& [error, count] : result.errors) {
      why += "; " + std::to_string(count) + " × " + error;
    }
    throw std::runtime_error(why);
  }
  if (o.returning && result.resumed != devices) {
    throw std::runtime_error(std::to_string(devices - result.resumed) +
                             " returning devices did not resume their TLS session");
  }
  // Every round must have completed (each node logs "task K: completed"): the server takes a
  // round's last report, then estimates and publishes; waited for up to 120 s, not timed.
  const auto completed_rounds = [&] {
    uint32_t completed = 0;
    for (uint32_t n = 0; n < o.nodes; ++n) {
      std::ifstream log(dir / ("server-" + std::to_string(n) + ".log"));
      for (std::string line; std::getline(log, line);) {
        if (line.find(": completed") != std::string::npos) ++completed;
      }
    }
    return completed;
  };
  for (int i = 0; i < 1200 && completed_rounds() < rounds; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (completed_rounds() != rounds) {
    throw std::runtime_error(std::to_string(completed_rounds()) + " of " + std::to_string(rounds) +
                             " rounds completed");
  }
  for (auto& node : nodes) {
    node->stop();
    // A nonzero exit (an ASan or LeakSanitizer report in the smoke test's build) fails the run.
    if (!node->exited_cleanly()) throw std::runtime_error("a server did not exit cleanly");
  }

  Figures f;
  f.ran = true;
  f.reports = static_cast<double>(result.reports);
  f.rate = f.reports / result.wall_seconds;
  f.server_us = 1e6 * (server_after - server_before) / f.reports;
  if (cluster) f.postgres_us = 1e6 * (pg_after - pg_before) / f.reports;
  f.device_us = 1e6 * (own_after - own_before) / f.reports;
  f.db_bytes = (db_after - db_before) / f.reports;
  if (cluster) f.wal_bytes = (wal_after - wal_before) / f.reports;
  f.p50_ms = bench::percentile(result.latency_us, 50) / 1000.0;
  f.p99_ms = bench::percentile(result.latency_us, 99) / 1000.0;
  f.resumed = result.resumed;
  return f;
}

void print(const Options& o, const std::string& store, uint32_t devices, const Figures& f) {
  char wal[64] = "";
  if (f.wal_bytes >= 0) std::snprintf(wal, sizeof(wal), " (+ WAL %.0f B)", f.wal_bytes);
  char postgres[64] = "      -";
  if (f.postgres_us >= 0) std::snprintf(postgres, sizeof(postgres), "%7.0f", f.postgres_us);
  std::printf(
      "  %s %s %6u devices, %u node, %-10s: %8.1f reports/s; CPU a report: server %5.0f us, "
      "postgres %s us, devices %5.0f us; db %6.0f B/report%s; ack p50 %.2f ms, p99 %.2f ms\n",
      o.kind.c_str(), o.trust.c_str(), devices, o.nodes, store.c_str(), f.rate, f.server_us,
      postgres, f.device_us, f.db_bytes, wal, f.p50_ms, f.p99_ms);
  std::fflush(stdout);
}

}  // namespace
}  // namespace fedstat

int main(int argc, char** argv) {
  using namespace fedstat;
  const Options o = parse(argc, argv);
  signal(SIGPIPE, SIG_IGN);
  testing::raise_descriptor_limit(static_cast<rlim_t>(o.workers) * 2 + 256);
  std::printf(
      "Scale: %s %s, %s devices sharing %zu worker threads, rounds of %u devices, %u node(s), "
      "seed %llu; load average %s\n",
      o.kind.c_str(), o.trust.c_str(), o.returning ? "returning" : "new", o.workers, o.round_size,
      o.nodes, static_cast<unsigned long long>(o.seed), bench::load_average().c_str());
  int failures = 0;
  for (uint32_t devices : o.devices) {
    Figures baseline;  // the SQLite run, when it ran first
    for (const std::string& store : o.stores) {
      Figures f;
      try {
        f = run_one(o, store, devices);
      } catch (const std::exception& e) {
        std::printf("  %s %s %6u devices, %-10s: did not complete: %s\n", o.kind.c_str(),
                    o.trust.c_str(), devices, store.c_str(), e.what());
        ++failures;
        continue;
      }
      print(o, store, devices, f);
      if (store == "sqlite") {
        baseline = f;
      } else if (baseline.ran) {
        std::printf(
            "  %s %s %6u devices, postgresql ÷ sqlite (same run): rate %.3f, server CPU %.3f, "
            "server + postgres CPU %.3f, db bytes %.3f, p99 ack %.3f\n",
            o.kind.c_str(), o.trust.c_str(), devices, f.rate / baseline.rate,
            f.server_us / baseline.server_us, (f.server_us + f.postgres_us) / baseline.server_us,
            f.db_bytes / baseline.db_bytes, f.p99_ms / baseline.p99_ms);
      }
    }
  }
  std::printf("load average at the end %s\n", bench::load_average().c_str());
  return failures == 0 ? 0 : 1;
}
