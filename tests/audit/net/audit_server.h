// Helpers for the net audit tests (issue 39 items 8-10): a scratch directory with a collector's
// config (one clear kl task, a fleet secret or a credentials file), the built server and
// fedstat-netfault as child processes, bounded polling (never a sleep as synchronisation), and a
// device's check-in over the real TLS channel. Host only. Errors: std::runtime_error (setup),
// gtest failures (checks). Memory: none to speak of. Paper: none.
#ifndef FEDSTAT_TESTS_AUDIT_NET_AUDIT_SERVER_H_
#define FEDSTAT_TESTS_AUDIT_NET_AUDIT_SERVER_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "host_server/hex.h"
#include "host_server/net/credentials.h"
#include "nlohmann/json.hpp"
#include "sdk/tls/tls_channel.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/rounds/round_messages.h"

namespace fedstat {
namespace audit {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Polls `condition` every 5 ms until it holds or `bound` has passed; whether it held. The bound
// is a cap on the wait, never what the test waits for.
inline bool poll_until(const std::function<bool()>& condition, std::chrono::milliseconds bound) {
  const Clock::time_point limit = Clock::now() + bound;
  for (;;) {
    if (condition()) return true;
    if (Clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the polling period
  }
}

inline std::string file_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The permission bits of `path` (-1 when it does not exist).
inline int mode_of(const fs::path& path) {
  struct stat s {};
  if (stat(path.c_str(), &s) != 0) return -1;
  return static_cast<int>(s.st_mode & 07777);
}

// A fresh directory holding a clear kl task's reference and, once write_config() ran, a
// collector's config.
class ServerDir {
 public:
  ServerDir() {
    const char* base = getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr ? base : "/tmp") + "/fedstat-audit-net-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = pattern;
    std::ofstream reference(dir / "reference.txt");
    for (int i = 0; i < 20; ++i) reference << i << " " << 100 - i << "\n";
    secret.fill(0x5a);
  }
  ~ServerDir() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
  ServerDir(const ServerDir&) = delete;
  ServerDir& operator=(const ServerDir&) = delete;

  // A clear (trust none) kl task that admits up to `max_clients` devices.
  static json task(uint32_t id, uint32_t max_clients = 8) {
    return json{{"id", id},
                {"kind", "kl"},
                {"trust", "none"},
                {"epsilon", 0},
                {"delta", 0},
                {"min_clients", 2},
                {"max_clients", max_clients},
                {"deadline_seconds", 600},
                {"admission_seconds", 300},
                {"phase_timeout_seconds", 300},
                {"seed", std::string(62, '0') + "31"},
                {"kl", {{"reference", "reference.txt"}, {"rounds", 30}, {"lambda", 0.1}}}};
  }
  // Writes server.json: listen on 127.0.0.1:0, store server.db, one task, the fleet secret
  // (unless `fields` names credentials), and `fields` on top.
  void write_config(const json& fields = json::object()) const {
    json config{{"listen", "127.0.0.1:0"},
                {"store", (dir / "server.db").string()},
                {"tasks", json::array({task(1)})}};
    if (!fields.contains("credentials")) {
      config["fleet_secret"] = host::encode_hex(secret.data(), secret.size());
    }
    for (auto it = fields.begin(); it != fields.end(); ++it) config[it.key()] = it.value();
    std::ofstream(dir / "server.json") << config.dump();
  }
  net::DevicePsk key(uint64_t id) const { return net::derive_device_psk(secret, id); }
  fs::path config() const { return dir / "server.json"; }
  fs::path log() const { return dir / "server.log"; }
  fs::path port_file() const { return dir / "port"; }

  fs::path dir;
  std::array<uint8_t, 32> secret{};
};

// Connects `channel` as device `id` with `key`.
inline Status connect_device(tls::TlsPskChannel& channel, int port, uint64_t id,
                             const net::DevicePsk& key) {
  const std::string endpoint = "127.0.0.1:" + std::to_string(port);
  const std::string identity = std::to_string(id);
  return channel.connect(
      endpoint.c_str(),
      ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
      ByteSpan(key.data(), key.size()), 10000);
}

// A check-in on an open channel: the ClientHello, and whether the answer was a Task ("" when it
// was; otherwise what came instead).
inline std::string check_in(tls::TlsPskChannel& channel, uint64_t id) {
  Status status = channel.send(host::testing::hello(id));
  wire::Envelope answer{};
  if (status.ok()) status = channel.receive(answer, 10000);
  if (!status.ok()) return std::string("no answer: ") + status.message();
  if (answer.which_body == fedstat_v1_Envelope_task_tag) return "";
  if (answer.which_body == fedstat_v1_Envelope_server_error_tag) {
    return std::string("ServerError: ") + answer.body.server_error.detail;
  }
  return "answer with body " + std::to_string(answer.which_body);
}

// A child process: `argv` with stdout to `out` and stderr to `err` (files), waited for with a
// bound; SIGKILLed by the destructor if it still runs.
class Child {
 public:
  Child(std::vector<std::string> argv, const fs::path& out, const fs::path& err) {
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const std::string out_path = out.string(), err_path = err.string();
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      const int o = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int e = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0) _exit(127);
      execv(args[0], args.data());
      _exit(127);
    }
  }
  ~Child() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Its exit status once it exits within `bound` (−1 for a signal); nullopt while it runs.
  std::optional<int> wait(std::chrono::milliseconds bound) {
    poll_until(
        [&] {
          if (pid_ <= 0) return true;
          int status = 0;
          if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
          pid_ = -1;
          code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
          return true;
        },
        bound);
    return code_;
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> code_;
};

// The log's lines with `"event":"<event>"`, counted.
inline size_t count_events(const fs::path& log, const std::string& event) {
  const std::string text = file_text(log);
  const std::string needle = "\"event\":\"" + event + "\"";
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

// A credentials file's line for device `id` of `files`' fleet.
inline std::string credentials_line(const ServerDir& files, uint64_t id) {
  return std::to_string(id) + " " + host::encode_hex(files.key(id).data(), 32) + "\n";
}

// The sockets process `pid` holds (its /proc/<pid>/fd entries that are sockets).
inline size_t sockets_of(pid_t pid) {
  size_t count = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
    std::error_code ignored;
    if (fs::read_symlink(entry.path(), ignored).string().rfind("socket:", 0) == 0) ++count;
  }
  return count;
}

// A blocking TCP connection from `source` (a loopback address; "" for any) to 127.0.0.1:`port`;
// -1 when it cannot be made.
inline int connect_from(const std::string& source, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{}, to{};
  from.sin_family = to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
  bool ok = fd >= 0;
  if (ok && !source.empty()) {
    inet_pton(AF_INET, source.c_str(), &from.sin_addr);
    ok = bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) == 0;
  }
  ok = ok && connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) == 0;
  if (!ok && fd >= 0) close(fd);
  return ok ? fd : -1;
}

