// fedstat-server's serving mode (server_app.h).
#include "host_server/server_app.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "host_server/file_access.h"
#include "host_server/hex.h"
#include "host_server/net/credentials.h"
#include "host_server/net/tls_server.h"
#include "host_server/net_bridge.h"
#include "host_server/peer_handshake_limit.h"
#include "host_server/rounds/coordinator.h"
#include "host_server/rounds/gated_outbox.h"
#include "host_server/status/operator_view.h"
#include "host_server/store/store_factory.h"
#include "host_server/store/write_behind_store.h"
#include "host_server/tagg/tagg_app.h"
#include "host_server/tagg/tagg_forwarder.h"
#include "host_server/tasks/report_bounds.h"
#include "host_server/tasks/task_plan.h"
#include "sdk/base/crypto.h"
#include "sdk/secagg/signed_keys.h"

namespace fedstat {
namespace host {

using nlohmann::json;

uint64_t unix_seconds() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

void log_line(std::ostream& log, json fields) {
  fields["time"] = unix_seconds();
  const std::string line = fields.dump();
  // The store's writer thread logs too (a PostgreSQL outage): one whole line at a time.
  static std::mutex one_line_at_a_time;
  const std::lock_guard<std::mutex> lock(one_line_at_a_time);
  log << line << std::endl;
}

void log_standby(std::ostream& log) {
  log_line(log, {{"event", "store_standby"},
                 {"detail",
                  "another fedstat-server of this role serves this PostgreSQL database: waiting "
                  "until it stops, then serving (several serving nodes on one database are not "
                  "built yet: docs/scale_out.md)"}});
}

net::TlsServerConfig listener_config(const ServerConfig& config) {
  net::TlsServerConfig tls;
  tls.address = config.address;
  tls.port = config.port;
  tls.handshake_timeout_ms = config.handshake_timeout_ms;
  tls.idle_timeout_ms = config.idle_timeout_ms;
  tls.max_connections = config.max_connections;
  tls.sessions.max_entries = config.tls_session_cache_entries;
  tls.sessions.lifetime_seconds = config.tls_session_lifetime_seconds;
  tls.max_connections_per_identity = config.max_connections_per_identity;
  tls.max_connections_per_address = config.max_connections_per_address;
  tls.exempt_loopback = config.exempt_loopback_peers;
  if (!config.tls_certificate_pem.empty()) {
    tls.certificates = net::TlsCertificates{config.tls_certificate_pem, config.tls_private_key_pem,
                                            config.tls_client_ca_pem};
  }
  tls.device_authentication =
      config.device_authentication == "certificate" ? net::DeviceAuthentication::kCertificate
      : config.device_authentication == "either"    ? net::DeviceAuthentication::kEither
                                                    : net::DeviceAuthentication::kPsk;
  if (config.handshakes_per_address_per_minute != 0) {
    auto limit = std::make_shared<PeerHandshakeLimit>(config.handshakes_per_address_per_minute,
                                                      nullptr, config.exempt_loopback_peers);
    tls.admit_peer = [limit](const asio::ip::address& peer) { return limit->admit(peer); };
  }
  return tls;
}

void write_port_file(const std::string& path, uint16_t port) {
  // A temporary name of our own, made 0600 with O_EXCL (never an existing file, never through a
  // symbolic link), renamed over `path` (rename replaces a link there, it does not follow it).
  std::string temporary = path + ".XXXXXX";
  const int fd = mkstemp(temporary.data());
  if (fd < 0) {
    throw std::runtime_error("cannot create a temporary port file " + temporary + ": " +
                             std::strerror(errno));
  }
  const std::string text = std::to_string(port) + "\n";
  const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const bool closed = close(fd) == 0;
  if (!written || !closed) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot write the port file " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("cannot rename the port file to " + path);
  }
}

namespace {

std::optional<json> stored_definition(Store& store, uint32_t task_id) {
  for (const StoredTask& task : store.tasks()) {
    if (task.task_id == task_id) return json::parse(task.definition);
  }
  return std::nullopt;
}

std::string hex_word(uint64_t word) {  // 16 digits, most significant first
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(word >> (56 - 8 * i));
  return encode_hex(bytes, sizeof(bytes));
}

// The time a task's round completed, as its stored "completed <unix s>" transition says (the last
// one; none: nothing).
std::optional<uint64_t> completion_time(Store& store, uint32_t task_id) {
  std::optional<uint64_t> out;
  const std::string word = "completed ";
  for (const StoredEvent& event : store.events(task_id)) {
    if (event.kind != EventKind::kTransition) continue;
    const std::string text(event.payload.begin(), event.payload.end());
    if (text.compare(0, word.size(), word) != 0) continue;
    const std::string digits = text.substr(word.size());
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
        digits.size() > 19) {
      continue;
    }
    out = std::stoull(digits);
  }
  return out;
}

// A plan as the rounds run it; `definition` is what the store keeps for the task. A chained plan
// (TaskPlan::next_stage) gets a follow-up that plans the next task from this one's stored result,
// opening at the next task's stored opening time when the store holds it (a restart), else at
// the time this task's stored "completed" transition names (the same on every node), else now;
// its stored definition names the declaration, the task it follows and its TaskData, so a
// restarted server that derived other TaskData would be refused by the store.
TaskSpec spec_of(const TaskPlan& plan, const json& definition, Store& store,
                 const TaggForward& forward_tagg,
                 const std::optional<std::array<uint8_t, 65>>& ca_public_key) {
  TaskSpec spec;
  if (plan.task.trust == fedstat_v1_TrustModel_DIST && ca_public_key) {
    // Signed sessions (ServerConfig::ca_public_key): a consistency view names at most 127 ids.
    if (plan.task.secagg_degree > secagg::kMaxSignedSparseDegree) {
      throw std::invalid_argument(
          "task " + std::to_string(plan.task.task_id) + ": secagg degree " +
          std::to_string(plan.task.secagg_degree) +
          " is above 126, the most a signed session (ca_public_key) allows");
    }
    // The devices' rule, at the larger of the declared corrupt fraction and their floor (5 % by
    // default; SecAggClient::on_start).
    const uint32_t ppm =
        std::max<uint32_t>(plan.task.secagg_corrupt_ppm, secagg::kDefaultCorruptFloorPpm);
    if (plan.task.secagg_degree == 0) {
      // A signed complete graph: 2t > n + ceil(gamma n).
      if (!secagg::signed_complete_threshold_holds(plan.task.threshold, plan.task.max_clients,
                                                   ppm)) {
        throw std::invalid_argument(
            "task " + std::to_string(plan.task.task_id) + ": threshold " +
            std::to_string(plan.task.threshold) +
            " is too low for a signed session (ca_public_key): devices require 2 * threshold > "
            "max_clients + ceil(corrupt fraction (at least 5%) * max_clients); raise threshold "
            "(at most min_clients) or lower max_clients");
      }
    } else if (!secagg::signed_sparse_threshold_holds(plan.task.threshold, plan.task.secagg_degree,
                                                      plan.task.max_clients, ppm)) {
      // A signed sparse graph: 2t > k + ceil(gamma max_clients) (plan_task chose such (k, t) for
      // a signed server; this holds a plan made otherwise to the rule).
      throw std::invalid_argument(
          "task " + std::to_string(plan.task.task_id) + ": threshold " +
          std::to_string(plan.task.threshold) + " at degree " +
          std::to_string(plan.task.secagg_degree) +
          " is too low for a signed sparse session (ca_public_key): devices require 2 * "
          "threshold > degree + ceil(corrupt fraction (at least 5%) * max_clients); plan the "
          "task with signed_sessions, use the complete graph or lower max_clients");
    }
    spec.secagg_ca_public_key = ca_public_key;
  }
  spec.task = plan.task;
  spec.data = plan.data;
  spec.admission_seconds = plan.admission_seconds;
  spec.phase_timeout_seconds = plan.phase_timeout_seconds;
  spec.reconnect_grace_seconds = plan.reconnect_grace_seconds;
  if (plan.task.trust == fedstat_v1_TrustModel_TAGG) {
    // The collector never noises a TAGG aggregate (and holds no estimator that could).
    if (!forward_tagg) {
      throw std::invalid_argument("task " + std::to_string(plan.task.task_id) +
                                  " is trust \"tagg\": the config needs a \"tagg\" endpoint");
    }
    const uint32_t id = plan.task.task_id;
    const TaskFingerprint fingerprint = task_fingerprint(plan.task, plan.data);
    spec.forward = [forward_tagg, id, fingerprint](const std::vector<uint64_t>& sum,
                                                   uint32_t contributors) {
      forward_tagg(ExactAggregate{id, contributors, sum, fingerprint});
    };
  } else {
    // Central noise from the round's stored seed (rounds/task_round.h), not the plan's source.
    auto estimate = plan.estimate_with;
    spec.estimate = [estimate](const std::vector<uint64_t>& sum, uint32_t contributors,
                               RandomBits& noise) {
      return estimate(sum, contributors, noise).dump();
    };
  }
  spec.check_report = report_check(plan.task);  // the kind's largest honest words
  spec.definition_json = definition.dump();
  if (plan.next_stage) {
    const auto next_stage = plan.next_stage;
    const uint32_t this_id = plan.task.task_id, next_id = plan.next_task_id;
    const json declaration = definition.at("declaration");
    Store* s = &store;
    spec.follow_up = [next_stage, this_id, next_id, declaration, s, forward_tagg, ca_public_key](
                         const std::string& result, uint64_t now) {
      // Not this process's clock: every node (and every restart) derives the same time from the
      // store, so each plans the same definition (docs/scale_out.md, failure case 10).
      uint64_t opened = completion_time(*s, this_id).value_or(now);
      const std::optional<json> stored = stored_definition(*s, next_id);
      if (stored && stored->contains("opened_unix_seconds")) {
        opened = stored->at("opened_unix_seconds").get<uint64_t>();
      }
      const TaskPlan next = next_stage(result, opened);
      json data = json::array();
      for (uint64_t word : next.data) data.push_back(hex_word(word));
      const json next_definition{{"declaration", declaration},
                                 {"follows", this_id},
                                 {"task_data", data},
                                 {"opened_unix_seconds", opened}};
      return spec_of(next, next_definition, *s, forward_tagg, ca_public_key);
    };
  }
  return spec;
}

}  // namespace

