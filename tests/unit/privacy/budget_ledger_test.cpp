#include "sdk/privacy/budget_ledger.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "platform/platform.h"
#include "platform/posix/posix_platform.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace privacy {
namespace {

// A plausible wall-clock reading (2027-01-15): the ledger refuses readings before 2024-01-01.
constexpr uint64_t kT0 = 1800000000;
constexpr uint64_t kDay = 24 * 3600;
constexpr uint64_t kMonth = 30 * kDay;

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

  // Writes a version-1 ledger blob holding one (ε, δ) spend dated `time`, as an older firmware
  // (or a corrupted clock) could have left it.
  static void store_one_spend(const char* name, uint64_t time, double epsilon) {
    std::vector<uint8_t> blob(BudgetLedger::blob_bytes(1), 0);
    auto le = [&](size_t at, uint64_t v, int bytes) {
      for (int i = 0; i < bytes; ++i) blob[at + i] = static_cast<uint8_t>(v >> (8 * i));
    };
    uint64_t epsilon_bits;
    std::memcpy(&epsilon_bits, &epsilon, 8);
    le(0, 1, 4);  // version
    le(4, 1, 4);  // one entry
    le(8, time, 8);
    le(16, 7, 4);  // task id
    le(20, 0, 4);  // no RDP curve
    le(24, epsilon_bits, 8);
    ASSERT_TRUE(platform::save_blob(name, ByteSpan(blob.data(), blob.size())).ok());
  }

  bool blob_exists(const char* name) const { return std::ifstream(directory_ + "/" + name).good(); }

  std::string directory_;
};

TEST_F(LedgerTest, RefusesTheTaskThatWouldExceedAndChangesNothing) {
  Device device(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.4, 1e-7, 1), kT0 + 100).ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.4, 1e-7, 2), kT0 + 200).ok());
  const Status refused = device.ledger.charge(dp(0.3, 1e-7, 3), kT0 + 300);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(std::string(refused.message()).find("budget exceeded"), std::string::npos);
  EXPECT_EQ(device.ledger.size(), 2u);
  EXPECT_NEAR(device.ledger.spent(kT0 + 300)->epsilon, 0.8, 1e-12);
  EXPECT_TRUE(device.ledger.charge(dp(0.2, 1e-7, 4), kT0 + 300).ok());  // exactly the budget
  EXPECT_EQ(device.ledger.charge(dp(0.0, 8e-7, 5), kT0 + 300).code(),
            StatusCode::kResourceExhausted);
}

