// The collector's store durability (server_app.h, collector_store_options): a config that declares
// a DIST task gets kStepsSurvivePowerLoss (every step committed with synchronous=FULL), so a
// U2/U3 roster sent to some devices is never lost in a power cut and then announced differently
// to others (two U3 views would let one group reveal b_w and another s_w^SK for the same device
// w). Other configs keep the cheaper NORMAL.
#include <gtest/gtest.h>

#include "host_server/server_app.h"

namespace fedstat {
namespace host {
namespace {

using nlohmann::json;

ServerConfig config_with(const std::vector<std::string>& trusts) {
  ServerConfig config;
  uint32_t id = 1;
  for (const std::string& trust : trusts) {
    config.tasks.push_back(json{{"id", id++}, {"kind", "kl"}, {"trust", trust}});
  }
  return config;
}

TEST(CollectorStore, ADeclaredDistTaskMakesEveryStepSurvivePowerLoss) {
  EXPECT_EQ(collector_store_options(config_with({"dist"})).durability,
            Durability::kStepsSurvivePowerLoss);
  EXPECT_EQ(collector_store_options(config_with({"none", "trusted", "dist"})).durability,
            Durability::kStepsSurvivePowerLoss);
}

TEST(CollectorStore, WithoutDistTasksTheStoreKeepsProcessCrashDurability) {
  EXPECT_EQ(collector_store_options(config_with({})).durability, Durability::kSurvivesProcessCrash);
  EXPECT_EQ(collector_store_options(config_with({"none", "trusted", "tagg"})).durability,
            Durability::kSurvivesProcessCrash);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
