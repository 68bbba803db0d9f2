// Event counting for fedstat-drift-monitor: reads events — one item id per line — from a stdio
// stream into a SparseHistogram.
//
// A line is an unsigned decimal integer in 0..4294967295 (leading zeros allowed), with optional
// spaces or tabs around it and an optional "\r" before the "\n". A blank line (empty or only
// spaces and tabs) is skipped. Anything else — a sign, letters, hex, a fraction, a number above
// 4294967295, two numbers on one line — ends the count with an error naming the line. So does an
// item the histogram cannot take (a new id when all `capacity` slots are taken, or a count that
// would pass 2^32 − 1; the SDK counts such mass in dropped()). Every event before the refused
// line stays counted: the caller saves the histogram either way.
// Memory: the line buffer getline(3) allocates (freed before returning).
#ifndef FEDSTAT_EXAMPLES_DRIFT_MONITOR_EVENT_COUNTER_H_
#define FEDSTAT_EXAMPLES_DRIFT_MONITOR_EVENT_COUNTER_H_

#include <cstdint>
#include <cstdio>
#include <string>

#include "sdk/histogram/sparse_histogram.h"

namespace drift_monitor {

struct CountResult {
  uint64_t lines = 0;    // lines read, up to and including a refused one
  uint64_t counted = 0;  // events added to the histogram
  uint64_t blank = 0;    // blank lines skipped
  std::string error;     // "" when every line was counted; else "line N: why"
};

// Parses one line (without its "\n"). Returns true with `id` set, or false with `why` set;
// `blank` is set for a blank line (returns false, why empty).
bool parse_event_line(const std::string& line, uint32_t& id, bool& blank, std::string& why);

CountResult count_events(std::FILE* in, fedstat::histogram::SparseHistogram& histogram);

}  // namespace drift_monitor

#endif  // FEDSTAT_EXAMPLES_DRIFT_MONITOR_EVENT_COUNTER_H_
