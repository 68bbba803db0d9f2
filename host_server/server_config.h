// The server's configuration file (JSON), as `fedstat-server --config FILE` reads it; the
// operator's reference is docs/server_config.md (docs.server_config_fields checks it lists every
// field), a runnable one examples/server/server.json. Fields:
//   listen        "127.0.0.1:7443" (port 0: any free port; see --port-file)
//   store         "fedstat-server.db" (or "sqlite:PATH"): the SQLite store (WAL), created when
//                 absent — with its -wal and -shm, 0600, and its missing directories 0700,
//                 whatever the umask (it holds every trusted and tagg device's exact words); an
//                 existing store that group or others can read is named in a warning at start, not
//                 changed, and so is a directory they can write. Refused: a symbolic link at its
//                 path, a store (or a -wal, -shm, -journal beside it) that is not a regular file of
//                 the server's user with one link (store/sqlite_handle.h). Checked (PRAGMA
//                 quick_check, linear in its size, after a "checking_store" log line) at start: a
//                 damaged store is refused, the server exits 1. Or "postgresql://user@host:port/db"
//                 (libpq URI, "postgres://" too): the PostgreSQL store (store/postgres_store.h),
//                 its schema created when absent; logs print the URI with its password redacted
//   credentials   "devices.txt": per-device PSKs, "<device id> <64 hex digits>" lines, each ending
//                 with a newline; read at start and again on SIGHUP (a collector): a device removed
//                 from it can start no new session (a held TLS session does not resume) and its
//                 connections are closed (what it already sent a running round stays there).
//                 Replace it atomically (write a temporary file, then rename it): a reload refuses
//                 a file that lists no device or does not end with a newline (a write in progress),
//                 that does not parse, is not a regular file or is over 64 MiB, and keeps the
//                 credentials in force — logged either way, the ids removed named. Refused at
//                 start and on reload when owned by a user other than the server's and root. Keep
//                 it 0600: the server warns, naming the file, when group or others can read it (so
//                 too a config file holding fleet_secret, a tagg psk or collectors)
//   fleet_secret  or 64 hex digits: every device's PSK is HKDF(fleet_secret, id) (emulation)
//   ca_public_key (collector) absent (default): DIST tasks run unsigned secure aggregation (a
//                 server that lies can field keys under any id: docs/protocol.md, "Threat
//                 model"); "ca.pub": the path of the fleet CA's public key (fedstat-ca init
//                 writes it; a ca.key file is refused — the server must never hold the CA's
//                 private key), read at start: every DIST task then runs signed sessions
//                 (protocol 5, SecAggStart.signed_keys: keys whose device certificate the CA did
//                 not issue, or whose signature does not verify, are refused and their sender
//                 excluded; a consistency stage runs before the reveals; rounds/secagg_phase.h).
//                 Devices need a credential from the same CA (ClientConfig::credential, or
//                 fedstat-sim --credentials); a device without one refuses the session, and a
//                 device with one refuses unsigned sessions. A sparse DIST task's degree must be
//                 at most 126 then. Do not add or remove it while a DIST round runs: after the
//                 restart the replay refuses the stored messages of the other kind of session
//                 (the round aborts, fail closed) or the devices refuse it (they drop out)
//   tls_certificate, tls_private_key, tls_client_ca (collector) absent (default): devices
//                 authenticate with PSKs only. "server.crt", "server.key", "ca.crt": the paths of
//                 the server's X.509 certificate and private key (fedstat-ca server-cert) and of
//                 the fleet CA certificate that issued the devices' (fedstat-ca init / ca-cert),
//                 all three or none, read at start (not on SIGHUP). Devices may then connect with
//                 mutual TLS (sdk/tls/tls_certificate_channel.h; net/tls_server.h, "Certificates"):
//                 their identity is the id in their certificate, and a certificate device's
//                 SecAggKeys certificate must carry its TLS certificate's key. The key file is
//                 warned about like credentials when group or others can read it
//   device_authentication "either" when certificates are given, else "psk": "psk" (the PSK
//                 suite only), "certificate" (mutual TLS only: the PSK suite is not offered, and
//                 credentials / fleet_secret may be left out — the server then holds no device
//                 secret), "either" (both on the same port)
//   tls_revoked_devices absent: the path of a file of revoked device ids, one a line
//                 (net::load_revoked_devices), read at start and again on SIGHUP: a listed
//                 device's certificate fails the handshake, and its open connections are closed
//                 at the reload. Needs the tls_* fields. (A PSK device is revoked by removing it
//                 from credentials; in "either" mode revoke both)
//   noise_seed    refused (it is no longer read): a collector draws each round's central-noise
//                 seed from its CSPRNG and stores it (rounds/task_round.h), a TAgg noises from
//                 its CSPRNG; a seed from the config would be known to whoever reads the file
//   handshake_timeout_ms 10000, idle_timeout_ms 60000, max_connections 4096 (every socket the
//                 server holds, one closing its last bytes too; at the cap a newcomer takes the
//                 slot of the oldest one closing or not checked in, and is refused only when all
//                 have checked in: net/tls_server.h, "Slots"; a collector's
//                 connection must also check in — a ClientHello the rounds take — within
//                 handshake_timeout_ms of its accept, or it is closed: other frames before it
//                 move no deadline; a device waiting on a round — admission, a phase, its
//                 outcome — is kept open for the round's longest wait, max(admission, phase
//                 time-out) + 10 s, whatever idle_timeout_ms; the server raises its descriptor
//                 limit towards max_connections + 64)
//   store_outage_seconds 300: how long a store call waits for a lost PostgreSQL (restarted, cut
//                 off) before the server stops (store/postgres_store.h), 0 to 86400; answers that
//                 need a write stay held meanwhile. No effect on a SQLite store
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
//   max_connections_per_identity 4: open connections one PSK identity (a device id) may hold;
//                 a new one beyond closes that identity's oldest (a device needs one; a resume may
//                 overlap its dead predecessor, which must not lock it out — and only the key's
//                 holder can open one). 0: no cap
//   max_connections_per_address 256: connections (handshaking, open or closing) from one
//                 address (an IPv6 /64) at once; one beyond takes the slot of the address's oldest
//                 connection closing or not checked in, and is closed at accept, nothing sent,
//                 only when all the address's have checked in (nobody behind the same NAT can
//                 close a device that checked in). Devices behind one NAT share it: raise it for a
//                 large one. 0: no cap
//   exempt_loopback_peers true: loopback peers (a local proxy, the load generator, the emulated
//                 fleets) are not limited per address (max_connections_per_address,
//                 handshakes_per_address_per_minute); false counts them like any address (behind
//                 a local proxy every device is 127.0.0.1: leave it true there, and let the proxy
//                 limit its clients per address — the server reads no PROXY protocol)
//   handshakes_per_address_per_minute 0 (off): the full TLS handshakes one peer address (an IPv6
//                 /64) may make: a burst of that many, then that many a minute; one beyond is
//                 dropped before the server makes its key pair (peer_handshake_limit.h: a hello
//                 needs no credential and costs the server a key pair). A device resuming a held
//                 session is not charged; loopback peers are not limited (exempt_loopback_peers);
//                 devices behind one NAT
//                 share its bucket (the header lists what the limit does not do)
//   status_listen (collector) absent (default): no status page; "127.0.0.1:0" (port 0: any free
//                 port, logged as {"event":"status_listening","port":N}): the operator's read-only
//                 status page (tasks, rounds, devices, dropouts, results, estimates over rounds) at
//                 / and Prometheus text at /metrics, over plain HTTP (host_server/status/); a
//                 loopback address only (127.x.x.x, [::1], localhost): it has no authentication;
//                 16 connections at once, 4 per local user and 12 for users other than the
//                 server's and root, where the kernel names the user (sock_diag); else the 16 are
//                 shared and a warning is logged at start (status/http_server.h)
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
  uint32_t store_outage_seconds = 300;
  std::string credentials_path;  // or
  std::optional<std::array<uint8_t, 32>> fleet_secret;
  // The fleet CA's public key (SEC1 uncompressed), from the ca_public_key file: DIST tasks run
  // signed sessions.
  std::optional<std::array<uint8_t, 65>> ca_public_key;
  // Mutual TLS: the PEM (or DER) contents of tls_certificate, tls_private_key, tls_client_ca,
  // all three or none; tls_private_key_path for the file-mode warning.
  std::string tls_certificate_pem, tls_private_key_pem, tls_client_ca_pem;
  std::string tls_private_key_path;
  std::string device_authentication = "psk";  // "psk", "certificate" or "either" (resolved)
  // tls_revoked_devices: a file of revoked device ids (net::load_revoked_devices), read at start
  // and on SIGHUP; empty: no certificate is revoked.
  std::string tls_revoked_devices_path;
  uint32_t handshake_timeout_ms = 10000;
  uint32_t idle_timeout_ms = 60000;
  size_t max_connections = 4096;
  size_t tls_session_cache_entries = 16384;
  uint32_t tls_session_lifetime_seconds = 3600;
  uint32_t check_ins_per_minute = 60;  // rounds/check_in_limit.h's kDefaultCheckInsPerMinute
  uint32_t handshakes_per_address_per_minute = 0;  // peer_handshake_limit.h; 0: off
  size_t max_connections_per_identity = 4;         // 0: no cap
  size_t max_connections_per_address = 256;        // 0: no cap
  bool exempt_loopback_peers = true;
  std::string status_listen;  // "host:port", loopback only; empty: no status page
  nlohmann::json tasks = nlohmann::json::array();
  std::string base_dir;     // the config file's directory
  std::string config_path;  // the config file itself (its mode is checked when it holds a secret)
};

ServerConfig read_server_config(const std::string& path);
// "host:port" → address and port (std::invalid_argument otherwise).
void parse_listen(const std::string& listen, ServerConfig& config);
// The "store" field (or --store) → config.store_path: a SQLite path ("sqlite:" removed, relative
// to base_dir) or a postgresql:// URI as given. std::invalid_argument for a spec that does not
// parse (store/store_spec.h) or a postgresql:// store in a build without libpq.
std::string resolve_store(const std::string& base_dir, const std::string& spec);
// True for a loopback address as parse_listen leaves it: 127.x.x.x, ::1 or "localhost".
bool is_loopback_address(const std::string& address);
// status_listen's "host:port" → config.status_listen: std::invalid_argument unless it parses as
// listen does, names a loopback address, and config is a collector's (set role first).
void parse_status_listen(const std::string& listen, ServerConfig& config);
std::array<uint8_t, 32> parse_hex32(const std::string& hex, const std::string& field);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_CONFIG_H_
