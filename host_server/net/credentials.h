// Device credentials for the TLS server: the credentials file (one device a line,
// "<decimal device id> <64 hex chars>", '#' starts a comment) and the fleet key derivation that
// lets an emulated fleet and the server share one secret instead of a file.
//
// derive_device_psk = HKDF-SHA256 (RFC 5869, mbedTLS's mbedtls_hkdf) with the fleet secret as
// input key material, no salt, and info = "fedstat device psk v1" || device id (8 bytes,
// big-endian), 32 bytes of output. A device's PSK identity is its decimal id ("17").
//
// Memory: a DeviceKeys map holds one (id, 32-byte key) entry per device.
// Errors: parse_credentials / load_credentials throw CredentialsError whose message names the line
// ("credentials line 3: ...") or the file: a malformed or zero/overflowing id, a key that is not
// 64 hex digits, trailing fields, a duplicate id; and (load_credentials) a file that cannot be
// opened, is not a regular file (a FIFO is refused without waiting for a writer), is larger than
// kMaxCredentialsBytes, is owned by a user other than this process's effective user and root (who
// could change which devices are accepted), or does not end with a newline (a write in progress:
// replace the file atomically — write a temporary file, then rename it). Nothing is returned on
// error.
// parse_device_identity (host_server/device_identity.h) returns nullopt for anything but a
// canonical decimal id 1..2^64-2.
// Paper: none (infrastructure).
#ifndef FEDSTAT_HOST_SERVER_NET_CREDENTIALS_H_
#define FEDSTAT_HOST_SERVER_NET_CREDENTIALS_H_

#include <array>
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "host_server/device_identity.h"

namespace fedstat {
namespace net {

using DevicePsk = std::array<uint8_t, 32>;
using DeviceKeys = std::map<uint64_t, DevicePsk>;

class CredentialsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest credentials file load_credentials reads: 64 MiB, about 750,000 devices (a line is
// about 86 bytes). It is read and parsed on the server's io thread (a reload on SIGHUP).
inline constexpr uint64_t kMaxCredentialsBytes = uint64_t{64} << 20;

DeviceKeys parse_credentials(std::istream& in);
DeviceKeys load_credentials(const std::string& path);

// The revoked devices file (the server's tls_revoked_devices): one decimal device id a line, '#'
// starts a comment, an id listed twice is revoked once. Memory: one set entry per id. Errors:
// CredentialsError naming the line ("revoked devices line 2: ...": an id that is not canonical, a
// second field) or the file, refused as load_credentials refuses a credentials file (not a
// regular file, too large, another user's, not ending with a newline). Nothing is returned on
// error.
std::set<uint64_t> parse_revoked_devices(std::istream& in);
std::set<uint64_t> load_revoked_devices(const std::string& path);

// The canonical decimal form of a device id: digits only, no sign, no leading zero, 1..2^64-2
// (2^64-1 is reserved as "no device").
using host::parse_device_identity;

DevicePsk derive_device_psk(const std::array<uint8_t, 32>& fleet_secret, uint64_t device_id);

}  // namespace net
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_NET_CREDENTIALS_H_
