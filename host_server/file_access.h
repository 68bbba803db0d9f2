// Who else can read the server's secrets: the credentials file (every device's key), a config file
// that holds fleet_secret, a tagg psk or collectors' keys, and the store (every trusted and tagg
// device's exact words: the database, its -wal and -shm); and who else can write the store's
// directory. The server creates its store for its owner only and refuses one that is a link or
// another user's (store/sqlite_handle.h), and refuses a credentials file another user owns
// (net/credentials.h); these checks name, in a warning at start (and at a credentials reload), a
// file that group or others can read — one made before, or by hand — with the command that fixes
// it, and a store directory they can write; and a fleet_secret everyone knows (an example's). They
// change nothing: the operator may have granted a group on purpose (a backup), and a warning is how
// the server says what that exposes. Errors: none (a file that does not exist, or cannot be looked
// at, gets no warning). Memory: the warnings' text. Paper: none.
#ifndef FEDSTAT_HOST_FILE_ACCESS_H_
#define FEDSTAT_HOST_FILE_ACCESS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host_server/net/credentials.h"
#include "host_server/server_config.h"

namespace fedstat {
namespace host {

// "<what> <path> can be read by group or others (mode 0644): chmod 600 <path>", or nullopt when
// its mode grants them nothing (or it does not exist).
std::optional<std::string> readable_by_others(const std::string& path, const std::string& what);

// The store's files (path, path-wal, path-shm) that group or others can read.
std::vector<std::string> store_readable_by_others(const std::string& store_path);

// "the store's directory <dir> can be written by group or others (mode 1777): ...", or nullopt
// when its mode grants them no write (or it cannot be looked at). Another user who can write
// there can plant a file or a link at the store's -wal, -shm or -journal name before SQLite makes
// it (the store refuses those it finds: store/sqlite_handle.h) or, without the sticky bit, rename
// the store away and put another in its place.
std::optional<std::string> store_directory_writable_by_others(const std::string& store_path);

// The credentials file and (when it holds a secret) the config file, if group or others can read
// them.
std::vector<std::string> secrets_readable_by_others(const ServerConfig& config);

// The fleet secrets published in this repository, which anyone can read: examples/server/
// server.json's (hex of "fedstat example only, never use!") and the demos' and emulation tests'
// (0x5a × 32, scripts/fleet_demo.py, tests/emulation/common.sh). Every device key derives from
// it (HKDF(fleet_secret, id)), so a server using one is open to whoever read the repository.
// Also any secret of one byte repeated 32 times (the tests' 11…11, aa…aa): guessed first.
bool is_published_fleet_secret(const std::array<uint8_t, 32>& secret);

// Throws std::invalid_argument when `config` listens off loopback (config.address not
// is_loopback_address: "0.0.0.0", a LAN address, ...) with a fleet_secret that
// is_published_fleet_secret: every device's key is then public, so anyone who can reach the port
// can check in as any device — fill a round with devices of its own, whose inputs it knows, and
// read the one real device's contribution off the aggregate. A warning is not enough there; on
// loopback the published secret is still only warned about (start_warnings), for trying the
// server and for the tests.
void refuse_published_fleet_secret_off_loopback(const ServerConfig& config);

// A server whose device keys anyone can compute (`what` says which, `fix` what to do instead):
// off loopback (config.address not is_loopback_address) throws std::invalid_argument
// ("<what> and the server would listen on <address>, off loopback: refused. <fix>"); on loopback
// returns the warning to log. The one rule for a published fleet_secret and for a credentials
// file of keys derived from one.
std::string public_device_keys_verdict(const ServerConfig& config, const std::string& what,
                                       const std::string& fix);

// The devices in a credentials file whose key derives from a published fleet secret
// (net::derive_device_psk: examples/report_to_server/README.md shows how to compute them), in id
// order: serve() passes them to public_device_keys_verdict. Only the two published secrets are
// tried (2 HKDFs per device), not every byte repeated 32 times (256 per device, minutes for a
// large fleet's file).
std::vector<uint64_t> devices_with_published_keys(const net::DeviceKeys& keys);

// A credentials file's verdict (read from `path`, at start and on each SIGHUP reload): nullopt
// when no key derives from a published fleet secret (devices_with_published_keys); otherwise
// public_device_keys_verdict's — throws std::invalid_argument off loopback (the start fails; a
// reload is refused and the credentials in force are kept), returns the warning naming the first
// such device on loopback.
std::optional<std::string> published_credentials_verdict(const ServerConfig& config,
                                                         const std::string& path,
                                                         const net::DeviceKeys& keys);

// What a server warns about when it starts (a collector and a TAgg alike): secrets_readable_by_
// others, then store_readable_by_others and store_directory_writable_by_others of its store, then
// a fleet_secret that is_published_fleet_secret ("fleet_secret is a published example ...").
std::vector<std::string> start_warnings(const ServerConfig& config);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_FILE_ACCESS_H_
