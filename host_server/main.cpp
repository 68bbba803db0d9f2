// fedstat-server: the host half of fedstat. Devices check in over TLS-PSK, receive the declared
// tasks, and send their contributions (in the clear for trusted tasks, through secure
// aggregation for dist tasks); the server persists every accepted message before answering,
// aggregates, estimates and publishes each task's result (docs/protocol.md; the config file:
// host_server/server_config.h).
//
//   fedstat-server --config FILE [--listen HOST:PORT] [--store PATH|URI]
//                  [--status-listen HOST:PORT] [--port-file PATH]
//     (a config with "role": "tagg" runs the trusted aggregator of TAGG tasks: host_server/tagg/)
//   fedstat-server tasks --config FILE [--json]
//   fedstat-server results TASK --config FILE [--json]
//
// Signals: SIGTERM or SIGINT stops the server cleanly; SIGHUP makes a collector read its
// credentials file again (a removed device's sessions and connections end; server_app.h) —
// replace that file atomically (write a temporary file, then rename it): one that lists no device
// or does not end with a newline is refused as a write in progress. A TAgg logs that it has
// nothing to reload. SIGHUP is ignored from main()'s first line until serve() answers it.
// Exit codes: 0 success; 1 a runtime failure (store — a damaged one among them, network, task); 2
// a usage or configuration error.
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>

#include "CLI/CLI.hpp"
#include "host_server/rounds/task_round.h"
#include "host_server/server_app.h"
#include "host_server/store/store_factory.h"
#include "host_server/tools/cli_conventions.h"
#include "nlohmann/json.hpp"
#include "sdk/version.h"
#include "sdk/wire/envelope_codec.h"

using fedstat::host::ServerConfig;
using nlohmann::json;

int main(int argc, char** argv) {
  // SIGHUP's default action ends the process: ignored until serve() answers it (a collector
  // reloads its credentials, a TAgg logs that it has nothing to reload), so that one sent during
  // start-up (the store's check takes a time linear in its size) or to `tasks` / `results` ends
  // nothing.
  std::signal(SIGHUP, SIG_IGN);
  CLI::App app{
      "fedstat-server: collects fedstat devices' encoded reports over TLS, aggregates and unmasks "
      "them, and publishes the estimates."};
  fedstat::tools::apply_conventions(
      app, "fedstat-server",
      {"fedstat-server --config server.json                       serve the declared tasks",
       "fedstat-server --config server.json --listen 0.0.0.0:7443 --store "
       "/var/lib/fedstat/store.db",
       "fedstat-server tasks --config server.json --json          list the tasks and their state",
       "fedstat-server results 1 --config server.json --json      a task's published result"},
      {{1, "a runtime failure: store, network or task; or no published result for TASK"},
       {2, "the command line or the configuration was wrong"}});
  app.footer(app.get_footer() +
             "\n\nSignals: SIGTERM or SIGINT stops the server. SIGHUP makes a collector read its "
             "credentials file again: replace that file atomically (write a temporary file, then "
             "rename it over the old one) — a file that lists no device or does not end with a "
             "newline is taken for one being written and refused, the credentials in force kept. "
             "A TAgg has nothing to reload.");
  app.set_version_flag("--version", std::string("fedstat-server ") + FEDSTAT_VERSION_STRING +
                                        " (wire protocol " +
                                        std::to_string(fedstat::wire::kProtocolVersion) + ")");
  std::string config_path, listen, store_path, status_listen, port_file;
  app.add_option(
         "--config", config_path,
         "the server's JSON configuration (one object; every field: docs/server_config.md, an "
         "example: examples/server/server.json)")
      ->check(CLI::ExistingFile);
  app.add_option("--listen", listen, "HOST:PORT to listen on (overrides the config)");
  app.add_option(
      "--store", store_path,
      "the store: a SQLite path, sqlite:PATH or postgresql://... (overrides the config)");
  app.add_option("--status-listen", status_listen,
                 "HOST:PORT of the status page, a loopback address (overrides the config)");
  app.add_option("--port-file", port_file, "write the bound port here once listening");

  CLI::App* tasks = app.add_subcommand("tasks", "list the tasks in the store and their state");
  bool tasks_json = false;
  tasks->add_flag("--json", tasks_json, "print one JSON object");
  CLI::App* results = app.add_subcommand("results", "print a task's published result");
  uint32_t result_task = 0;
  bool results_json = false;
  results->add_option("TASK", result_task, "the task id")->required();
  results->add_flag("--json", results_json, "print the result's JSON only");
  tasks->fallthrough();
  results->fallthrough();
  app.require_subcommand(0, 1);
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;

  ServerConfig config;
  try {
    if (config_path.empty()) throw std::invalid_argument("--config FILE is required");
    config = fedstat::host::read_server_config(config_path);
    if (!listen.empty()) fedstat::host::parse_listen(listen, config);
    if (!store_path.empty()) config.store_path = fedstat::host::resolve_store("", store_path);
    if (!status_listen.empty()) fedstat::host::parse_status_listen(status_listen, config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-server: %s\n", e.what());
    return 2;
  }
  try {
    if (tasks->parsed() || results->parsed()) {
      auto store = fedstat::host::open_store(config.store_path);
      if (tasks->parsed()) {
        json listing = json::array();
        for (const auto& task : store->tasks()) {
          listing.push_back({{"task", task.task_id},
                             {"state", task.state},
                             {"has_result", store->result(task.task_id).has_value()}});
        }
        if (tasks_json) {
          std::cout << json{{"tasks", listing}}.dump() << "\n";
        } else {
          for (const auto& row : listing) {
            std::cout << "task " << row["task"] << "  " << row["state"].get<std::string>()
                      << (row["has_result"].get<bool>() ? "  (result published)" : "") << "\n";
          }
        }
        return 0;
      }
      const auto result = store->result(result_task);
      if (!result) {
        std::string state;
        for (const auto& task : store->tasks()) {
          if (task.task_id == result_task) state = task.state;
        }
        if (state == fedstat::host::kAwaitingTagg) {
          std::fprintf(stderr,
                       "fedstat-server: task %u: awaiting tagg (the round completed; the TAgg's "
                       "noised result has not come back yet)\n",
                       result_task);
        } else {
          std::fprintf(stderr, "fedstat-server: task %u has no published result\n", result_task);
        }
        return 1;
      }
      if (results_json) {
        std::cout << *result << "\n";
      } else {
        std::cout << json::parse(*result).dump(2) << "\n";
      }
      return 0;
    }
    return fedstat::host::serve(config, port_file, std::cerr);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fedstat-server: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-server: %s\n", e.what());
    return 1;
  }
}
