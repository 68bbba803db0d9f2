// Issue 39 item 11: what fedstat-sim counts as falling short (host_server/sim/fleet_shortfall.h):
// every device not told to drop out must complete, every device told to must have dropped out;
// anything else (an error, no task, a decline, an abort, an unconfirmed report) is a reason,
// grouped and counted. The running tool is tried in sim_exit_test.sh; this is the rule itself,
// case by case.
#include "host_server/sim/fleet_shortfall.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fedstat {
namespace host {
namespace {

constexpr uint32_t kTask = 3, kStage2 = 4;

DeviceReport device(uint64_t id, const std::string& outcome, const std::string& detail = "",
                    uint32_t task_id = kTask) {
  DeviceReport r;
  r.id = id;
  r.outcome = outcome;
  r.detail = detail;
  r.task_id = task_id;
  DeviceTaskReport t;
  t.task_id = task_id;
  t.outcome = outcome;
  t.detail = detail;
  r.tasks.push_back(t);
  return r;
}

// A device that failed before any task (the sim's catch: no task reports at all).
DeviceReport thrown(uint64_t id, const std::string& detail) {
  DeviceReport r;
  r.id = id;
  r.outcome = "error";
  r.detail = detail;
  return r;
}

std::vector<std::vector<bool>> none_told(size_t devices, size_t tasks = 1) {
  return std::vector<std::vector<bool>>(devices, std::vector<bool>(tasks, false));
}

TEST(FleetShortfall, EveryDeviceCompletedIsNoShortfall) {
  const std::vector<DeviceReport> fleet = {device(1, "completed"), device(2, "completed")};
  EXPECT_TRUE(fleet_shortfall(fleet, {kTask}, none_told(2)).empty());
}

TEST(FleetShortfall, FailedDevicesAreGroupedByReasonMostFirst) {
  const std::string refused = "could not connect to 127.0.0.1:1: transport: connection refused";
  const std::string wrong_key = "could not connect to 127.0.0.1:1: TLS: wrong key";
  std::vector<DeviceReport> fleet;
  for (uint64_t id = 1; id <= 3; ++id) fleet.push_back(device(id, "error", refused, 0));
  fleet.push_back(device(4, "error", wrong_key, 0));
  fleet.push_back(device(5, "completed"));
  fleet.push_back(thrown(6, "the device's privacy ledger: cannot create a blob file"));
  fleet.push_back(thrown(7, "the device's privacy ledger: cannot create a blob file"));
  const std::vector<std::string> lines = fleet_shortfall(fleet, {kTask}, none_told(7));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "task 3: 3 of 7 devices failed: " + refused);
  EXPECT_EQ(
      lines[1],
      "task 3: 2 of 7 devices failed: the device's privacy ledger: cannot create a blob file");
  EXPECT_EQ(lines[2], "task 3: 1 of 7 devices failed: " + wrong_key);
}

TEST(FleetShortfall, DropoutExplainsOnlyTheDevicesThatDroppedWhereTold) {
  // Device 2 was told to drop out and did; device 3 was told to but never got that far (it could
  // not connect): --dropout does not explain it.
  const std::vector<DeviceReport> fleet = {device(1, "completed"), device(2, "dropped"),
                                           device(3, "error", "could not connect", 0)};
  std::vector<std::vector<bool>> told = none_told(3);
  told[1][0] = told[2][0] = true;
  const std::vector<std::string> lines = fleet_shortfall(fleet, {kTask}, told);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "task 3: 1 of 3 devices failed: could not connect");
  told[2][0] = false;  // the same fleet, device 3 not told: still the one reason
  EXPECT_EQ(fleet_shortfall(fleet, {kTask}, told), lines);
  const std::vector<std::vector<bool>> one_told(1, std::vector<bool>(1, true));
  EXPECT_TRUE(fleet_shortfall({device(1, "dropped")}, {kTask}, one_told).empty());
  EXPECT_EQ(fleet_shortfall({device(1, "dropped")}, {kTask}, none_told(1)),
            std::vector<std::string>{"task 3: 1 of 1 devices dropped out without being told to"});
}

