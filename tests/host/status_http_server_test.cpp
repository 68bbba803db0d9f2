// The status page's HTTP listener (host_server/status/http_server.h), in process on loopback: its
// cap per peer leaves room for another peer, a peer is by default the local user at the other
// end, and malformed header field lines are refused. (The audit tests, tests/audit/net, hold the
// issue 39 regressions: one peer's idle sockets, two Host fields.)
#include "host_server/status/http_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace fedstat {
namespace host {
namespace {

class StatusHttpServerTest : public ::testing::Test {
 protected:
  void start() {
    server_ = std::make_unique<StatusHttpServer>(io_, "127.0.0.1", 0, [](const std::string&) {
      return std::optional<HttpResponse>(HttpResponse{200, "text/plain", "ok\n"});
    });
    if (peer_of_) server_->set_peer_of(peer_of_);
    server_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~StatusHttpServerTest() override {
    if (!server_) return;
    asio::post(io_, [this] { server_->stop(); });
    thread_.join();
  }
  // A blocking socket from `source` (a loopback address) to the listener.
  std::unique_ptr<asio::ip::tcp::socket> connect(const std::string& source = "127.0.0.1") {
    auto socket = std::make_unique<asio::ip::tcp::socket>(client_io_);
    socket->open(asio::ip::tcp::v4());
    socket->bind({asio::ip::make_address(source), 0});
    socket->connect({asio::ip::make_address("127.0.0.1"), server_->port()});
    return socket;
  }
  // The status line of the answer to GET /metrics on `socket`.
  std::string get(asio::ip::tcp::socket& socket) {
    const std::string request =
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(server_->port()) + "\r\n\r\n";
    asio::error_code error;
    asio::write(socket, asio::buffer(request), error);
    std::string answer;
    std::array<char, 512> chunk;
    while (!error) answer.append(chunk.data(), socket.read_some(asio::buffer(chunk), error));
    return answer.substr(0, answer.find("\r\n"));
  }
  uint64_t refused() {
    std::promise<uint64_t> count;
    asio::post(io_, [&] { count.set_value(server_->refused()); });
    return count.get_future().get();
  }

  asio::io_context io_, client_io_;
  StatusHttpServer::PeerOf peer_of_;
  std::unique_ptr<StatusHttpServer> server_;
  std::thread thread_;
};

// Peers told apart by address here (127.0.0.2 is the greedy one): while it holds its 4 idle
// sockets (and 4 more were closed at accept), 127.0.0.1's request is answered.
TEST_F(StatusHttpServerTest, APeerAtItsCapLeavesRoomForAnother) {
  peer_of_ = [](const asio::ip::tcp::socket& socket) {
    return HttpPeer{HttpPeer::Kind::kOther, socket.remote_endpoint().address().to_string()};
  };
  start();
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> greedy;
  for (int i = 0; i < 8; ++i) greedy.push_back(connect("127.0.0.2"));
  auto other = connect("127.0.0.1");
  EXPECT_EQ(get(*other), "HTTP/1.1 200 OK");
  EXPECT_EQ(refused(), 4u);
}

// Other users (each loopback address stands for one here; 127.0.0.1 is the operator) share 12 of
// the 16 connections: 4 of them at their cap of 4 each leave 127.0.0.1 its 4.
TEST_F(StatusHttpServerTest, OtherUsersLeaveTheOperatorItsSlots) {
  peer_of_ = [](const asio::ip::tcp::socket& socket) {
    const std::string address = socket.remote_endpoint().address().to_string();
    return HttpPeer{address == "127.0.0.1" ? HttpPeer::Kind::kOperator : HttpPeer::Kind::kOther,
                    address};
  };
  start();
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> others;
  for (const char* user : {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"}) {
    for (int i = 0; i < 4; ++i) others.push_back(connect(user));
  }
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> operators;
  for (int i = 0; i < 4; ++i) operators.push_back(connect("127.0.0.1"));
  for (auto& socket : operators) EXPECT_EQ(get(*socket), "HTTP/1.1 200 OK");
  EXPECT_EQ(refused(), 4u);  // the fourth other user's four
}

// A peer the kernel did not name is held to max_connections only (no cap per peer).
TEST_F(StatusHttpServerTest, PeersNotNamedShareEveryConnection) {
  peer_of_ = [](const asio::ip::tcp::socket&) { return HttpPeer{}; };
  start();
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> idle;
  for (int i = 0; i < 15; ++i) idle.push_back(connect());
  auto last = connect();
  EXPECT_EQ(get(*last), "HTTP/1.1 200 OK");
  EXPECT_EQ(refused(), 0u);
}

// The kernel names this process's user here (Linux with sock_diag).
TEST(PeerLookup, TheKernelNamesThisProcesssUser) {
  const std::optional<std::string> problem = peer_lookup_problem();
  EXPECT_FALSE(problem.has_value()) << *problem;
}

// By default a peer is the local user at the other end: every socket of this process (the
// server's own user) is one peer, whichever loopback address it comes from.
TEST_F(StatusHttpServerTest, ByDefaultAPeerIsTheLocalUserAtTheOtherEnd) {
  start();
  std::vector<std::unique_ptr<asio::ip::tcp::socket>> sockets;
  for (int i = 0; i < 3; ++i) sockets.push_back(connect("127.0.0.2"));
  for (int i = 0; i < 3; ++i) sockets.push_back(connect("127.0.0.3"));
  // 4 held, 2 closed at accept — were peers told apart by address, 3 + 3 would be held.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (refused() < 2 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // paces the polling
  }
  EXPECT_EQ(refused(), 2u) << "peers were told apart by address, not by user";
}

TEST(HttpRequestParse, MalformedFieldLinesAndTwoHostsAre400) {
  const auto status = [](const std::string& fields) {
    return parse_http_request("GET / HTTP/1.1\r\n" + fields + "\r\n").status;
  };
  EXPECT_EQ(status("Host: a:1\r\n"), 0);
  EXPECT_EQ(status("Host: a:1\r\nAccept: */*\r\n"), 0);
  EXPECT_EQ(status("Host: a:1\r\nHOST: a:1\r\n"), 400);   // the same name, even the same value
  EXPECT_EQ(status("Host : a:1\r\n"), 400);               // a blank before the colon
  EXPECT_EQ(status("Host: a:1\r\n x: folded\r\n"), 400);  // obs-fold
  EXPECT_EQ(status("Host: a:1\r\nno colon here\r\n"), 400);
  EXPECT_EQ(parse_http_request("GET / HTTP/1.1\r\nHost:  a:1 \r\n\r\n").host, "a:1");
}

}  // namespace
}  // namespace host
}  // namespace fedstat