// check() answers what charge() would, for every kind of refusal, and changes nothing: neither
// the ledger in memory nor the stored blob (a refused or accepted check leaves both as they were).
TEST_F(LedgerTest, CheckAnswersWhatChargeWouldAndChangesNothing) {
  Device device(LedgerConfig{1.0, 1e-6, 1000, "ledger"}, 3);
  EXPECT_EQ(device.ledger.check(dp(0.1, 0, 1), kT0).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.5, 1e-7, 1), kT0 + 100).ok());
  auto stored = [&] {
    std::ifstream f(directory_ + "/ledger", std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  const std::string before = stored();
  ASSERT_FALSE(before.empty());
  struct Case {
    PrivacySpend spend;
    uint64_t now;
    StatusCode expected;
  };
  const Case cases[] = {
      {dp(0.5, 1e-7, 2), kT0 + 200, StatusCode::kOk},                   // exactly the budget
      {dp(0.6, 1e-7, 2), kT0 + 200, StatusCode::kResourceExhausted},    // over it
      {dp(0.6, 1e-7, 2), kT0 + 1100, StatusCode::kOk},                  // the first has expired
      {dp(0.1, 9.5e-7, 2), kT0 + 200, StatusCode::kResourceExhausted},  // δ over
      {dp(NAN, 0, 2), kT0 + 200, StatusCode::kInvalidArgument},
      {dp(-0.1, 0, 2), kT0 + 200, StatusCode::kInvalidArgument},
      {dp(0.1, 0, 2), 1000, StatusCode::kInvalidArgument},  // an implausible clock
  };
  for (const Case& c : cases) {
    EXPECT_EQ(device.ledger.check(c.spend, c.now).code(), c.expected) << c.spend.epsilon;
    EXPECT_EQ(device.ledger.size(), 1u);
    EXPECT_EQ(device.ledger.ledger_time(), kT0 + 100);
    EXPECT_NEAR(device.ledger.spent(kT0 + 100)->epsilon, 0.5, 1e-15);
    EXPECT_EQ(stored(), before);
  }
  // The same answers from charge() (each on a fresh copy of the ledger, since a charge changes it).
  for (const Case& c : cases) {
    Device copy(LedgerConfig{1.0, 1e-6, 1000, "ledger"}, 3);
    ASSERT_TRUE(copy.ledger.load().ok());
    EXPECT_EQ(copy.ledger.charge(c.spend, c.now).code(), c.expected) << c.spend.epsilon;
    std::ofstream(directory_ + "/ledger", std::ios::binary | std::ios::trunc) << before;
  }
  // A full ledger (no expired entry to drop) is refused by both.
  Device full(LedgerConfig{1.0, 1e-6, 1000, "ledger"}, 1);
  ASSERT_TRUE(full.ledger.load().ok());
  EXPECT_EQ(full.ledger.check(dp(0.1, 0, 2), kT0 + 200).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(full.ledger.charge(dp(0.1, 0, 2), kT0 + 200).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(full.ledger.check(dp(0.1, 0, 2), kT0 + 1100).code(), StatusCode::kOk);
}

TEST_F(LedgerTest, SurvivesARestart) {
  {
    Device before(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
    ASSERT_TRUE(before.ledger.load().ok());
    ASSERT_TRUE(before.ledger.charge(dp(0.7, 1e-7, 1), kT0 + 100).ok());
  }
  Device after(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  ASSERT_TRUE(after.ledger.load().ok());
  EXPECT_EQ(after.ledger.size(), 1u);
  EXPECT_NEAR(after.ledger.spent(kT0 + 150)->epsilon, 0.7, 1e-15);
  EXPECT_EQ(after.ledger.charge(dp(0.5, 1e-7, 2), kT0 + 150).code(),
            StatusCode::kResourceExhausted);
}

TEST_F(LedgerTest, SpendsExpireAfterTheWindow) {
  Device device(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.9, 1e-7, 1), kT0 + 100).ok());
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 2), kT0 + 1099).code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(
      device.ledger.charge(dp(0.5, 1e-7, 2), kT0 + 1100).ok());  // the first left the window
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
  while (rdp_device.ledger.charge(task, kT0 + 10).ok()) ++admitted;
  const size_t basic = static_cast<size_t>(1.0 / single);
  EXPECT_GT(admitted, basic) << "single-task epsilon " << single;
  EXPECT_LE(rdp_device.ledger.spent(kT0 + 10)->epsilon, 1.0);
}

TEST_F(LedgerTest, CorruptLedgerLocksUntilDeliberateReset) {
  {
    Device before(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
    ASSERT_TRUE(before.ledger.load().ok());
    ASSERT_TRUE(before.ledger.charge(dp(0.9, 1e-7, 1), kT0 + 100).ok());
  }
  {
    std::fstream f(directory_ + "/ledger", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.put('\x55');
  }
  Device after(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  EXPECT_EQ(after.ledger.load().code(), StatusCode::kDataLoss);
  EXPECT_EQ(after.ledger.charge(dp(0.01, 0, 2), kT0 + 150).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(after.ledger.reset_after_data_loss(kT0 + 150).ok());
  // The lost spends may still be in the window: the reset starts from a spend of the whole
  // budget, so nothing is charged until a window (1000 s) has passed.
  EXPECT_EQ(after.ledger.charge(dp(0.01, 0, 2), kT0 + 150).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(after.ledger.charge(dp(0, 9e-7, 2), kT0 + 150).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(after.ledger.charge(dp(0.01, 0, 2), kT0 + 1149).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(after.ledger.charge(dp(0.01, 0, 2), kT0 + 1150).ok());
  // Once healthy again, a reset would wipe the spends just made: refused, nothing changes.
  EXPECT_EQ(after.ledger.reset_after_data_loss(kT0 + 1150).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(after.ledger.size(), 1u);
}

// A spend that carries an RDP curve keeps its (ε, δ) counted: ignoring them let three spends of
// ε = 50 with a zero curve pass a budget of 1.
TEST_F(LedgerTest, RdpSpendsKeepTheirEpsilonAndDeltaCounted) {
  Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  PrivacySpend spend = dp(50, 0, 1);
  spend.has_rdp = true;  // every rdp[k] = 0
  EXPECT_EQ(device.ledger.charge(spend, kT0).code(), StatusCode::kResourceExhausted);
  spend.epsilon = 0.3;
  ASSERT_TRUE(device.ledger.charge(spend, kT0).ok());
  EXPECT_GE(device.ledger.spent(kT0)->epsilon, 0.3);
}

TEST_F(LedgerTest, FullLedgerAndBadSpendsAreRefused) {
  Device device(LedgerConfig{100.0, 1e-6, 1000, "ledger"}, 2);
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.1, 0, 1), kT0 + 10).ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.1, 0, 2), kT0 + 10).ok());
  EXPECT_EQ(device.ledger.charge(dp(0.1, 0, 3), kT0 + 10).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(device.ledger.charge(dp(-1, 0, 4), kT0 + 10).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device.ledger.charge(dp(0.1, 1.0, 4), kT0 + 10).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device.ledger.size(), 2u);
}

TEST_F(LedgerTest, FailedPersistUndoesTheCharge) {
  Device device(LedgerConfig{1.0, 1e-6, 1000, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.2, 0, 1), kT0 + 10).ok());
  ASSERT_TRUE(platform::posix::set_storage_directory("/nonexistent/fedstat").ok());
  EXPECT_EQ(device.ledger.charge(dp(0.2, 0, 2), kT0 + 20).code(), StatusCode::kUnavailable);
  EXPECT_EQ(device.ledger.size(), 1u);
  EXPECT_NEAR(device.ledger.spent(kT0 + 20)->epsilon, 0.2, 1e-15);
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
  EXPECT_EQ(ledger.charge(PrivacySpend(), kT0 + 1).code(), StatusCode::kFailedPrecondition);
}

// Issue 11 item 6: `time + window > now` wrapped past 2^64, so at now = 2^64 − 1 (a clock read
// of −1 cast to unsigned) or 2^64 − 10^6 every spend looked expired and the budget was endless.
TEST_F(LedgerTest, ImplausibleClockReadingsAreRefusedAndChangeNothing) {
  for (const uint64_t now : {UINT64_MAX, UINT64_MAX - 1000000, uint64_t{1} << 62, uint64_t{1} << 40,
                             uint64_t{1700000000} * 1000 /* milliseconds */}) {
    Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
    ASSERT_TRUE(device.ledger.load().ok());
    for (uint32_t task = 1; task <= 5; ++task) {
      const Status s = device.ledger.charge(dp(0.9, 1e-7, task), now);
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << now;
      EXPECT_NE(std::string(s.message()).find("not a plausible time"), std::string::npos)
          << s.message();
      EXPECT_NE(std::string(s.message()).find("check the clock source"), std::string::npos);
    }
    EXPECT_EQ(device.ledger.size(), 0u);
    EXPECT_FALSE(blob_exists("ledger")) << "a refused charge must not write the ledger";
    EXPECT_EQ(device.ledger.spent(now).status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(device.ledger.spent(kT0)->epsilon, 0.0);
  }
}

TEST_F(LedgerTest, ImplausibleClockAfterASpendKeepsItCounting) {
  Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.9, 1e-7, 1), kT0).ok());
  EXPECT_EQ(device.ledger.charge(dp(0.9, 1e-7, 2), UINT64_MAX).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(device.ledger.charge(dp(0.9, 1e-7, 3), UINT64_MAX - 1000000).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(device.ledger.size(), 1u);
  EXPECT_NEAR(device.ledger.spent(kT0 + 1)->epsilon, 0.9, 1e-15);
  EXPECT_EQ(device.ledger.charge(dp(0.9, 1e-7, 4), kT0 + 1).code(), StatusCode::kResourceExhausted);
}

TEST_F(LedgerTest, ClockThatWasNeverSetIsRefused) {
  // An RTC that lost power reads 1970 or 2000: dating spends there and then syncing to the real
  // time would expire them at once.
  Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  for (const uint64_t now : {uint64_t{0}, uint64_t{946684800}, uint64_t{1704067199}}) {
    const Status s = device.ledger.charge(dp(0.1, 1e-7, 1), now);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << now;
    EXPECT_NE(std::string(s.message()).find("check the clock source"), std::string::npos);
  }
  EXPECT_EQ(device.ledger.size(), 0u);
  EXPECT_TRUE(device.ledger.charge(dp(0.1, 1e-7, 1), 1704067200).ok());  // 2024-01-01 00:00 UTC
}

// A stored entry dated near 2^64 cannot come from a real clock (the old code stored them when
// the clock read −1), nor one dated before 2024 (it would expire at once). Before, they were
// silently dropped as expired; now the ledger locks as corrupt, so nothing is granted until a
// deliberate reset — which starts from a spend of the whole budget.
TEST_F(LedgerTest, StoredSpendAtAnImpossibleTimeLocksTheLedger) {
  for (const uint64_t stored :
       {UINT64_MAX, UINT64_MAX - 1000000, uint64_t{1} << 40, uint64_t{946684800}, uint64_t{0}}) {
    store_one_spend("ledger", stored, 0.9);
    Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
    EXPECT_EQ(device.ledger.load().code(), StatusCode::kDataLoss) << stored;
    EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 1), kT0).code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(device.ledger.spent(kT0).status().code(), StatusCode::kFailedPrecondition)
        << "a locked ledger must not report 0 spent";
    ASSERT_TRUE(device.ledger.reset_after_data_loss(kT0).ok());
    EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 1), kT0).code(), StatusCode::kResourceExhausted);
    EXPECT_TRUE(device.ledger.charge(dp(0.5, 1e-7, 1), kT0 + kMonth).ok());
  }
}

