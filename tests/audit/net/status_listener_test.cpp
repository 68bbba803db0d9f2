// Issue 39 item 10: the status page's listener (host_server/status/http_server.h, in process on
// loopback, its default limits). One peer that opens idle sockets must not take all of its
// max_connections (16): past its own share it is closed at accept, long before the 5 s time-out;
// and a request with two Host headers (which one would the DNS-rebinding check believe?) is
// refused with 400. Host only.
#include <gtest/gtest.h>

#include <asio.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "host_server/status/http_server.h"
#include "tests/audit/net/audit_server.h"

namespace fedstat {
namespace audit {
namespace {

using namespace std::chrono_literals;

class StatusListener : public ::testing::Test {
 protected:
  StatusListener()
      : server_(io_, "127.0.0.1", 0, [](const std::string&) {
          return std::optional<host::HttpResponse>(host::HttpResponse{200, "text/plain", "ok\n"});
        }) {
    server_.start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~StatusListener() override {
    asio::post(io_, [this] { server_.stop(); });
    thread_.join();
  }
  // One blocking socket to the listener.
  std::unique_ptr<asio::ip::tcp::socket> connect() {
    auto socket = std::make_unique<asio::ip::tcp::socket>(client_io_);
    socket->connect({asio::ip::make_address("127.0.0.1"), server_.port()});
    return socket;
  }
  // The whole answer to `request` on a new connection.
  std::string exchange(const std::string& request) {
    auto socket = connect();
    asio::write(*socket, asio::buffer(request));
    std::string answer;
    std::array<char, 1024> chunk;
    asio::error_code error;
    while (!error) {
      const size_t n = socket->read_some(asio::buffer(chunk), error);
      answer.append(chunk.data(), n);
    }
    return answer;
  }
  std::string host() const { return "127.0.0.1:" + std::to_string(server_.port()); }

  asio::io_context io_, client_io_;
  host::StatusHttpServer server_;
  std::thread thread_;
};

// Whether the listener has closed `socket` (EOF or a reset), without blocking.
bool closed_by_server(asio::ip::tcp::socket& socket) {
  socket.non_blocking(true);
  std::array<char, 64> sink;
  asio::error_code error;
  socket.read_some(asio::buffer(sink), error);
  return error == asio::error::eof || error == asio::error::connection_reset;
}

TEST_F(StatusListener, OnePeerCannotHoldEverySocket) {
  const host::HttpLimits limits;  // the defaults: 16 at once, a 5 s time-out
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> idle;
  for (size_t i = 0; i < limits.max_connections; ++i) idle.push_back(connect());
  // Every socket beyond the peer's share is closed at accept: well within the 5 s time-out.
  size_t closed = 0;
  const bool some = poll_until(
      [&] {
        closed = 0;
        for (auto& socket : idle) closed += closed_by_server(*socket) ? 1 : 0;
        return closed >= limits.max_connections / 2;
      },
      2000ms);
  EXPECT_TRUE(some) << "one peer's " << limits.max_connections << " idle sockets: " << closed
                    << " closed within 2 s (time-out " << limits.timeout_ms << " ms)";
}

TEST_F(StatusListener, ARequestWithTwoHostHeadersIsRefused) {
  const std::string one = exchange("GET /metrics HTTP/1.1\r\nHost: " + host() + "\r\n\r\n");
  EXPECT_EQ(one.rfind("HTTP/1.1 200 ", 0), 0u) << one;  // the control: one Host is answered
  const std::string two =
      exchange("GET /metrics HTTP/1.1\r\nHost: " + host() + "\r\nHost: evil.example\r\n\r\n");
  EXPECT_EQ(two.rfind("HTTP/1.1 400 ", 0), 0u) << two;
  const std::string reversed =
      exchange("GET /metrics HTTP/1.1\r\nHost: evil.example\r\nhost: " + host() + "\r\n\r\n");
  EXPECT_EQ(reversed.rfind("HTTP/1.1 400 ", 0), 0u) << reversed;
}

}  // namespace
}  // namespace audit
}  // namespace fedstat
