// Issue 39 item 4: a DIST round publishes only a sum of at least min_clients devices. Before the
// fix min_clients was checked when admission closed and never again: ten devices admitted with
// min_clients 8 and threshold 6, three dropping out in secure aggregation, and the round
// published the sum of seven (the demo: 101 of 200 where the README promised 150). Now each
// stage that decides who is in the sum (keys, shares, masked input) aborts the round, with a
// reason naming min_clients, when fewer than min_clients remain — and asks no device for its
// reveals. Devices built on the SDK's SecAggClient (tests/rounds/dist_device.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "tests/rounds/dist_device.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kLength = 70;
constexpr uint32_t kBits = 32;
constexpr uint32_t kDevices = 10, kMinClients = 8, kThreshold = 6;

class AuditMinClients : public ::testing::TestWithParam<int> {};

TEST_P(AuditMinClients, FewerThanMinClientsLeftInAnyStageAbortsTheRound) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(
      store, out,
      {make_spec(1, fedstat_v1_TrustModel_DIST, kLength, kBits, kMinClients, kDevices, kThreshold)},
      kT0);
  Devices devices;
  for (uint32_t i = 0; i < kDevices; ++i) {
    const uint64_t id = 500 + i;
    devices.push_back(std::make_unique<DistDevice>(id, kDevices, device_words(id, kLength, kBits)));
    if (i < 3) devices.back()->drop_at = GetParam();  // 7 left: above threshold, below min
  }
  check_in_all(c, devices, 1);
  pump(c, out, devices);
  std::string log;
  for (const std::string& line : c.take_log()) log += line + "\n";
  EXPECT_EQ(c.task_state(1), "aborted") << log;
  EXPECT_FALSE(store.result(1).has_value()) << "published: " << store.result(1).value_or("");
  EXPECT_NE(log.find("min_clients"), std::string::npos) << log;
  for (const auto& d : devices) {
    if (d->gone) continue;
    EXPECT_EQ(d->outcomes, 1) << "device " << d->id;
    EXPECT_FALSE(d->completed) << "device " << d->id;
    EXPECT_EQ(d->u3_rosters, 0) << "device " << d->id << " was asked for its reveals";
  }
}

std::string stage_name(const ::testing::TestParamInfo<int>& info) {
  static const char* const kNames[] = {"Keys", "Shares", "MaskedInput"};
  return kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(DropBefore, AuditMinClients,
                         ::testing::Values(kBeforeKeys, kBeforeShares, kBeforeMasking), stage_name);

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
