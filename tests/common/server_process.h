// The built fedstat-server as a child process for the tests and benchmarks that run it
// (tests/bench/ingest_bench.cpp, tls_handshake_bench.cpp, tests/net/answer_after_commit_test.cpp):
// host_server/testing/server_child.h on FEDSTAT_SERVER_BINARY (a compile definition), waited for up
// to 60 s; and this process's own CPU time and descriptor limit. Host only. Memory: none to speak
// of.
#ifndef FEDSTAT_TESTS_COMMON_SERVER_PROCESS_H_
#define FEDSTAT_TESTS_COMMON_SERVER_PROCESS_H_

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "host_server/testing/server_child.h"

namespace fedstat {
namespace testing {

class ServerProcess : public tools::ServerChild {
 public:
  ServerProcess(const path& config, const path& port_file, const path& log,
                const std::vector<std::string>& environment = {})
      : ServerChild(FEDSTAT_SERVER_BINARY, config, port_file, log, environment, 60) {}
};

// This process's CPU seconds so far (user + system, all its threads, exited ones included).
inline double own_cpu_seconds() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return tools::cpu_seconds_of(usage);
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
