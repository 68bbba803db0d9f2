// A fedstat-server child process, for the tools and tests that start the real server
// (fedstat-loadgen; tests/common/server_process.h for the benchmarks and tests): started on a
// config file (with extra environment variables when given), waited for until it listens (its
// --port-file), its CPU time read while it runs, stopped with SIGTERM (SIGKILL after
// kStopSeconds) and reaped. Host only. Errors: std::runtime_error when it cannot start, exits
// before listening (with its log) or does not listen in time. Memory: none to speak of. Paper:
// none.
#ifndef FEDSTAT_HOST_TESTING_SERVER_CHILD_H_
#define FEDSTAT_HOST_TESTING_SERVER_CHILD_H_

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fedstat {
namespace tools {

// User + system seconds in `usage`.
inline double cpu_seconds_of(const struct rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

class ServerChild {
 public:
  using path = std::filesystem::path;
  // How long stop() waits for the server to exit after SIGTERM before it sends SIGKILL.
  static constexpr int kStopSeconds = 30;

  // `binary` on `config`, its stderr to `log`; `environment`: "NAME=value" entries added to this
  // process's environment for it. Waits up to `listen_seconds` for `port_file`.
  ServerChild(const std::string& binary, const path& config, const path& port_file, const path& log,
              const std::vector<std::string>& environment = {}, int listen_seconds = 120) {
    // Built before fork: the child only calls what is safe there (open, dup2, execve).
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
    std::string program = binary, config_flag = "--config", port_flag = "--port-file",
                config_path = config.string(), port_path = port_file.string(),
                log_path = log.string();
    char* argv[] = {program.data(),   config_flag.data(), config_path.data(),
                    port_flag.data(), port_path.data(),   nullptr};
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (log_fd < 0 || dup2(log_fd, STDERR_FILENO) < 0) _exit(127);
      close(log_fd);
      execve(program.c_str(), argv, envp.data());
      _exit(127);
    }
    // Polls for the port file the server writes once it listens (its tasks planned and stored).
    for (int i = 0; i < listen_seconds * 100; ++i) {
      std::ifstream in(port_file);
      if (in >> port_) return;
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        std::ifstream text(log);
        const std::string why((std::istreambuf_iterator<char>(text)),
                              std::istreambuf_iterator<char>());
        throw std::runtime_error("the server exited before listening: " + why);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill(pid_, SIGKILL);
    reap(nullptr);
    throw std::runtime_error("the server did not listen within " + std::to_string(listen_seconds) +
                             " s");
  }
  ~ServerChild() { stop(); }
  ServerChild(const ServerChild&) = delete;
  ServerChild& operator=(const ServerChild&) = delete;

  // SIGTERM, then reaped (SIGKILL after kStopSeconds): the server's CPU seconds (user + system)
  // over its whole life.
  double stop() {
    if (pid_ <= 0) return 0;
    kill(pid_, SIGTERM);
    struct rusage usage {};
    int status = 0;
    bool reaped = false, gone = false;  // gone: not a child to wait for (cannot happen here)
    for (int i = 0; i < kStopSeconds * 100 && !reaped && !gone; ++i) {
      const pid_t got = wait4(pid_, &status, WNOHANG, &usage);
      reaped = got == pid_;
      gone = got < 0 && errno != EINTR;
      if (!reaped && !gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!reaped && !gone) {
      kill(pid_, SIGKILL);
      status = reap(&usage);
    }
    pid_ = -1;
    exited_cleanly_ = reaped && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return cpu_seconds_of(usage);
  }
  // After stop(): the server exited on SIGTERM within kStopSeconds with status 0 (an ASan or
  // LeakSanitizer report makes it nonzero).
  bool exited_cleanly() const { return exited_cleanly_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  // The server's CPU seconds so far, to the nanosecond, all its threads (exited ones too): its
  // process CPU clock (clock_getcpuclockid). −1 when it cannot be read; 0 once stopped.
  double cpu_seconds() const {
    if (pid_ <= 0) return 0;
    clockid_t clock{};
    struct timespec now {};
    if (clock_getcpuclockid(pid_, &clock) != 0 || clock_gettime(clock, &now) != 0) return -1;
    return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
  }

 private:
  // Waits for the child whatever signals arrive; its status.
  int reap(struct rusage* usage) {
    int status = 0;
    while (wait4(pid_, &status, 0, usage) < 0 && errno == EINTR) {
    }
    return status;
  }

  pid_t pid_ = -1;
  int port_ = 0;
  bool exited_cleanly_ = false;
};

}  // namespace tools
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TESTING_SERVER_CHILD_H_
