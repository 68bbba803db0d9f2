// fedstat-netfault's attacks, one function each (fedstat_netfault.cpp's header says what each
// does and what its JSON holds): silent, slowloris and idle_flood in netfault_raw.cpp;
// handshake_flood, slot_hog and huge_frame in netfault_tls.cpp; hello_flood and
// drop_every_round in netfault_check_in.cpp. Errors: std::runtime_error. Host only. Paper: none.
#ifndef FEDSTAT_HOST_TESTING_NETFAULT_ATTACKS_H_
#define FEDSTAT_HOST_TESTING_NETFAULT_ATTACKS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "host_server/net/credentials.h"
#include "host_server/testing/netfault_support.h"

namespace fedstat {
namespace netfault {

// ---- silent, slowloris, idle_flood --------------------------------------------------------------

struct RawOptions {
  size_t count = 1;
  double seconds = 10, wait_seconds = 30;
  uint32_t trickle_ms = 0;       // 0: send nothing; else one byte of `trickle` this often
  std::vector<uint8_t> trickle;  // the bytes to trickle
  std::string ready_file, stop_file;
  std::string source;  // the local address to connect from ("": any)
  bool reopen = true;  // open a connection again when the server closes it
};
json raw_attack(const Endpoint& endpoint, const RawOptions& o);

// handshake_flood: `workers` threads sending `client_hello` on fresh connections.
json handshake_flood_attack(const Endpoint& endpoint, const std::string& source,
                            const std::vector<uint8_t>& client_hello, size_t workers,
                            double seconds, const std::string& ready_file,
                            const std::string& stop_file);
// slot_hog: `count` TLS-PSK connections as `identity` that never check in.
json slot_hog_attack(const Endpoint& endpoint, const std::string& source,
                     const std::string& identity, const net::DevicePsk& psk, size_t count,
                     double seconds, double wait_seconds, uint32_t interval_ms,
                     const std::string& ready_file, const std::string& stop_file);
// huge_frame: a frame prefix announcing 2^32 bytes inside TLS, every `interval_ms`.
json huge_frame_attack(const Endpoint& endpoint, const std::string& identity,
                       const net::DevicePsk& psk, double seconds, uint32_t interval_ms,
                       const std::string& ready_file, const std::string& stop_file);
// hello_flood (take_data false) and drop_every_round (true): check-ins as device `id`.
json check_in_attack(const std::string& server, uint64_t id, const net::DevicePsk& psk,
                     double seconds, size_t workers, uint32_t interval_ms, bool take_data,
                     const std::string& ready_file, const std::string& stop_file);

}  // namespace netfault
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TESTING_NETFAULT_ATTACKS_H_
