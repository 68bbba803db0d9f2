// The Store contract (store.h), run against every backend: SQLite, in memory and PostgreSQL (a
// fresh database of the test cluster per test; skipped only in a build without libpq).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_server/store/memory_store.h"
#include "host_server/store/sqlite_store.h"
#include "host_server/store/store.h"
#include "tests/store/temp_dir.h"

#ifdef FEDSTAT_WITH_POSTGRESQL
#include "host_server/store/postgres_store.h"
#include "tests/store/postgres_cluster.h"
#endif

namespace fedstat {
namespace host {
namespace {

constexpr uint64_t kMaxClient = std::numeric_limits<uint64_t>::max();

struct SqliteBackend {
  static std::unique_ptr<Store> open(const testing::TempDir& dir) {
    return open_sqlite_store(dir.file("store.db"));
  }
};

struct MemoryBackend {
  static std::unique_ptr<Store> open(const testing::TempDir&) { return make_memory_store(); }
};

// Null in a build without libpq: the test is skipped, saying so.
struct PostgresBackend {
  static std::unique_ptr<Store> open(const testing::TempDir&) {
#ifdef FEDSTAT_WITH_POSTGRESQL
    testing::PostgresCluster& cluster = testing::shared_postgres_cluster();
    return open_postgres_store(cluster.conninfo(cluster.create_database()));
#else
    return nullptr;
#endif
  }
};

template <typename Backend>
class StoreConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = Backend::open(dir_);
    if (store_ == nullptr) GTEST_SKIP() << "this build has no libpq: PostgreSQL store not built";
  }
  testing::TempDir dir_;
  std::unique_ptr<Store> store_;
};

using Backends = ::testing::Types<SqliteBackend, MemoryBackend, PostgresBackend>;
TYPED_TEST_SUITE(StoreConformance, Backends);

NewEvent event(uint32_t task_id, uint64_t client_id, EventKind kind, std::vector<uint8_t> payload) {
  NewEvent out;
  out.task_id = task_id;
  out.client_id = client_id;
  out.kind = kind;
  out.payload = std::move(payload);
  return out;
}

void expect_same(const NewEvent& sent, const StoredEvent& stored) {
  EXPECT_EQ(stored.task_id, sent.task_id);
  EXPECT_EQ(stored.client_id, sent.client_id);
  EXPECT_EQ(stored.kind, sent.kind);
  EXPECT_EQ(stored.payload, sent.payload);
}

TYPED_TEST(StoreConformance, TasksReadBackInAscendingIdWithDeclaredState) {
  Store& store = *this->store_;
  store.put_task(7, R"({"name":"seven"})");
  store.put_task(3, R"({"name":"three"})");
  store.put_task(std::numeric_limits<uint32_t>::max(), "{}");
  const std::vector<StoredTask> tasks = store.tasks();
  ASSERT_EQ(tasks.size(), 3u);
  EXPECT_EQ(tasks[0].task_id, 3u);
  EXPECT_EQ(tasks[0].definition, R"({"name":"three"})");
  EXPECT_EQ(tasks[1].task_id, 7u);
  EXPECT_EQ(tasks[2].task_id, std::numeric_limits<uint32_t>::max());
  for (const StoredTask& task : tasks) EXPECT_EQ(task.state, kDeclaredTaskState);
}

TYPED_TEST(StoreConformance, PutTaskAgainWithSameDefinitionChangesNothing) {
  Store& store = *this->store_;
  store.put_task(1, "def");
  store.set_task_state(1, "open");
  store.put_task(1, "def");
  const std::vector<StoredTask> tasks = store.tasks();
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].state, "open");  // not reset to "declared"
}

TYPED_TEST(StoreConformance, PutTaskWithAnotherDefinitionThrowsAndKeepsTheFirst) {
  Store& store = *this->store_;
  store.put_task(1, "first");
  EXPECT_THROW(store.put_task(1, "second"), std::invalid_argument);
  ASSERT_EQ(store.tasks().size(), 1u);
  EXPECT_EQ(store.tasks()[0].definition, "first");
}

