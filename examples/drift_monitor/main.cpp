// fedstat-drift-monitor: a POSIX program that behaves like a phone app taking part in fedstat's
// data-shift tasks. It counts events (item ids, one per line) from a file or stdin into a
// histogram kept in platform storage, so every run continues the count, and — with --server —
// checks in with fedstat-server over TLS-PSK and answers its tasks with the SDK's Client, the
// privacy ledger persisted next to the histogram. See README.md in this directory.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "examples/drift_monitor/check_in.h"
#include "examples/drift_monitor/event_counter.h"
#include "examples/drift_monitor/histogram_store.h"
#include "platform/posix/posix_platform.h"
#include "sdk/version.h"

namespace {

using namespace drift_monitor;

// Exit codes (README.md).
constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int kExitData = 3;
constexpr int kExitNetwork = 4;

constexpr const char* kUsage =
    "usage: fedstat-drift-monitor --state DIR [--events FILE|-] [--show] [--json]\n"
    "                             [--server HOST:PORT --device-id N --psk-file FILE\n"
    "                              [--epsilon-budget E] [--delta-budget D] [--max-sessions K]\n"
    "                              [--retry-ms MS] [--client-memory BYTES]\n"
    "                              [--accept-trust LIST]]\n"
    "\n"
    "Counts events into a histogram persisted in DIR and, with --server, answers fedstat-server's\n"
    "tasks with the fedstat Client over TLS-PSK.\n"
    "\n"
    "  --state DIR          where the histogram, privacy ledger and round marker are kept\n"
    "                       (created if missing; one directory per device)\n"
    "  --events FILE|-      count events from FILE (- : stdin): one item id per line, an unsigned\n"
    "                       decimal integer 0..4294967295; blank lines are skipped, any other\n"
    "                       line stops the count with an error naming it (what was counted before\n"
    "                       it is saved). The histogram holds 4096 distinct items.\n"
    "  --show               print the stored histogram, \"ID COUNT\" lines by id, after counting\n"
    "  --server HOST:PORT   check in with fedstat-server (HOST numeric or localhost)\n"
    "  --device-id N        this device's id, 1..2147483648 (its TLS-PSK identity)\n"
    "  --psk-file FILE      the device's pre-shared key: 64 hex digits\n"
    "  --epsilon-budget E   the privacy ledger's budget over 30 days (default 10)\n"
    "  --delta-budget D     (default 1e-5)\n"
    "  --max-sessions K     check-ins before giving up while no task is offered (default 10)\n"
    "  --retry-ms MS        wait between check-ins (default 1000)\n"
    "  --client-memory B    bytes of working memory for the Client (default 1048576)\n"
    "  --accept-trust LIST  the trust models whose tasks the Client answers, comma-separated:\n"
    "                       trusted, tagg, dist, none, all (default trusted,tagg,dist; a task of\n"
    "                       another is declined, reason POLICY). none answers with exact counts\n"
    "                       and no privacy: only for a server you trust with them\n"
    "  --json               print one JSON object on stdout (the check-in lines go to stderr):\n"
    "                       {version, counted, histogram, items (--show), check_in (--server)}\n"
    "  --version            print the version and exit\n"
    "  --help               print this help and exit\n"
    "\n"
    "Examples:\n"
    "  fedstat-drift-monitor --state ~/.drift --events events.txt\n"
    "  tail -n 1000 app.log | cut -d' ' -f3 | fedstat-drift-monitor --state ~/.drift --events -\n"
    "  fedstat-drift-monitor --state ~/.drift --server 127.0.0.1:7443 --device-id 17 \\\n"
    "      --psk-file device17.key --json\n"
    "\n"
    "Exit status:\n"
    "  0  done (events counted; with --server, a check-in ended with an outcome)\n"
    "  2  the command line was wrong\n"
    "  3  data error: a bad event line, a full histogram, corrupt state\n"
    "  4  server or network error\n"
    "\n"
    "Documentation: examples/drift_monitor/README.md, docs/cli.md\n";

struct Options {
  std::string state, events, server, psk_file;
  bool show = false;
  bool json = false;
  CheckInOptions check_in;
};

int usage_error(const std::string& message) {
  std::fprintf(stderr, "fedstat-drift-monitor: %s\n(--help for usage)\n", message.c_str());
  return kExitUsage;
}

bool parse_u64(const std::string& text, uint64_t min, uint64_t max, uint64_t& out) {
  if (text.empty() || text.size() > 19 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  out = std::strtoull(text.c_str(), nullptr, 10);
  return out >= min && out <= max;
}

// A finite number (strtod also takes "inf" and "nan": a budget must not be either).
bool parse_double(const std::string& text, double& out) {
  char* end = nullptr;
  errno = 0;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size() && errno == 0 && std::isfinite(out);
}

// Reads 64 hex digits (surrounding whitespace allowed) into 32 bytes.
bool read_psk(const std::string& path, std::vector<uint8_t>& psk, std::string& error) {
  std::FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) {
    error = "--psk-file " + path + ": " + std::strerror(errno);
    return false;
  }
  std::string text;
  char buffer[256];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) text.append(buffer, n);
  std::fclose(file);
  const size_t begin = text.find_first_not_of(" \t\r\n");
  const size_t end = text.find_last_not_of(" \t\r\n");
  text = begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
  if (text.size() != 64 || text.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
    error = "--psk-file " + path + ": must hold exactly 64 hex digits (a 32-byte key)";
    return false;
  }
  psk.clear();
  for (size_t i = 0; i < 64; i += 2) {
    psk.push_back(static_cast<uint8_t>(std::strtoul(text.substr(i, 2).c_str(), nullptr, 16)));
  }
  return true;
}

