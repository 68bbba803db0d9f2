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

// The line loop of the credentials and revoked devices files: cuts each line at '#', skips a line
// with no field left, and calls on_line(fail, id, fields) with its first field parsed as a device
// id and the rest of the line in `fields`. fail(what) throws "<label> line N: what"; an id that is
// not canonical and a read error throw too.
template <typename OnLine>
void for_each_device_line(std::istream& in, const std::string& label, OnLine on_line) {
  std::string text;
  size_t line = 0;
  const auto fail = [&](const std::string& what) {
    throw CredentialsError(label + " line " + std::to_string(line) + ": " + what);
  };
  while (std::getline(in, text)) {
    ++line;
    const size_t hash = text.find('#');
    if (hash != std::string::npos) text.erase(hash);
    std::istringstream fields(text);
    std::string id_text;
    if (!(fields >> id_text)) continue;  // blank or comment-only line
    on_line(fail, id_text, fields);
  }
  if (in.bad()) throw CredentialsError(label + ": read error after line " + std::to_string(line));
}

// `id_text` as a device id, or fail(...) saying it is not canonical.
template <typename Fail>
uint64_t device_id_or_fail(const Fail& fail, const std::string& id_text) {
  const std::optional<uint64_t> id = parse_device_identity(id_text);
  if (!id) {
    fail("device id \"" + id_text +
         "\" is not a decimal number 1..2^64-2 without sign or leading zeros");
  }
  return *id;
}

}  // namespace

DeviceKeys parse_credentials(std::istream& in) {
  DeviceKeys keys;
  for_each_device_line(
      in, "credentials",
      [&](const auto& fail, const std::string& id_text, std::istringstream& fields) {
        std::string key_text, extra;
        if (!(fields >> key_text)) fail("expected \"<device id> <64 hex chars>\", got one field");
        if (fields >> extra) fail("unexpected third field \"" + extra + "\"");
        const uint64_t id = device_id_or_fail(fail, id_text);
        const std::optional<DevicePsk> key = host::decode_hex32(key_text);
        if (!key) fail("key for device " + id_text + " is not exactly 64 hex digits");
        if (!keys.emplace(id, *key).second) fail("device " + id_text + " is listed twice");
      });
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
  for_each_device_line(
      in, "revoked devices",
      [&](const auto& fail, const std::string& id_text, std::istringstream& fields) {
        std::string extra;
        if (fields >> extra) fail("unexpected second field \"" + extra + "\"");
        ids.insert(device_id_or_fail(fail, id_text));  // listed twice: still revoked
      });
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
