// fedstat-netfault --watch-pid: the server's memory, descriptors and CPU time, sampled from
// /proc every 50 ms on a thread of its own. Host only. Memory: none to speak of. Paper: none.
#ifndef FEDSTAT_HOST_TESTING_NETFAULT_SERVER_WATCH_H_
#define FEDSTAT_HOST_TESTING_NETFAULT_SERVER_WATCH_H_

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "host_server/testing/netfault_support.h"
#include "host_server/tools/process_stats.h"

namespace fedstat {
namespace netfault {

// ---- The server's memory and descriptors, sampled from /proc ---------------------------------

class ServerWatch {
 public:
  explicit ServerWatch(int pid) : pid_(pid) {
    if (pid_ <= 0) return;
    rss_before_ = rss_kb();
    fds_before_ = fds();
    cpu_before_ = cpu_seconds();
    rss_max_ = rss_before_;
    fds_max_ = fds_before_;
    thread_ = std::thread([this] {
      while (!stop_) {
        sample();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the sampling period
      }
    });
  }
  ~ServerWatch() { finish(); }
  void finish() {
    if (!thread_.joinable()) return;
    stop_ = true;
    thread_.join();
    sample();
  }
  json report() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return json{{"rss_before_kb", rss_before_},
                {"rss_max_kb", rss_max_},
                {"fds_before", fds_before_},
                {"fds_max", fds_max_},
                {"cpu_seconds", cpu_last_ - cpu_before_},
                {"samples", samples_}};
  }

 private:
  long rss_kb() const { return tools::process_status_kb(pid_, "VmRSS"); }
  double cpu_seconds() const { return std::max(0.0, tools::process_cpu_seconds(pid_)); }
  long fds() const {
    DIR* dir = opendir(("/proc/" + std::to_string(pid_) + "/fd").c_str());
    if (dir == nullptr) return -1;
    long n = 0;
    while (dirent* entry = readdir(dir)) {
      if (entry->d_name[0] != '.') ++n;
    }
    closedir(dir);
    return n;
  }
  void sample() {
    const long rss = rss_kb(), open = fds();
    const double cpu = cpu_seconds();
    std::lock_guard<std::mutex> lock(mutex_);
    cpu_last_ = std::max(cpu_last_, cpu);
    rss_max_ = std::max(rss_max_, rss);
    fds_max_ = std::max(fds_max_, open);
    ++samples_;
  }

  int pid_;
  long rss_before_ = -1, fds_before_ = -1;
  mutable std::mutex mutex_;
  long rss_max_ = -1, fds_max_ = -1;
  double cpu_before_ = 0, cpu_last_ = 0;
  long samples_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace netfault
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TESTING_NETFAULT_SERVER_WATCH_H_