std::vector<TaskSpec> plan_declared_tasks(const ServerConfig& config, Store& store,
                                          uint64_t now_unix_seconds,
                                          const TaggForward& forward_tagg) {
  std::map<uint32_t, json> stored;
  for (const StoredTask& task : store.tasks()) stored[task.task_id] = json::parse(task.definition);
  std::vector<TaskSpec> specs;
  std::set<uint32_t> declared;
  std::map<uint32_t, uint32_t> follow_up_of;  // a chained task's follow-up id → the task
  for (const json& declaration : config.tasks) {
    // A stored task keeps its opening time; a malformed id is plan_task's to refuse by name.
    uint64_t opened = now_unix_seconds;
    const json* id =
        declaration.is_object() && declaration.contains("id") ? &declaration["id"] : nullptr;
    if (id != nullptr && id->is_number_integer() && id->get<int64_t>() >= 0 &&
        id->get<uint64_t>() <= UINT32_MAX) {
      const auto it = stored.find(id->get<uint32_t>());
      if (it != stored.end() && it->second.contains("opened_unix_seconds")) {
        opened = it->second["opened_unix_seconds"].get<uint64_t>();
      }
    }
    // Its central noise comes from the round's stored CSPRNG seed (spec_of), never the plan's.
    TaskPlan plan = plan_task(declaration, config.base_dir, opened, /*noise_seed=*/0,
                              /*signed_sessions=*/config.ca_public_key.has_value());
    declared.insert(plan.task.task_id);
    if (plan.next_stage) {
      const uint32_t next = plan.next_task_id;
      // The follow-up's id names it alone: no declared task, no other chain, and in the store
      // (a restart) only as this declaration's follow-up.
      if (!follow_up_of.emplace(next, plan.task.task_id).second) {
        throw std::invalid_argument("tasks " + std::to_string(follow_up_of[next]) + " and " +
                                    std::to_string(plan.task.task_id) + " both chain to task " +
                                    std::to_string(next));
      }
      const auto it = stored.find(next);
      if (it != stored.end() &&
          (!it->second.is_object() || it->second.value("declaration", json()) != declaration ||
           it->second.value("follows", json()) != json(plan.task.task_id))) {
        throw std::invalid_argument("task " + std::to_string(plan.task.task_id) +
                                    ": its follow-up id " + std::to_string(next) +
                                    " names another task in the store");
      }
    }
    specs.push_back(spec_of(plan,
                            json{{"declaration", declaration}, {"opened_unix_seconds", opened}},
                            store, forward_tagg, config.ca_public_key));
  }
  for (const auto& [next, from] : follow_up_of) {
    if (declared.count(next) != 0) {
      throw std::invalid_argument("task " + std::to_string(from) + " chains to task " +
                                  std::to_string(next) + ", which is declared as a task itself");
    }
  }
  return specs;
}