TEST_F(LedgerTest, StoredSpendDatedInTheFutureKeepsCounting) {
  // The clock was ahead when the spend was made (10 days), and has been corrected since.
  store_one_spend("ledger", kT0 + 10 * kDay, 0.9);
  Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  EXPECT_NEAR(device.ledger.spent(kT0)->epsilon, 0.9, 1e-15);
  EXPECT_NEAR(device.ledger.spent(kT0 + 10 * kDay + kMonth - 1)->epsilon, 0.9, 1e-15);
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 1), kT0).code(), StatusCode::kResourceExhausted);
  // A new spend is dated no earlier than the stored one, so it counts as long.
  ASSERT_TRUE(device.ledger.charge(dp(0.1, 1e-7, 2), kT0).ok());
  EXPECT_EQ(device.entries[1].time_seconds, kT0 + 10 * kDay);
}

TEST_F(LedgerTest, ClockGoingBackwardsNeverFreesBudget) {
  Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.5, 1e-7, 1), kT0).ok());
  // The clock is set back a day: the spend is dated at the ledger's time, not a day earlier.
  ASSERT_TRUE(device.ledger.charge(dp(0.4, 1e-7, 2), kT0 - kDay).ok());
  ASSERT_EQ(device.ledger.size(), 2u);
  EXPECT_EQ(device.entries[1].time_seconds, kT0);
  EXPECT_NEAR(device.ledger.spent(kT0 - kDay)->epsilon, 0.9, 1e-12);
  // Both count until kT0 + window: a spend dated a day early would have freed 0.4 a day early.
  EXPECT_NEAR(device.ledger.spent(kT0 + kMonth - 1)->epsilon, 0.9, 1e-12);
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 3), kT0 + kMonth - 1).code(),
            StatusCode::kResourceExhausted);
  // Set back a whole window or to the start of the range: still nothing freed.
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 4), kT0 - kMonth).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 5), 1704067200).code(),
            StatusCode::kResourceExhausted);
  // After a restart too (the ledger's time is the latest stored spend).
  Device after(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(after.ledger.load().ok());
  EXPECT_NEAR(after.ledger.spent(kT0 - 5 * kDay)->epsilon, 0.9, 1e-12);
  EXPECT_EQ(after.ledger.charge(dp(0.5, 1e-7, 6), kT0 - 5 * kDay).code(),
            StatusCode::kResourceExhausted);
}

