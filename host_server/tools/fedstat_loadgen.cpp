// fedstat-loadgen: M concurrent emulated devices (real Clients over real TLS-PSK on loopback,
// one thread each; tools/load_fleet.h) send reports to a fedstat-server as fast as it takes them
// for a bounded time, and it prints reports per second, the p50/p99 acknowledgement latency, the
// server's CPU seconds and its peak memory (issue 13 item 6).
//
//   fedstat-loadgen --server-binary PATH --clients M --seconds T --task FILE --data DIR
//                   [--tasks K] [--json]                                  (it starts the server)
//   fedstat-loadgen --server HOST:PORT --fleet-secret HEX --clients M --seconds T --task FILE
//                   --data DIR [--server-pid PID] [--json]                (a running server)
//
// A device takes part in a task once, so the load is a sequence of rounds, one task each, every
// one with all M devices (load_fleet.h): a report is one device's contribution to one round.
// --server-binary  starts PATH as the server in a fresh temporary directory: a config with
//                  listen 127.0.0.1:0, its SQLite store there (WAL, as deployed), a random fleet
//                  secret, check_ins_per_minute 0 (each device checks in once per round), and K
//                  copies of --task (ids id, id + 1, ...), each min_clients = max_clients = M and
//                  admission_seconds = deadline_seconds = T + 600 (every task opens when the
//                  server starts); the server is stopped (SIGTERM) and the directory removed at the
//                  end. Runs out of tasks before T: "out_of_tasks" true, the rate is still right.
// --server         a server already running must serve enough tasks declared like that (min =
//                  max = M, check_ins_per_minute 0 or at least the rounds per minute) for
//                  --fleet-secret; --server-pid PID gives its process for the CPU and memory
//                  figures (without it they are null).
// --task FILE      a declaration as in the server's config (host_server/tasks/task_plan.h), trust
//                  "none" (any other charges each device's privacy ledger every round), kind
//                  data_shift, kl or model_update; relative file names are the file's directory's
// --data DIR       as fedstat-sim: DIR/items.txt split across the devices (data_shift, kl), or
//                  DIR/examples.csv, examples_per_client rows each (model_update)
//
// Figures (text, or one JSON object with --json):
//   reports, rounds, wall_seconds   reports acknowledged whole; RoundOutcomes received; the
//                                   devices' start to the last device's stop (≥ T: the round
//                                   under way at T is finished)
//   reports_per_second              reports ÷ wall_seconds
//   ack_latency_ms {p50, p99, max}  per report, from its last Report chunk handed to TLS to the
//                                   Ack for the whole report decoded (nearest rank)
//   tls_sessions, tls_resumed       the devices' TLS connections, and those that resumed the
//                                   device's last session (each device keeps one channel)
//   server_cpu_seconds              the server's utime + stime (/proc/PID/stat fields 14, 15)
//                                   during the load: read before the devices start and after
//                                   they stop
//   server_peak_memory_kb           VmHWM (/proc/PID/status): the server's peak resident memory
//                                   over its life, read after the load
// Exit codes: 0 the load ran and every device finished without an error; 1 a runtime failure or
// a device error (the errors are in the output); 2 usage.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include "CLI/CLI.hpp"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/labelled_examples.h"
#include "host_server/hex.h"
#include "host_server/server_config.h"
#include "host_server/sim/emulated_device.h"
#include "host_server/tasks/task_plan.h"
#include "host_server/testing/server_child.h"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/load_fleet.h"
#include "host_server/tools/process_stats.h"
#include "nlohmann/json.hpp"
#include "platform/posix/posix_platform.h"
#include "sdk/client/client.h"

using namespace fedstat;
using namespace fedstat::host;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The server's CPU seconds so far and peak resident memory in KiB (VmHWM), or an error.
double cpu_seconds(int pid) {
  const double seconds = tools::process_cpu_seconds(pid);
  if (seconds < 0) throw std::runtime_error("cannot read /proc/" + std::to_string(pid) + "/stat");
  return seconds;
}