// The options that take no value, and those followed by one.
constexpr const char* kSwitches[] = {"--help", "-h", "--version", "--show", "--json"};
constexpr const char* kValued[] = {"--state",         "--events",       "--server",
                                   "--psk-file",      "--device-id",    "--epsilon-budget",
                                   "--delta-budget",  "--max-sessions", "--retry-ms",
                                   "--client-memory", "--accept-trust"};

bool one_of(const std::string& flag, const char* const* begin, const char* const* end) {
  return std::find_if(begin, end, [&](const char* known) { return flag == known; }) != end;
}

// The first argument that is no option (or a value where an option belongs), "" when there is
// none; `help` is set when --help, -h or --version is asked for. Run before the values are read,
// so that a misspelt option is named instead of the error it causes ("--state DIR is required"
// for "--sate DIR").
std::string first_unknown(int argc, char** argv, bool& help) {
  help = false;
  std::string unknown;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (one_of(flag, std::begin(kSwitches), std::end(kSwitches))) {
      help = help || flag == "--help" || flag == "-h" || flag == "--version";
    } else if (one_of(flag, std::begin(kValued), std::end(kValued))) {
      ++i;  // its value, whatever it is (checked with the option)
    } else if (unknown.empty()) {
      unknown = flag;
    }
  }
  return unknown;
}

