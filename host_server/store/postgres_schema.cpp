#include "host_server/store/postgres_schema.h"

#include <algorithm>
#include <vector>

#include "host_server/store/backend_helpers.h"
#include "host_server/store/postgres_store.h"

namespace fedstat {
namespace host {
namespace {

constexpr char kOperation[] = "open";

constexpr char kCreateSchema[] =
    "CREATE TABLE fedstat_schema("
    "  id integer PRIMARY KEY CHECK (id = 1),"
    "  version integer NOT NULL);"
    "CREATE TABLE tasks("
    "  task_id bigint PRIMARY KEY CHECK (task_id BETWEEN 0 AND 4294967295),"
    "  definition text NOT NULL,"
    "  state text NOT NULL);"
    "CREATE TABLE events("
    "  sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    "  task_id bigint NOT NULL REFERENCES tasks(task_id),"
    "  client_id bigint NOT NULL,"
    "  kind integer NOT NULL,"
    "  payload bytea NOT NULL);"
    "CREATE INDEX events_by_task ON events(task_id, sequence);"
    "CREATE TABLE results("
    "  task_id bigint PRIMARY KEY REFERENCES tasks(task_id),"
    "  json text NOT NULL);";

// The tables (and views, foreign tables) of the connection's current schema.
std::vector<std::string> table_names(PostgresConnection& connection) {
  const PgResult rows = connection.exec(
      "SELECT c.relname FROM pg_catalog.pg_class c "
      "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
      "WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
      "ORDER BY c.relname",
      kOperation);
  std::vector<std::string> names;
  for (int row = 0; row < PQntuples(rows.get()); ++row)
    names.push_back(PQgetvalue(rows.get(), row, 0));
  return names;
}

// The stored schema version, or -1 when the row is missing.
long long stored_version(PostgresConnection& connection, const std::string& operation) {
  const PgResult rows =
      connection.exec("SELECT version FROM fedstat_schema WHERE id = 1", operation);
  if (PQntuples(rows.get()) != 1) return -1;
  return std::stoll(PQgetvalue(rows.get(), 0, 0));
}

const char* const kTables[] = {"tasks", "events", "results"};

void check_schema(PostgresConnection& connection, const std::vector<std::string>& names) {
  if (!contains(names, "fedstat_schema")) {
    connection.refuse(kOperation, "not a fedstat store (its schema holds other tables: " +
                                      joined(names) + "); refusing to modify it");
  }
  const long long version = stored_version(connection, kOperation);
  if (version > kPostgresStoreSchemaVersion) {
    connection.refuse(kOperation, "written by a newer fedstat (schema version " +
                                      std::to_string(version) + "; this build reads up to " +
                                      std::to_string(kPostgresStoreSchemaVersion) +
                                      "); upgrade the server to open it");
  }
  if (version < kPostgresStoreSchemaVersion) {
    connection.refuse(kOperation, "unknown schema version " + std::to_string(version));
  }
  for (const char* table : kTables) {
    if (!contains(names, table)) {
      connection.refuse(kOperation, std::string("damaged fedstat store: no table ") + table);
    }
  }
}

}  // namespace

void create_or_check_postgres_schema(PostgresConnection& connection) {
  PostgresTransaction transaction(connection, kOperation);
  connection.exec("SELECT pg_advisory_xact_lock(" + std::to_string(kPostgresSchemaLock) + ")",
                  kOperation);
  const std::vector<std::string> names = table_names(connection);
  if (names.empty()) {
    connection.exec(kCreateSchema, "create schema");
    connection.exec("INSERT INTO fedstat_schema(id, version) VALUES (1, " +
                        std::to_string(kPostgresStoreSchemaVersion) + ")",
                    "create schema");
  } else {
    check_schema(connection, names);
  }
  transaction.commit();
}

std::string check_postgres_schema_integrity(PostgresConnection& connection) {
  const std::string operation = "integrity_check";
  std::vector<std::string> findings;
  const std::vector<std::string> names = table_names(connection);
  if (!contains(names, "fedstat_schema")) return "no table fedstat_schema";
  const long long version = stored_version(connection, operation);
  if (version != kPostgresStoreSchemaVersion) {
    findings.push_back("schema version " + std::to_string(version) + ", not " +
                       std::to_string(kPostgresStoreSchemaVersion));
  }
  for (const char* table : kTables) {
    if (!contains(names, table)) findings.push_back(std::string("no table ") + table);
  }
  if (findings.empty()) {
    const PgResult keys = connection.exec(
        "SELECT count(*) FROM pg_catalog.pg_constraint WHERE contype = 'f' AND convalidated "
        "AND conrelid IN ('events'::regclass, 'results'::regclass)",
        operation);
    if (std::string(PQgetvalue(keys.get(), 0, 0)) != "2") {
      findings.push_back("the foreign keys of events and results to tasks are not both in force");
    }
    const PgResult kinds =
        connection.exec("SELECT count(*) FROM events WHERE kind NOT IN (1, 2, 3)", operation);
    if (std::string(PQgetvalue(kinds.get(), 0, 0)) != "0") {
      findings.push_back(std::string(PQgetvalue(kinds.get(), 0, 0)) +
                         " events with a kind outside EventKind");
    }
    const PgResult ids = connection.exec(
        "SELECT count(*) FROM tasks WHERE task_id NOT BETWEEN 0 AND 4294967295", operation);
    if (std::string(PQgetvalue(ids.get(), 0, 0)) != "0") {
      findings.push_back("task ids outside 32 bits");
    }
  }
  if (findings.empty()) return "ok";
  std::string out;
  for (const std::string& finding : findings) out += (out.empty() ? "" : "\n") + finding;
  return out;
}

}  // namespace host
}  // namespace fedstat