std::vector<TaskSpec> declare_tasks(const ServerConfig& config, Store& store,
                                    uint64_t now_unix_seconds, const TaggForward& forward_tagg) {
  std::vector<TaskSpec> specs = plan_declared_tasks(config, store, now_unix_seconds, forward_tagg);
  bool adopted = false;
  for (const TaskSpec& spec : specs) {
    const uint32_t id = spec.task.task_id;
    try {
      store.put_task(id, spec.definition_json);  // insert-if-absent; the same again: nothing
    } catch (const std::invalid_argument&) {
      const json mine = json::parse(spec.definition_json);
      const std::optional<json> other = stored_definition(store, id);
      const bool only_opened_differs =
          other && other->is_object() && mine.contains("declaration") &&
          other->value("declaration", json()) == mine.at("declaration") &&
          other->contains("opened_unix_seconds") &&
          other->at("opened_unix_seconds").is_number_unsigned() && other->size() == mine.size();
      if (!only_opened_differs) {
        throw std::invalid_argument("task " + std::to_string(id) +
                                    ": the store holds another declaration of this task id (a "
                                    "task id names one task forever): " +
                                    (other ? other->dump() : std::string("none")));
      }
      adopted = true;  // another node declared it first, a moment earlier or later
    }
  }
  // Planned again: each adopted task now opens at its stored time, as on a restart.
  return adopted ? plan_declared_tasks(config, store, now_unix_seconds, forward_tagg) : specs;
}

