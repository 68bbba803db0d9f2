// The server's configuration file (JSON), as `fedstat-server --config FILE` reads it. Fields:
//   listen        "127.0.0.1:7443" (port 0: any free port; see --port-file)
//   store         "fedstat-server.db": the SQLite store (WAL), created when absent
//   credentials   "devices.txt": per-device PSKs, "<device id> <64 hex digits>" lines
//   fleet_secret  or 64 hex digits: every device's PSK is HKDF(fleet_secret, id) (emulation)
//   noise_seed    0 (default): central noise from the CSPRNG; else seeded — for tests, refused
//                 when a trusted task would draw its central noise from it
//   handshake_timeout_ms 10000, idle_timeout_ms 60000, max_connections 4096 (a device waiting
//                 on a round — admission, a phase, its outcome — is kept open for the round's
//                 longest wait, max(admission, phase time-out) + 10 s, whatever idle_timeout_ms;
//                 the server raises its descriptor limit towards max_connections + 64)
//   tls_session_cache_entries 16384, tls_session_lifetime_seconds 3600: TLS session resumption
//                 (net/tls_session_cache.h): a device that connects again within the lifetime
//                 (counted from its last full handshake, at most 86400) resumes its session with
//                 no key exchange; the server holds at most that many sessions, one per device
//                 (about 420 bytes each), forgetting the oldest first. Each held session's master
//                 secret decrypts the connections made with it until it expires: a longer
//                 lifetime saves more handshakes and delays forward secrecy as long. 0 entries:
//                 every handshake is a full one
//   check_ins_per_minute 60: (collector) the check-ins (ClientHello) one device id may make: a
//                 burst of that many, then that many a minute (a token bucket per credential,
//                 rounds/check_in_limit.h); one beyond gets ServerError RETRY_LATER
//                 (kResourceExhausted) and is closed, nothing stored. 0: no limit
//   handshakes_per_address_per_minute 0 (off): the full TLS handshakes one peer address (an IPv6
//                 /64) may make: a burst of that many, then that many a minute; one beyond is
//                 dropped before the server makes its key pair (peer_handshake_limit.h: a hello
//                 needs no credential and costs the server a key pair). A device resuming a held
//                 session is not charged; loopback peers are not limited; devices behind one NAT
//                 share its bucket (the header lists what the limit does not do)
//   status_listen (collector) absent (default): no status page; "127.0.0.1:0" (port 0: any free
//                 port, logged as {"event":"status_listening","port":N}): the operator's read-only
//                 status page (tasks, rounds, devices, dropouts, results, estimates over rounds) at
//                 / and Prometheus text at /metrics, over plain HTTP (host_server/status/); a
//                 loopback address only (127.x.x.x, [::1], localhost): it has no authentication
//   tasks         [ {task declaration}, ... ] (host_server/tasks/task_plan.h)
//   role          "collector" (default: devices check in here) or "tagg" (the trusted aggregator
//                 of TAGG tasks, host_server/tagg/: collectors send it exact aggregates)
//   tagg          (collector) where TAGG tasks' aggregates go: {"endpoint": "host:port",
//                 "identity": this collector's PSK identity there, "psk": 64 hex digits,
//                 "attempts": 8 (tries while unreachable), "timeout_ms": 10000 (connect, answer)};
//                 required when a declared task is trust "tagg"
//   collectors    (tagg) {"identity": "64 hex digits PSK", ...}: the only peers it accepts
//   task_collectors (tagg) {"<task id>": "identity", ...}: the one collector each TAGG task's
//                 aggregate is taken from (any other identity is refused before the aggregate is
//                 looked at); optional with one collector (it owns every task), required for
//                 every TAGG task with several
// A collector takes exactly one of credentials and fleet_secret; a TAgg takes neither, and
// collectors instead. Relative paths are resolved against the config
// file's directory. Errors: std::invalid_argument naming the field; std::runtime_error for an
// unreadable file. Memory: the parsed file. Paper: none.
#ifndef FEDSTAT_HOST_SERVER_CONFIG_H_
#define FEDSTAT_HOST_SERVER_CONFIG_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "nlohmann/json.hpp"

namespace fedstat {
namespace host {

// A collector's way to its TAgg (tagg_client.h).
struct TaggEndpoint {
  std::string endpoint;  // "host:port"
  std::string identity;
  std::array<uint8_t, 32> psk{};
  uint32_t attempts = 8;
  uint32_t timeout_ms = 10000;
};

struct ServerConfig {
  bool tagg_role = false;  // role "tagg"
  std::optional<TaggEndpoint> tagg;
  std::map<std::string, std::array<uint8_t, 32>> collectors;
  std::map<uint32_t, std::string> task_collectors;  // (tagg) task id → its collector
  std::string address = "127.0.0.1";
  uint16_t port = 0;
  std::string store_path = "fedstat-server.db";
  std::string credentials_path;  // or
  std::optional<std::array<uint8_t, 32>> fleet_secret;
  uint64_t noise_seed = 0;
  uint32_t handshake_timeout_ms = 10000;
  uint32_t idle_timeout_ms = 60000;
  size_t max_connections = 4096;
  size_t tls_session_cache_entries = 16384;
  uint32_t tls_session_lifetime_seconds = 3600;
  uint32_t check_ins_per_minute = 60;  // rounds/check_in_limit.h's kDefaultCheckInsPerMinute
  uint32_t handshakes_per_address_per_minute = 0;  // peer_handshake_limit.h; 0: off
  std::string status_listen;  // "host:port", loopback only; empty: no status page
  nlohmann::json tasks = nlohmann::json::array();
  std::string base_dir;  // the config file's directory
};

ServerConfig read_server_config(const std::string& path);
// "host:port" → address and port (std::invalid_argument otherwise).
void parse_listen(const std::string& listen, ServerConfig& config);
std::array<uint8_t, 32> parse_hex32(const std::string& hex, const std::string& field);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_CONFIG_H_