TEST_F(LedgerTest, ForwardJumpPastTheWindowExpiresSpendsAndTheLedgerTimeStays) {
  // Documented: the ledger cannot tell a genuine jump from a forged one; it only guarantees that
  // going back afterwards frees nothing more.
  Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.9, 1e-7, 1), kT0).ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.9, 1e-7, 2), kT0 + kMonth).ok());
  EXPECT_EQ(device.ledger.size(), 1u);
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 3), kT0 + 1).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 3), kT0 + 2 * kMonth - 1).code(),
            StatusCode::kResourceExhausted);
}

TEST_F(LedgerTest, FailedPersistDoesNotMoveTheLedgerTimeBack) {
  Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.9, 1e-7, 1), kT0).ok());
  // At kT0 + window the first spend expires (and is dropped) but the new one cannot be saved.
  ASSERT_TRUE(platform::posix::set_storage_directory("/nonexistent/fedstat").ok());
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 2), kT0 + kMonth).code(), StatusCode::kUnavailable);
  ASSERT_TRUE(platform::posix::set_storage_directory(directory_.c_str()).ok());
  // The clock goes back to kT0: a spend there must not be dated kT0, where the dropped 0.9
  // would still have counted.
  ASSERT_TRUE(device.ledger.charge(dp(0.5, 1e-7, 3), kT0).ok());
  ASSERT_EQ(device.ledger.size(), 1u);
  EXPECT_GE(device.entries[0].time_seconds, kT0 + kMonth);
}