// Returns -1 when the options are good, else the exit code (after printing why).
int parse_options(int argc, char** argv, Options& o) {
  bool help = false;
  const std::string unknown = first_unknown(argc, argv, help);
  if (!unknown.empty() && !help) {
    return usage_error(unknown.rfind("-", 0) == 0 ? "unknown option " + unknown
                                                  : "unexpected argument '" + unknown + "'");
  }
  uint64_t device_id = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return kExitOk;
    }
    if (flag == "--version") {
      std::printf("fedstat-drift-monitor %s\n", FEDSTAT_VERSION_STRING);
      return kExitOk;
    }
    if (flag == "--show") {
      o.show = true;
      continue;
    }
    if (flag == "--json") {
      o.json = true;
      o.check_in.log = stderr;  // stdout carries only the JSON object
      continue;
    }
    if (i + 1 >= argc) return usage_error(flag + " needs a value");
    const std::string value = argv[++i];
    uint64_t number = 0;
    if (flag == "--state") {
      o.state = value;
    } else if (flag == "--events") {
      o.events = value;
    } else if (flag == "--server") {
      o.server = value;
    } else if (flag == "--psk-file") {
      o.psk_file = value;
    } else if (flag == "--device-id") {
      if (!parse_u64(value, 1, uint64_t{1} << 31, device_id)) {
        return usage_error("--device-id must be an integer in 1..2147483648, not '" + value + "'");
      }
      o.check_in.device_id = device_id;
    } else if (flag == "--epsilon-budget") {
      if (!parse_double(value, o.check_in.epsilon_budget) || !(o.check_in.epsilon_budget > 0)) {
        return usage_error("--epsilon-budget must be a finite number > 0, not '" + value + "'");
      }
    } else if (flag == "--delta-budget") {
      const bool ok = parse_double(value, o.check_in.delta_budget);
      if (!ok || !(o.check_in.delta_budget > 0 && o.check_in.delta_budget < 1)) {
        return usage_error("--delta-budget must be a number in (0, 1), not '" + value + "'");
      }
    } else if (flag == "--max-sessions") {
      if (!parse_u64(value, 1, 1000000, number)) {
        return usage_error("--max-sessions must be an integer in 1..1000000");
      }
      o.check_in.max_sessions = static_cast<uint32_t>(number);
    } else if (flag == "--retry-ms") {
      if (!parse_u64(value, 0, 3600000, number)) {
        return usage_error("--retry-ms must be an integer in 0..3600000");
      }
      o.check_in.retry_ms = static_cast<uint32_t>(number);
    } else if (flag == "--accept-trust") {
      const fedstat::Result<uint32_t> bits = fedstat::client::parse_accepted_trust(value.c_str());
      if (!bits.ok()) {
        return usage_error(
            "--accept-trust must list trusted, tagg, dist, none or all, "
            "comma-separated, not '" +
            value + "'");
      }
      o.check_in.accepted_trust = bits.value();
    } else if (flag == "--client-memory") {
      if (!parse_u64(value, 4096, uint64_t{1} << 32, number)) {
        return usage_error("--client-memory must be an integer in 4096..4294967296");
      }
      o.check_in.client_memory = static_cast<size_t>(number);
    } else {
      return usage_error("unknown option " + flag);
    }
  }
  if (o.state.empty()) return usage_error("--state DIR is required");
  if (!o.server.empty()) {
    if (o.check_in.device_id == 0) return usage_error("--server needs --device-id");
    if (o.psk_file.empty()) return usage_error("--server needs --psk-file");
    std::string error;
    if (!read_psk(o.psk_file, o.check_in.psk, error)) return usage_error(error);
    o.check_in.endpoint = o.server;
  }
  return -1;
}

// The stored histogram's items, by id.
std::vector<std::pair<uint32_t, uint32_t>> sorted_items(
    const fedstat::histogram::SparseHistogram& histogram) {
  std::vector<std::pair<uint32_t, uint32_t>> items;
  for (const fedstat::histogram::SparseEntry& e : histogram.slots()) {
    if (e.count > 0) items.emplace_back(e.id, e.count);
  }
  std::sort(items.begin(), items.end());
  return items;
}

// `text` as a JSON string (RFC 8259: quote, backslash and control characters escaped).
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

