#include "host_server/tools/progress.h"

#include <unistd.h>

#include <utility>

namespace fedstat {
namespace tools {

Progress::Progress(std::string tool, std::string unit, uint64_t total)
    : Progress(std::move(tool), std::move(unit), total, stderr, isatty(STDERR_FILENO) == 1,
               [] { return std::chrono::steady_clock::now(); }) {}

Progress::Progress(std::string tool, std::string unit, uint64_t total, std::FILE* out,
                   bool terminal, Clock clock)
    : tool_(std::move(tool)),
      unit_(std::move(unit)),
      total_(total),
      out_(out),
      terminal_(terminal),
      clock_(std::move(clock)),
      start_(clock_()),
      next_draw_(start_ + kProgressDelay) {}

Progress::~Progress() {
  finish();
}

void Progress::update(uint64_t done) {
  if (!terminal_) return;
  const auto now = clock_();
  if (now < next_draw_) return;
  next_draw_ = now + kProgressInterval;
  const double percent = total_ == 0 ? 100.0 : 100.0 * static_cast<double>(done) / total_;
  // \r and "erase to the end of the line" (ECMA-48 EL) redraw the same line.
  std::fprintf(out_, "\r\033[K%s: %s %llu of %llu (%.0f%%)", tool_.c_str(), unit_.c_str(),
               static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_),
               percent);
  std::fflush(out_);
  drawn_ = true;
}

void Progress::finish() {
  if (!drawn_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace tools
}  // namespace fedstat