long peak_memory_kb(int pid) {
  const long kb = tools::process_status_kb(pid, "VmHWM");
  if (kb < 0) throw std::runtime_error("no VmHWM in /proc/" + std::to_string(pid) + "/status");
  return kb;
}

// A fresh directory: mkdtemp under `parent`.
fs::path fresh_directory(const fs::path& parent) {
  std::string pattern = (parent / "fedstat-loadgen-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a directory under " + parent.string());
  }
  return pattern;
}

// The task's file names (reference, initial_model, evaluation) made absolute against `base`.
json with_absolute_files(json declaration, const fs::path& base) {
  for (const char* kind : {"data_shift", "kl", "model_update"}) {
    if (!declaration.contains(kind) || !declaration[kind].is_object()) continue;
    for (const char* field : {"reference", "initial_model", "evaluation"}) {
      json& value = declaration[kind][field];
      if (value.is_string() && fs::path(value.get<std::string>()).is_relative()) {
        value = fs::absolute(base / value.get<std::string>()).string();
      } else if (value.is_null()) {
        declaration[kind].erase(field);
      }
    }
  }
  return declaration;
}

// Nearest-rank percentile of sorted microseconds, in ms.
double percentile_ms(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(sorted.size())));
  return sorted[std::max<size_t>(rank, 1) - 1] / 1000.0;
}

