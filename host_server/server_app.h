// ServerApp: fedstat-server's serving mode — the TLS listener (net/), the rounds (rounds/), the
// SQLite store (store/) and the task plans (tasks/) wired on one Asio io_context, a tick every
// 100 ms for admission windows, phase time-outs and deadlines, and a clean stop on SIGTERM or
// SIGINT (stop accepting, close every connection, return). Logs are JSON lines on `log`.
//
// Restart: the tasks' opening times are kept in the store with their declarations, so a
// restarted server gives every task the same deadline, and the rounds replay the store's events.
// Errors: std::runtime_error / std::invalid_argument from the parts, before serving starts.
// Memory: the parts'. Paper: none.
#ifndef FEDSTAT_HOST_SERVER_APP_H_
#define FEDSTAT_HOST_SERVER_APP_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "host_server/net/tls_server.h"
#include "host_server/rounds/task_spec.h"
#include "host_server/server_config.h"
#include "host_server/store/sqlite_store.h"
#include "host_server/store/store.h"
#include "host_server/tagg/tagg_wire.h"
#include "nlohmann/json.hpp"

namespace fedstat {
namespace host {

// Plans every declared task; a task already in the store keeps its stored opening time (and a
// changed declaration for a stored task id is refused by the store). A chained task (heterogeneity)
// gets its follow-up (TaskSpec::follow_up): planned from its stored result, stored as
// {declaration, follows, task_data, opened_unix_seconds}, opening at the time of the first task's
// stored "completed" transition (the same on every server), or at its stored opening time. Refused
// (std::invalid_argument): a follow-up id that is declared as a task, shared by two chains, or held
// by the store for another task. A TAGG task's aggregate goes to `forward_tagg` (the TAgg
// forwarder, host_server/tagg/) instead of an estimator; without one, a declared TAGG task is
// refused (std::invalid_argument).
using TaggForward = std::function<void(ExactAggregate aggregate)>;
std::vector<TaskSpec> plan_declared_tasks(const ServerConfig& config, Store& store,
                                          uint64_t now_unix_seconds,
                                          const TaggForward& forward_tagg = nullptr);
// plan_declared_tasks, then each planned task declared in the store (Store::put_task, insert-if-
// absent) before any round opens. Several servers started at once on one empty store each plan
// with their own `now`: a task another one declared first, with the same declaration and only
// another opened_unix_seconds, is adopted — everything is planned again from the stored opening
// times, so every server runs the same definition (docs/scale_out.md, failure case 10). A stored
// task with another declaration is refused: std::invalid_argument naming the task id and the
// stored definition. Errors otherwise: plan_declared_tasks's and the store's.
std::vector<TaskSpec> declare_tasks(const ServerConfig& config, Store& store,
                                    uint64_t now_unix_seconds,
                                    const TaggForward& forward_tagg = nullptr);

// The collector's store options: Durability::kStepsSurvivePowerLoss (every step committed with
// synchronous=FULL) when a declared task is trust "dist" — a DIST round's U2/U3 sent to some
// devices must never be forgotten and announced differently to others (docs/protocol.md,
// resume) — else NORMAL (results and server notes commit with FULL in every mode: sqlite_store.h).
SqliteStoreOptions collector_store_options(const ServerConfig& config);

// Serves until SIGTERM/SIGINT. Writes the bound port to `port_file` (when not empty) once
// listening (and once SIGTERM, SIGINT and SIGHUP are answered). Returns the process exit code. A
// config of role "tagg" serves the TAgg (host_server/tagg/tagg_app.h); a collector with a "tagg"
// endpoint forwards its TAGG tasks' aggregates there and publishes what comes back. A collector
// raises the process's soft RLIMIT_NOFILE to max_connections + 64 as far as the hard limit allows
// (a "warning" line when it stays below; the "listening" line gives the limit in force). Its
// listener closes a connection that has not checked in (a ClientHello the rounds took) within
// handshake_timeout_ms of its accept (net/tls_server.h, await_check_in). On SIGHUP a collector
// with a credentials file reads it again: a removed (or changed) device's held TLS session is
// forgotten and its connections are closed ("credentials_reloaded", with the counts and the ids
// removed and changed); a file that does not load (net/credentials.h: not a regular file, over
// 64 MiB, another user's, not ending with a newline) or lists no device keeps the credentials in
// force ("credentials_not_reloaded", with the reason). The reload reads and parses on the io
// thread. SIGHUP is caught from the start of serve() (main() ignores it before): one that comes
// during start-up is answered once the server listens. A TAgg logs that it has nothing to reload.
// At start, a "checking_store" line gives the store's size before its check (linear in it), and
// a "warning" line names each secret file others can read and a store directory others can
// write (file_access.h). A store that fails its check at open, or is refused (a symbolic link,
// another user's: sqlite_store.h), ends serve() with std::runtime_error, before serving.
int serve(const ServerConfig& config, const std::string& port_file, std::ostream& log);

// The "checking_store" log line: the store's size (database and WAL, in MB, rounded up), logged
// before the store is opened and checked.
void log_store_check(std::ostream& log, const std::string& store_path);

uint64_t unix_seconds();
// One JSON log line with the time added.
void log_line(std::ostream& log, nlohmann::json fields);  // one JSON line; any thread
// The line a server that waits as a standby for the store's serving lock writes (store_factory.h).
void log_standby(std::ostream& log);
// The TLS listener's address, port, time-outs and connection cap from the config (its
// lookup_psk is the serving mode's to set).
net::TlsServerConfig listener_config(const ServerConfig& config);
// Writes the port to `path` atomically: a temporary file of its own beside it (mkstemp, 0600:
// never an existing file, never through a symbolic link), renamed over `path`. Throws
// std::runtime_error when it cannot.
void write_port_file(const std::string& path, uint16_t port);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_APP_H_
