// Issue 39 item 10 after its review (finding M3): the status page's listener on a running
// collector. Its cap per peer (4 of 16) keys a peer by the local user at the other end
// (sock_diag); where the kernel cannot say (a hardened unit without AF_NETLINK, a container) every
// loopback peer was one "address 127.0.0.1", so any local user's 4 idle sockets locked the
// operator out; and 4 other users x 4 sockets took all 16. Now: the server warns at start when it
// cannot tell users apart and then applies no cap per peer (the shared 16, as before the cap),
// and slots are kept for the server's own user and root. Host only; the other users' case runs
// as root only.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "host_server/testing/server_child.h"
#include "tests/audit/net/audit_server.h"

namespace fedstat {
namespace audit {
namespace {

using namespace std::chrono_literals;

// The port of the status listener, from the log's "status_listening" line (0: none yet).
int status_port(const ServerDir& files) {
  std::istringstream lines(file_text(files.log()));
  std::string line;
  while (std::getline(lines, line)) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", "") == "status_listening") return j.value("port", 0);
  }
  return 0;
}

// The operator's GET /metrics: the response's status line ("" when closed without an answer).
std::string operator_get(int port) {
  const int fd = connect_from("", port);
  if (fd < 0) return "connect failed";
  timeval wait{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  const std::string request =
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n\r\n";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string got;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) got.append(buffer, static_cast<size_t>(n));
  close(fd);
  return got.substr(0, got.find("\r\n"));
}

// The collector with a status page on 127.0.0.1, started through `launcher` (the server itself,
// or deny_netlink's launcher).
std::unique_ptr<tools::ServerChild> start_with_status(const ServerDir& files,
                                                      const std::string& launcher) {
  files.write_config({{"status_listen", "127.0.0.1:0"}});
  return std::make_unique<tools::ServerChild>(
      launcher, files.config(), files.port_file(), files.log(),
      std::vector<std::string>{std::string("FEDSTAT_AUDIT_REAL_SERVER=") + FEDSTAT_SERVER_BINARY},
      60);
}

// systemd's RestrictAddressFamilies without AF_NETLINK: the server says at start that it cannot
// tell local users apart, and 4 idle sockets (whoever holds them: to the server they are all
// "127.0.0.1") do not keep the operator's request out.
TEST(StatusPeers, WithoutSockDiagTheServerWarnsAndFourSocketsDoNotLockTheOperatorOut) {
#if !defined(__x86_64__) || !defined(FEDSTAT_AUDIT_DENY_NETLINK)
  GTEST_SKIP() << "the launcher that denies AF_NETLINK is built for x86-64 Linux only";
#else
  ServerDir files;
  auto server = start_with_status(files, FEDSTAT_AUDIT_DENY_NETLINK);
  int port = 0;
  ASSERT_TRUE(poll_until([&] { return (port = status_port(files)) != 0; }, 10s));
  const std::string log = file_text(files.log());
  EXPECT_NE(log.find("\"detail\":\"the status page cannot tell local users apart"),
            std::string::npos)
      << "no warning at start: " << log;
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(connect_from("", port));
  const std::string answer = operator_get(port);
  for (int fd : idle) close(fd);
  EXPECT_EQ(answer, "HTTP/1.1 200 OK") << "4 idle sockets locked the operator out";
#endif
}

// Four other users hold 4 idle sockets each (their whole share each): the server's own user
// (the operator) still gets an answer.
TEST(StatusPeers, FourOtherUsersCannotTakeEverySlot) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to act as other users";
  ServerDir files;
  auto server = start_with_status(files, FEDSTAT_SERVER_BINARY);
  int port = 0;
  ASSERT_TRUE(poll_until([&] { return (port = status_port(files)) != 0; }, 10s));
  std::vector<std::unique_ptr<OtherUser>> others;
  for (uid_t uid : {kOtherUser, kOtherUser - 1, kOtherUser - 2, kOtherUser - 3}) {
    others.push_back(std::make_unique<OtherUser>(uid, port, 4));
    ASSERT_TRUE(others.back()->ok());
  }
  EXPECT_EQ(operator_get(port), "HTTP/1.1 200 OK") << "4 users x 4 sockets starved the operator";
}

}  // namespace
}  // namespace audit
}  // namespace fedstat
