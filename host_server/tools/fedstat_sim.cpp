// fedstat-sim: N emulated devices, each a real Client (sdk/client) over real TLS-PSK (sdk/tls),
// take part in a task a running fedstat-server serves; their data comes from files.
//
//   fedstat-sim --server HOST:PORT --clients N --task FILE --data DIR --fleet-secret HEX
//               [--dropout R] [--seed S] [--first-id ID] [--memory BYTES] [--noise-seed S] [--json]
//
// --task FILE   the task's declaration, as in the server's config (host_server/tasks/task_plan.h)
// --data DIR    data_shift, kl: DIR/items.txt (an item-count file) split across the N devices
//               (seeded); model_update: DIR/examples.csv (labelled examples,
//               host_server/estimate/labelled_examples.h), device i holding rows
//               [i·n, (i + 1)·n), n = the task's examples_per_client (too few rows: an error)
// --dropout R   each device drops out with probability R, before one phase chosen uniformly:
//               keys, shares, masked input or reveals (dist), or its report (other models)
// --seed S      devices draw noise and keys from SeededStream(S, id): the sim then recomputes the
//               aggregate of the devices whose input the server summed, in process, and prints
//               its SHA-256 and estimate, to compare with `fedstat-server results`
// The JSON also carries "exact": the task's non-private value over all of DIR's data (the truth
// the estimate is for; a measurement, never something a server publishes) — model_update: the
// estimate (held-out accuracy) of the same round without noise or dropouts.
// Exit codes: 0 the devices ran (whatever the round's outcome); 1 a runtime failure; 2 usage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "CLI/CLI.hpp"
#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/labelled_examples.h"
#include "host_server/net/credentials.h"
#include "host_server/server_config.h"
#include "host_server/sim/emulated_device.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"
#include "platform/posix/posix_platform.h"

using namespace fedstat;
using namespace fedstat::host;
using nlohmann::json;

