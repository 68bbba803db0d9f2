// Issue 39 item 8: one credential (or one address) must not take every connection slot of a
// running server. The attack reproduced: device 77 opened 40 connections (max_connections 40) and
// kept each from going idle with frames that are not a ClientHello, so honest devices were closed
// at accept. Here: fedstat-netfault's slot_hog (and silent, from a second loopback address)
// against the built server, an honest device checking in meanwhile, and the hostile connections
// closed by the handshake time-out (handshake_timeout_ms, not idle_timeout_ms: they never checked
// in). Host only.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/audit/net/audit_server.h"
#include "tests/common/server_process.h"

namespace fedstat {
namespace audit {
namespace {

using namespace std::chrono_literals;

// Late, never early: the handshake clock starts at accept, and a sanitized server on a shared
// 2-core machine closes a little after its deadline.
constexpr double kSlackMs = 3000;
constexpr uint32_t kHandshakeMs = 1000;

std::string endpoint(int port) {
  return "127.0.0.1:" + std::to_string(port);
}

TEST(HostilePeers, OneCredentialCannotTakeEverySlot) {
  ServerDir files;
  files.write_config({{"max_connections", 40},
                      {"handshake_timeout_ms", kHandshakeMs},
                      {"idle_timeout_ms", 60000}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());
  const fs::path ready = files.dir / "ready";
  Child hog({FEDSTAT_NETFAULT_BINARY,
             "--attack",
             "slot_hog",
             "--server",
             endpoint(server.port()),
             "--fleet-secret",
             host::encode_hex(files.secret.data(), files.secret.size()),
             "--id",
             "77",
             "--count",
             "40",
             "--interval-ms",
             "100",
             "--seconds",
             "1",
             "--wait-seconds",
             "10",
             "--ready-file",
             ready.string(),
             "--json"},
            files.dir / "hog.json", files.dir / "hog.err");
  ASSERT_TRUE(poll_until([&] { return fs::exists(ready); }, 60s))
      << file_text(files.dir / "hog.err");

  // Device 77 has made its 40 connections, each sending an Ack every 100 ms and never a
  // ClientHello. An honest device must still get in and get its task.
  tls::TlsPskChannel honest;
  const Status connected = connect_device(honest, server.port(), 5, files.key(5));
  ASSERT_TRUE(connected.ok()) << "an honest device could not connect while device 77 held its "
                              << "connections: " << connected.message();
  EXPECT_EQ(check_in(honest, 5), "");
  honest.close();

  ASSERT_EQ(hog.wait(30s), 0) << file_text(files.dir / "hog.err");
  const json attack = json::parse(file_text(files.dir / "hog.json"));
  EXPECT_EQ(attack["handshake_failures"], 0) << attack.dump();
  EXPECT_EQ(attack["still_open"], 0)
      << "connections that never sent a ClientHello stayed open: " << attack.dump();
  EXPECT_LE(attack["lifetime_ms"]["max"].get<double>(), kHandshakeMs + kSlackMs)
      << "a connection that never checked in outlived handshake_timeout_ms: " << attack.dump();
}

TEST(HostilePeers, FramesBeforeAClientHelloDoNotKeepAConnectionOpen) {
  ServerDir files;
  files.write_config({{"handshake_timeout_ms", kHandshakeMs}, {"idle_timeout_ms", 60000}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());
  wire::Envelope ack = wire::make_envelope();  // anything but a ClientHello
  ack.which_body = fedstat_v1_Envelope_ack_tag;

  const Clock::time_point start = Clock::now();
  tls::TlsPskChannel rogue;
  ASSERT_TRUE(connect_device(rogue, server.port(), 77, files.key(77)).ok());
  bool closed = false;
  size_t refusals = 0;
  // An Ack every 100 ms (the wait for a next answer that does not come paces it); at most 8 s.
  while (!closed && Clock::now() - start < 8s) {
    wire::Envelope answer{};
    Status status = rogue.send(ack);
    if (status.ok()) status = rogue.receive(answer, 2000);  // "send ClientHello first"
    if (status.ok()) {
      ++refusals;
      status = rogue.receive(answer, 100);
    }
    closed = status.code() == StatusCode::kUnavailable;
  }
  const double lived_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  EXPECT_GT(refusals, 0u) << "the server never answered the Acks";
  ASSERT_TRUE(closed) << "a connection sending frames but never a ClientHello was open after "
                      << lived_ms << " ms (handshake_timeout_ms " << kHandshakeMs
                      << ", idle_timeout_ms 60000)";
  EXPECT_LE(lived_ms, kHandshakeMs + kSlackMs);
  EXPECT_GE(lived_ms, kHandshakeMs - 50);  // the time-out, not something else, closed it
}

// The per-address cap: max_connections_per_address with loopback counted like any address
// (exempt_loopback_peers false), so that two loopback addresses stand for two hosts.
TEST(HostilePeers, OneAddressCannotTakeEverySlot) {
  ServerDir files;
  files.write_config({{"max_connections", 40},
                      {"handshake_timeout_ms", 10000},
                      {"max_connections_per_address", 8},
                      {"exempt_loopback_peers", false}});
  testing::ServerProcess server(files.config(), files.port_file(), files.log());
  const fs::path ready = files.dir / "ready";
  // 40 TCP connections from 127.0.0.2 that send nothing (no credential needed).
  Child flood({FEDSTAT_NETFAULT_BINARY, "--attack", "silent", "--server", endpoint(server.port()),
               "--source", "127.0.0.2", "--no-reopen", "--count", "40", "--seconds", "2",
               "--wait-seconds", "0", "--ready-file", ready.string(), "--json"},
              files.dir / "flood.json", files.dir / "flood.err");
  ASSERT_TRUE(poll_until([&] { return fs::exists(ready); }, 60s))
      << file_text(files.dir / "flood.err");

  tls::TlsPskChannel honest;  // from 127.0.0.1
  const Status connected = connect_device(honest, server.port(), 5, files.key(5));
  ASSERT_TRUE(connected.ok()) << "an honest device could not connect while 127.0.0.2 held 40 "
                              << "connections: " << connected.message();
  EXPECT_EQ(check_in(honest, 5), "");
  honest.close();

  ASSERT_EQ(flood.wait(30s), 0) << file_text(files.dir / "flood.err");
  const json attack = json::parse(file_text(files.dir / "flood.json"));
  // 8 kept (until the 10 s handshake time-out, after the attack ended), 32 closed (each the
  // address's oldest not checked in, for a newer one: its own address's, nobody else's).
  EXPECT_EQ(attack["still_open"], 8) << attack.dump();
  EXPECT_EQ(attack["closed_by_server"], 32) << attack.dump();
  if (attack["closed_by_server"].get<int>() > 0) {
    EXPECT_LT(attack["lifetime_ms"]["max"].get<double>(), 2000) << attack.dump();
  }
}

}  // namespace
}  // namespace audit
}  // namespace fedstat
