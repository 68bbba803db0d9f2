// Fuzz target: the host tools' and the server's input-file parsers, which read files a user or an
// operator hands them. The first input byte picks the parser, the rest is the file's content:
//   0  item counts (host_server/estimate/item_counts.h; fedstat-kl, fedstat-tv)
//   1  one CSV line: split_csv_fields + parse_decimal_field (csv_fields.h; fedstat-heterogeneity,
//      federated_logreg)
//   2  labelled examples with d = 1 + byte 1 mod 8 (labelled_examples.h; fedstat-sim's
//      model_update data, a task's evaluation set)
//   3  the server's configuration file (host_server/server_config.h)
// Invariants beyond "no crash": a refusal is the documented exception (std::runtime_error or
// std::invalid_argument, with a message), nothing else; item counts accepted are sorted, unique,
// positive, below 2^63, with the exact total, and print back to a file that parses to the same;
// split fields join back to the line; an accepted decimal field is finite and equals strtod of
// the field (both correctly rounded); accepted examples have labels ±1, d features each and
// ‖x‖² ≤ kMaxFeatureNorm2; an accepted configuration has a port, exactly one of credentials and
// fleet_secret (collector) and time-outs as written.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "host_server/estimate/csv_fields.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/labelled_examples.h"
#include "host_server/server_config.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using namespace fedstat::host;  // NOLINT: test code

// A scratch file in a directory this process owns (memory-backed where /dev/shm exists).
const std::string& scratch_path(const char* name) {
  static std::string path;
  path = fedstat::fuzz::scratch_directory() + "/" + name;
  return path;
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  FUZZ_CHECK(out.good());
}

void check_item_counts(const std::string& text) {
  std::istringstream in(text);
  ItemCounts counts;
  try {
    counts = parse_item_counts(in, "fuzz.txt");
  } catch (const std::runtime_error& e) {
    FUZZ_CHECK(std::strncmp(e.what(), "fuzz.txt", 8) == 0);  // names the file
    return;
  }
  uint64_t total = 0;
  for (size_t i = 0; i < counts.items.size(); ++i) {
    const ItemCount& c = counts.items[i];
    FUZZ_CHECK(c.count > 0 && c.count < (uint64_t{1} << 63));
    if (i > 0) FUZZ_CHECK(counts.items[i - 1].id < c.id);
    FUZZ_CHECK(counts.count(c.id) == c.count);
    FUZZ_CHECK(total + c.count >= total);  // no wrap
    total += c.count;
  }
  FUZZ_CHECK(total == counts.total);
  std::ostringstream printed;
  for (const ItemCount& c : counts.items) printed << c.id << ' ' << c.count << '\n';
  std::istringstream again(printed.str());
  const ItemCounts reread = parse_item_counts(again, "printed.txt");
  FUZZ_CHECK(reread.total == counts.total && reread.items.size() == counts.items.size());
  for (size_t i = 0; i < reread.items.size(); ++i) {
    FUZZ_CHECK(reread.items[i].id == counts.items[i].id);
    FUZZ_CHECK(reread.items[i].count == counts.items[i].count);
  }
}

void check_csv_line(const std::string& line) {
  if (line.find('\n') != std::string::npos) return;  // one line
  const std::vector<std::string> fields = split_csv_fields(line);
  std::string joined;
  for (size_t i = 0; i < fields.size(); ++i) joined += (i ? "," : "") + fields[i];
  std::string expected = line;
  if (!expected.empty() && expected.back() == '\r') expected.pop_back();
  FUZZ_CHECK(joined == expected);
  for (size_t i = 0; i < fields.size(); ++i) {
    CsvPlace place{"fuzz.csv", 1, i + 1};
    double value = 0;
    try {
      value = parse_decimal_field(fields[i], place);
    } catch (const std::runtime_error& e) {
      FUZZ_CHECK(std::strncmp(e.what(), "fuzz.csv:1: field ", 18) == 0);
      continue;
    }
    FUZZ_CHECK(std::isfinite(value));
    FUZZ_CHECK(fields[i].find('\0') == std::string::npos);
    char* end = nullptr;
    const double reference = std::strtod(fields[i].c_str(), &end);
    FUZZ_CHECK(reference == value);
  }
}

void check_examples(const std::string& text, size_t dimension) {
  const std::string& path = scratch_path("examples.csv");
  write_file(path, text);
  LabelledExamples examples;
  try {
    examples = read_labelled_examples(path, dimension);
  } catch (const std::runtime_error& e) {
    FUZZ_CHECK(std::strlen(e.what()) > 0);
    return;
  }
  FUZZ_CHECK(examples.count() > 0 && examples.dimension == dimension);
  FUZZ_CHECK(examples.features.size() == examples.count() * dimension);
  for (size_t r = 0; r < examples.count(); ++r) {
    FUZZ_CHECK(examples.labels[r] == 1 || examples.labels[r] == -1);
    float norm2 = 0;
    for (size_t j = 0; j < dimension; ++j) {
      const float x = examples.features[r * dimension + j];
      FUZZ_CHECK(std::isfinite(x));
      norm2 += x * x;
    }
    FUZZ_CHECK(norm2 <= fedstat::tasks::kMaxFeatureNorm2 * 1.0001f);
  }
}

void check_config(const std::string& text) {
  const std::string& path = scratch_path("server.json");
  write_file(path, text);
  ServerConfig config;
  try {
    config = read_server_config(path);
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::strlen(e.what()) > 0);
    return;
  } catch (const std::runtime_error& e) {
    FUZZ_CHECK(std::strlen(e.what()) > 0);
    return;
  }
  if (!config.tagg_role) {
    FUZZ_CHECK(config.credentials_path.empty() != !config.fleet_secret.has_value());
  }
  FUZZ_CHECK(!config.address.empty());
}

void write_seeds(fedstat::fuzz::SeedWriter& out) {
  auto add = [&out](uint8_t mode, const std::string& text) {
    std::string s(1, static_cast<char>(mode));
    s += text;
    out.add(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  };
  add(0, "# counts\n1 5\n2 7\n\n40000 1\n");
  add(0, "4294967295 9223372036854775807\n");
  add(0, "3 0\n");
  add(1, "1,2.5,-0.25,.5,7.,1e-3,  4 ,6E+10");
  add(1, "0x1p-1,inf,1e309,,5x");
  add(2, std::string(1, '\x02') + "1,0.1,0.2,0.3\n0,-0.5,0.25,0\n-1,0,0,0\n");
  add(3, R"({"listen": "127.0.0.1:0", "store": "s.db", "fleet_secret": ")" + std::string(64, 'a') +
             R"(", "handshake_timeout_ms": 2000, "idle_timeout_ms": 3000, "tasks": []})");
  add(3, R"({"listen": "127.0.0.1:7443", "credentials": "devices.txt", "tasks": []})");
  add(3, R"({"role": "tagg", "listen": "127.0.0.1:0", "collectors": {"c1": ")" +
             std::string(64, '0') + R"("}})");
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      check_item_counts(text);
      break;
    case 1:
      check_csv_line(text);
      break;
    case 2:
      if (!text.empty()) check_examples(text.substr(1), 1 + static_cast<uint8_t>(text[0]) % 8);
      break;
    default:
      check_config(text);
      break;
  }
  return 0;
}
