// A fedstat-server child process for the tests and benchmarks that run the real server
// (tests/bench/ingest_bench.cpp, tls_handshake_bench.cpp, tests/net/answer_after_commit_test.cpp):
// started on a config file (with extra environment variables when given), waited for until it
// listens (its --port-file), its CPU time read while it runs, stopped with SIGTERM and reaped.
// FEDSTAT_SERVER_BINARY is the built server's path (a compile definition). Host only. Errors:
// std::runtime_error when it cannot start or does not listen within 60 s. Memory: none to speak
// of.
#ifndef FEDSTAT_TESTS_COMMON_SERVER_PROCESS_H_
#define FEDSTAT_TESTS_COMMON_SERVER_PROCESS_H_

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
#include <vector>

namespace fedstat {
namespace testing {

class ServerProcess {
 public:
  using path = std::filesystem::path;
  // `environment`: "NAME=value" entries added to this process's environment for the server.
  ServerProcess(const path& config, const path& port_file, const path& log,
                const std::vector<std::string>& environment = {}) {
    // Built before fork: the child only calls what is safe there.
    std::vector<std::string> variables(environment);
    for (char** v = environ; *v != nullptr; ++v) {  // less those given: each name once
      const std::string inherited = *v;
      const std::string name = inherited.substr(0, inherited.find('=') + 1);
      if (std::none_of(environment.begin(), environment.end(),
                       [&](const std::string& given) { return given.rfind(name, 0) == 0; })) {
        variables.push_back(inherited);
      }
    }
    std::vector<char*> envp;
    for (std::string& v : variables) envp.push_back(v.data());
    envp.push_back(nullptr);
    std::string binary = FEDSTAT_SERVER_BINARY, config_flag = "--config", port_flag = "--port-file",
                config_path = config.string(), port_path = port_file.string();
    char* argv[] = {binary.data(),    config_flag.data(), config_path.data(),
                    port_flag.data(), port_path.data(),   nullptr};
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      if (std::freopen(log.c_str(), "w", stderr) == nullptr) _exit(127);
      execve(binary.c_str(), argv, envp.data());
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
  // The server's CPU seconds so far, to the nanosecond: the sum over its threads of
  // /proc/PID/task/TID/schedstat's first field (time spent on a CPU). A thread that has exited is
  // not counted; the server's io and writer threads live as long as it does. 0 once stopped.
  double cpu_seconds() const {
    if (pid_ <= 0) return 0;
    double seconds = 0;
    const path tasks = "/proc/" + std::to_string(pid_) + "/task";
    std::error_code error;
    for (const auto& thread : std::filesystem::directory_iterator(tasks, error)) {
      std::ifstream schedstat(thread.path() / "schedstat");
      unsigned long long on_cpu_ns = 0;
      if (schedstat >> on_cpu_ns) seconds += 1e-9 * static_cast<double>(on_cpu_ns);
    }
    return seconds;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// This process's CPU seconds so far (user + system, all its threads, exited ones included).
inline double own_cpu_seconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

// Raises this process's descriptor limit to at least `wanted` (up to the hard limit): one socket
// per emulated device.
inline void raise_descriptor_limit(rlim_t wanted) {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= wanted) return;
  limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
  setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace testing
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_COMMON_SERVER_PROCESS_H_
