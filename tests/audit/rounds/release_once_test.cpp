// Issue 39 item 2: a release is durable before it is visible, and one aggregate is noised once.
//  - A trusted KL round (the server's own plan: central Gaussian noise from the CSPRNG) completes;
//    then its result is lost as a power cut loses it (the store keeps what was committed before
//    put_result, nothing after). The restarted server replays the round and publishes again:
//    the same bytes, not a second, independently noised release (before the fix: a fresh draw,
//    5.2049 then 5.2742 in the issue; two draws at σ are one release at σ/√2).
//  - On a collector that declares no DIST task, the result's commit and the server notes the
//    rounds keep (the noise seed drawn for an aggregate) sync the WAL (synchronous=FULL): before
//    the fix they committed with NORMAL, which a power cut can roll back after the result was
//    shown (status page, `results`, the log).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "host_server/server_app.h"
#include "host_server/store/sqlite_store.h"
#include "nlohmann/json.hpp"
#include "tests/audit/rounds/planned_tasks.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/store/counting_vfs.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

using fedstat::testing::CountingVfs;
using fedstat::testing::syncs_of;

// A FakeStore that notes how many events it held when put_result was called: what a power cut
// right after the result's commit (which it rolled back) leaves on disk.
class RecordingStore : public FakeStore {
 public:
  void put_result(uint32_t task_id, const std::string& result_json) override {
    events_before_result = event_count();
    FakeStore::put_result(task_id, result_json);
  }
  size_t events_before_result = 0;
};

// Honest KL words for device `i`: a count at each query point (TaskData), then a total above
// their sum.
std::vector<uint64_t> kl_words(const TaskSpec& spec, uint64_t i) {
  std::vector<uint64_t> words;
  uint64_t total = 500;
  for (size_t j = 0; j < spec.data.size(); ++j) {
    const uint64_t count = (j * 7 + i * 3) % 11 + (spec.data[j] < 10 ? 40 : 1);
    words.push_back(count);
    total += count;
  }
  words.push_back(total);
  return words;
}

TEST(AuditReleaseOnce, ARoundReplayedWithoutItsLostResultPublishesTheSameBytes) {
  TempDir dir;
  const json tasks = json::array({kl_declaration(dir, 1, "trusted", 3, 3)});
  RecordingStore first;
  std::string published;
  {
    FakeOutbox out(first);
    std::vector<TaskSpec> specs = plan_tasks(dir, tasks, first, kT0);
    ASSERT_EQ(specs.size(), 1u);
    const TaskSpec spec = specs[0];
    Coordinator c(first, out, std::move(specs), kT0);
    for (uint64_t i = 0; i < 3; ++i) {
      const SentReport r =
          send_contribution(c, out, 40 + i, static_cast<ConnectionId>(i + 1), 1, kl_words(spec, i));
      ASSERT_FALSE(r.refused) << r.detail;
    }
    ASSERT_EQ(c.task_state(1), "completed");
    published = first.result(1).value_or("");
  }
  const json result = json::parse(published);
  ASSERT_TRUE(result.at("estimate").is_number()) << published;  // a noised release
  EXPECT_EQ(result.at("contributors"), 3);

  // The power cut: everything committed before put_result survives; the result, the "completed"
  // transition and the task's state do not.
  FakeStore second;
  for (const StoredTask& t : first.tasks()) {
    second.put_task(t.task_id, t.definition);
    second.set_task_state(t.task_id, "open");
  }
  const std::vector<StoredEvent> events = first.all_events();
  ASSERT_GT(first.events_before_result, 0u);
  for (size_t k = 0; k < first.events_before_result; ++k) {
    NewEvent e;
    e.task_id = events[k].task_id;
    e.client_id = events[k].client_id;
    e.kind = events[k].kind;
    e.payload = events[k].payload;
    second.append_event(e);
  }
  FakeOutbox out(second);
  Coordinator restarted(second, out, plan_tasks(dir, tasks, second, kT0 + 10), kT0 + 10);
  ASSERT_EQ(restarted.task_state(1), "completed");
  ASSERT_TRUE(second.result(1).has_value());
  EXPECT_EQ(*second.result(1), published)
      << "the replayed round noised the same aggregate again: a second, independent release";
}

TEST(AuditReleaseOnce, WithoutADistTaskTheResultAndServerNotesCommitWithFullSync) {
  TempDir dir;
  ServerConfig config;  // a trusted kl task and a data-shift task: no DIST task
  config.tasks =
      json::array({declared(1, "kl", "trusted", 3, 3), declared(2, "data_shift", "none", 3, 3)});
  CountingVfs vfs;
  ASSERT_TRUE(vfs.registered());
  auto store = open_sqlite_store(dir.file("server.db"), collector_store_options(config));
  store->put_task(1, "{}");
  NewEvent message;
  message.task_id = 1;
  message.client_id = 7;
  message.kind = EventKind::kDeviceMessage;
  message.payload = {1, 2, 3};
  store->append_event(message);  // a device message before: NORMAL may leave it unsynced
  NewEvent note;
  note.task_id = 1;
  note.kind = EventKind::kServerNote;
  note.payload = {4, 5, 6};
  EXPECT_GE(syncs_of([&] { store->append_event(note); }), 1)
      << "a server note (the noise seed of an aggregate) was committed without a sync";
  EXPECT_GE(syncs_of([&] { store->put_result(1, "{\"estimate\":1.5}"); }), 1)
      << "the result was committed without a sync: a power cut may roll back a shown release";
  EXPECT_EQ(store->result(1).value_or(""), "{\"estimate\":1.5}");
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
