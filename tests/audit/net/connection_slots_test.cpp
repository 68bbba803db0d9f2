// Issue 39 item 8 after its review (findings M1, M4): connection slots on a running collector.
// M1: a connection whose handshake failed was taken out of max_connections and of its address's
// count before it lingered (up to 1 s) to flush its alert, so malformed ClientHellos from one
// address held thousands of sockets against max_connections 8. A connection must count until its
// socket is closed, and a handshake failure must not linger. M4: addresses without a credential
// held every slot (no TLS byte sent): a device must still get in, and a device that checked in is
// never closed to make room. Host only.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "tests/audit/net/audit_server.h"
#include "tests/common/server_process.h"

namespace fedstat {
namespace audit {
namespace {

using namespace std::chrono_literals;

// A ClientHello whose session id is 255 bytes long: mbedTLS answers it with a fatal decode_error
// alert at once (before any key work or rate limit).
std::string bad_client_hello() {
  const std::string body = std::string("\x03\x03", 2) + std::string(32, '\0') +
                           std::string("\xff", 1) + std::string(5, '\0');
  const std::string handshake =
      std::string("\x01\x00\x00", 3) + static_cast<char>(body.size()) + body;
  return std::string("\x16\x03\x03\x00", 4) + static_cast<char>(handshake.size()) + handshake;
}

// Connections from one address, each a malformed ClientHello and never a read: the server's
// sockets stay within max_connections (8) plus its listener (and one being accepted), and a
// device still gets in. Before the fix each lingered a second outside every count.
TEST(ConnectionSlots, ConnectionsClosingAfterAFailedHandshakeStayWithinMaxConnections) {
  ServerDir files;
  files.write_config({{"max_connections", 8},
                      {"max_connections_per_address", 4},
                      {"exempt_loopback_peers", false}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());
  const std::string hello = bad_client_hello();
  std::vector<int> held;  // never read, closed at the end
  size_t most = 0;
  const Clock::time_point start = Clock::now();
  while (held.size() < 300 && Clock::now() - start < 1s) {
    for (int i = 0; i < 20; ++i) {
      const int fd = connect_from("", server.port());
      if (fd < 0) continue;
      send(fd, hello.data(), hello.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      held.push_back(fd);
    }
    most = std::max(most, sockets_of(server.pid()));
  }
  tls::TlsPskChannel honest;
  const Status connected = connect_device(honest, server.port(), 5, files.key(5));
  for (int fd : held) close(fd);
  EXPECT_LE(most, 8u + 2u) << held.size() << " malformed ClientHellos from one address: the "
                           << "server held " << most << " sockets (max_connections 8)";
  ASSERT_TRUE(connected.ok()) << connected.message();
  EXPECT_EQ(check_in(honest, 5), "");
}

// 16 addresses x max_connections_per_address (4) = max_connections (64) idle TCP connections, no
// credential, no TLS byte: a device that checked in before stays open, and a new one gets in
// (the oldest connection not checked in makes room).
TEST(ConnectionSlots, AddressesWithoutACredentialCannotHoldEverySlot) {
  ServerDir files;
  files.write_config({{"max_connections", 64},
                      {"max_connections_per_address", 4},
                      {"exempt_loopback_peers", false}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());
  tls::TlsPskChannel early;
  ASSERT_TRUE(connect_device(early, server.port(), 4, files.key(4)).ok());
  ASSERT_EQ(check_in(early, 4), "");

  std::vector<int> held;
  for (int a = 2; a < 2 + 16; ++a) {
    for (int i = 0; i < 4; ++i) {
      const int fd = connect_from("127.0.0." + std::to_string(a), server.port());
      ASSERT_GE(fd, 0);
      held.push_back(fd);
    }
  }
  tls::TlsPskChannel honest;
  const Status connected = connect_device(honest, server.port(), 5, files.key(5));
  const std::string checked_in = connected.ok() ? check_in(honest, 5) : "";
  wire::Envelope any{};
  Status early_status;  // open: whatever it reads (its task's next message), never the end
  while ((early_status = early.receive(any, 200)).ok()) {
  }
  for (int fd : held) close(fd);
  EXPECT_TRUE(connected.ok()) << "a device was refused while 16 addresses held 64 idle "
                              << "connections: " << connected.message();
  EXPECT_EQ(checked_in, "");
  EXPECT_EQ(early_status.code(), StatusCode::kDeadlineExceeded)
      << "the device that had checked in was closed: " << early_status.message();
}

}  // namespace
}  // namespace audit
}  // namespace fedstat
