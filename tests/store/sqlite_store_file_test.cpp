// The SQLite store's file: what survives closing and reopening it, which files it refuses (and
// leaves byte for byte as they were), and what a damaged row reads as.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>

#include "host_server/store/sqlite_store.h"
#include "tests/store/raw_sqlite.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace {

using testing::file_bytes;
using testing::raw_sqlite;

constexpr uint64_t kMaxClient = std::numeric_limits<uint64_t>::max();

NewEvent event(uint32_t task_id, uint64_t client_id, std::vector<uint8_t> payload) {
  NewEvent out;
  out.task_id = task_id;
  out.client_id = client_id;
  out.kind = EventKind::kDeviceMessage;
  out.payload = std::move(payload);
  return out;
}

std::string open_error(const std::string& path) {
  try {
    open_sqlite_store(path);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "(opened)";
}

TEST(SqliteStoreFile, ReopenedStoreHoldsEverythingAndSequencesGoOn) {
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  uint64_t last = 0;
  {
    auto store = open_sqlite_store(path);
    store->put_task(4, "definition");
    store->set_task_state(4, "open");
    store->append_event(event(4, kMaxClient, {7, 8}));
    last = store->append_events({event(4, 0, {}), event(4, 42, {1})});
    store->put_result(4, "{\"x\":1}");
  }
  auto store = open_sqlite_store(path, {Durability::kSurvivesPowerLoss, 100});
  ASSERT_EQ(store->tasks().size(), 1u);
  EXPECT_EQ(store->tasks()[0].definition, "definition");
  EXPECT_EQ(store->tasks()[0].state, "open");
  const std::vector<StoredEvent> events = store->events(4);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].client_id, kMaxClient);  // 2^64-1 kept through the signed column
  EXPECT_EQ(events[0].payload, (std::vector<uint8_t>{7, 8}));
  EXPECT_TRUE(events[1].payload.empty());
  EXPECT_EQ(events[2].client_id, 42u);
  EXPECT_EQ(events[2].sequence, last);
  EXPECT_EQ(store->result(4), std::optional<std::string>("{\"x\":1}"));
  EXPECT_GT(store->append_event(event(4, 1, {})), last);
  EXPECT_EQ(store->integrity_check(), "ok");
}

TEST(SqliteStoreFile, AnEmptyFileBecomesAStore) {
  testing::TempDir dir;
  const std::string path = dir.file("made-by-mkstemp.db");
  std::ofstream(path).close();
  ASSERT_TRUE(file_bytes(path).empty());
  open_sqlite_store(path)->put_task(1, "a");
  EXPECT_EQ(open_sqlite_store(path)->tasks().size(), 1u);
}

TEST(SqliteStoreFile, FileIsInWalModeWithTheFedstatApplicationId) {
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  open_sqlite_store(path)->put_task(1, "a");
  EXPECT_EQ(raw_sqlite(path, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(raw_sqlite(path, "PRAGMA application_id"), std::to_string(0x66647374));
  EXPECT_EQ(raw_sqlite(path, "SELECT version FROM fedstat_schema"),
            std::to_string(kSqliteStoreSchemaVersion));
}

TEST(SqliteStoreFile, ClientIdsAreStoredAsTheSameSixtyFourBits) {
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  open_sqlite_store(path)->put_task(1, "a");
  open_sqlite_store(path)->append_event(event(1, kMaxClient, {}));
  EXPECT_EQ(raw_sqlite(path, "SELECT client_id FROM events"), "-1");
}

TEST(SqliteStoreFile, RefusesAVersion1StoreSayingWhyAndLeavesItAlone) {
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  open_sqlite_store(path)->put_task(1, "a");
  raw_sqlite(path, "UPDATE fedstat_schema SET version = 1");
  const std::vector<char> before = file_bytes(path);
  const std::string error = open_error(path);
  EXPECT_NE(error.find("schema version 1): its stored reports use the old wire encoding"),
            std::string::npos)
      << error;
  EXPECT_EQ(file_bytes(path), before);
}

TEST(SqliteStoreFile, RefusesAFileWrittenByANewerSchemaAndLeavesItAlone) {
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  open_sqlite_store(path)->put_task(1, "a");
  raw_sqlite(
      path, "UPDATE fedstat_schema SET version = " + std::to_string(kSqliteStoreSchemaVersion + 1));
  const std::vector<char> before = file_bytes(path);
  const std::string error = open_error(path);
  EXPECT_NE(
      error.find("newer fedstat (schema version " + std::to_string(kSqliteStoreSchemaVersion + 1)),
      std::string::npos)
      << error;
  EXPECT_NE(error.find(path), std::string::npos) << error;
  EXPECT_EQ(file_bytes(path), before);
}

TEST(SqliteStoreFile, RefusesAnotherProgramsDatabaseAndLeavesItAlone) {
  testing::TempDir dir;
  const std::string path = dir.file("other.db");
  raw_sqlite(path, "CREATE TABLE people(name TEXT); INSERT INTO people VALUES ('ada');");
  const std::vector<char> before = file_bytes(path);
  ASSERT_FALSE(before.empty());
  const std::string error = open_error(path);
  EXPECT_NE(error.find("not a fedstat store"), std::string::npos) << error;
  EXPECT_NE(error.find("people"), std::string::npos) << error;
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_EQ(raw_sqlite(path, "PRAGMA journal_mode"), "delete");  // not switched to WAL
}

TEST(SqliteStoreFile, RefusesAFileThatIsNotSqliteAndLeavesItAlone) {
  testing::TempDir dir;
  const std::string path = dir.file("notes.txt");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 200; ++i) out << "these are somebody's notes, line " << i << "\n";
  }
  const std::vector<char> before = file_bytes(path);
  const std::string error = open_error(path);
  EXPECT_NE(error.find("file is not a database"), std::string::npos) << error;
  EXPECT_EQ(file_bytes(path), before);
}

