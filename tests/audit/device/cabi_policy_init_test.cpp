// Issue 39 item 1, privacy review F6 (C ABI): a fedstat_task_policy that the app zeroed (or
// initialised by aggregate) and then gave only some fields silently had min_exact_epsilon = 0
// (the ε floor off: exact TRUSTED/TAGG words for any tiny ε) and max_delta = 0. A policy must
// start from fedstat_task_policy_default; fedstat_client_set_task_policy refuses any other,
// naming the function, and keeps the policy in force. Paper: none.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "fedstat/fedstat.h"
#include "tests/client/client_test_support.h"

namespace fedstat {
namespace client_test {
namespace {

class CabiPolicyInitTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    size_t bytes = 0;
    ASSERT_EQ(fedstat_ledger_size(16, &bytes), FEDSTAT_OK);
    ledger_memory_.resize(bytes / 8 + 1);
    const fedstat_ledger_config lc = {10, 1e-3, 30 * 24 * 3600, "audit-ledger"};
    ASSERT_EQ(fedstat_ledger_create(ledger_memory_.data(), bytes, &lc, 16, &ledger_), FEDSTAT_OK);
    ASSERT_EQ(fedstat_ledger_load(ledger_), FEDSTAT_OK);
    ASSERT_EQ(fedstat_random_size(&bytes), FEDSTAT_OK);
    random_memory_.resize(bytes / 8 + 1);
    const Seed256 seed = test_seed(7);
    ASSERT_EQ(fedstat_random_create_seeded(random_memory_.data(), bytes, seed.bytes, 1, &random_),
              FEDSTAT_OK);
    ASSERT_EQ(fedstat_client_size(1 << 16, &bytes), FEDSTAT_OK);
    client_memory_.resize(bytes / 8 + 1);
    fedstat_client_config config = {};
    config.device_id = 5;
    config.wall_clock_seconds = &fixed_clock;
    config.round_blob_name = "audit-round";
    ASSERT_EQ(
        fedstat_client_create(client_memory_.data(), bytes, &config, ledger_, random_, &client_),
        FEDSTAT_OK);
  }
  std::vector<uint64_t> ledger_memory_, random_memory_, client_memory_;
  fedstat_ledger* ledger_ = nullptr;
  fedstat_random* random_ = nullptr;
  fedstat_client* client_ = nullptr;
};

TEST_F(CabiPolicyInitTest, APolicyNotStartedFromTheDefaultIsRefused) {
  // Zeroed, then the fields the app thought of: the floor and δ ceiling left at 0.
  fedstat_task_policy zeroed;
  std::memset(&zeroed, 0, sizeof(zeroed));
  zeroed.accepted_trust = FEDSTAT_TRUST_TRUSTED | FEDSTAT_TRUST_DIST;
  zeroed.max_epsilon = 5;
  zeroed.max_delta = 1e-5;
  // Value-initialised (C's `= {0}`, or an aggregate naming the first fields only), the same.
  fedstat_task_policy braces = {};
  braces.accepted_trust = FEDSTAT_TRUST_TRUSTED;
  braces.max_epsilon = 10;
  for (const fedstat_task_policy* partial : {&zeroed, &braces}) {
    EXPECT_EQ(fedstat_client_set_task_policy(client_, partial), FEDSTAT_INVALID_ARGUMENT)
        << "a policy with min_exact_epsilon " << partial->min_exact_epsilon << " and max_delta "
        << partial->max_delta << " was taken";
    EXPECT_NE(std::string(fedstat_client_last_error(client_)).find("fedstat_task_policy_default"),
              std::string::npos)
        << fedstat_client_last_error(client_);
  }
  // Started from the default and changed: taken.
  fedstat_task_policy from_default;
  ASSERT_EQ(fedstat_task_policy_default(&from_default), FEDSTAT_OK);
  from_default.accepted_trust = FEDSTAT_TRUST_TRUSTED | FEDSTAT_TRUST_DIST;
  from_default.max_epsilon = 5;
  EXPECT_EQ(fedstat_client_set_task_policy(client_, &from_default), FEDSTAT_OK)
      << fedstat_client_last_error(client_);
  // A copy of a default-made policy is one too (structs are copied by value in C).
  const fedstat_task_policy copy = from_default;
  EXPECT_EQ(fedstat_client_set_task_policy(client_, &copy), FEDSTAT_OK);
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
