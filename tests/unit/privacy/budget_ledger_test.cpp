#include "sdk/privacy/budget_ledger.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "platform/platform.h"
#include "platform/posix/posix_platform.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace privacy {
namespace {

class LedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fedstat-ledger-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
    ASSERT_TRUE(platform::posix::set_storage_directory(directory_.c_str()).ok());
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf '" + directory_ + "'").c_str()), 0); }

  // A ledger "process": its own memory, as after a restart.
  struct Device {
    explicit Device(LedgerConfig config, size_t capacity = 8)
        : entries(capacity), scratch(BudgetLedger::blob_bytes(capacity)) {
      EXPECT_TRUE(ledger
                      .init(config, Span<PrivacySpend>(entries.data(), entries.size()),
                            MutableByteSpan(scratch.data(), scratch.size()))
                      .ok());
    }
    std::vector<PrivacySpend> entries;
    std::vector<uint8_t> scratch;
    BudgetLedger ledger;
  };

  static PrivacySpend dp(double epsilon, double delta, uint32_t task) {
    PrivacySpend s;
    s.epsilon = epsilon;
    s.delta = delta;
    s.task_id = task;
    return s;
  }

  std::string directory_;
};

TEST_F(LedgerTest, RefusesTheTaskThatWouldExceedAndChangesNothing) {
  Device device(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.4, 1e-7, 1), 100).ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.4, 1e-7, 2), 200).ok());
  const Status refused = device.ledger.charge(dp(0.3, 1e-7, 3), 300);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(refused.message()).find("budget exceeded"), std::string::npos);
  EXPECT_EQ(device.ledger.size(), 2u);
  EXPECT_NEAR(device.ledger.spent(300)->epsilon, 0.8, 1e-12);
  EXPECT_TRUE(device.ledger.charge(dp(0.2, 1e-7, 4), 300).ok());  // exactly the budget
  EXPECT_EQ(device.ledger.charge(dp(0.0, 8e-7, 5), 300).code(), StatusCode::kResourceExhausted);
}

TEST_F(LedgerTest, SurvivesARestart) {
  {
    Device before(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
    ASSERT_TRUE(before.ledger.load().ok());
    ASSERT_TRUE(before.ledger.charge(dp(0.7, 1e-7, 1), 100).ok());
  }
  Device after(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  ASSERT_TRUE(after.ledger.load().ok());
  EXPECT_EQ(after.ledger.size(), 1u);
  EXPECT_NEAR(after.ledger.spent(150)->epsilon, 0.7, 1e-15);
  EXPECT_EQ(after.ledger.charge(dp(0.5, 1e-7, 2), 150).code(), StatusCode::kResourceExhausted);
}

TEST_F(LedgerTest, SpendsExpireAfterTheWindow) {
  Device device(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.9, 1e-7, 1), 100).ok());
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 2), 1099).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(device.ledger.charge(dp(0.5, 1e-7, 2), 1100).ok());  // the first left the window
  EXPECT_EQ(device.ledger.size(), 1u);
}

TEST_F(LedgerTest, RdpCompositionAdmitsMoreTasksThanBasicComposition) {
  // Each task: Skellam noise with ε ≈ 0.25 at δ = 1e-7 alone. Basic composition admits 4 per
  // unit budget; summing the RDP curves admits more.
  PrivacySpend task;
  task.has_rdp = true;
  for (size_t k = 0; k < kLedgerOrderCount; ++k) {
    task.rdp[k] = skellam_rdp(kLedgerOrders[k], Sensitivity{1, 1}, 400).value();
  }
  double single = HUGE_VAL;
  for (size_t k = 0; k < kLedgerOrderCount; ++k) {
    single = std::min(single, rdp_to_dp(kLedgerOrders[k], task.rdp[k], 1e-6).value());
  }
  Device rdp_device(LedgerConfig{1.0, 1e-6, 1000, "rdp"}, 64);
  ASSERT_TRUE(rdp_device.ledger.load().ok());
  size_t admitted = 0;
  while (rdp_device.ledger.charge(task, 10).ok()) ++admitted;
  const size_t basic = static_cast<size_t>(1.0 / single);
  EXPECT_GT(admitted, basic) << "single-task epsilon " << single;
  EXPECT_LE(rdp_device.ledger.spent(10)->epsilon, 1.0);
}

TEST_F(LedgerTest, CorruptLedgerLocksUntilDeliberateReset) {
  {
    Device before(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
    ASSERT_TRUE(before.ledger.load().ok());
    ASSERT_TRUE(before.ledger.charge(dp(0.9, 1e-7, 1), 100).ok());
  }
  {
    std::fstream f(directory_ + "/ledger", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x55');
  }
  Device after(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  EXPECT_EQ(after.ledger.load().code(), StatusCode::kDataLoss);
  EXPECT_EQ(after.ledger.charge(dp(0.01, 0, 2), 150).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(after.ledger.reset_after_data_loss().ok());
  EXPECT_TRUE(after.ledger.charge(dp(0.01, 0, 2), 150).ok());
}

TEST_F(LedgerTest, FullLedgerAndBadSpendsAreRefused) {
  Device device(LedgerConfig{100.0, 1e-6, 1000, "ledger"}, 2);
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.1, 0, 1), 10).ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.1, 0, 2), 10).ok());
  EXPECT_EQ(device.ledger.charge(dp(0.1, 0, 3), 10).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(device.ledger.charge(dp(-1, 0, 4), 10).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device.ledger.charge(dp(0.1, 1.0, 4), 10).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device.ledger.size(), 2u);
}

TEST_F(LedgerTest, FailedPersistUndoesTheCharge) {
  Device device(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.2, 0, 1), 10).ok());
  ASSERT_TRUE(platform::posix::set_storage_directory("/nonexistent/fedstat").ok());
  EXPECT_EQ(device.ledger.charge(dp(0.2, 0, 2), 20).code(), StatusCode::kUnavailable);
  EXPECT_EQ(device.ledger.size(), 1u);
  EXPECT_NEAR(device.ledger.spent(20)->epsilon, 0.2, 1e-15);
}

TEST(LedgerConfigTest, InitChecksItsArguments) {
  std::vector<PrivacySpend> entries(4);
  std::vector<uint8_t> small(16);
  BudgetLedger ledger;
  EXPECT_EQ(ledger
                .init(LedgerConfig{1, 1e-6, 10, "x"}, Span<PrivacySpend>(entries.data(), 4),
                      MutableByteSpan(small.data(), small.size()))
                .code(),
            StatusCode::kResourceExhausted);
  std::vector<uint8_t> scratch(BudgetLedger::blob_bytes(4));
  EXPECT_EQ(ledger
                .init(LedgerConfig{0, 1e-6, 10, "x"}, Span<PrivacySpend>(entries.data(), 4),
                      MutableByteSpan(scratch.data(), scratch.size()))
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.charge(PrivacySpend(), 1).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace privacy
}  // namespace fedstat
