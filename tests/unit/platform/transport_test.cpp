// The POSIX transport against a real TCP peer on the loopback interface. The peer runs in a
// thread; synchronisation is by the socket calls themselves (accept/recv block), never by sleeps.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

#include "platform/platform.h"

namespace fedstat {
namespace platform {
namespace {

// A listening socket on 127.0.0.1 with a kernel-chosen port.
class LoopbackListener {
 public:
  LoopbackListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(listen(fd_, 4), 0);
    socklen_t length = sizeof(address);
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length), 0);
    port_ = ntohs(address.sin_port);
  }
  ~LoopbackListener() { close(fd_); }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  uint16_t port() const { return port_; }
  int accept_one() const { return accept(fd_, nullptr, nullptr); }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

TEST(TransportTest, SendsAndReceivesThroughAnEchoPeer) {
  LoopbackListener listener;
  std::thread peer([&] {
    const int fd = listener.accept_one();
    char buffer[256];
    ssize_t n;
    while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0)
      send(fd, buffer, static_cast<size_t>(n), 0);
    close(fd);
  });
  auto connection = transport_connect(listener.endpoint().c_str(), 2000);
  ASSERT_TRUE(connection.ok()) << connection.status().message();
  uint8_t message[1000];
  for (size_t i = 0; i < sizeof(message); ++i) message[i] = static_cast<uint8_t>(i);
  ASSERT_TRUE(transport_send(connection.value(), ByteSpan(message)).ok());
  uint8_t echoed[1000];
  size_t received = 0;
  while (received < sizeof(echoed)) {
    auto n = transport_receive(connection.value(), MutableByteSpan(echoed).subspan(received), 5000);
    ASSERT_TRUE(n.ok()) << n.status().message();
    received += n.value();
  }
  EXPECT_EQ(std::memcmp(message, echoed, sizeof(message)), 0);
  transport_close(connection.value());
  peer.join();
}

TEST(TransportTest, ReceiveTimesOutThenSeesThePeerClose) {
  LoopbackListener listener;
  int peer_fd = -1;
  std::thread accepter([&] { peer_fd = listener.accept_one(); });
  auto connection = transport_connect(listener.endpoint().c_str(), 2000);
  ASSERT_TRUE(connection.ok());
  accepter.join();
  uint8_t buffer[8];
  // The peer sends nothing: a short timeout must expire with kDeadlineExceeded.
  EXPECT_EQ(transport_receive(connection.value(), MutableByteSpan(buffer), 20).status().code(),
            StatusCode::kDeadlineExceeded);
  close(peer_fd);
  EXPECT_EQ(transport_receive(connection.value(), MutableByteSpan(buffer), 5000).status().code(),
            StatusCode::kUnavailable);
  transport_close(connection.value());
}

TEST(TransportTest, LocalhostAndIpv6LoopbackAreAccepted) {
  LoopbackListener listener;
  std::thread accepter([&] { close(listener.accept_one()); });
  const std::string endpoint = "localhost:" + std::to_string(listener.port());
  auto connection = transport_connect(endpoint.c_str(), 2000);
  ASSERT_TRUE(connection.ok()) << connection.status().message();
  transport_close(connection.value());
  accepter.join();
  // [::1] parses (whether a v6 listener exists here or not, it is not an argument error).
  EXPECT_NE(transport_connect("[::1]:1", 500).status().code(), StatusCode::kInvalidArgument);
}

TEST(TransportTest, RefusedConnectionIsUnavailable) {
  uint16_t closed_port;
  {
    LoopbackListener listener;  // take a free port, then close it
    closed_port = listener.port();
  }
  const std::string endpoint = "127.0.0.1:" + std::to_string(closed_port);
  EXPECT_EQ(transport_connect(endpoint.c_str(), 2000).status().code(), StatusCode::kUnavailable);
}

TEST(TransportTest, MalformedEndpointsAreInvalidArguments) {
  for (const char* bad :
       {"", "localhost", "localhost:", ":80", "host:80x", "host:123456", "[::1:80"}) {
    EXPECT_EQ(transport_connect(bad, 100).status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(transport_connect(nullptr, 100).status().code(), StatusCode::kInvalidArgument);
  // Names are the application's to resolve: only numeric addresses and localhost are taken.
  EXPECT_EQ(transport_connect("example.org:443", 100).status().code(),
            StatusCode::kInvalidArgument);
  uint8_t b[1];
  EXPECT_EQ(transport_send(Connection{}, ByteSpan(b)).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace platform
}  // namespace fedstat
