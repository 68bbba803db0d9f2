// Who else can read the server's secrets (file_access.h).
#include "host_server/file_access.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "host_server/store/store_spec.h"

namespace fedstat {
namespace host {

std::optional<std::string> readable_by_others(const std::string& path, const std::string& what) {
  struct stat s {};
  if (path.empty() || stat(path.c_str(), &s) != 0 || (s.st_mode & 077) == 0) return std::nullopt;
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(s.st_mode & 07777));
  return what + " " + path + " can be read by group or others (mode " + mode + "): chmod 600 " +
         path;
}

std::vector<std::string> store_readable_by_others(const std::string& store_path) {
  std::vector<std::string> out;
  const std::string what = "the store (every trusted and tagg device's exact words)";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    if (auto warning = readable_by_others(store_path + suffix, what)) out.push_back(*warning);
  }
  return out;
}

std::optional<std::string> store_directory_writable_by_others(const std::string& store_path) {
  if (store_path.empty() || store_path == ":memory:") return std::nullopt;
  const size_t slash = store_path.rfind('/');
  const std::string directory = slash == std::string::npos ? "."
                                : slash == 0               ? "/"
                                                           : store_path.substr(0, slash);
  struct stat s {};
  if (stat(directory.c_str(), &s) != 0 || (s.st_mode & 022) == 0) return std::nullopt;
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(s.st_mode & 07777));
  return "the store's directory " + directory + " can be written by group or others (mode " + mode +
         "): they can put files or links where the store's -wal, -shm or -journal will be, or "
         "(without the sticky bit) replace the store; keep the store in a directory only this "
         "server's user can write";
}

std::vector<std::string> secrets_readable_by_others(const ServerConfig& config) {
  std::vector<std::string> out;
  if (auto warning = readable_by_others(config.credentials_path,
                                        "the credentials file (every device's key)")) {
    out.push_back(*warning);
  }
  if (!config.tls_private_key_path.empty()) {
    if (auto warning = readable_by_others(config.tls_private_key_path,
                                          "the TLS private key file (tls_private_key)")) {
      out.push_back(*warning);
    }
  }
  if (config.fleet_secret || config.tagg || !config.collectors.empty()) {
    if (auto warning = readable_by_others(config.config_path,
                                          "the config file (it holds fleet_secret, a tagg psk or "
                                          "collectors' keys)")) {
      out.push_back(*warning);
    }
  }
  return out;
}

namespace {

// examples/server/server.json's (the text "fedstat example only, never use!") and the demos' and
// emulation tests' (0x5a × 32).
std::array<std::array<uint8_t, 32>, 2> published_fleet_secrets() {
  static const char kExample[] = "fedstat example only, never use!";  // examples/server
  static_assert(sizeof(kExample) == 33, "32 bytes and the terminator");
  std::array<std::array<uint8_t, 32>, 2> secrets{};
  std::memcpy(secrets[0].data(), kExample, 32);
  secrets[1].fill(0x5a);
  return secrets;
}

}  // namespace

bool is_published_fleet_secret(const std::array<uint8_t, 32>& secret) {
  for (const auto& published : published_fleet_secrets()) {
    if (secret == published) return true;
  }
  // One byte 32 times (00…00, 11…11, aa…aa: the tests' and anyone's first guess) is as public.
  return std::all_of(secret.begin(), secret.end(), [&](uint8_t b) { return b == secret[0]; });
}

std::vector<uint64_t> devices_with_published_keys(const net::DeviceKeys& keys) {
  std::vector<uint64_t> out;
  const auto secrets = published_fleet_secrets();
  for (const auto& [device, key] : keys) {
    for (const auto& secret : secrets) {
      if (net::derive_device_psk(secret, device) == key) {
        out.push_back(device);
        break;
      }
    }
  }
  return out;
}

std::string public_device_keys_verdict(const ServerConfig& config, const std::string& what,
                                       const std::string& fix) {
  if (!is_loopback_address(config.address)) {
    throw std::invalid_argument(what + " and the server would listen on " + config.address +
                                ", off loopback: refused. " + fix);
  }
  return what + ": for trying the server on loopback only; " + fix;
}

std::optional<std::string> published_credentials_verdict(const ServerConfig& config,
                                                         const std::string& path,
                                                         const net::DeviceKeys& keys) {
  const std::vector<uint64_t> published = devices_with_published_keys(keys);
  if (published.empty()) return std::nullopt;
  const std::string which =
      "device " + std::to_string(published.front()) +
      (published.size() > 1 ? " and " + std::to_string(published.size() - 1) + " more"
                            : std::string());
  return public_device_keys_verdict(
      config,
      path + ": the key of " + which +
          " derives from a fleet secret published in the fedstat repository (anyone can "
          "compute it)",
      "give each device a random key (head -c 32 /dev/urandom | od -An -tx1)");
}

namespace {

constexpr char kPublishedSecret[] =
    "fleet_secret is an example secret published in the fedstat repository, or one byte "
    "repeated (anyone can derive every device's key from it)";
constexpr char kOwnSecret[] =
    "for real devices give credentials (a per-device key file) or a fleet_secret of your own "
    "(openssl rand -hex 32) in a config file only the server's user can read";

}  // namespace

void refuse_published_fleet_secret_off_loopback(const ServerConfig& config) {
  if (!config.fleet_secret || !is_published_fleet_secret(*config.fleet_secret)) return;
  public_device_keys_verdict(config, kPublishedSecret, kOwnSecret);  // start_warnings warns
}

std::vector<std::string> start_warnings(const ServerConfig& config) {
  std::vector<std::string> warnings = secrets_readable_by_others(config);
  if (parse_store_spec(config.store_path).backend == StoreBackend::kSqlite) {  // a file
    for (std::string& warning : store_readable_by_others(config.store_path)) {
      warnings.push_back(std::move(warning));
    }
    if (auto warning = store_directory_writable_by_others(config.store_path)) {
      warnings.push_back(std::move(*warning));
    }
  }
  if (config.fleet_secret && is_published_fleet_secret(*config.fleet_secret) &&
      is_loopback_address(config.address)) {  // off loopback serve() refuses it
    warnings.push_back(public_device_keys_verdict(config, kPublishedSecret, kOwnSecret));
  }
  if (config.device_authentication == "certificate" &&
      (config.fleet_secret || !config.credentials_path.empty())) {
    // The listener offers no PSK suite: the device secrets are held for nothing, and whoever
    // reads them can still act as any device towards a PSK server of the same fleet.
    warnings.push_back(
        std::string("device_authentication \"certificate\" with ") +
        (config.fleet_secret ? "fleet_secret" : "credentials") +
        ": the server holds device secrets it never uses (devices authenticate with certificates "
        "only; removing a device from credentials does not keep its certificate out); leave it "
        "out so the server holds no device secret");
  }
  return warnings;
}

}  // namespace host
}  // namespace fedstat