std::array<uint8_t, 32> random_secret() {
  std::array<uint8_t, 32> secret{};
  std::ifstream random("/dev/urandom", std::ios::binary);
  if (!random.read(reinterpret_cast<char*>(secret.data()), secret.size())) {
    throw std::runtime_error("cannot read /dev/urandom");
  }
  return secret;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "fedstat-loadgen: M emulated devices (real Clients over real TLS-PSK) report to a "
      "fedstat-server as fast as it takes them, round after round, for T seconds; prints "
      "reports/s, the p50/p99 acknowledgement latency (a report's last chunk sent to its Ack), "
      "the server's CPU seconds and peak memory."};
  fedstat::tools::apply_conventions(
      app, "fedstat-loadgen",
      {"fedstat-loadgen --server-binary build/host-release/host_server/fedstat-server "
       "--clients 100 --seconds 10 --task kl_none.json --data data/ --json",
       "fedstat-loadgen --server 127.0.0.1:7443 --fleet-secret $(cat fleet.key) --clients 10 "
       "--seconds 5 --task kl_none.json --data data/ --server-pid $(pidof fedstat-server)"},
      {{0, "the load ran and no device failed"},
       {1, "a runtime failure, or a device failed (see \"errors\")"},
       {2, "the command line or the task file was wrong"}});
  std::string server, server_binary, secret_hex, task_path, data_dir, state_dir;
  uint32_t clients = 10, tasks = 1000;
  double seconds = 5;
  uint64_t seed = 1, first_id = 1;
  int report_window = 1;
  int server_pid = 0;
  bool json_output = false;
  auto* server_option = app.add_option("--server", server, "a running server's HOST:PORT");
  auto* binary_option =
      app.add_option("--server-binary", server_binary, "start this fedstat-server binary")
          ->check(CLI::ExistingFile);
  server_option->excludes(binary_option);
  auto* secret_option = app.add_option("--fleet-secret", secret_hex,
                                       "64 hex digits: device keys are HKDF(secret, id)");
  app.add_option("--clients", clients, "devices, all in every round (2 to 1024)")
      ->check(CLI::Range(2u, 1024u));
  app.add_option("--seconds", seconds, "how long the devices keep reporting (0.1 to 3600)")
      ->check(CLI::Range(0.1, 3600.0));
  app.add_option("--task", task_path, "the task declaration (JSON, trust \"none\")")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--data", data_dir, "directory holding items.txt (model_update: examples.csv)")
      ->required()
      ->check(CLI::ExistingDirectory);
  auto* tasks_option =
      app.add_option("--tasks", tasks, "--server-binary: rounds the server is given (1 to 100000)")
          ->check(CLI::Range(1u, 100000u));
  tasks_option->needs(binary_option);
  app.add_option("--server-pid", server_pid, "--server: the server's process id (CPU, memory)")
      ->check(CLI::Range(1, 1 << 30))
      ->needs(server_option);
  app.add_option("--seed", seed, "device randomness seed")
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX));
  app.add_option("--first-id", first_id, "the first device id")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
  app.add_option("--state", state_dir,
                 "where devices keep ledgers and round markers (default: a fresh directory in "
                 "/dev/shm, removed at the end)");
  app.add_option("--report-window", report_window,
                 "Report chunks a device sends before it waits for an Ack (1 to 16; "
                 "ClientConfig::report_window)")
      ->check(CLI::Range(1, 16));
  app.add_flag("--json", json_output, "print one JSON object");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;
  if (server.empty() && server_binary.empty()) {
    std::fprintf(stderr, "fedstat-loadgen: give --server-binary PATH or --server HOST:PORT\n");
    return 2;
  }
  if (!server.empty() && secret_option->count() == 0) {
    std::fprintf(stderr, "fedstat-loadgen: --server needs --fleet-secret (the running server's)\n");
    return 2;
  }
  fs::path work, device_state;
  int exit_code = 0;
  try {
    const std::array<uint8_t, 32> secret =
        secret_hex.empty() ? random_secret() : parse_hex32(secret_hex, "--fleet-secret");
    std::ifstream task_file(task_path);
    json declaration;
    try {
      declaration = json::parse(task_file);
    } catch (const json::exception& e) {
      throw std::invalid_argument("--task " + task_path + ": not JSON: " + e.what());
    }
    const fs::path task_dir = fs::absolute(task_path).parent_path();
    if (!declaration.is_object()) throw std::invalid_argument("--task: not a JSON object");
    declaration = with_absolute_files(declaration, task_dir);
    declaration["min_clients"] = clients;
    declaration["max_clients"] = clients;
    const uint64_t hold = static_cast<uint64_t>(seconds) + 600;
    declaration["deadline_seconds"] = hold;
    declaration["admission_seconds"] = hold;
    const TaskPlan plan = plan_task(declaration, task_dir.string(), 0, 0);  // checks every field
    if (plan.task.trust != fedstat_v1_TrustModel_NONE) {
      throw std::invalid_argument(
          "--task: trust must be \"none\": loadgen repeats the task round after round, and any "
          "other trust model charges each device's privacy ledger every round");
    }
    if (plan.next_stage || plan.task.kind == fedstat_v1_TaskKind_HETEROGENEITY) {
      throw std::invalid_argument("--task: a chained (heterogeneity) task cannot be repeated");
    }

    EmulatedClients data;
    if (plan.task.kind == fedstat_v1_TaskKind_MODEL_UPDATE) {
      const fedstat_v1_ModelUpdateParameters& m = plan.task.parameters.model_update;
      data = split_examples(read_labelled_examples(data_dir + "/examples.csv", m.dimension),
                            clients, m.examples_per_client);
    } else {
      SeededBits split(seed, 11);
      data = split_across_clients(read_item_counts(data_dir + "/items.txt"), clients, split.bits());
    }
    size_t memory = 0;
    for (const auto& device : data) {
      memory = std::max(memory, value_or_throw(client::Client::memory_bytes(
                                                   plan.task, local_size(plan.task, *device)),
                                               "the Client's memory"));
    }

    // Descriptors: one socket per device, plus the state files.
    struct rlimit limit {};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < clients + 256u) {
      limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, clients + 256u);
      setrlimit(RLIMIT_NOFILE, &limit);
    }
    if (state_dir.empty()) {
      device_state =
          fresh_directory(fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path());
      state_dir = device_state.string();
    }
    check(platform::posix::set_storage_directory(state_dir.c_str()), "--state");

    std::unique_ptr<tools::ServerChild> child;  // stopped and reaped when reset
    LoadOptions options;
    options.fleet_secret = secret;
    options.first_id = first_id;
    options.seconds = seconds;
    options.seed = seed;
    options.memory_bytes = memory;
    options.report_window = static_cast<uint8_t>(report_window);
    if (!server_binary.empty()) {
      work = fresh_directory(fs::temp_directory_path());
      json copies = json::array();
      for (uint32_t k = 0; k < tasks; ++k) {
        json copy = declaration;
        copy["id"] = plan.task.task_id + k;
        copies.push_back(copy);
      }
      const json config{{"listen", "127.0.0.1:0"},
                        {"store", (work / "server.db").string()},
                        {"fleet_secret", encode_hex(secret.data(), secret.size())},
                        {"check_ins_per_minute", 0},
                        {"tasks", copies}};
      std::ofstream(work / "server.json") << config.dump();
      child = std::make_unique<tools::ServerChild>(server_binary, work / "server.json",
                                                   work / "port", work / "server.log");
      server_pid = child->pid();
      options.endpoint = "127.0.0.1:" + std::to_string(child->port());
    } else {
      options.endpoint = server;
    }

    const double cpu_before = server_pid ? cpu_seconds(server_pid) : 0;
    LoadResult load = run_load(options, data);
    const double cpu_after = server_pid ? cpu_seconds(server_pid) : 0;
    const long peak_kb = server_pid ? peak_memory_kb(server_pid) : 0;
    child.reset();

    std::sort(load.latency_us.begin(), load.latency_us.end());
    const double rate = load.wall_seconds > 0 ? load.reports / load.wall_seconds : 0;
    json out{{"clients", clients},
             {"seconds", seconds},
             {"task", plan.task.task_id},
             {"words_per_report", plan.task.vector_length},
             {"wall_seconds", load.wall_seconds},
             {"reports", load.reports},
             {"rounds", load.rounds_per_device},
             {"rounds_aborted", load.aborted},
             {"tls_sessions", load.sessions},
             {"tls_resumed", load.resumed},
             {"reports_per_second", rate},
             {"ack_latency_ms",
              {{"p50", percentile_ms(load.latency_us, 50)},
               {"p99", percentile_ms(load.latency_us, 99)},
               {"max", load.latency_us.empty() ? 0.0 : load.latency_us.back() / 1000.0}}},
             {"out_of_tasks", load.out_of_tasks},
             {"errors", load.errors}};
    if (server_pid) {
      out["server_pid"] = server_pid;
      out["server_cpu_seconds"] = cpu_after - cpu_before;
      out["server_peak_memory_kb"] = peak_kb;
    } else {
      out["server_cpu_seconds"] = nullptr;
      out["server_peak_memory_kb"] = nullptr;
    }
    if (json_output) {
      std::cout << out.dump() << "\n";
    } else {
      std::printf("%u devices, %.2f s: %llu reports in %u rounds, %.1f reports/s\n", clients,
                  load.wall_seconds, static_cast<unsigned long long>(load.reports),
                  load.rounds_per_device, rate);
      std::printf("TLS: %llu connections, %llu resumed the device's last session\n",
                  static_cast<unsigned long long>(load.sessions),
                  static_cast<unsigned long long>(load.resumed));
      std::printf("ack latency: p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
                  out["ack_latency_ms"]["p50"].get<double>(),
                  out["ack_latency_ms"]["p99"].get<double>(),
                  out["ack_latency_ms"]["max"].get<double>());
      if (server_pid) {
        std::printf("server: %.2f CPU seconds, peak memory %ld KiB\n", cpu_after - cpu_before,
                    peak_kb);
      }
      if (load.out_of_tasks) std::printf("the server ran out of tasks before %.1f s\n", seconds);
      for (const auto& [error, count] : load.errors) {
        std::printf("%u devices failed: %s\n", count, error.c_str());
      }
    }
    if (!load.errors.empty()) exit_code = 1;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fedstat-loadgen: %s\n", e.what());
    exit_code = 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-loadgen: %s\n", e.what());
    exit_code = 1;
  }
  std::error_code ignored;
  if (!work.empty()) fs::remove_all(work, ignored);
  if (!device_state.empty()) fs::remove_all(device_state, ignored);
  return exit_code;
}