namespace {

// A TAgg's answer, on the io thread: the noised result is published (and the task completed);
// anything else is logged — never the aggregate, never the result's fields — and the task stays
// "awaiting_tagg" (the next start forwards it again).
void on_tagg_attempt(Store& store, std::ostream& log, const TaggAttempt& a) {
  json line{{"event", "tagg"}, {"task", a.task_id}, {"attempt", a.attempt}};
  switch (a.answer.kind) {
    case TaggAnswer::Kind::kReleased:
      try {
        store.put_result(a.task_id, a.answer.result_json);
        store.set_task_state(a.task_id, "completed");
        line["outcome"] = "released";
      } catch (const std::exception& e) {
        line["outcome"] = "not published";
        line["detail"] = e.what();
      }
      break;
    case TaggAnswer::Kind::kRefused:
      line["outcome"] = "refused";
      line["detail"] = a.answer.detail;
      line["state"] = kAwaitingTagg;
      break;
    case TaggAnswer::Kind::kUnreachable:
      line["outcome"] = "unreachable";
      line["detail"] = a.answer.detail;
      if (a.final) {
        line["state"] = kAwaitingTagg;
        line["gave_up"] = "after " + std::to_string(a.attempt) + " attempts; a restart retries";
      } else {
        line["retry_in_ms"] = a.retry_in_ms;
      }
      break;
  }
  log_line(log, line);
}

// Descriptors beyond the connections: the listener, the store (database, WAL, shared memory),
// the log, a TAgg link, the status page.
constexpr uint64_t kSpareDescriptors = 64;

// Raises the soft RLIMIT_NOFILE towards what max_connections needs, as far as the hard limit
// allows (a common soft limit of 1,024 is below the default max_connections of 4,096: past it
// accepts fail and connections wait in the listen backlog). Returns the soft limit in force.
uint64_t raise_descriptor_limit(size_t max_connections) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  const rlim_t wanted = static_cast<rlim_t>(max_connections + kSpareDescriptors);
  const rlim_t target =
      limit.rlim_max == RLIM_INFINITY ? wanted : std::min<rlim_t>(limit.rlim_max, wanted);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < target) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = target;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = before;
  }
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit.rlim_cur);
}