int main(int argc, char** argv) {
  CLI::App app{
      "fedstat-sim: a fleet of emulated devices (real Clients over real TLS) taking part "
      "in a task served by fedstat-server.\n\nExample:\n"
      "  fedstat-sim --server 127.0.0.1:7443 --clients 200 --task shift.json --data data/ "
      "--fleet-secret $(cat fleet.key) --dropout 0.05 --seed 7 --json"};
  std::string server, task_path, data_dir, secret_hex, state_dir;
  uint32_t clients = 10, max_sessions = 600;
  double dropout = 0;
  uint64_t seed = 0, first_id = 1, noise_seed = 0;
  size_t memory = 4u << 20;
  bool json_output = false;
  app.add_option("--server", server, "the server's HOST:PORT")->required();
  app.add_option("--clients", clients, "devices")->check(CLI::Range(1u, 1024u));
  app.add_option("--task", task_path, "the task declaration (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--data", data_dir, "directory holding items.txt (model_update: examples.csv)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--fleet-secret", secret_hex, "64 hex digits: device keys are HKDF(secret, id)")
      ->required();
  app.add_option("--dropout", dropout, "probability a device drops out")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", seed, "device randomness seed (0: CSPRNG, no in-process check)");
  app.add_option("--first-id", first_id, "the first device id")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
  app.add_option("--memory", memory, "bytes each device gives its Client");
  app.add_option("--noise-seed", noise_seed, "the server's noise_seed (to reproduce its estimate)");
  app.add_option("--state", state_dir, "where devices keep ledgers and round state (default: .)");
  app.add_option("--max-sessions", max_sessions, "check-ins per device before it gives up")
      ->check(CLI::Range(1u, 100000u));
  app.add_flag("--json", json_output, "print one JSON object");
  CLI11_PARSE(app, argc, argv);
  try {
    const auto start = std::chrono::steady_clock::now();
    const auto secret = parse_hex32(secret_hex, "--fleet-secret");
    if (!state_dir.empty()) {
      check(platform::posix::set_storage_directory(state_dir.c_str()), "--state");
    }
    std::ifstream task_file(task_path);
    const json declaration = json::parse(task_file);
    const size_t slash = task_path.rfind('/');
    const std::string base_dir = slash == std::string::npos ? "." : task_path.substr(0, slash);
    const TaskPlan plan = plan_task(declaration, base_dir, 0, noise_seed);
    const bool dist = plan.task.trust == fedstat_v1_TrustModel_DIST;

    // Only the file the task's kind reads.
    EmulatedClients data;
    if (plan.task.kind == fedstat_v1_TaskKind_MODEL_UPDATE) {
      const fedstat_v1_ModelUpdateParameters& m = plan.task.parameters.model_update;
      data = split_examples(read_labelled_examples(data_dir + "/examples.csv", m.dimension),
                            clients, m.examples_per_client);
    } else {
      const ItemCounts items = read_item_counts(data_dir + "/items.txt");
      SeededBits split(seed, 11);
      data = split_across_clients(items, clients, split.bits());
    }

    // Who drops out, and before what: a seeded draw per device.
    SeededBits choose(seed, 12);
    std::vector<DeviceSetup> setups(clients);
    static const char* dist_points[] = {"keys", "shares", "masking", "reveals"};
    std::vector<std::string> drop_names(clients);
    for (uint32_t i = 0; i < clients; ++i) {
      DeviceSetup& s = setups[i];
      s.id = first_id + i;
      s.endpoint = server;
      s.psk = net::derive_device_psk(secret, s.id);
      s.seed = seed;
      s.memory_bytes = memory;
      s.max_sessions = max_sessions;
      // A device waits for the server longer than any of the task's phases may last.
      s.receive_timeout_ms = 1000 * std::max<uint32_t>(120, plan.phase_timeout_seconds + 60);
      const double u = static_cast<double>(
                           value_or_throw(choose.bits().uniform_below(1u << 30), "dropout draw")) /
                       (1u << 30);
      if (u < dropout) {
        drop_names[i] =
            dist ? dist_points[value_or_throw(choose.bits().uniform_below(4), "phase")] : "report";
        s.drop_before = drop_point_tag(drop_names[i]);
      }
    }
    std::vector<DeviceReport> reports(clients);
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < clients; ++i) {
      threads.emplace_back([&, i]() {
        try {
          reports[i] = run_emulated_device(setups[i], *data[i]);
        } catch (const std::exception& e) {
          reports[i].id = setups[i].id;
          reports[i].outcome = "error";
          reports[i].detail = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::map<std::string, uint32_t> outcomes;
    json devices = json::array();
    uint64_t completed_bytes = 0;
    std::vector<uint32_t> contributors;
    for (uint32_t i = 0; i < clients; ++i) {
      const DeviceReport& r = reports[i];
      ++outcomes[r.outcome];
      if (r.outcome == "completed") completed_bytes += r.frame_bytes_sent;
      // The server summed the inputs of devices that completed, and (dist) of devices that sent
      // their masked input and then dropped before revealing.
      const bool summed =
          r.outcome == "completed" || (r.outcome == "dropped" && drop_names[i] == "reveals");
      if (summed) contributors.push_back(i);
      devices.push_back({{"id", r.id},
                         {"outcome", r.outcome},
                         {"drop_before", drop_names[i]},
                         {"frame_bytes", r.frame_bytes_sent},
                         {"sessions", r.sessions},
                         {"reconnects", r.reconnects},
                         {"detail", r.detail}});
    }
    const uint32_t completed = outcomes.count("completed") ? outcomes.at("completed") : 0;
    json out{{"task", plan.task.task_id},
             {"clients", clients},
             {"outcomes", outcomes},
             {"contributors", contributors.size()},
             {"bytes_per_completed_device",
              completed ? static_cast<double>(completed_bytes) / completed : 0.0},
             {"seconds", seconds}};
    if (seed != 0 && completed > 0) {
      std::vector<uint64_t> sum(plan.task.vector_length, 0);
      const uint64_t mask =
          plan.task.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << plan.task.bits) - 1;
      for (uint32_t i : contributors) {
        const auto words =
            expected_contribution(plan.task, plan.data, *data[i], seed, setups[i].id);
        for (size_t j = 0; j < sum.size(); ++j) sum[j] = (sum[j] + words[j]) & mask;
      }
      out["expected"] = plan.estimate(sum, static_cast<uint32_t>(contributors.size()));
    }
    if (plan.exact) {
      out["exact"] = plan.exact(data_dir);
    } else if (plan.task.kind == fedstat_v1_TaskKind_MODEL_UPDATE) {
      // The truth for a model: the same round without noise or dropouts — every device's
      // contribution built for the task with trust none, summed, through the same estimator.
      fedstat_v1_Task clear = plan.task;
      clear.trust = fedstat_v1_TrustModel_NONE;
      clear.device_noise_lambda = 0;
      clear.epsilon = 0;
      clear.delta = 0;
      std::vector<uint64_t> sum(clear.vector_length, 0);
      const uint64_t mask = clear.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << clear.bits) - 1;
      for (uint32_t i = 0; i < clients; ++i) {
        const auto words =
            expected_contribution(clear, plan.data, *data[i], seed ? seed : 1, setups[i].id);
        for (size_t j = 0; j < sum.size(); ++j) sum[j] = (sum[j] + words[j]) & mask;
      }
      const json noiseless = plan.estimate(sum, clients);
      if (noiseless.contains("estimate")) out["exact"] = noiseless["estimate"];
    }
    out["devices"] = devices;
    if (json_output) {
      std::cout << out.dump() << "\n";
    } else {
      std::cout << "task " << plan.task.task_id << ": " << clients << " devices in " << seconds
                << " s;";
      for (const auto& [name, count] : outcomes) std::cout << " " << name << " " << count;
      std::cout << "\n";
      if (out.contains("expected")) {
        std::cout << "in-process: " << out["expected"].dump() << "\n";
      }
    }
    return 0;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fedstat-sim: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-sim: %s\n", e.what());
    return 1;
  }
}
