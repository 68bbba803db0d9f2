// Real task declarations for the rounds' audit tests (issue 39): the server's own planner
// (server_app.h plan_declared_tasks) in a temporary directory holding the files a declaration
// names (an item-count reference, labelled examples), and a clear-path device that sends a given
// Report and records every answer. Paper: none.
#ifndef FEDSTAT_TESTS_AUDIT_ROUNDS_PLANNED_TASKS_H_
#define FEDSTAT_TESTS_AUDIT_ROUNDS_PLANNED_TASKS_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "host_server/server_app.h"
#include "nlohmann/json.hpp"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/round_messages.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace testing {

using fedstat::testing::TempDir;
using nlohmann::json;

// A Zipf-like item-count file over [offset, offset + n), counts scale/(i + 1).
inline void write_item_counts(const std::string& path, uint32_t n, uint64_t scale,
                              uint32_t offset = 0) {
  std::ofstream out(path);
  for (uint32_t i = 0; i < n; ++i) out << (i + offset) << " " << scale / (i + 1) << "\n";
}

// `rows` labelled examples of dimension 4, each of norm below 1 (labelled_examples.h's format).
inline void write_examples(const std::string& path, size_t rows, int salt) {
  std::ofstream out(path);
  for (size_t i = 0; i < rows; ++i) {
    const double a = std::sin(0.7 * i + salt), b = std::cos(1.3 * i + 2 * salt);
    const double x[4] = {0.6 * a, 0.6 * b, 0.2 * std::sin(3.1 * i), 0.5};
    const double norm = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + x[3] * x[3]) * 1.0001;
    out << (x[0] - x[1] > 0 ? 1 : -1);
    for (double v : x) out << "," << v / norm;
    out << "\n";
  }
}

// The fields every declaration below shares: task `id`, `min`..`max` devices, admission closing
// when `max` accepted (or after 60 s), 60 s phases.
inline json declared(uint32_t id, const std::string& kind, const std::string& trust, uint32_t min,
                     uint32_t max) {
  const bool private_task = trust != "none";
  return json{{"id", id},
              {"kind", kind},
              {"trust", trust},
              {"epsilon", private_task ? 1.0 : 0.0},
              {"delta", private_task ? 1e-6 : 0.0},
              {"min_clients", min},
              {"max_clients", max},
              {"deadline_seconds", 3600},
              {"admission_seconds", 60},
              {"phase_timeout_seconds", 60},
              {"seed", std::string(62, '0') + "3d"}};
}

// A kl declaration over `dir`/reference.txt (written here): T = 40 rounds, λ = 0.1.
inline json kl_declaration(const TempDir& dir, uint32_t id, const std::string& trust, uint32_t min,
                           uint32_t max) {
  write_item_counts(dir.file("reference.txt"), 60, 60000);
  json d = declared(id, "kl", trust, min, max);
  d["kl"] = {{"reference", "reference.txt"}, {"rounds", 40}, {"lambda", 0.1}};
  return d;
}

// The server's plans for `declarations` (base directory `dir`), as fedstat-server builds them;
// a TAGG task's aggregates go to `forward`.
inline std::vector<TaskSpec> plan_tasks(const TempDir& dir, const json& declarations, Store& store,
                                        uint64_t now, const TaggForward& forward = nullptr) {
  ServerConfig config;
  config.tasks = declarations;
  config.base_dir = dir.file("");
  config.base_dir.pop_back();  // no trailing '/'
  return plan_declared_tasks(config, store, now, forward);
}

// What a device sent on the clear path and what it was answered.
struct SentReport {
  size_t acks = 0;          // Acks received
  bool refused = false;     // a ServerError came instead of an Ack
  uint32_t status = 0;      // ... its status code
  std::string detail;       // ... and detail
  uint32_t refused_at = 0;  // the offset of the chunk it refused
  bool closed = false;      // the server closed the connection
};

// Device `client` checks in on `conn` (offered `task`), accepts, then sends `words` in chunks of
// 64, stopping at the first ServerError.
inline SentReport send_contribution(Coordinator& c, FakeOutbox& out, uint64_t client,
                                    ConnectionId conn, uint32_t task,
                                    const std::vector<uint64_t>& words) {
  SentReport r;
  c.on_open(conn, std::to_string(client));
  c.on_frame(conn, hello(client));
  const std::vector<fedstat_v1_Envelope> offer = out.drain(conn);
  if (offer.empty() || offer[0].which_body != fedstat_v1_Envelope_task_tag ||
      offer[0].body.task.task_id != task) {
    ADD_FAILURE() << "device " << client << " was not offered task " << task;
    return r;
  }
  c.on_frame(conn, reply(task, true));
  for (uint32_t offset = 0; offset < words.size();) {
    const uint32_t n = std::min<uint32_t>(64, static_cast<uint32_t>(words.size()) - offset);
    c.on_frame(conn, report(task, words, offset, n));
    if (out.empty(conn)) {
      ADD_FAILURE() << "device " << client << ": no answer to the chunk at " << offset;
      return r;
    }
    const fedstat_v1_Envelope answer = out.pop(conn);
    if (answer.which_body == fedstat_v1_Envelope_server_error_tag) {
      r.refused = true;
      r.status = answer.body.server_error.status_code;
      r.detail = answer.body.server_error.detail;
      r.refused_at = offset;
      break;
    }
    if (answer.which_body != fedstat_v1_Envelope_ack_tag) break;  // e.g. the RoundOutcome
    ++r.acks;
    offset += n;
  }
  r.closed = out.closed(conn);
  return r;
}

}  // namespace testing
}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_AUDIT_ROUNDS_PLANNED_TASKS_H_