// The credentials file's keys, wiped when the last reader lets them go (a reload replaces them).
std::shared_ptr<const net::DeviceKeys> held_keys(net::DeviceKeys keys) {
  return std::shared_ptr<const net::DeviceKeys>(
      new net::DeviceKeys(std::move(keys)), [](const net::DeviceKeys* held) {
        auto* keys = const_cast<net::DeviceKeys*>(held);
        for (auto& entry : *keys) {
          crypto::wipe(entry.second.data(), entry.second.size());
        }
        delete keys;
      });
}

// Ids a reload names in its log line, per list (removed, changed); the counts are always whole.
constexpr size_t kLoggedIds = 100;

// Re-reads the credentials file (SIGHUP): the new keys take over, and every identity whose key
// is gone or changed is revoked (its sessions forgotten, its connections closed). A file that
// does not load (net::load_credentials: not a regular file, too large, another user's, not ending
// with a newline — a write in progress —, a line that does not parse) or that lists no device (a
// file being rewritten in place), or that holds a key derived from a published fleet secret while
// the server listens off loopback (published_credentials_verdict, as at start), changes nothing.
// Logged either way, the ids removed and changed
// named. Runs on the io thread: the file is at most net::kMaxCredentialsBytes.
void reload_credentials(const ServerConfig& config,
                        std::shared_ptr<const net::DeviceKeys>& in_force, net::TlsServer& server,
                        std::ostream& log) {
  net::DeviceKeys fresh;
  std::string refusal;
  std::optional<std::string> published;
  try {
    fresh = net::load_credentials(config.credentials_path);
    if (fresh.empty()) {
      refusal =
          "the file lists no device (being rewritten in place?): a reload never revokes "
          "every device; replace the file atomically (write a temporary file, then rename "
          "it), and stop the server to serve no device";
    } else {
      // Off loopback a key anyone can compute is refused as at start (throws); on loopback warned.
      published = published_credentials_verdict(config, config.credentials_path, fresh);
    }
  } catch (const std::exception& e) {
    refusal = e.what();
  }
  if (!refusal.empty()) {
    log_line(log, {{"event", "credentials_not_reloaded"},
                   {"path", config.credentials_path},
                   {"detail", refusal},
                   {"devices", in_force->size()},
                   {"kept", "the credentials in force"}});
    return;
  }
  std::set<std::string> revoked;
  size_t removed = 0, changed = 0, added = 0;
  json removed_ids = json::array(), changed_ids = json::array();
  for (const auto& [id, key] : *in_force) {
    const auto now = fresh.find(id);
    if (now == fresh.end() || now->second != key) {
      revoked.insert(std::to_string(id));
      json& ids = now == fresh.end() ? removed_ids : changed_ids;
      if (ids.size() < kLoggedIds) ids.push_back(id);
      ++(now == fresh.end() ? removed : changed);
    }
  }
  for (const auto& entry : fresh) added += in_force->count(entry.first) == 0 ? 1 : 0;
  const size_t devices = fresh.size();
  in_force = held_keys(std::move(fresh));  // lookup_psk answers from these from now on
  const size_t closed = server.revoke(revoked);
  log_line(log, {{"event", "credentials_reloaded"},
                 {"path", config.credentials_path},
                 {"devices", devices},
                 {"added", added},
                 {"removed", removed},
                 {"removed_ids", removed_ids},
                 {"changed", changed},
                 {"changed_ids", changed_ids},
                 {"connections_closed", closed}});
  if (published) log_line(log, {{"event", "warning"}, {"detail", *published}});
  for (const std::string& warning : secrets_readable_by_others(config)) {
    log_line(log, {{"event", "warning"}, {"detail", warning}});
  }
}

