// Durability as the file system sees it: a counting VFS wraps SQLite's default one and counts the
// xSync calls (fsync) the store makes. Power-loss durability is exactly "the commit synced the
// WAL": kStepsSurvivePowerLoss must sync every commit that is not device messages alone (a round
// step, a task, its state, a result) and none of the device-message commits in between;
// kSurvivesPowerLoss syncs every commit, kSurvivesProcessCrash none but a result's or a server
// note's (every mode syncs those: a release is never rolled back). (A power cut itself cannot be
// staged here; kill -9 durability of every mode is sqlite_store_crash_test.cpp's.)
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "host_server/store/sqlite_store.h"
#include "tests/store/counting_vfs.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace {

using testing::CountingVfs;
using testing::syncs_of;

NewEvent event_of(EventKind kind, uint64_t n) {
  return NewEvent{1, 100 + n, kind, std::vector<uint8_t>(40, static_cast<uint8_t>(n))};
}

TEST(SqliteStoreSync, StepsModeSyncsEveryStepAndNoDeviceMessageCommit) {
  CountingVfs vfs;
  ASSERT_TRUE(vfs.registered());
  testing::TempDir dir;
  auto store = open_sqlite_store(dir.file("s.db"), {Durability::kStepsSurvivePowerLoss, 100});
  EXPECT_GE(syncs_of([&] { store->put_task(1, "{}"); }), 1);
  for (uint64_t n = 0; n < 40; ++n) {  // device messages alone: not one fsync
    EXPECT_EQ(syncs_of([&] { store->append_events({event_of(EventKind::kDeviceMessage, n)}); }), 0)
        << "device message " << n;
  }
  EXPECT_GE(syncs_of([&] { store->append_events({event_of(EventKind::kTransition, 40)}); }), 1);
  // A device message marked durable (an accepting TaskReply) is synced too.
  NewEvent accepted = event_of(EventKind::kDeviceMessage, 47);
  accepted.durable = true;
  EXPECT_EQ(syncs_of([&] { store->append_events({event_of(EventKind::kDeviceMessage, 48)}); }), 0);
  EXPECT_GE(syncs_of([&] { store->append_events({accepted}); }), 1);
  EXPECT_EQ(syncs_of([&] { store->append_events({event_of(EventKind::kDeviceMessage, 41)}); }), 0);
  // A batch with a step among device messages is a step.
  EXPECT_GE(syncs_of([&] {
              store->append_events(
                  {event_of(EventKind::kDeviceMessage, 42), event_of(EventKind::kServerNote, 43)});
            }),
            1);
  // Each write below follows a device-message commit (NORMAL), so it must switch to FULL itself.
  EXPECT_EQ(syncs_of([&] { store->append_events({event_of(EventKind::kDeviceMessage, 44)}); }), 0);
  EXPECT_GE(syncs_of([&] { store->set_task_state(1, "completed"); }), 1);
  EXPECT_EQ(syncs_of([&] { store->append_events({event_of(EventKind::kDeviceMessage, 45)}); }), 0);
  EXPECT_GE(syncs_of([&] { store->put_result(1, "{\"sum\":1}"); }), 1);
  EXPECT_EQ(syncs_of([&] { store->append_events({event_of(EventKind::kDeviceMessage, 46)}); }), 0);
  EXPECT_GE(syncs_of([&] { store->put_task(2, "{}"); }), 1);
  const std::vector<StoredEvent> events = store->events(1);
  ASSERT_EQ(events.size(), 49u);
  EXPECT_EQ(events[40].kind, EventKind::kTransition);
  EXPECT_EQ(events[45].kind, EventKind::kServerNote);
  EXPECT_EQ(store->integrity_check(), "ok");
}

TEST(SqliteStoreSync, FullModeSyncsEveryCommitAndNormalModeOnlyReleases) {
  CountingVfs vfs;
  ASSERT_TRUE(vfs.registered());
  testing::TempDir dir;
  auto full = open_sqlite_store(dir.file("full.db"), {Durability::kSurvivesPowerLoss, 100});
  full->put_task(1, "{}");
  for (uint64_t n = 0; n < 5; ++n) {
    EXPECT_GE(syncs_of([&] { full->append_events({event_of(EventKind::kDeviceMessage, n)}); }), 1);
  }
  auto normal = open_sqlite_store(dir.file("normal.db"), {Durability::kSurvivesProcessCrash, 100});
  normal->put_task(1, "{}");
  EXPECT_EQ(syncs_of([&] { normal->append_events({event_of(EventKind::kTransition, 0)}); }), 0);
  EXPECT_EQ(syncs_of([&] { normal->append_events({event_of(EventKind::kDeviceMessage, 1)}); }), 0);
  EXPECT_GE(syncs_of([&] { normal->append_events({event_of(EventKind::kServerNote, 2)}); }), 1);
  EXPECT_EQ(syncs_of([&] { normal->append_events({event_of(EventKind::kTransition, 3)}); }), 0)
      << "back to NORMAL after the note";
  EXPECT_GE(syncs_of([&] { normal->put_result(1, "{}"); }), 1);
  EXPECT_EQ(syncs_of([&] { normal->set_task_state(1, "completed"); }), 0);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
