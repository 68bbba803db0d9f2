// Progress of a long run on stderr, the way Unix tools show it: one line rewritten in place
// ("fedstat-kl: run 40 of 200 (20%)"), shown only when the run has taken more than
// kProgressDelay and stderr is a terminal, redrawn at most every kProgressInterval, and erased
// when the run ends — so a short run, a pipe, a log file or a test's captured stderr never see it.
// Host only. Memory: the tool's name and the unit. Paper: none (tool ergonomics).
#ifndef FEDSTAT_HOST_SERVER_TOOLS_PROGRESS_H_
#define FEDSTAT_HOST_SERVER_TOOLS_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>

namespace fedstat {
namespace tools {

inline constexpr std::chrono::milliseconds kProgressDelay{2000};
inline constexpr std::chrono::milliseconds kProgressInterval{250};

class Progress {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // Progress of `total` steps named `unit` ("run", "sample", "device") on stderr, shown when
  // stderr is a terminal.
  Progress(std::string tool, std::string unit, uint64_t total);
  // The same on `out`, shown when `terminal`, timed by `clock` (tests).
  Progress(std::string tool, std::string unit, uint64_t total, std::FILE* out, bool terminal,
           Clock clock);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of the total steps are finished. Cheap when nothing is drawn (one clock read).
  void update(uint64_t done);
  // Erases the line if one was drawn; the destructor calls it.
  void finish();

 private:
  std::string tool_, unit_;
  uint64_t total_;
  std::FILE* out_;
  bool terminal_;
  Clock clock_;
  std::chrono::steady_clock::time_point start_, next_draw_;
  bool drawn_ = false;
};

}  // namespace tools
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_TOOLS_PROGRESS_H_