TEST_F(LedgerTest, WindowBoundaryIsExact) {
  const uint64_t window = 1000;
  Device device(LedgerConfig{1.0, 1e-6, window, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.9, 1e-7, 1), kT0).ok());
  EXPECT_NEAR(device.ledger.spent(kT0 + window - 1)->epsilon, 0.9, 1e-15);
  EXPECT_EQ(device.ledger.spent(kT0 + window)->epsilon, 0.0);
  EXPECT_EQ(device.ledger.charge(dp(0.2, 1e-7, 2), kT0 + window - 1).code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(device.ledger.charge(dp(0.2, 1e-7, 2), kT0 + window).ok());
  // A one-second window: a spend counts only at the second it was made.
  Device tight(LedgerConfig{1.0, 1e-6, 1, "tight"});
  ASSERT_TRUE(tight.ledger.load().ok());
  ASSERT_TRUE(tight.ledger.charge(dp(0.9, 1e-7, 1), kT0).ok());
  EXPECT_EQ(tight.ledger.charge(dp(0.2, 1e-7, 2), kT0).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(tight.ledger.charge(dp(0.2, 1e-7, 2), kT0 + 1).ok());
}

TEST_F(LedgerTest, UnusableUntilLoaded) {
  // Charging before load() would overwrite the stored spends with an empty ledger's.
  {
    Device before(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
    ASSERT_TRUE(before.ledger.load().ok());
    ASSERT_TRUE(before.ledger.charge(dp(0.9, 1e-7, 1), kT0).ok());
  }
  Device after(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  EXPECT_EQ(after.ledger.charge(dp(0.9, 1e-7, 2), kT0 + 1).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(after.ledger.spent(kT0 + 1).status().code(), StatusCode::kFailedPrecondition);
  // A load that fails for want of storage leaves it unusable too (the "directory" is a file).
  const std::string not_a_directory = directory_ + "/ledger";
  ASSERT_TRUE(platform::posix::set_storage_directory(not_a_directory.c_str()).ok());
  EXPECT_EQ(after.ledger.load().code(), StatusCode::kUnavailable);
  ASSERT_TRUE(platform::posix::set_storage_directory(directory_.c_str()).ok());
  EXPECT_EQ(after.ledger.charge(dp(0.9, 1e-7, 2), kT0 + 1).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(after.ledger.load().ok());
  EXPECT_EQ(after.ledger.charge(dp(0.9, 1e-7, 2), kT0 + 1).code(), StatusCode::kResourceExhausted);
}

TEST_F(LedgerTest, RdpSumOverflowingToInfinityIsOverBudgetNotAnError) {
  PrivacySpend huge;
  huge.has_rdp = true;
  for (double& r : huge.rdp) r = 1e308;
  Device device(LedgerConfig{DBL_MAX, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(huge, kT0).ok());
  // Two of them add up to +inf at every order: that is over any budget.
  EXPECT_EQ(device.ledger.charge(huge, kT0).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(device.ledger.size(), 1u);
}

TEST_F(LedgerTest, RefusedInitLeavesAWorkingLedgerAsItWas) {
  Device device(LedgerConfig{1.0, 1e-6, kMonth, "ledger"});
  ASSERT_TRUE(device.ledger.load().ok());
  ASSERT_TRUE(device.ledger.charge(dp(0.9, 1e-7, 1), kT0).ok());
  EXPECT_EQ(device.ledger
                .init(LedgerConfig{HUGE_VAL, 1e-6, kMonth, "ledger"},
                      Span<PrivacySpend>(device.entries.data(), device.entries.size()),
                      MutableByteSpan(device.scratch.data(), device.scratch.size()))
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_NEAR(device.ledger.spent(kT0)->epsilon, 0.9, 1e-15);
  EXPECT_EQ(device.ledger.charge(dp(0.5, 1e-7, 2), kT0).code(), StatusCode::kResourceExhausted);
}

TEST(LedgerConfigTest, RefusesBudgetsWindowsAndNamesOutsideTheDocumentedRange) {
  std::vector<PrivacySpend> entries(4);
  std::vector<uint8_t> scratch(BudgetLedger::blob_bytes(4));
  auto init = [&](LedgerConfig config) {
    BudgetLedger ledger;
    return ledger.init(config, Span<PrivacySpend>(entries.data(), 4),
                       MutableByteSpan(scratch.data(), scratch.size()));
  };
  const double nan = std::nan(""), inf = HUGE_VAL;
  for (double epsilon : {nan, inf, -inf, 0.0, -1.0}) {
    const Status s = init(LedgerConfig{epsilon, 1e-6, 10, "x"});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << epsilon;
    EXPECT_NE(std::string(s.message()).find("epsilon"), std::string::npos) << s.message();
  }
  for (double delta : {nan, inf, 0.0, 1.0, -1e-6}) {
    const Status s = init(LedgerConfig{1, delta, 10, "x"});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << delta;
    EXPECT_NE(std::string(s.message()).find("delta"), std::string::npos) << s.message();
  }
  for (uint64_t window : {uint64_t{0}, (uint64_t{1} << 32) + 1, UINT64_MAX}) {
    const Status s = init(LedgerConfig{1, 1e-6, window, "x"});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << window;
    EXPECT_NE(std::string(s.message()).find("window"), std::string::npos) << s.message();
  }
  EXPECT_TRUE(init(LedgerConfig{1, 1e-6, uint64_t{1} << 32, "x"}).ok());
  EXPECT_TRUE(init(LedgerConfig{1, 1e-6, 1, "x"}).ok());
  EXPECT_EQ(init(LedgerConfig{1, 1e-6, 10, nullptr}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(init(LedgerConfig{1, 1e-6, 10, ""}).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace privacy
}  // namespace fedstat
