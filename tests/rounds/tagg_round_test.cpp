// The collector's side of TAGG through the Coordinator: the round completes for the devices, the
// exact aggregate goes to TaskSpec::forward and nothing is published here; a restart forwards the
// same aggregate again until a result is stored, then never again.
#include <gtest/gtest.h>

#include <stdexcept>

#include "host_server/rounds/coordinator.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kLength = 130;
constexpr uint32_t kBits = 20;

struct Forwarded {
  std::vector<uint64_t> sum;
  uint32_t contributors = 0;
};

std::vector<TaskSpec> tagg_task(std::vector<Forwarded>& forwarded) {
  TaskSpec spec = make_spec(1, fedstat_v1_TrustModel_TAGG, kLength, kBits, 3, 4);
  spec.estimate = nullptr;  // the collector holds no estimator for a TAGG task
  spec.forward = [&forwarded](const std::vector<uint64_t>& sum, uint32_t contributors) {
    forwarded.push_back({sum, contributors});
  };
  return {spec};
}

TEST(TaggRound, TheCollectorForwardsTheAggregateAndPublishesNothing) {
  FakeStore store;
  std::vector<Forwarded> forwarded;
  std::vector<TrustedDevice> devices;
  std::vector<std::vector<uint64_t>> inputs;
  {
    FakeOutbox out(store);
    Coordinator c(store, out, tagg_task(forwarded), kT0);
    devices = admit_devices(c, out, 4, 50, 1, kLength, kBits);
    for (const auto& d : devices) inputs.push_back(d.words);
    for (auto& d : devices) send_reports(c, out, d, 1, kLength);
    expect_outcomes(out, devices, /*completed=*/true);
    EXPECT_EQ(c.task_state(1), "completed");  // for the devices
  }
  ASSERT_EQ(forwarded.size(), 1u);
  EXPECT_EQ(forwarded[0].sum, sum_of(inputs, kBits));
  EXPECT_EQ(forwarded[0].contributors, 4u);
  EXPECT_EQ(store.state(1), kAwaitingTagg);
  EXPECT_FALSE(store.result(1).has_value()) << "a TAGG collector publishes only the TAgg's answer";

  // A restart (the TAgg has not answered): the replay forwards the same aggregate again.
  {
    FakeOutbox out(store);
    const size_t events = store.event_count();
    Coordinator again(store, out, tagg_task(forwarded), kT0 + 5);
    EXPECT_EQ(store.event_count(), events);
    ASSERT_EQ(forwarded.size(), 2u);
    EXPECT_EQ(forwarded[1].sum, forwarded[0].sum);
    EXPECT_EQ(forwarded[1].contributors, 4u);
    EXPECT_EQ(store.state(1), kAwaitingTagg);
  }
  // The TAgg's result is published (what the server does with its answer): no more forwarding.
  store.put_result(1, "{\"estimate\":0.5}");
  store.set_task_state(1, "completed");
  FakeOutbox out(store);
  Coordinator third(store, out, tagg_task(forwarded), kT0 + 10);
  EXPECT_EQ(forwarded.size(), 2u);
  EXPECT_EQ(third.task_state(1), "completed");
}

TEST(TaggRound, ATaggTaskNeedsAForwardAndOnlyATaggTaskHasOne) {
  FakeStore store;
  FakeOutbox out(store);
  std::vector<TaskSpec> no_forward = {
      make_spec(1, fedstat_v1_TrustModel_TAGG, kLength, kBits, 3, 4)};
  EXPECT_THROW(Coordinator(store, out, no_forward, kT0), std::invalid_argument);
  std::vector<Forwarded> forwarded;
  std::vector<TaskSpec> trusted = tagg_task(forwarded);
  trusted[0].task.trust = fedstat_v1_TrustModel_TRUSTED;
  EXPECT_THROW(Coordinator(store, out, trusted, kT0), std::invalid_argument);
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
