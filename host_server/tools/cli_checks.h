// Command-line checks shared by the fedstat tools: every numeric option is validated where it
// enters, and a value that is not finite and in range is refused with a message saying what is
// allowed. CLI11's own Range lets NaN through (every comparison with NaN is false) and accepts
// ±inf, so privacy parameters (ε, δ, λ, σ, clip norms, thresholds) use these instead; size
// arguments get a documented upper bound (unbounded work from one argument is a defect).
//
// Memory: none. Paper: none (input validation for every tool).
#ifndef FEDSTAT_HOST_TOOLS_CLI_CHECKS_H_
#define FEDSTAT_HOST_TOOLS_CLI_CHECKS_H_

#include <cmath>
#include <cstdint>
#include <string>

#include "CLI/CLI.hpp"

namespace fedstat {
namespace host {
namespace cli {

// A real number in the interval from `low` to `high`, each end open or closed as asked; NaN and
// ±inf are always refused. `what` describes the interval in the error ("a probability in (0, 1)").
inline CLI::Validator real_in(double low, bool low_open, double high, bool high_open,
                              const std::string& what) {
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        double value = 0;
        size_t used = 0;
        try {
          value = std::stod(input, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        const bool inside = used == input.size() && std::isfinite(value) &&
                            (low_open ? value > low : value >= low) &&
                            (high_open ? value < high : value <= high);
        return inside ? std::string() : "'" + input + "' is not " + what;
      },
      what);
}

inline CLI::Validator positive_finite() {
  return real_in(0, true, HUGE_VAL, true, "a finite number above 0");
}
inline CLI::Validator probability_open() {
  return real_in(0, true, 1, true, "a number strictly between 0 and 1");
}
inline CLI::Validator finite_number() {
  return real_in(-HUGE_VAL, true, HUGE_VAL, true, "a finite number");
}

// An unsigned count in [low, high]; the message names the bound and what it protects.
inline CLI::Validator count_in(uint64_t low, uint64_t high, const std::string& why) {
  return CLI::Validator(
      [=](std::string& input) -> std::string {
        uint64_t value = 0;
        size_t used = 0;
        try {
          if (!input.empty() && input[0] != '-') value = std::stoull(input, &used, 10);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == input.size() && !input.empty() && value >= low && value <= high) return {};
        return "'" + input + "' is not a whole number from " + std::to_string(low) + " to " +
               std::to_string(high) + " (" + why + ")";
      },
      "in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
}

}  // namespace cli
}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TOOLS_CLI_CHECKS_H_
