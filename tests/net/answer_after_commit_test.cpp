// The built fedstat-server answers a device only after what it decided the answer on is on disk
// (stored before answered), as its serve() wires it: the rounds queue their writes to the store's
// writer thread and answer through the gate that holds each answer until those writes commit
// (store/write_behind_store.h, rounds/gated_outbox.h). Here the server runs with a shim
// (hold_wal_writes.c, LD_PRELOAD) that keeps its writer inside a commit: a device's ClientHello
// is stored, so the Task must not come while that commit is held, and must come once it is let
// go. A server whose rounds answered past the gate (the Coordinator handed the connections
// directly) sends the Task at once and fails. Host only.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "host_server/hex.h"
#include "host_server/net/credentials.h"
#include "nlohmann/json.hpp"
#include "sdk/tls/tls_channel.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/common/server_process.h"
#include "tests/rounds/round_messages.h"

namespace fedstat {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t kDevice = 1;

// A fresh directory holding a clear kl task's files and the server's config.
struct ServerFiles {
  fs::path dir;
  std::array<uint8_t, 32> secret{};
  ServerFiles() {
    char pattern[] = "/tmp/fedstat-answer-after-commit-XXXXXX";
    if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = pattern;
    std::ofstream reference(dir / "reference.txt");
    for (int i = 0; i < 20; ++i) reference << i << " " << 100 - i << "\n";
    reference.close();
    secret.fill(0x5a);
    const json task{{"id", 1},
                    {"kind", "kl"},
                    {"trust", "none"},
                    {"epsilon", 0},
                    {"delta", 0},
                    {"min_clients", 2},
                    {"max_clients", 2},
                    {"deadline_seconds", 600},
                    {"admission_seconds", 300},
                    {"phase_timeout_seconds", 300},
                    {"seed", std::string(62, '0') + "31"},
                    {"kl", {{"reference", "reference.txt"}, {"rounds", 30}, {"lambda", 0.1}}}};
    const json config{{"listen", "127.0.0.1:0"},
                      {"store", (dir / "server.db").string()},
                      {"fleet_secret", host::encode_hex(secret.data(), secret.size())},
                      {"tasks", json::array({task})}};
    std::ofstream(dir / "server.json") << config.dump();
  }
  ~ServerFiles() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

// Waits up to 30 s for `path` to exist (the shim's mark that the writer is held).
bool appears(const fs::path& path) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!fs::exists(path)) {
    if (std::chrono::steady_clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Lets the held commit go when the test ends, however it ends: the server can then stop.
struct ReleasedAtExit {
  fs::path hold;
  ~ReleasedAtExit() {
    std::error_code ignored;
    fs::remove(hold, ignored);
  }
};

Status connect_device(tls::TlsPskChannel& channel, const std::string& endpoint,
                      const std::array<uint8_t, 32>& secret, uint64_t id) {
  const std::string identity = std::to_string(id);
  const net::DevicePsk psk = net::derive_device_psk(secret, id);
  return channel.connect(
      endpoint.c_str(),
      ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
      ByteSpan(psk.data(), psk.size()), 10000);
}

// The preloaded libraries for the server: the shim, then any this process was given.
std::string preload() {
  const char* inherited = getenv("LD_PRELOAD");
  return std::string("LD_PRELOAD=") + FEDSTAT_HOLD_WAL_WRITES +
         (inherited != nullptr && *inherited != '\0' ? std::string(":") + inherited : "");
}

// An ASan server's runtime must otherwise come first among the preloaded libraries.
std::string asan_options() {
  const char* inherited = getenv("ASAN_OPTIONS");
  return std::string("ASAN_OPTIONS=verify_asan_link_order=0") +
         (inherited != nullptr && *inherited != '\0' ? std::string(":") + inherited : "");
}

TEST(AnswerAfterCommit, TheServerSendsNoTaskUntilTheStoredClientHelloHasCommitted) {
  ServerFiles files;
  const fs::path hold = files.dir / "hold";
  testing::ServerProcess server(
      files.dir / "server.json", files.dir / "port", files.dir / "server.log",
      {preload(), "FEDSTAT_TEST_HOLD_FILE=" + hold.string(), asan_options()});
  const ReleasedAtExit release_at_exit{hold};  // destroyed before the server is stopped
  std::ofstream(hold).close();                 // from now on the server's commits wait
  const std::string endpoint = "127.0.0.1:" + std::to_string(server.port());

  tls::TlsPskChannel channel;
  ASSERT_TRUE(connect_device(channel, endpoint, files.secret, kDevice).ok());
  ASSERT_TRUE(channel.send(host::testing::hello(kDevice)).ok());
  ASSERT_TRUE(appears(files.dir / "hold.entered"))
      << "the server never wrote its log: the ClientHello was not stored";

  // The writer is inside the commit of the ClientHello. The io thread is not stuck behind it
  // (a second device's TLS handshake completes), so what holds the Task is the gate alone.
  tls::TlsPskChannel other;
  EXPECT_TRUE(connect_device(other, endpoint, files.secret, kDevice + 1).ok());
  other.close();
  // A server that answered past the gate has sent the Task by now: give it 500 ms to arrive (a
  // correct server never sends it; the wait then only delays the test).
  wire::Envelope answer{};
  const Status early = channel.receive(answer, 500);
  EXPECT_EQ(early.code(), StatusCode::kDeadlineExceeded)
      << "an answer came while its ClientHello was not yet on disk (body "
      << static_cast<int>(answer.which_body) << ")";

  fs::remove(hold);  // the commit goes on; the Task follows it
  const Status later = channel.receive(answer, 30000);
  ASSERT_TRUE(later.ok()) << later.message();
  EXPECT_EQ(answer.which_body, fedstat_v1_Envelope_task_tag);
  EXPECT_EQ(answer.body.task.task_id, 1u);
  channel.close();
  server.stop();
  EXPECT_TRUE(server.exited_cleanly()) << "see " << (files.dir / "server.log");
}

}  // namespace
}  // namespace fedstat
