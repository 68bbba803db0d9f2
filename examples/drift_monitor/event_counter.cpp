// Event counting for fedstat-drift-monitor (event_counter.h).
#include "examples/drift_monitor/event_counter.h"

#include <sys/types.h>

#include <cstdlib>

namespace drift_monitor {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

// The line as quoted in an error: at most 40 characters.
std::string quoted(const std::string& text) {
  return "'" + (text.size() > 40 ? text.substr(0, 40) + "..." : text) + "'";
}

}  // namespace

bool parse_event_line(const std::string& line, uint32_t& id, bool& blank, std::string& why) {
  size_t begin = 0, end = line.size();
  if (end > 0 && line[end - 1] == '\r') --end;
  while (begin < end && is_space(line[begin])) ++begin;
  while (end > begin && is_space(line[end - 1])) --end;
  blank = begin == end;
  why.clear();
  if (blank) return false;
  const std::string text = line.substr(begin, end - begin);
  uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      why = quoted(text) + " is not an item id (one unsigned decimal integer per line)";
      return false;
    }
    value = value * 10 + static_cast<uint64_t>(c - '0');
    if (value > UINT32_MAX) {
      why = "item id " + quoted(text) + " is above 4294967295";
      return false;
    }
  }
  id = static_cast<uint32_t>(value);
  return true;
}

CountResult count_events(std::FILE* in, fedstat::histogram::SparseHistogram& histogram) {
  CountResult result;
  char* buffer = nullptr;
  size_t capacity = 0;
  ssize_t length = 0;
  while ((length = getline(&buffer, &capacity, in)) >= 0) {
    ++result.lines;
    std::string line(buffer, static_cast<size_t>(length));
    if (!line.empty() && line.back() == '\n') line.pop_back();
    uint32_t id = 0;
    bool blank = false;
    std::string why;
    if (!parse_event_line(line, id, blank, why)) {
      if (blank) {
        ++result.blank;
        continue;
      }
      result.error = "line " + std::to_string(result.lines) + ": " + why;
      break;
    }
    const fedstat::Status added = histogram.add(id);
    if (!added.ok()) {
      result.error = "line " + std::to_string(result.lines) + ": item " + std::to_string(id) +
                     " refused: " + added.message() + " (the histogram holds " +
                     std::to_string(histogram.size()) + " of " +
                     std::to_string(histogram.capacity()) + " distinct items)";
      break;
    }
    ++result.counted;
  }
  if (result.error.empty() && std::ferror(in)) {
    result.error = "read error after line " + std::to_string(result.lines);
  }
  std::free(buffer);
  return result;
}

}  // namespace drift_monitor
