// Strict checks for the numeric options of fedstat's command-line tools, as CLI11 validators:
// a value is refused while the command line is parsed (exit code 105, "--option: ..." on
// stderr) with a message that says what is allowed, instead of being wrapped ("-1" as 2^64 − 1
// for an unsigned option), saturated, or passed on as NaN or ±inf.
//
//   whole_number(min, max)    decimal digits only (no sign, exponent, point or spaces), in
//                             [min, max]
//   finite_number(range)      a finite decimal (strtod syntax, the whole text; "nan", "inf"
//                             and hex floats refused), inside the range
//   positive_number(), open_unit_interval(), at_least(low, text): the common ranges
// (CLI11's own Range lets NaN through — every comparison with NaN is false — and accepts ±inf,
// so privacy parameters use these; size arguments get a documented upper bound.)
//
// Host only (std::string, exceptions inside CLI11). Memory: none beyond the parsed strings.
// Paper: none (input checking for the tools).
#ifndef FEDSTAT_HOST_SERVER_TOOLS_CLI_NUMBERS_H_
#define FEDSTAT_HOST_SERVER_TOOLS_CLI_NUMBERS_H_

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "CLI/CLI.hpp"

namespace fedstat {
namespace tools {

// Parses `text` as digits only into [min, max]; false if it is anything else.
inline bool parse_whole_number(const std::string& text, uint64_t min, uint64_t max, uint64_t& out) {
  if (text.empty()) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  if (value < min || value > max) return false;
  out = value;
  return true;
}

inline CLI::Validator whole_number(uint64_t min, uint64_t max) {
  const std::string allowed =
      "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, allowed](std::string& text) -> std::string {
        uint64_t ignored;
        if (parse_whole_number(text, min, max, ignored)) return std::string();
        return "'" + text + "' is not allowed: give " + allowed + " (digits only)";
      },
      "INT in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
}

// An interval of the real line; `low_open`/`high_open` exclude the ends.
struct NumberRange {
  double low;
  double high;
  bool low_open;
  bool high_open;
  std::string text;  // e.g. "(0, 1)", shown in messages
};

// Parses a finite decimal; false for NaN, ±inf, hex floats, trailing text or out of range.
inline bool parse_finite_number(const std::string& text, const NumberRange& range, double& out) {
  if (text.empty() || text.find_first_of("xXpP") != std::string::npos) return false;
  if (text.find_first_of("nNiI") != std::string::npos) return false;  // nan, inf, infinity
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) return false;
  if (range.low_open ? !(value > range.low) : !(value >= range.low)) return false;
  if (range.high_open ? !(value < range.high) : !(value <= range.high)) return false;
  out = value;
  return true;
}

inline CLI::Validator finite_number(const NumberRange& range) {
  return CLI::Validator(
      [range](std::string& text) -> std::string {
        double ignored;
        if (parse_finite_number(text, range, ignored)) return std::string();
        return "'" + text + "' is not allowed: give a finite number in " + range.text;
      },
      "NUMBER in " + range.text);
}

// The ranges privacy parameters use most.
inline CLI::Validator positive_number() {
  return finite_number(NumberRange{0, HUGE_VAL, true, true, "(0, inf)"});
}
inline CLI::Validator open_unit_interval() {
  return finite_number(NumberRange{0, 1, true, true, "(0, 1)"});
}
inline CLI::Validator at_least(double low, const std::string& text) {
  return finite_number(NumberRange{low, HUGE_VAL, false, true, text});
}

}  // namespace tools
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_TOOLS_CLI_NUMBERS_H_