TYPED_TEST(StoreConformance, TaskStateReadsBackAndUnknownTaskThrows) {
  Store& store = *this->store_;
  store.put_task(1, "def");
  store.set_task_state(1, "completed");
  EXPECT_EQ(store.tasks()[0].state, "completed");
  EXPECT_THROW(store.set_task_state(2, "open"), std::invalid_argument);
  EXPECT_EQ(store.tasks().size(), 1u);
}

TYPED_TEST(StoreConformance, EventsRoundTripPerTaskInSequenceOrder) {
  Store& store = *this->store_;
  store.put_task(1, "a");
  store.put_task(2, "b");
  const std::vector<NewEvent> sent = {
      event(1, 0, EventKind::kTransition, {}),
      event(2, kMaxClient, EventKind::kDeviceMessage, {0x00, 0xff, 0x00}),
      event(1, kMaxClient - 1, EventKind::kDeviceMessage, {1, 2, 3}),
      event(1, uint64_t{1} << 63, EventKind::kServerNote, std::vector<uint8_t>(1000, 0x5a)),
  };
  std::vector<uint64_t> sequences;
  for (const NewEvent& e : sent) sequences.push_back(store.append_event(e));
  for (size_t i = 1; i < sequences.size(); ++i) EXPECT_GT(sequences[i], sequences[i - 1]);

  const std::vector<StoredEvent> task1 = store.events(1);
  ASSERT_EQ(task1.size(), 3u);
  expect_same(sent[0], task1[0]);
  expect_same(sent[2], task1[1]);
  expect_same(sent[3], task1[2]);
  EXPECT_EQ(task1[0].sequence, sequences[0]);
  EXPECT_EQ(task1[1].sequence, sequences[2]);
  EXPECT_EQ(task1[2].sequence, sequences[3]);
  const std::vector<StoredEvent> task2 = store.events(2);
  ASSERT_EQ(task2.size(), 1u);
  expect_same(sent[1], task2[0]);
  EXPECT_EQ(task2[0].sequence, sequences[1]);
}

TYPED_TEST(StoreConformance, BatchReturnsItsLastSequenceAndKeepsItsOrder) {
  Store& store = *this->store_;
  store.put_task(1, "a");
  const uint64_t before = store.append_event(event(1, 5, EventKind::kServerNote, {9}));
  std::vector<NewEvent> batch;
  for (uint8_t i = 0; i < 64; ++i) batch.push_back(event(1, i, EventKind::kDeviceMessage, {i}));
  const uint64_t last = store.append_events(batch);
  const std::vector<StoredEvent> stored = store.events(1);
  ASSERT_EQ(stored.size(), 65u);
  EXPECT_EQ(stored.back().sequence, last);
  EXPECT_GT(stored[1].sequence, before);
  for (size_t i = 0; i < batch.size(); ++i) {
    expect_same(batch[i], stored[i + 1]);
    EXPECT_GT(stored[i + 1].sequence, stored[i].sequence);
  }
}

TYPED_TEST(StoreConformance, LargePayloadRoundTrips) {
  Store& store = *this->store_;
  store.put_task(1, "a");
  std::vector<uint8_t> payload(1 << 20);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 131 + 7);
  store.append_event(event(1, 1, EventKind::kDeviceMessage, payload));
  ASSERT_EQ(store.events(1).size(), 1u);
  EXPECT_EQ(store.events(1)[0].payload, payload);
}

TYPED_TEST(StoreConformance, EmptyBatchThrowsAndAppendsNothing) {
  Store& store = *this->store_;
  store.put_task(1, "a");
  EXPECT_THROW(store.append_events({}), std::invalid_argument);
  EXPECT_TRUE(store.events(1).empty());
}

