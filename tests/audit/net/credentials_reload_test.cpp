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

}  // namespace
}  // namespace audit
}  // namespace fedstat
