// What the stream benchmarks (sketch_stream_bench, skellam_stream_bench) share: steady_clock
// timing, the summary of the timed repetitions, and the one JSON line per measurement of
// ../shared/bench/README.md, so that every program pairs with the references by the same fields.
// Host-only test code (full standard library). Memory: the repetitions' times.
#ifndef FEDSTAT_TESTS_BENCH_STREAM_BENCH_LINE_H_
#define FEDSTAT_TESTS_BENCH_STREAM_BENCH_LINE_H_

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace fedstat {
namespace bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The timed repetitions of one measurement, summarised as the shared format wants them.
struct RepetitionTimes {
  double median = 0, min = 0, max = 0;
  explicit RepetitionTimes(std::vector<double> seconds) {
    std::sort(seconds.begin(), seconds.end());
    const size_t m = seconds.size() / 2;
    median = seconds.size() % 2 ? seconds[m] : (seconds[m - 1] + seconds[m]) / 2;
    min = seconds.front();
    max = seconds.back();
  }
};

// One line: {"anchor":…,"bench":…,"params":<params, a JSON object>,"ops":…,"unit":…,"reps":…,
// "t_median_s":…, …, "fp":<fp_json>} with fp_json either "\"<16 hex digits>\"" or "null".
inline void print_json_line(const char* anchor, const char* bench, const std::string& params,
                            uint64_t ops, const char* unit, const std::vector<double>& seconds,
                            const std::string& fp_json) {
  const RepetitionTimes t(seconds);
  const double n = static_cast<double>(ops);
  std::printf("{\"anchor\":\"%s\",\"bench\":\"%s\",\"params\":%s,\"ops\":%" PRIu64
              ",\"unit\":\"%s\",\"reps\":%zu,\"t_median_s\":%.9g,\"t_min_s\":%.9g,\"t_max_s\":%.9g,"
              "\"per_s_median\":%.9g,\"per_s_best\":%.9g,\"per_s_worst\":%.9g,"
              "\"ns_per_op_median\":%.9g,\"fp\":%s}\n",
              anchor, bench, params.c_str(), ops, unit, seconds.size(), t.median, t.min, t.max,
              n / t.median, n / t.min, n / t.max, 1e9 * t.median / n, fp_json.c_str());
  std::fflush(stdout);
}

inline std::string fingerprint_json(uint64_t fp) {
  char text[24];
  std::snprintf(text, sizeof(text), "\"%016" PRIx64 "\"", fp);
  return text;
}

// A whole unsigned decimal (or, with base 16, hexadecimal) number: no sign, no trailing text,
// nothing out of range.
inline bool parse_u64(const char* text, uint64_t& out, int base = 10) {
  if (text == nullptr || *text == '\0' || *text == '-' || *text == '+') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, base);
  if (errno != 0 || *end != '\0') return false;
  out = v;
  return true;
}

// The options both stream programs take: --help/-h (prints `usage`, exits 0), --json, --n N
// (1..2^32 - 1) and --reps R (1..1000). parse_common_option returns how many arguments it
// consumed: 0 when argv[i] is not one of them or its value is bad (the caller refuses it).
struct CommonOptions {
  uint64_t n = 10000000;  // the shared stream's length (zipf_stream.h)
  int reps = 5;
  bool json = false;
};

inline int parse_common_option(int argc, char** argv, int i, const char* usage, CommonOptions& o) {
  const std::string a = argv[i];
  const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
  uint64_t v = 0;
  if (a == "--help" || a == "-h") {
    std::fputs(usage, stdout);
    std::exit(0);
  }
  if (a == "--json") {
    o.json = true;
    return 1;
  }
  if (a == "--n" && parse_u64(value, v) && v >= 1 && v <= UINT32_MAX) {
    o.n = v;
    return 2;
  }
  if (a == "--reps" && parse_u64(value, v) && v >= 1 && v <= 1000) {
    o.reps = static_cast<int>(v);
    return 2;
  }
  return 0;
}

[[noreturn]] inline void refuse_argument(const char* program, const char* arg, const char* usage) {
  std::fprintf(stderr, "%s: bad argument '%s' (or its value)\n%s", program, arg, usage);
  std::exit(2);
}

}  // namespace bench
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_BENCH_STREAM_BENCH_LINE_H_