TYPED_TEST(StoreConformance, BatchWithAnUnknownTaskAppendsNothing) {
  Store& store = *this->store_;
  store.put_task(1, "a");
  store.append_event(event(1, 1, EventKind::kDeviceMessage, {1}));
  const std::vector<NewEvent> batch = {event(1, 2, EventKind::kDeviceMessage, {2}),
                                       event(1, 3, EventKind::kDeviceMessage, {3}),
                                       event(99, 4, EventKind::kDeviceMessage, {4})};
  EXPECT_THROW(store.append_events(batch), std::invalid_argument);
  ASSERT_EQ(store.events(1).size(), 1u);
  EXPECT_EQ(store.events(1)[0].client_id, 1u);
  EXPECT_THROW(store.events(99), std::invalid_argument);
}

TYPED_TEST(StoreConformance, BatchWithAKindOutsideTheEnumAppendsNothing) {
  Store& store = *this->store_;
  store.put_task(1, "a");
  const std::vector<NewEvent> batch = {event(1, 2, EventKind::kDeviceMessage, {2}),
                                       event(1, 3, static_cast<EventKind>(0), {3})};
  EXPECT_THROW(store.append_events(batch), std::invalid_argument);
  EXPECT_THROW(store.append_event(event(1, 3, static_cast<EventKind>(4), {})),
               std::invalid_argument);
  EXPECT_TRUE(store.events(1).empty());
}

TYPED_TEST(StoreConformance, SequencesKeepIncreasingAfterARefusedBatch) {
  Store& store = *this->store_;
  store.put_task(1, "a");
  const uint64_t first = store.append_event(event(1, 1, EventKind::kDeviceMessage, {}));
  EXPECT_THROW(store.append_events({event(1, 2, EventKind::kDeviceMessage, {}),
                                    event(5, 2, EventKind::kDeviceMessage, {})}),
               std::invalid_argument);
  const uint64_t second = store.append_event(event(1, 3, EventKind::kDeviceMessage, {}));
  EXPECT_GT(second, first);
}

TYPED_TEST(StoreConformance, ResultIsPublishedOnce) {
  Store& store = *this->store_;
  store.put_task(1, "a");
  EXPECT_FALSE(store.result(1).has_value());
  store.put_result(1, R"({"tv":0.25})");
  store.put_result(1, R"({"tv":0.25})");  // the same again: nothing happens
  EXPECT_THROW(store.put_result(1, R"({"tv":0.5})"), std::logic_error);
  ASSERT_TRUE(store.result(1).has_value());
  EXPECT_EQ(*store.result(1), R"({"tv":0.25})");
}

TYPED_TEST(StoreConformance, UnknownTaskIsRefusedByEveryTaskOperation) {
  Store& store = *this->store_;
  store.put_task(1, "a");
  EXPECT_THROW(store.append_event(event(2, 1, EventKind::kDeviceMessage, {})),
               std::invalid_argument);
  EXPECT_THROW(store.events(2), std::invalid_argument);
  EXPECT_THROW(store.put_result(2, "{}"), std::invalid_argument);
  EXPECT_THROW(store.result(2), std::invalid_argument);
  EXPECT_THROW(store.set_task_state(2, "open"), std::invalid_argument);
  EXPECT_EQ(store.tasks().size(), 1u);
  EXPECT_FALSE(store.result(1).has_value());
}

TYPED_TEST(StoreConformance, IntegrityCheckIsOkAfterUse) {
  Store& store = *this->store_;
  EXPECT_EQ(store.integrity_check(), "ok");
  store.put_task(1, "a");
  store.append_events({event(1, kMaxClient, EventKind::kDeviceMessage, {1, 2}),
                       event(1, 0, EventKind::kTransition, {})});
  store.put_result(1, "{}");
  EXPECT_EQ(store.integrity_check(), "ok");
}

}  // namespace
}  // namespace host
}  // namespace fedstat