int run(const Options& o) {
  if (mkdir(o.state.c_str(), 0700) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "fedstat-drift-monitor: --state %s: %s\n", o.state.c_str(),
                 std::strerror(errno));
    return kExitData;
  }
  if (!fedstat::platform::posix::set_storage_directory(o.state.c_str()).ok()) {
    return usage_error("--state: the path is empty or longer than 255 characters");
  }
  std::unique_ptr<HistogramStore> store(new HistogramStore());
  std::string error;
  if (!store->load(error)) {
    std::fprintf(stderr, "fedstat-drift-monitor: %s/%s: %s\n", o.state.c_str(), kHistogramBlob,
                 error.c_str());
    return kExitData;
  }
  fedstat::histogram::SparseHistogram& histogram = store->histogram();
  CountResult counted;
  const std::string source = o.events == "-" ? "stdin" : o.events;
  if (!o.events.empty()) {
    std::FILE* in = o.events == "-" ? stdin : std::fopen(o.events.c_str(), "r");
    if (in == nullptr) {
      std::fprintf(stderr, "fedstat-drift-monitor: --events %s: %s\n", o.events.c_str(),
                   std::strerror(errno));
      return kExitData;
    }
    counted = count_events(in, histogram);
    if (in != stdin) std::fclose(in);
    // Saved whether or not a line was refused: nothing counted is lost.
    if (!store->save(error)) {
      std::fprintf(stderr, "fedstat-drift-monitor: %s\n", error.c_str());
      return kExitData;
    }
    if (!o.json) {
      std::printf("counted %llu events from %s (%llu lines, %llu blank)\n",
                  static_cast<unsigned long long>(counted.counted), source.c_str(),
                  static_cast<unsigned long long>(counted.lines),
                  static_cast<unsigned long long>(counted.blank));
    }
    if (!counted.error.empty()) {
      std::fprintf(o.check_in.log, "histogram: %zu items, %llu events, %llu dropped\n",
                   histogram.size(), static_cast<unsigned long long>(histogram.total()),
                   static_cast<unsigned long long>(histogram.dropped()));
      std::fprintf(stderr,
                   "fedstat-drift-monitor: %s: %s; the %llu events before it are counted and "
                   "saved, the rest of the input is not\n",
                   o.events == "-" ? "stdin" : o.events.c_str(), counted.error.c_str(),
                   static_cast<unsigned long long>(counted.counted));
      return kExitData;
    }
  }
  if (!o.json) {
    std::printf("histogram: %zu items, %llu events, %llu dropped\n", histogram.size(),
                static_cast<unsigned long long>(histogram.total()),
                static_cast<unsigned long long>(histogram.dropped()));
    if (o.show) {
      for (const auto& [id, count] : sorted_items(histogram)) std::printf("%u %u\n", id, count);
    }
  }
  std::fflush(stdout);

  CheckInSummary summary;
  CheckInEnd end = CheckInEnd::kOutcome;
  if (!o.server.empty()) end = check_in(o.check_in, histogram, summary, error);
  if (o.json && end == CheckInEnd::kOutcome) {
    std::string out = std::string("{\"version\": \"") + FEDSTAT_VERSION_STRING + "\"";
    if (!o.events.empty()) {
      out += ", \"counted\": {\"source\": " + json_string(source) +
             ", \"events\": " + std::to_string(counted.counted) +
             ", \"lines\": " + std::to_string(counted.lines) +
             ", \"blank\": " + std::to_string(counted.blank) + "}";
    }
    out += ", \"histogram\": {\"items\": " + std::to_string(histogram.size()) +
           ", \"events\": " + std::to_string(histogram.total()) +
           ", \"dropped\": " + std::to_string(histogram.dropped()) + "}";
    if (o.show) {
      out += ", \"items\": [";
      bool first = true;
      for (const auto& [id, count] : sorted_items(histogram)) {
        out += (first ? "[" : ", [") + std::to_string(id) + ", " + std::to_string(count) + "]";
        first = false;
      }
      out += "]";
    }
    if (!o.server.empty()) {
      out += ", \"check_in\": {\"sessions\": " + std::to_string(summary.sessions) +
             ", \"task\": " + std::to_string(summary.task_id) +
             ", \"outcome\": " + json_string(summary.outcome) +
             ", \"epsilon_spent\": " + json_number(summary.epsilon_spent) +
             ", \"ledger_epsilon\": " + json_number(summary.ledger_epsilon) + "}";
    }
    std::printf("%s}\n", out.c_str());
  }
  switch (end) {
    case CheckInEnd::kOutcome:
      return kExitOk;
    case CheckInEnd::kStateError:
      std::fprintf(stderr, "fedstat-drift-monitor: %s\n", error.c_str());
      return kExitData;
    case CheckInEnd::kNetworkError:
      std::fprintf(stderr, "fedstat-drift-monitor: %s\n", error.c_str());
      return kExitNetwork;
  }
  return kExitNetwork;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  const int parsed = parse_options(argc, argv, options);
  if (parsed >= 0) return parsed;
  return run(options);
}
