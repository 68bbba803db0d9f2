// The TAgg's serving mode (tagg_app.h).
#include "host_server/tagg/tagg_app.h"

#include <asio.hpp>
#include <csignal>
#include <functional>
#include <memory>
#include <stdexcept>

#include "host_server/file_access.h"
#include "host_server/net/tls_server.h"
#include "host_server/net_bridge.h"
#include "host_server/server_app.h"
#include "host_server/store/store_factory.h"
#include "host_server/tagg/tagg_intake.h"
#include "host_server/tagg/tagg_service.h"

namespace fedstat {
namespace host {
using nlohmann::json;

TaggPlans plan_tagg_tasks(const ServerConfig& config) {
  TaggPlans out;
  for (const json& declaration : config.tasks) {
    // The plan's noise source: the CSPRNG (plan_task's noise_seed 0), never a configured seed.
    TaskPlan plan = plan_task(declaration, config.base_dir, 0);
    const uint32_t id = plan.task.task_id;
    if (out.plans.count(id) != 0) {
      throw std::invalid_argument("task " + std::to_string(id) + " is declared twice");
    }
    out.definitions[id] = json{{"declaration", declaration}}.dump();
    if (plan.task.trust == fedstat_v1_TrustModel_TAGG) {
      const auto named = config.task_collectors.find(id);
      if (named != config.task_collectors.end()) {
        out.owners[id] = named->second;
      } else if (config.collectors.size() == 1) {
        out.owners[id] = config.collectors.begin()->first;
      } else {
        throw std::invalid_argument("task " + std::to_string(id) +
                                    ": several collectors are listed; name the one whose "
                                    "aggregate it takes in task_collectors");
      }
    }
    out.plans.emplace(id, std::move(plan));
  }
  for (const auto& [id, name] : config.task_collectors) {
    if (out.owners.count(id) == 0) {
      throw std::invalid_argument("task_collectors." + std::to_string(id) +
                                  ": not a declared tagg task");
    }
  }
  return out;
}

int serve_tagg(const ServerConfig& config, const std::string& port_file, std::ostream& log) {
  asio::io_context io;
  // SIGHUP (main() ignores it until here): a TAgg reads its collectors only at start, so it has
  // nothing to reload — it says so and goes on (a reload sent to every fedstat-server, a
  // logrotate line, must not end it).
  asio::signal_set hangups(io, SIGHUP);
  std::function<void()> await_hangup = [&]() {
    hangups.async_wait([&](const asio::error_code& error, int /*signal*/) {
      if (error) return;
      log_line(log, {{"event", "reload_ignored"},
                     {"signal", SIGHUP},
                     {"detail",
                      "a TAgg reads its collectors only at start: nothing to reload "
                      "(restart it to change them)"}});
      await_hangup();
    });
  };
  await_hangup();
  // A released draw must outlive a power loss: a resend after losing it would be noised again.
  SqliteStoreOptions durable;
  durable.durability = Durability::kSurvivesPowerLoss;
  log_store_check(log, config.store_path);
  StoreOpenOptions store_options;
  store_options.sqlite = durable;
  store_options.serving = ServingRole::kTagg;
  store_options.on_standby = [&log] { log_standby(log); };
  std::unique_ptr<Store> store = open_store(config.store_path, store_options);
  std::vector<std::string> warnings = start_warnings(config);  // collectors' keys, the store
  for (const std::string& warning : warnings) {
    log_line(log, {{"event", "warning"}, {"detail", warning}});
  }
  TaggPlans planned = plan_tagg_tasks(config);
  TaggService service(*store, std::move(planned.plans), planned.definitions);

  net::TlsServerConfig tls = listener_config(config);
  const auto collectors = config.collectors;
  tls.lookup_psk =
      [collectors](const std::string& identity) -> std::optional<std::array<uint8_t, 32>> {
    const auto it = collectors.find(identity);
    if (it == collectors.end()) return std::nullopt;
    return it->second;
  };

  NetBridge<TaggIntake> bridge;
  TaggIntake intake(service, bridge, planned.owners, [&log](const std::string& line) {
    log_line(log, {{"event", "tagg"}, {"detail", line}});
  });
  net::TlsServer server(io, tls, bridge);
  bridge.attach(&server, &intake, &log);
  server.start();
  log_line(log, {{"event", "listening"},
                 {"role", "tagg"},
                 {"address", config.address},
                 {"port", server.port()},
                 {"store", redacted_store_spec(config.store_path)},
                 {"collectors", config.collectors.size()},
                 {"tasks", config.tasks.size()}});
  if (!port_file.empty()) write_port_file(port_file, server.port());

  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const asio::error_code& error, int signal) {
    if (error) return;
    log_line(log, {{"event", "stopping"}, {"signal", signal}});
    hangups.cancel();
    server.stop();
  });
  io.run();
  log_line(log, {{"event", "stopped"}, {"integrity", store->integrity_check()}});
  return 0;
}

}  // namespace host
}  // namespace fedstat
