// Issue 39 item 11: a misspelt field inside a task's kind block ("heap_capactiy" in data_shift)
// is refused as an unknown field, naming it and its block, as the top level already was; so is a
// block of another kind (never read). Each kind's block is tried with a misspelt field next to
// valid ones: before the fix every one was planned with the misspelt field ignored (an optional
// field's default silently in force). The server configuration's one nested object (tagg) is
// checked too (it already refused unknown fields: a guard).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "host_server/server_config.h"
#include "host_server/tasks/task_plan.h"

namespace fedstat {
namespace host {
namespace {

using nlohmann::json;

// A file in the test's temporary directory, per process (ctest runs tests in parallel).
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + std::to_string(getpid()) + "_" + name;
}

// An item-count file: items 0..49, counts 1000/(i+1).
std::string write_reference() {
  const std::string path = temp_path("audit_tools_reference.txt");
  std::ofstream out(path);
  for (int i = 0; i < 50; ++i) out << i << " " << 1000 / (i + 1) << "\n";
  return path;
}

json common(const std::string& kind, const std::string& trust, double epsilon, double delta) {
  return json{{"id", 7},
              {"kind", kind},
              {"trust", trust},
              {"epsilon", epsilon},
              {"delta", delta},
              {"min_clients", 3},
              {"max_clients", 4},
              {"deadline_seconds", 600},
              {"seed", std::string(62, '0') + "2a"}};
}

// One valid declaration per kind.
json valid(const std::string& kind, const std::string& reference) {
  if (kind == "data_shift") {
    json task = common(kind, "none", 0, 0);
    task[kind] = {{"rows", 3},    {"width", 64},          {"heap_capacity", 16},   {"k", 256},
                  {"domain", 60}, {"local_epsilon", 0.0}, {"reference", reference}};
    return task;
  }
  if (kind == "kl") {
    json task = common(kind, "trusted", 1.0, 1e-6);
    task[kind] = {{"reference", reference}, {"rounds", 20}, {"lambda", 0.1}};
    return task;
  }
  if (kind == "model_update") {
    json task = common(kind, "none", 0, 0);
    task[kind] = {{"dimension", 4},           {"epochs", 10},   {"batches", 2},
                  {"averaging_interval", 10}, {"eta0", 2.0},    {"mu", 0.001},
                  {"clip_norm", 10.0},        {"rotate", true}, {"gamma", 4096.0},
                  {"beta", 0.6065306597},     {"bits", 32},     {"examples_per_client", 40}};
    return task;
  }
  json task = common(kind, "none", 0, 0);
  task[kind] = {{"dimension", 3}, {"p", 2}, {"max_weight", 8}, {"stage2_id", 8}};
  return task;
}

// "accepted", or the refusal's message.
std::string refusal(const json& task) {
  try {
    plan_task(task, "", 0);
    return "accepted";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

TEST(NestedFields, AMisspeltFieldInEveryKindBlockIsRefusedNamingItAndItsBlock) {
  const std::string reference = write_reference();
  // {kind, misspelt field, its value}: each a field of the block with one letter swapped or
  // missing; the optional ones (tau, initial_model, evaluation) would otherwise be defaulted.
  const std::vector<std::pair<std::string, std::pair<std::string, json>>> cases = {
      {"data_shift", {"heap_capactiy", 16}},
      {"data_shift", {"local_epsilion", 0.5}},
      {"kl", {"tua", 1e-3}},
      {"model_update", {"initial_modle", json::array({0.1, 0.2, 0.3, 0.4})}},
      {"model_update", {"evalution", "held_out.csv"}},
      {"heterogeneity", {"max_wieght", 16}}};
  for (const auto& [kind, field] : cases) {
    json task = valid(kind, reference);
    ASSERT_EQ(refusal(task), "accepted") << kind;
    task[kind][field.first] = field.second;
    const std::string why = refusal(task);
    EXPECT_NE(why.find("unknown field '" + field.first + "'"), std::string::npos)
        << kind << "." << field.first << ": " << why;
    EXPECT_NE(why.find(kind + ": unknown field"), std::string::npos)
        << "the refusal names the block: " << why;
  }
  std::remove(reference.c_str());
}

TEST(NestedFields, AnotherKindsBlockIsRefused) {
  const std::string reference = write_reference();
  json task = valid("kl", reference);
  task["data_shift"] = valid("data_shift", reference)["data_shift"];  // left from an edit
  const std::string why = refusal(task);
  EXPECT_NE(why.find("data_shift is the block of a data_shift task"), std::string::npos) << why;
  EXPECT_NE(why.find("\"kl\""), std::string::npos) << why;
  std::remove(reference.c_str());
}

TEST(NestedFields, TheTopLevelStillRefusesAMisspeltField) {
  const std::string reference = write_reference();
  json task = valid("kl", reference);
  task["phase_timout_seconds"] = 20;
  EXPECT_NE(refusal(task).find("task: unknown field 'phase_timout_seconds'"), std::string::npos);
  std::remove(reference.c_str());
}

TEST(NestedFields, TheServerConfigsTaggBlockRefusesAMisspeltField) {
  const std::string path = temp_path("audit_tools_collector.json");
  json tagg = {{"endpoint", "127.0.0.1:7444"},
               {"identity", "collector-1"},
               {"psk", std::string(64, 'a')},
               {"timeout_msec", 5000}};
  std::ofstream(path) << json{
      {"listen", "127.0.0.1:0"},
      {"fleet_secret", std::string(64, '1')},
      {"tagg", tagg},
      {"tasks",
       json::array()}}.dump();
  try {
    read_server_config(path);
    ADD_FAILURE() << "a misspelt tagg field was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tagg: unknown field 'timeout_msec'"), std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace host
}  // namespace fedstat