// Another local user ("nobody" and the uids below it): tests that act as one run as root only.
constexpr uid_t kOtherUser = 65534;

// A child process running as `uid` that holds `count` idle connections to 127.0.0.1:`port` until
// destroyed. Call as root only.
class OtherUser {
 public:
  OtherUser(uid_t uid, int port, int count) {
    int ready[2], hold[2];
    if (pipe(ready) != 0 || pipe(hold) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      close(ready[0]);
      close(hold[1]);
      if (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0) _exit(1);
      int opened = 0;
      for (int i = 0; i < count; ++i) opened += connect_from("", port) >= 0 ? 1 : 0;
      const char c = opened == count ? 'y' : 'n';
      if (write(ready[1], &c, 1) != 1) _exit(1);
      char d;
      while (read(hold[0], &d, 1) > 0) {
      }
      _exit(0);
    }
    close(ready[1]);
    close(hold[0]);
    hold_ = hold[1];
    char c = 0;
    ok_ = read(ready[0], &c, 1) == 1 && c == 'y';
    close(ready[0]);
  }
  ~OtherUser() {
    close(hold_);
    kill(pid_, SIGKILL);  // a later sibling inherited our pipe's write end: EOF alone won't come
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  OtherUser(const OtherUser&) = delete;
  OtherUser& operator=(const OtherUser&) = delete;
  // Whether it made all its connections.
  bool ok() const { return ok_; }

 private:
  pid_t pid_ = -1;
  int hold_ = -1;
  bool ok_ = false;
};

}  // namespace audit
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_AUDIT_NET_AUDIT_SERVER_H_
