// Issue 39 item 10: removing a device from the credentials file took effect only at a restart.
// The collector reloads the file on SIGHUP: a removed device cannot start a new session (its held
// TLS session does not resume either) and its open connection is closed, the others are served
// as before, and a file that does not parse is refused with the old credentials kept — each
// reload logged. Host only.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <string>

#include "tests/audit/net/audit_server.h"
#include "tests/common/server_process.h"

namespace fedstat {
namespace audit {
namespace {

using namespace std::chrono_literals;

// Replaces the credentials file at once (a temporary file renamed over it), 0600.
void write_credentials(const ServerDir& files, const std::string& text) {
  const fs::path temporary = files.dir / "devices.txt.tmp";
  std::ofstream(temporary) << text;
  chmod(temporary.c_str(), 0600);
  fs::rename(temporary, files.dir / "devices.txt");
}

std::string line_for(const ServerDir& files, uint64_t id) {
  return std::to_string(id) + " " + host::encode_hex(files.key(id).data(), 32) + "\n";
}

// The log's lines with `event`, counted.
size_t events(const ServerDir& files, const std::string& event) {
  const std::string log = file_text(files.log());
  const std::string needle = "\"event\":\"" + event + "\"";
  size_t count = 0;
  for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

TEST(CredentialsReload, SighupRevokesARemovedDeviceAndKeepsTheOthers) {
  ServerDir files;
  write_credentials(files, line_for(files, 1) + line_for(files, 2));
  files.write_config({{"credentials", (files.dir / "devices.txt").string()}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());

  // Device 2 checks in: its TLS session is held for resumption, its connection open.
  tls::TlsPskChannel two;
  ASSERT_TRUE(connect_device(two, server.port(), 2, files.key(2)).ok());
  ASSERT_EQ(check_in(two, 2), "");

  write_credentials(files, line_for(files, 1));  // device 2 removed
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  ASSERT_TRUE(poll_until([&] { return events(files, "credentials_reloaded") == 1; }, 10s))
      << "no reload logged: " << file_text(files.log());

  // Its open connection is closed...
  wire::Envelope answer{};
  Status status;
  ASSERT_TRUE(poll_until(
      [&] {
        status = two.receive(answer, 100);
        return status.code() != StatusCode::kDeadlineExceeded && !status.ok();
      },
      10s))
      << "device 2's connection was still open after its removal";
  EXPECT_EQ(status.code(), StatusCode::kUnavailable) << status.message();
  two.close();
  // ... and neither its held session nor a new handshake opens another.
  status = connect_device(two, server.port(), 2, files.key(2));
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << status.message();
  tls::TlsPskChannel fresh;
  status = connect_device(fresh, server.port(), 2, files.key(2));
  EXPECT_EQ(status.code(), StatusCode::kPermissionDenied) << status.message();

  tls::TlsPskChannel one;  // the device that stayed
  ASSERT_TRUE(connect_device(one, server.port(), 1, files.key(1)).ok());
  EXPECT_EQ(check_in(one, 1), "");
  one.close();

  // A file that does not parse: refused, logged, the credentials in force kept.
  write_credentials(files, line_for(files, 1) + "3 not-a-key\n");
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  ASSERT_TRUE(poll_until([&] { return events(files, "credentials_not_reloaded") == 1; }, 10s))
      << file_text(files.log());
  EXPECT_NE(file_text(files.log()).find("credentials line 2"), std::string::npos)
      << file_text(files.log());
  tls::TlsPskChannel again;
  EXPECT_TRUE(connect_device(again, server.port(), 1, files.key(1)).ok());
  again.close();
  server.stop();
  EXPECT_TRUE(server.exited_cleanly()) << file_text(files.log());
}

// Review M2: a SIGHUP while the file is being rewritten in place. An empty file (the rewrite has
// begun) and one that does not end with a newline (a write in progress, cut after a whole key)
// are refused, the credentials in force kept; a reload that does remove a device names it.
TEST(CredentialsReload, AFileBeingRewrittenIsNotTaken) {
  ServerDir files;
  const fs::path credentials = files.dir / "devices.txt";
  write_credentials(
      files, credentials_line(files, 1) + credentials_line(files, 2) + credentials_line(files, 3));
  files.write_config({{"credentials", credentials.string()}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());

  const auto reload = [&](size_t attempt) {
    EXPECT_EQ(kill(server.pid(), SIGHUP), 0);
    return poll_until(
        [&] {
          return count_events(files.log(), "credentials_reloaded") +
                     count_events(files.log(), "credentials_not_reloaded") ==
                 attempt;
        },
        10s);
  };
  std::ofstream(credentials, std::ios::trunc).close();  // 0 bytes so far
  ASSERT_TRUE(reload(1)) << file_text(files.log());
  std::string cut = credentials_line(files, 1) + credentials_line(files, 2);
  cut.pop_back();  // device 2's key whole, its newline (and device 3) not written yet
  write_credentials(files, cut);
  ASSERT_TRUE(reload(2)) << file_text(files.log());
  EXPECT_EQ(count_events(files.log(), "credentials_reloaded"), 0u)
      << "a file being rewritten was taken: " << file_text(files.log());
  for (uint64_t id : {1, 3}) {
    tls::TlsPskChannel device;
    EXPECT_TRUE(connect_device(device, server.port(), id, files.key(id)).ok())
        << "device " << id << " locked out by a file being rewritten";
  }

  write_credentials(files, credentials_line(files, 1) + credentials_line(files, 2));
  ASSERT_TRUE(reload(3)) << file_text(files.log());
  ASSERT_EQ(count_events(files.log(), "credentials_reloaded"), 1u) << file_text(files.log());
  EXPECT_NE(file_text(files.log()).find("\"removed_ids\":[3]"), std::string::npos)
      << "the reload does not name the device it removed: " << file_text(files.log());
}

// Issue 44's rule on a reload: a server listening off loopback refuses, at start, a credentials
// file holding a key derived from a published fleet secret (anyone could check in as that
// device). A SIGHUP reload that brings in such a key is refused the same way, the credentials in
// force kept: the published key does not connect, the device that was served still is.
TEST(CredentialsReload, OffLoopbackAKeyDerivedFromAPublishedSecretIsRefused) {
  ServerDir files;
  net::DevicePsk own{};
  for (size_t i = 0; i < own.size(); ++i) own[i] = static_cast<uint8_t>(37 * i + 11);
  const std::string own_line = "1 " + host::encode_hex(own.data(), own.size()) + "\n";
  write_credentials(files, own_line);
  files.write_config(
      {{"credentials", (files.dir / "devices.txt").string()}, {"listen", "0.0.0.0:0"}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());

  write_credentials(files, own_line + line_for(files, 2));  // device 2's key is published
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  ASSERT_TRUE(poll_until([&] { return events(files, "credentials_not_reloaded") == 1; }, 10s))
      << "the reload was not refused: " << file_text(files.log());
  EXPECT_EQ(events(files, "credentials_reloaded"), 0u) << file_text(files.log());
  const std::string log = file_text(files.log());
  EXPECT_NE(log.find("the key of device 2 derives from a fleet secret published"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("off loopback: refused"), std::string::npos) << log;
  tls::TlsPskChannel two;
  EXPECT_EQ(connect_device(two, server.port(), 2, files.key(2)).code(),
            StatusCode::kPermissionDenied);
  tls::TlsPskChannel one;
  EXPECT_TRUE(connect_device(one, server.port(), 1, own).ok());
  one.close();
  server.stop();
  EXPECT_TRUE(server.exited_cleanly()) << file_text(files.log());
}

// Review L6: the reload reads on the io thread. A FIFO at the credentials path (it would block
// the open until a writer came) and a file larger than the bound are refused at once, and the
// server goes on serving.
TEST(CredentialsReload, AFifoOrAHugeFileIsRefusedWithoutStallingTheServer) {
  ServerDir files;
  const fs::path credentials = files.dir / "devices.txt";
  write_credentials(files, credentials_line(files, 1));
  files.write_config({{"credentials", credentials.string()}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());

  const fs::path fifo = files.dir / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  fs::rename(fifo, credentials);
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  const bool refused =
      poll_until([&] { return count_events(files.log(), "credentials_not_reloaded") == 1; }, 5s);
  if (!refused) {  // the server waits in open(): a writer lets it go on (and the stop work)
    const int writer = open(credentials.c_str(), O_WRONLY | O_NONBLOCK);
    if (writer >= 0) close(writer);
  }
  ASSERT_TRUE(refused) << "a FIFO at the credentials path stalled the server: "
                       << file_text(files.log());
  tls::TlsPskChannel one;
  EXPECT_TRUE(connect_device(one, server.port(), 1, files.key(1)).ok());
  one.close();

  {  // 100 MiB (sparse: a comment of zero bytes after device 1): refused for its size, unread
    const fs::path huge = files.dir / "huge";
    std::ofstream(huge) << credentials_line(files, 1) << "# ";
    chmod(huge.c_str(), 0600);
    fs::resize_file(huge, uint64_t{100} << 20);
    fs::rename(huge, credentials);
  }
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  ASSERT_TRUE(
      poll_until([&] { return count_events(files.log(), "credentials_not_reloaded") == 2; }, 10s))
      << file_text(files.log());
  EXPECT_NE(file_text(files.log()).find("larger than"), std::string::npos)
      << file_text(files.log());
  tls::TlsPskChannel again;
  EXPECT_TRUE(connect_device(again, server.port(), 1, files.key(1)).ok());
}

// Review L1: a credentials file owned by another user (not root): that user could change which
// devices the server accepts. The server refuses to start on it.
TEST(CredentialsFile, OneOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make a file owned by another user";
  ServerDir files;
  const fs::path credentials = files.dir / "devices.txt";
  write_credentials(files, credentials_line(files, 1));
  ASSERT_EQ(chown(credentials.c_str(), kOtherUser, kOtherUser), 0);
  files.write_config({{"credentials", credentials.string()}});
  Child server({FEDSTAT_SERVER_BINARY, "--config", files.config().string(), "--port-file",
                files.port_file().string()},
               files.dir / "stdout", files.log());
  const std::optional<int> code = server.wait(20s);
  ASSERT_TRUE(code.has_value()) << "the server serves a credentials file another user owns: "
                                << file_text(files.log());
  EXPECT_NE(*code, 0);
  EXPECT_NE(file_text(files.log()).find("owned by uid 65534"), std::string::npos)
      << file_text(files.log());
}

}  // namespace
}  // namespace audit
}  // namespace fedstat
