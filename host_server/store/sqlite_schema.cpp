#include "host_server/store/sqlite_schema.h"

#include <algorithm>
#include <string>
#include <vector>

#include "host_server/store/backend_helpers.h"
#include "host_server/store/sqlite_store.h"

namespace fedstat {
namespace host {
namespace {

constexpr char kOperation[] = "open";

constexpr char kCreateSchema[] =
    "CREATE TABLE fedstat_schema("
    "  id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  version INTEGER NOT NULL);"
    "CREATE TABLE tasks("
    "  task_id INTEGER PRIMARY KEY,"
    "  definition TEXT NOT NULL,"
    "  state TEXT NOT NULL);"
    "CREATE TABLE events("
    "  sequence INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  task_id INTEGER NOT NULL REFERENCES tasks(task_id),"
    "  client_id INTEGER NOT NULL,"
    "  kind INTEGER NOT NULL,"
    "  payload BLOB NOT NULL);"
    "CREATE INDEX events_by_task ON events(task_id, sequence);"
    "CREATE TABLE results("
    "  task_id INTEGER PRIMARY KEY REFERENCES tasks(task_id),"
    "  json TEXT NOT NULL);";

std::vector<std::string> table_names(SqliteConnection& connection) {
  // Reading sqlite_master is the first read of the file: a non-SQLite file fails here.
  SqliteStatement select(connection,
                         "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
  std::vector<std::string> names;
  while (select.step(kOperation)) names.push_back(select.column_text(0));
  return names;
}

int64_t single_integer(SqliteConnection& connection, const char* sql) {
  SqliteStatement select(connection, sql);
  if (!select.step(kOperation) || select.column_type(0) != SQLITE_INTEGER) {
    connection.refuse(kOperation, std::string("\"") + sql + "\" gave no integer");
  }
  return select.column_int64(0);
}

void check_schema(SqliteConnection& connection, const std::vector<std::string>& names) {
  if (!contains(names, "fedstat_schema")) {
    connection.refuse(kOperation, "not a fedstat store (it holds other tables: " + joined(names) +
                                      "); refusing to modify it");
  }
  const int64_t application_id = single_integer(connection, "PRAGMA application_id");
  if (application_id != kSqliteStoreApplicationId) {
    connection.refuse(kOperation, "not a fedstat store (application_id " +
                                      std::to_string(application_id) + "); refusing to modify it");
  }
  const int64_t version =
      single_integer(connection, "SELECT version FROM fedstat_schema WHERE id = 1");
  if (version > kSqliteStoreSchemaVersion) {
    connection.refuse(kOperation, "written by a newer fedstat (schema version " +
                                      std::to_string(version) + "; this build reads up to " +
                                      std::to_string(kSqliteStoreSchemaVersion) +
                                      "); upgrade the server to open it");
  }
  if (version == 1) {
    connection.refuse(kOperation,
                      "written by fedstat 0.1 (schema version 1): its stored reports use the old "
                      "wire encoding, which this server would replay as empty. Serve its open "
                      "tasks to the end with the server that wrote it, or start a new store");
  }
  if (version < kSqliteStoreSchemaVersion) {
    connection.refuse(kOperation, "unknown schema version " + std::to_string(version));
  }
  for (const char* table : {"tasks", "events", "results"}) {
    if (!contains(names, table)) {
      connection.refuse(kOperation, std::string("damaged fedstat store: no table ") + table);
    }
  }
}

}  // namespace

void create_or_check_schema(SqliteConnection& connection) {
  SqliteStatement begin(connection, "BEGIN IMMEDIATE");
  SqliteStatement commit(connection, "COMMIT");
  SqliteStatement rollback(connection, "ROLLBACK");
  SqliteTransaction transaction(connection, begin, commit, rollback, kOperation);
  const std::vector<std::string> names = table_names(connection);
  const int64_t objects = single_integer(connection, "SELECT count(*) FROM sqlite_master");
  if (objects == 0) {
    connection.exec(kCreateSchema, "create schema");
    connection.exec(("INSERT INTO fedstat_schema(id, version) VALUES (1, " +
                     std::to_string(kSqliteStoreSchemaVersion) + ")")
                        .c_str(),
                    "create schema");
    connection.exec(
        ("PRAGMA application_id = " + std::to_string(kSqliteStoreApplicationId)).c_str(),
        "create schema");
  } else {
    check_schema(connection, names);
  }
  transaction.commit();
}

}  // namespace host
}  // namespace fedstat
