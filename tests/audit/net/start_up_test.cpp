// Issue 39 item 10 after its review (findings L2, L3, L4): signals and files around start-up.
// L2: a SIGHUP killed the TAgg (it handles only SIGTERM and SIGINT) and a collector still starting
// (its handler came after the store's check). L3: the store's check (linear in its size) ran with
// nothing logged before it. L4: the port file's temporary name was written through a planted
// symbolic link. Host only.
#include <fcntl.h>
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

// Whether process `pid` has `file` open (a /proc/<pid>/fd entry pointing at it).
bool has_open(pid_t pid, const fs::path& file) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
    std::error_code ignored;
    if (fs::read_symlink(entry.path(), ignored) == file) return true;
  }
  return false;
}

// A SIGHUP while the collector checks its store (held there by this process's lock on the file:
// SQLite waits for it) neither kills it nor is lost: once listening, the collector reloads its
// credentials. The check is announced in the log before it starts.
TEST(StartUp, ASighupWhileTheStoreIsCheckedNeitherKillsTheCollectorNorIsLost) {
  ServerDir files;
  const fs::path credentials = files.dir / "devices.txt";
  std::ofstream(credentials) << credentials_line(files, 1);
  chmod(credentials.c_str(), 0600);
  files.write_config({{"credentials", credentials.string()}});
  const fs::path db = files.dir / "server.db";
  const int lock_fd = open(db.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  ASSERT_GE(lock_fd, 0);
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;  // l_start 0, l_len 0: the whole file, SQLite's lock bytes too
  ASSERT_EQ(fcntl(lock_fd, F_SETLK, &whole), 0);

  Child server({FEDSTAT_SERVER_BINARY, "--config", files.config().string(), "--port-file",
                files.port_file().string()},
               files.dir / "stdout", files.log());
  // The server (once exec'd: before, the child holds this process's descriptors) has the store
  // open: it is in its start-up, SQLite waiting for the lock (5 s at most).
  const fs::path resolved = fs::canonical(db), binary = fs::canonical(FEDSTAT_SERVER_BINARY);
  const fs::path exe = "/proc/" + std::to_string(server.pid()) + "/exe";
  const bool opened = poll_until(
      [&] {
        std::error_code ignored;
        return fs::read_symlink(exe, ignored) == binary && has_open(server.pid(), resolved);
      },
      4s);
  ASSERT_EQ(kill(server.pid(), SIGHUP), 0);
  const std::string log_while_checked = file_text(files.log());
  close(lock_fd);  // the lock goes with it
  ASSERT_TRUE(opened) << file_text(files.log());
  EXPECT_NE(log_while_checked.find("\"event\":\"checking_store\""), std::string::npos)
      << "nothing logged before the store's check: " << log_while_checked;

  std::optional<int> code;
  const bool listening = poll_until(
      [&] { return (code = server.wait(0ms)).has_value() || fs::exists(files.port_file()); }, 30s);
  ASSERT_FALSE(code.has_value()) << "SIGHUP during start-up ended the collector (status " << *code
                                 << "): " << file_text(files.log());
  ASSERT_TRUE(listening) << file_text(files.log());
  EXPECT_TRUE(
      poll_until([&] { return count_events(files.log(), "credentials_reloaded") == 1; }, 10s))
      << "the SIGHUP received during start-up was lost: " << file_text(files.log());
}

// The TAgg has nothing to reload: SIGHUP is logged as such, and it goes on.
TEST(StartUp, TheTaggSurvivesSighup) {
  ServerDir files;
  const json task = {{"id", 5},
                     {"kind", "kl"},
                     {"trust", "tagg"},
                     {"epsilon", 8.0},
                     {"delta", 1e-6},
                     {"min_clients", 2},
                     {"max_clients", 2},
                     {"deadline_seconds", 600},
                     {"admission_seconds", 120},
                     {"phase_timeout_seconds", 600},
                     {"seed", std::string(62, '0') + "51"},
                     {"kl", {{"reference", "reference.txt"}, {"rounds", 30}, {"lambda", 0.1}}}};
  std::ofstream(files.config()) << json{
      {"role", "tagg"},
      {"listen", "127.0.0.1:0"},
      {"store", (files.dir / "tagg.db").string()},
      {"collectors", {{"collector-1", std::string(64, 'c')}}},
      {"tasks", json::array({task})}}.dump();
  chmod(files.config().c_str(), 0600);
  testing::ServerProcess tagg(files.config(), files.port_file(), files.log());
  ASSERT_EQ(kill(tagg.pid(), SIGHUP), 0);
  int status = 0;
  bool died = false, logged = false;
  poll_until(
      [&] {
        died = waitpid(tagg.pid(), &status, WNOHANG) == tagg.pid();
        logged = file_text(files.log()).find("nothing to reload") != std::string::npos;
        return died || logged;
      },
      10s);
  ASSERT_FALSE(died) << "the TAgg died on SIGHUP"
                     << (WIFSIGNALED(status) ? " (signal " + std::to_string(WTERMSIG(status)) + ")"
                                             : std::string());
  EXPECT_TRUE(logged) << file_text(files.log());
}

// A symbolic link planted at the port file's temporary name (PATH.tmp) is not written through.
TEST(StartUp, TheServerDoesNotWriteItsPortThroughAPlantedLink) {
  ServerDir files;
  const fs::path victim = files.dir / "victim.txt";  // stands for any file the server can write
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, files.dir / "port.tmp");
  files.write_config();
  testing::ServerProcess server(files.config(), files.port_file(), files.log());
  EXPECT_EQ(file_text(victim), "precious\n") << "the server wrote its port through the link";
  EXPECT_EQ(std::to_string(server.port()) + "\n", file_text(files.port_file()));
}

}  // namespace
}  // namespace audit
}  // namespace fedstat
