// What Linux's /proc says about another process — for the tools that measure a fedstat-server
// while they load or attack it (fedstat-loadgen, fedstat-netfault). Memory: none. Paper: none.
#ifndef FEDSTAT_HOST_TOOLS_PROCESS_STATS_H_
#define FEDSTAT_HOST_TOOLS_PROCESS_STATS_H_

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace fedstat {
namespace tools {

// The process's user + system CPU seconds so far (/proc/PID/stat fields 14 and 15); −1 when it
// cannot be read (the process is gone).
inline double process_cpu_seconds(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t name_end = text.rfind(')');  // the command name may hold spaces
  if (name_end == std::string::npos || name_end + 2 > text.size()) return -1;
  std::istringstream fields(text.substr(name_end + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && (fields >> field); ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A "<field>:  N kB" line of /proc/PID/status in KiB (VmRSS, VmHWM, ...); −1 when absent.
inline long process_status_kb(int pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

}  // namespace tools
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TOOLS_PROCESS_STATS_H_