TEST(FleetShortfall, DeclinesNoTaskAbortsAndUnconfirmedReportsAreShortfalls) {
  const std::vector<DeviceReport> fleet = {
      device(1, "declined-budget"), device(2, "no-task", "no open task with room", 0),
      device(3, "aborted", "below threshold"), device(4, "unconfirmed"),
      device(5, "declined-policy")};  // an outcome this file does not know: still counted
  const std::vector<std::string> lines = fleet_shortfall(fleet, {kTask}, none_told(5));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0],
            "task 3: 1 of 5 devices declined the task: their privacy ledger refused its "
            "(epsilon, delta)");
  EXPECT_EQ(lines[1], "task 3: 1 of 5 devices were offered no task: no open task with room");
  EXPECT_EQ(lines[2], "task 3: 1 of 5 devices saw the round abort: below threshold");
  EXPECT_NE(lines[3].find("1 of 5 devices lost their connection after reporting"),
            std::string::npos);
  EXPECT_EQ(lines[4], "task 3: 1 of 5 devices declined the task (declined-policy)");
}

TEST(FleetShortfall, ADeviceGivenAnotherTaskIsAShortfall) {
  const std::vector<DeviceReport> fleet = {device(1, "completed", "", 9)};
  const std::vector<std::string> lines = fleet_shortfall(fleet, {kTask}, none_told(1));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "task 3: 1 of 1 devices took part in another task instead: task 9, completed");
}

TEST(FleetShortfall, ExternalDevicesAreNotCounted) {
  const std::vector<DeviceReport> fleet = {device(1, "external"), device(2, "error", "x", 0)};
  const std::vector<std::string> lines = fleet_shortfall(fleet, {kTask}, none_told(2));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "task 3: 1 of 1 devices failed: x");
  EXPECT_TRUE(fleet_shortfall({device(1, "external")}, {kTask}, none_told(1)).empty());
}

TEST(FleetShortfall, EachStageOfAChainedTaskIsCheckedWithItsOwnDropouts) {
  // Device 1 completes both stages; device 2 drops out of stage 1 where told and completes stage
  // 2; device 3 completes stage 1 and fails in stage 2; device 4 errs before any task.
  DeviceReport both = device(1, "completed");
  DeviceTaskReport second;
  second.index = 1;
  second.task_id = kStage2;
  second.outcome = "completed";
  both.tasks.push_back(second);
  DeviceReport dropped_first = device(2, "dropped");
  dropped_first.tasks.push_back(second);
  DeviceReport failed_second = device(3, "completed");
  DeviceTaskReport failed = second;
  failed.task_id = 0;
  failed.outcome = "error";
  failed.detail = "the connection broke";
  failed_second.tasks.push_back(failed);
  const std::vector<DeviceReport> fleet = {both, dropped_first, failed_second,
                                           thrown(4, "no memory")};
  std::vector<std::vector<bool>> told = none_told(4, 2);
  told[1][0] = true;
  const std::vector<std::string> lines = fleet_shortfall(fleet, {kTask, kStage2}, told);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "task 3: 1 of 4 devices failed: no memory");
  EXPECT_EQ(lines[1], "task 4: 1 of 4 devices failed: the connection broke");
  EXPECT_EQ(lines[2], "task 4: 1 of 4 devices failed: no memory");
}

TEST(FleetShortfall, ManyReasonsAreCappedWithACount) {
  std::vector<DeviceReport> fleet;
  for (uint64_t id = 1; id <= 40; ++id) {
    fleet.push_back(device(id, "error", "reason " + std::to_string(id), 0));
  }
  const std::vector<std::string> lines = fleet_shortfall(fleet, {kTask}, none_told(40));
  ASSERT_EQ(lines.size(), kMaxShortfallLines);
  EXPECT_EQ(lines.back(), "... and " + std::to_string(40 - kMaxShortfallLines + 1) +
                              " more reasons for " + std::to_string(40 - kMaxShortfallLines + 1) +
                              " devices (each device's outcome and detail: \"devices\" in --json)");
}

}  // namespace
}  // namespace host
}  // namespace fedstat