TEST(SqliteStoreFile, RefusesAnInMemoryDatabaseThatCannotBeWal) {
  const std::string error = open_error(":memory:");
  EXPECT_NE(error.find("journal_mode"), std::string::npos) << error;
}

TEST(SqliteStoreFile, RefusesANegativeBusyTimeout) {
  testing::TempDir dir;
  EXPECT_THROW(open_sqlite_store(dir.file("store.db"), {Durability::kSurvivesProcessCrash, -1}),
               std::invalid_argument);
}

TEST(SqliteStoreFile, AnInsertFailingMidBatchRollsTheWholeBatchBack) {
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  open_sqlite_store(path)->put_task(1, "a");
  // An injected failure on the third insert of a batch, after two rows went in.
  raw_sqlite(path,
             "CREATE TRIGGER injected_failure BEFORE INSERT ON events WHEN NEW.client_id = 666 "
             "BEGIN SELECT RAISE(ABORT, 'injected failure'); END;");
  auto store = open_sqlite_store(path);
  const uint64_t first = store->append_event(event(1, 1, {1}));
  try {
    store->append_events({event(1, 2, {2}), event(1, 3, {3}), event(1, 666, {4})});
    ADD_FAILURE() << "the injected failure was not reported";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("append_events: injected failure"), std::string::npos)
        << error.what();
  }
  ASSERT_EQ(store->events(1).size(), 1u);
  EXPECT_EQ(store->events(1)[0].sequence, first);
  EXPECT_GT(store->append_event(event(1, 5, {5})), first);  // the store still works
  EXPECT_EQ(store->events(1).size(), 2u);
  EXPECT_EQ(store->integrity_check(), "ok");
}

TEST(SqliteStoreFile, AnotherWriterHoldingTheLockPastTheBusyTimeoutIsAnErrorNotAHang) {
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  auto store = open_sqlite_store(path, {Durability::kSurvivesProcessCrash, 20});
  store->put_task(1, "a");
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  try {
    store->append_event(event(1, 1, {1}));
    ADD_FAILURE() << "appended while another connection held the write lock";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("append_events (begin): database is locked"),
              std::string::npos)
        << error.what();
  }
  ASSERT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  store->append_event(event(1, 2, {2}));
  ASSERT_EQ(store->events(1).size(), 1u);
  EXPECT_EQ(store->events(1)[0].client_id, 2u);
}

TEST(SqliteStoreFile, AKindOutsideTheEnumInTheFileReadsAsAnError) {
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  {
    auto store = open_sqlite_store(path);
    store->put_task(1, "a");
    store->append_event(event(1, 1, {}));
  }
  raw_sqlite(path, "UPDATE events SET kind = 99");
  auto store = open_sqlite_store(path);
  try {
    store->events(1);
    ADD_FAILURE() << "a corrupted kind was read back";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("kind 99"), std::string::npos) << error.what();
  }
}

TEST(SqliteStoreFile, ATaskIdOutsideThirtyTwoBitsInTheFileReadsAsAnError) {
  testing::TempDir dir;
  const std::string path = dir.file("store.db");
  open_sqlite_store(path)->put_task(1, "a");
  raw_sqlite(path, "INSERT INTO tasks VALUES (4294967296, 'b', 'declared')");
  EXPECT_THROW(open_sqlite_store(path)->tasks(), std::runtime_error);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