// Re-reads tls_revoked_devices (SIGHUP): the new list takes over — a listed device's certificate
// fails its next handshake — and the connections of every id newly listed are closed. A file that
// does not load (net::load_revoked_devices) changes nothing. Logged either way. Runs on the io
// thread.
void reload_revoked_certificates(const ServerConfig& config,
                                 std::shared_ptr<const std::set<uint64_t>>& in_force,
                                 net::TlsServer& server, std::ostream& log) {
  std::set<uint64_t> fresh;
  try {
    fresh = net::load_revoked_devices(config.tls_revoked_devices_path);
  } catch (const std::exception& e) {
    log_line(log, {{"event", "revocations_not_reloaded"},
                   {"path", config.tls_revoked_devices_path},
                   {"detail", e.what()},
                   {"revoked", in_force->size()},
                   {"kept", "the revocations in force"}});
    return;
  }
  std::set<std::string> newly;
  json newly_ids = json::array();
  for (uint64_t id : fresh) {
    if (in_force->count(id) != 0) continue;
    newly.insert(std::to_string(id));
    if (newly_ids.size() < kLoggedIds) newly_ids.push_back(id);
  }
  const size_t reinstated = static_cast<size_t>(std::count_if(
      in_force->begin(), in_force->end(), [&fresh](uint64_t id) { return fresh.count(id) == 0; }));
  const size_t revoked = fresh.size();
  in_force = std::make_shared<const std::set<uint64_t>>(std::move(fresh));
  const size_t closed = server.revoke(newly);
  log_line(log, {{"event", "revocations_reloaded"},
                 {"path", config.tls_revoked_devices_path},
                 {"revoked", revoked},
                 {"newly_revoked", newly.size()},
                 {"newly_revoked_ids", newly_ids},
                 {"reinstated", reinstated},
                 {"connections_closed", closed}});
}

}  // namespace

// (server_app.h) A DIST round's rosters must outlive a power loss, not only kill -9. Were the
// stored U3 lost after it was sent, the restarted round could announce another U3 to other
// devices: each device pins the first U3 it saw, but one group revealing b_w and another
// s_w^SK for the same device w unmask w's input. kStepsSurvivePowerLoss commits every step
// (transition, note, result) with synchronous=FULL, which also makes every device message
// before it durable — so every message a step was decided on, and every step sent, survives.
// Device messages alone commit with NORMAL: one acknowledged since the last step may be lost
// in a power cut, and the device's resume sends it again (the same bytes). A fsync per device
// message cost a 200-device DIST round one fsync per share (200 x 199). Other tasks keep NORMAL
// (a lost step there is resent by the devices' resume) — except, in every mode, a result and a
// server note (the noise seed it was drawn from), which SqliteStore commits with FULL: a release
// shown anywhere is never rolled back and estimated again (issue 39 item 2).
SqliteStoreOptions collector_store_options(const ServerConfig& config) {
  SqliteStoreOptions options;
  for (const json& declaration : config.tasks) {
    if (declaration.is_object() && declaration.value("trust", std::string()) == "dist") {
      options.durability = Durability::kStepsSurvivePowerLoss;
    }
  }
  return options;
}

void log_store_check(std::ostream& log, const std::string& store_path) {
  if (parse_store_spec(store_path).backend == StoreBackend::kPostgresql) {
    log_line(log, {{"event", "opening_store"},
                   {"store", redacted_store_spec(store_path)},
                   {"detail", "connecting to PostgreSQL and checking the fedstat schema"}});
    return;
  }
  uint64_t bytes = 0;
  for (const char* suffix : {"", "-wal"}) {
    struct stat s {};
    if (stat((store_path + suffix).c_str(), &s) == 0) bytes += static_cast<uint64_t>(s.st_size);
  }
  const uint64_t megabytes = (bytes + (uint64_t{1} << 20) - 1) >> 20;
  log_line(log, {{"event", "checking_store"},
                 {"store", store_path},
                 {"megabytes", megabytes},
                 {"detail", "checking the store (" + std::to_string(megabytes) +
                                " MB): PRAGMA quick_check reads every page, a time linear in "
                                "its size, before the server listens"}});
}

