// A fedstat-server child process for the benchmarks that measure the real server
// (ingest_bench.cpp, tls_handshake_bench.cpp): started on a config file, waited for until it
// listens (its --port-file), stopped with SIGTERM and reaped. FEDSTAT_SERVER_BINARY is the built
// server's path (a compile definition). Host only. Errors: std::runtime_error when it cannot
// start or does not listen within 60 s. Memory: none to speak of.
#ifndef FEDSTAT_TESTS_BENCH_SERVER_PROCESS_H_
#define FEDSTAT_TESTS_BENCH_SERVER_PROCESS_H_

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace fedstat {
namespace bench {

class ServerProcess {
 public:
  using path = std::filesystem::path;
  ServerProcess(const path& config, const path& port_file, const path& log) {
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      if (std::freopen(log.c_str(), "w", stderr) == nullptr) _exit(127);
      execl(FEDSTAT_SERVER_BINARY, FEDSTAT_SERVER_BINARY, "--config", config.c_str(), "--port-file",
            port_file.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // Polls for the port file the server writes once it listens: bounded at 60 s.
    for (int i = 0; i < 6000; ++i) {
      std::ifstream in(port_file);
      if (in >> port_) return;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        throw std::runtime_error("fedstat-server exited before listening (see " + log.string() +
                                 ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw std::runtime_error("fedstat-server did not listen within 60 s");
  }
  ~ServerProcess() { stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // SIGTERM, then reaped: the server's CPU seconds (user + system) over its whole life.
  double stop() {
    if (pid_ <= 0) return 0;
    kill(pid_, SIGTERM);
    int status = 0;
    struct rusage usage {};
    wait4(pid_, &status, 0, &usage);
    pid_ = -1;
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// Raises this process's descriptor limit to at least `wanted` (up to the hard limit): one socket
// per emulated device.
inline void raise_descriptor_limit(rlim_t wanted) {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= wanted) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace bench
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_BENCH_SERVER_PROCESS_H_
