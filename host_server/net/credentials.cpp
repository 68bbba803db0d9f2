// Credentials file parsing and fleet key derivation. See credentials.h.
#include "host_server/net/credentials.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "host_server/hex.h"
#include "mbedtls/hkdf.h"
#include "mbedtls/md.h"

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

DeviceKeys load_credentials(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw CredentialsError("credentials file \"" + path + "\" cannot be opened");
  return parse_credentials(in);
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