int serve(const ServerConfig& config, const std::string& port_file, std::ostream& log) {
  if (config.tagg_role) return serve_tagg(config, port_file, log);
  refuse_published_fleet_secret_off_loopback(config);  // before anything is opened or bound
  asio::io_context io;
  // SIGHUP from here on is caught (main ignores it until now) and kept until the io loop runs:
  // one that comes while the store is checked reloads the credentials once the server listens.
  asio::signal_set reloads(io, SIGHUP);
  log_store_check(log, config.store_path);
  StoreOpenOptions store_options;
  store_options.sqlite = collector_store_options(config);
  store_options.outage_seconds = config.store_outage_seconds;
  store_options.serving = ServingRole::kCollector;
  store_options.on_standby = [&log] { log_standby(log); };
  // A lost PostgreSQL is waited for (store/postgres_store.h): said in the log when a call finds
  // it gone and when it is back. Called on the thread that made the call (io or store writer).
  store_options.on_outage = [&log, &config](bool reachable, const std::string& detail) {
    log_line(log, {{"event", reachable ? "store_reachable" : "store_unreachable"},
                   {"detail", detail},
                   {"store_outage_seconds", config.store_outage_seconds}});
  };
  std::unique_ptr<Store> backend = open_store(config.store_path, store_options);
  std::vector<std::string> warnings = start_warnings(config);
  // The rounds' writes of device messages commit on the store's writer thread while the io
  // thread answers the next message; every answer waits in `gate` until the writes before it
  // have committed (store/write_behind_store.h, rounds/gated_outbox.h). The writer wakes the io
  // loop once per run of commits.
  // Posted handlers run only inside io.run(), by when `gate` is set.
  GatedOutbox* gate = nullptr;
  std::atomic<bool> release_posted{false};
  WriteBehindStore store(*backend, [&io, &gate, &release_posted, &store] {
    if (release_posted.exchange(true)) return;
    asio::post(io, [&gate, &release_posted, &store] {
      release_posted = false;
      store.throw_if_failed();  // a failed commit stops the server, nothing held released
      gate->release();
    });
  });
  // Declared before the rounds that feed it, so it stops (joins) after them, before io and store.
  std::unique_ptr<TaggForwarder> forwarder;
  TaggForward forward_tagg;
  if (config.tagg) {
    Store* s = &store;
    std::ostream* out = &log;
    forwarder = std::make_unique<TaggForwarder>(*config.tagg, [&io, s, out](const TaggAttempt& a) {
      asio::post(io, [s, out, a] { on_tagg_attempt(*s, *out, a); });
    });
    TaggForwarder* f = forwarder.get();
    forward_tagg = [f](ExactAggregate aggregate) { f->submit(std::move(aggregate)); };
  }
  std::vector<TaskSpec> specs = declare_tasks(config, store, unix_seconds(), forward_tagg);

  net::TlsServerConfig tls = listener_config(config);
  tls.await_check_in = true;  // a device's first message must be a ClientHello the rounds take
  // The credentials file's keys (replaced by a reload on SIGHUP; read on the io thread only).
  std::shared_ptr<const net::DeviceKeys> keys;
  if (config.fleet_secret) {
    const auto secret = *config.fleet_secret;
    tls.lookup_psk = [secret](const std::string& identity) -> std::optional<net::DevicePsk> {
      const auto id = net::parse_device_identity(identity);
      if (!id) return std::nullopt;
      return net::derive_device_psk(secret, *id);
    };
  } else if (!config.credentials_path.empty()) {
    keys = held_keys(net::load_credentials(config.credentials_path));
    if (auto warning = published_credentials_verdict(config, config.credentials_path, *keys)) {
      warnings.push_back(std::move(*warning));
    }
    tls.lookup_psk = [&keys](const std::string& identity) -> std::optional<net::DevicePsk> {
      const auto id = net::parse_device_identity(identity);
      if (!id) return std::nullopt;
      const auto it = keys->find(*id);
      if (it == keys->end()) return std::nullopt;
      return it->second;
    };
  }

  // The revoked device certificates (tls_revoked_devices; replaced by a reload on SIGHUP, read on
  // the io thread only).
  std::shared_ptr<const std::set<uint64_t>> revoked_certificates;
  if (!config.tls_revoked_devices_path.empty()) {
    revoked_certificates = std::make_shared<const std::set<uint64_t>>(
        net::load_revoked_devices(config.tls_revoked_devices_path));
    tls.certificate_revoked = [&revoked_certificates](uint64_t id) {
      return revoked_certificates->count(id) != 0;
    };
  }

  NetBridge<Coordinator> bridge;
  GatedOutbox gated(bridge, store);
  gate = &gated;
  OperatorView view(store, bridge);  // what the status page reads (status/operator_view.h)
  Coordinator coordinator(view.store(), gated, std::move(specs), unix_seconds(),
                          config.check_ins_per_minute);
  net::TlsServer server(io, tls, view.handler());
  view.set_tls_stats([&server] { return server.stats(); });
  bridge.attach(&server, &coordinator, &log);
  const uint64_t descriptors = raise_descriptor_limit(config.max_connections);
  if (descriptors < config.max_connections + kSpareDescriptors) {
    log_line(log,
             {{"event", "warning"},
              {"detail", "RLIMIT_NOFILE (" + std::to_string(descriptors) +
                             ") is below max_connections + " + std::to_string(kSpareDescriptors) +
                             ": past it, new connections wait in the listen backlog"}});
  }
  for (const std::string& warning : warnings) {
    log_line(log, {{"event", "warning"}, {"detail", warning}});
  }
  server.start();
  view.serve(io, config, coordinator, log);  // only with status_listen

  const auto drain_log = [&]() {
    for (const std::string& line : coordinator.take_log()) {
      log_line(log, {{"event", "round"}, {"detail", line}});
    }
  };
  asio::steady_timer tick(io);
  bool stopping = false;
  std::function<void()> schedule = [&]() {
    tick.expires_after(std::chrono::milliseconds(100));
    tick.async_wait([&](const asio::error_code& error) {
      if (error || stopping) return;
      coordinator.on_tick(unix_seconds());
      drain_log();
      schedule();
    });
  };
  schedule();
  // SIGHUP: tls_revoked_devices and the credentials file are read again (a fleet secret has
  // nothing to reload).
  std::function<void()> await_reload = [&]() {
    reloads.async_wait([&](const asio::error_code& error, int /*signal*/) {
      if (error || stopping) return;
      if (revoked_certificates) {
        reload_revoked_certificates(config, revoked_certificates, server, log);
      }
      if (keys) {
        reload_credentials(config, keys, server, log);
      } else if (!config.fleet_secret && !revoked_certificates) {
        log_line(log, {{"event", "credentials_not_reloaded"},
                       {"detail",
                        "device_authentication \"certificate\" without credentials: "
                        "no device keys to reload"}});
      } else {
        log_line(log, {{"event", "credentials_not_reloaded"},
                       {"detail", "the device keys come from fleet_secret: nothing to reload"}});
      }
      await_reload();
    });
  };
  await_reload();
  asio::signal_set signals(io, SIGTERM, SIGINT);
  signals.async_wait([&](const asio::error_code& error, int signal) {
    if (error) return;
    stopping = true;
    reloads.cancel();
    drain_log();  // what happened since the last tick (a round that just completed)
    log_line(log, {{"event", "stopping"}, {"signal", signal}});
    tick.cancel();
    coordinator.begin_shutdown();  // the closes below are the server's, not departures
    server.stop();
    view.stop();
  });
  // Listening, and every signal it answers set up: now the port file says so.
  json listening{{"event", "listening"},         {"address", config.address},
                 {"port", server.port()},        {"store", redacted_store_spec(config.store_path)},
                 {"tasks", config.tasks.size()}, {"descriptors", descriptors}};
  if (keys) listening["credentials"] = config.credentials_path + " (SIGHUP reloads it)";
  listening["device_authentication"] = config.device_authentication;
  log_line(log, std::move(listening));
  if (!port_file.empty()) write_port_file(port_file, server.port());
  io.run();
  view.set_tls_stats({});  // `server` is destroyed before `view`: no call into it after this
  drain_log();             // what the rounds logged since the stop began
  log_line(log, {{"event", "stopped"}, {"integrity", store.integrity_check()}});
  return 0;
}

}  // namespace host
}  // namespace fedstat
