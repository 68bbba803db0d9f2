// A device's identity on the wire: its id in canonical decimal ("17"), as its TLS-PSK identity
// (docs/protocol.md). The net layer looks keys up by it; the rounds bind a connection to it.
// Canonical: digits only, no sign, no leading zero, 1..2^64-2 (2^64-1 is reserved as "no device").
// Memory: none. Errors: nullopt for anything else. Paper: none.
#ifndef FEDSTAT_HOST_DEVICE_IDENTITY_H_
#define FEDSTAT_HOST_DEVICE_IDENTITY_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace fedstat {
namespace host {

inline std::optional<uint64_t> parse_device_identity(const std::string& identity) {
  if (identity.empty() || identity.size() > 20 || identity[0] == '0') return std::nullopt;
  uint64_t value = 0;
  for (char c : identity) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  if (value == std::numeric_limits<uint64_t>::max()) return std::nullopt;
  return value;
}

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_DEVICE_IDENTITY_H_
