// Credentials file parsing and fleet key derivation. See credentials.h.
#include "host_server/net/credentials.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <sstream>

#include "host_server/hex.h"
#include "mbedtls/hkdf.h"
#include "mbedtls/md.h"
#include "mbedtls/platform_util.h"

namespace fedstat {
namespace net {
namespace {

[[noreturn]] void fail(size_t line, const std::string& what) {
  throw CredentialsError("credentials line " + std::to_string(line) + ": " + what);
}

}  // namespace

DeviceKeys parse_credentials(std::istream& in) {
  DeviceKeys keys;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    const size_t hash = text.find('#');
    if (hash != std::string::npos) text.erase(hash);
    std::istringstream fields(text);
    std::string id_text, key_text, extra;
    if (!(fields >> id_text)) continue;  // blank or comment-only line
    if (!(fields >> key_text)) fail(line, "expected \"<device id> <64 hex chars>\", got one field");
    if (fields >> extra) fail(line, "unexpected third field \"" + extra + "\"");
    const std::optional<uint64_t> id = parse_device_identity(id_text);
    if (!id) {
      fail(line, "device id \"" + id_text +
                     "\" is not a decimal number 1..2^64-2 without sign or leading zeros");
    }
    const std::optional<DevicePsk> key = host::decode_hex32(key_text);
    if (!key) fail(line, "key for device " + id_text + " is not exactly 64 hex digits");
    if (!keys.emplace(*id, *key).second) fail(line, "device " + id_text + " is listed twice");
  }
  if (in.bad())
    throw CredentialsError("credentials: read error after line " + std::to_string(line));
  return keys;
}

namespace {

// The whole of the file at `path` (`named` in messages), refused as load_credentials says: not a
// regular file, larger than kMaxCredentialsBytes, another user's, or not ending with a newline.
// Wipes what it read when it throws.
std::string read_guarded_file(const std::string& path, const std::string& named) {
  // O_NONBLOCK: a FIFO must not hold the open (the reload runs on the io thread); it is refused.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw CredentialsError(named + " cannot be opened: " + std::strerror(errno));
  std::string text;
  try {
    struct stat s {};
    if (fstat(fd, &s) != 0) throw CredentialsError(named + ": " + std::strerror(errno));
    if (!S_ISREG(s.st_mode)) {
      throw CredentialsError(named +
                             " is not a regular file (a FIFO, a device or a directory): "
                             "nothing was read from it");
    }
    if (static_cast<uint64_t>(s.st_size) > kMaxCredentialsBytes) {
      throw CredentialsError(named + " is larger than " +
                             std::to_string(kMaxCredentialsBytes >> 20) + " MiB (" +
                             std::to_string(s.st_size) + " bytes): nothing was read from it");
    }
    if (s.st_uid != geteuid() && s.st_uid != 0) {
      throw CredentialsError(named + " is owned by uid " + std::to_string(s.st_uid) +
                             ", neither this server's user (uid " + std::to_string(geteuid()) +
                             ") nor root: that user could change which devices the server "
                             "accepts; chown it");
    }
    text.resize(static_cast<size_t>(s.st_size) + 1);  // one more: a file that grew is noticed
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = read(fd, &text[got], text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw CredentialsError(named + ": read: " + std::strerror(errno));
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    text.resize(got);
    if (got > kMaxCredentialsBytes) {
      throw CredentialsError(named + " is larger than " +
                             std::to_string(kMaxCredentialsBytes >> 20) + " MiB");
    }
    if (!text.empty() && text.back() != '\n') {
      throw CredentialsError(named +
                             " does not end with a newline: a write in progress? Replace "
                             "the file at once (write a temporary file, then rename it "
                             "over this one)");
    }
  } catch (...) {
    close(fd);
    mbedtls_platform_zeroize(&text[0], text.size());
    throw;
  }
  close(fd);
  return text;
}

}  // namespace

DeviceKeys load_credentials(const std::string& path) {
  std::string text = read_guarded_file(path, "credentials file \"" + path + "\"");
  std::istringstream in(text);
  mbedtls_platform_zeroize(&text[0], text.size());  // (the stream's copy is not wiped)
  return parse_credentials(in);
}

std::set<uint64_t> parse_revoked_devices(std::istream& in) {
  std::set<uint64_t> ids;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    const size_t hash = text.find('#');
    if (hash != std::string::npos) text.erase(hash);
    std::istringstream fields(text);
    std::string id_text, extra;
    if (!(fields >> id_text)) continue;  // blank or comment-only line
    const std::string where = "revoked devices line " + std::to_string(line) + ": ";
    if (fields >> extra)
      throw CredentialsError(where + "unexpected second field \"" + extra + "\"");
    const std::optional<uint64_t> id = parse_device_identity(id_text);
    if (!id) {
      throw CredentialsError(where + "device id \"" + id_text +
                             "\" is not a decimal number 1..2^64-2 without sign or leading zeros");
    }
    ids.insert(*id);  // listed twice: still revoked
  }
  if (in.bad()) {
    throw CredentialsError("revoked devices: read error after line " + std::to_string(line));
  }
  return ids;
}

std::set<uint64_t> load_revoked_devices(const std::string& path) {
  const std::string text = read_guarded_file(path, "revoked devices file \"" + path + "\"");
  std::istringstream in(text);
  return parse_revoked_devices(in);
}

DevicePsk derive_device_psk(const std::array<uint8_t, 32>& fleet_secret, uint64_t device_id) {
  static constexpr char kLabel[] = "fedstat device psk v1";
  std::array<uint8_t, sizeof(kLabel) - 1 + 8> info{};
  std::copy(kLabel, kLabel + sizeof(kLabel) - 1, info.begin());
  for (size_t i = 0; i < 8; ++i) {
    info[sizeof(kLabel) - 1 + i] = static_cast<uint8_t>(device_id >> (56 - 8 * i));
  }
  DevicePsk key{};
  const int rc =
      mbedtls_hkdf(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), nullptr, 0, fleet_secret.data(),
                   fleet_secret.size(), info.data(), info.size(), key.data(), key.size());
  if (rc != 0) throw std::runtime_error("derive_device_psk: mbedtls_hkdf failed");
  return key;
}

}  // namespace net
}  // namespace fedstat
