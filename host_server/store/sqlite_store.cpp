#include "host_server/store/sqlite_store.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>

#include "host_server/store/backend_helpers.h"
#include "host_server/store/event_checks.h"
#include "host_server/store/sqlite_handle.h"
#include "host_server/store/sqlite_schema.h"

namespace fedstat {
namespace host {
namespace {

std::string single_text(SqliteStatement& statement, const std::string& operation) {
  std::string out;
  while (statement.step(operation)) out += (out.empty() ? "" : "\n") + statement.column_text(0);
  return out;
}

class SqliteStore final : public Store {
 public:
  SqliteStore(const std::string& path, const SqliteStoreOptions& options)
      : connection_(path),
        statements_(configure(connection_, options)),
        durability_(options.durability),
        synchronous_full_(options.durability != Durability::kSurvivesProcessCrash) {}

  void put_task(uint32_t task_id, const std::string& definition) override {
    SqliteTransaction transaction = write("put_task");
    {
      StatementScope scope(statements_.task_definition);
      statements_.task_definition.bind_int64(1, task_id);
      if (statements_.task_definition.step("put_task")) {
        if (statements_.task_definition.column_text(0) == definition) return;
        throw std::invalid_argument("put_task: task " + std::to_string(task_id) +
                                    " is already declared with another definition");
      }
    }
    StatementScope scope(statements_.insert_task);
    statements_.insert_task.bind_int64(1, task_id);
    statements_.insert_task.bind_text(2, definition);
    statements_.insert_task.bind_text(3, kDeclaredTaskState);
    statements_.insert_task.step_done("put_task");
    transaction.commit();
  }

  std::vector<StoredTask> tasks() override {
    StatementScope scope(statements_.all_tasks);
    std::vector<StoredTask> out;
    while (statements_.all_tasks.step("tasks")) {
      StoredTask task;
      task.task_id = task_id_column(statements_.all_tasks, 0, "tasks");
      task.definition = statements_.all_tasks.column_text(1);
      task.state = statements_.all_tasks.column_text(2);
      out.push_back(std::move(task));
    }
    return out;
  }

  void set_task_state(uint32_t task_id, const std::string& state) override {
    synchronous_for(Commit::kStep, "set_task_state");
    StatementScope scope(statements_.update_state);
    statements_.update_state.bind_text(1, state);
    statements_.update_state.bind_int64(2, task_id);
    statements_.update_state.step_done("set_task_state");
    if (sqlite3_changes(connection_.db()) == 0) throw_unknown_task("set_task_state", task_id);
  }

  uint64_t append_events(const std::vector<NewEvent>& events) override {
    check_event_batch(events);
    const bool device_messages_only =
        std::all_of(events.begin(), events.end(), [](const NewEvent& event) {
          return event.kind == EventKind::kDeviceMessage && !event.durable;
        });
    const bool notes = std::any_of(events.begin(), events.end(), [](const NewEvent& event) {
      return event.kind == EventKind::kServerNote;
    });
    SqliteTransaction transaction =
        write("append_events", notes                  ? Commit::kRelease
                               : device_messages_only ? Commit::kDeviceMessages
                                                      : Commit::kStep);
    std::set<uint32_t> known;
    for (const NewEvent& event : events) {
      if (known.insert(event.task_id).second) require_task("append_events", event.task_id);
    }
    SqliteStatement& insert = statements_.insert_event;
    for (const NewEvent& event : events) {
      StatementScope scope(insert);
      insert.bind_int64(1, event.task_id);
      insert.bind_int64(2, to_column(event.client_id));
      insert.bind_int64(3, static_cast<int64_t>(event.kind));
      insert.bind_blob(4, event.payload);
      insert.step_done("append_events");
    }
    const uint64_t last = from_column(sqlite3_last_insert_rowid(connection_.db()));
    transaction.commit();
    return last;
  }

  std::vector<StoredEvent> events(uint32_t task_id) override {
    SqliteTransaction transaction = read("events");
    require_task("events", task_id);
    SqliteStatement& select = statements_.task_events;
    StatementScope scope(select);
    select.bind_int64(1, task_id);
    std::vector<StoredEvent> out;
    while (select.step("events")) {
      StoredEvent event;
      event.sequence = from_column(select.column_int64(0));
      event.task_id = task_id;
      event.client_id = from_column(select.column_int64(1));
      event.kind = kind_column(select.column_int64(2), event.sequence);
      event.payload = select.column_blob(3);
      out.push_back(std::move(event));
    }
    transaction.commit();
    return out;
  }

  void put_result(uint32_t task_id, const std::string& result_json) override {
    SqliteTransaction transaction = write("put_result", Commit::kRelease);
    require_task("put_result", task_id);
    {
      StatementScope scope(statements_.task_result);
      statements_.task_result.bind_int64(1, task_id);
      if (statements_.task_result.step("put_result")) {
        if (statements_.task_result.column_text(0) == result_json) return;
        throw std::logic_error("put_result: task " + std::to_string(task_id) +
                               " already has another published result");
      }
    }
    StatementScope scope(statements_.insert_result);
    statements_.insert_result.bind_int64(1, task_id);
    statements_.insert_result.bind_text(2, result_json);
    statements_.insert_result.step_done("put_result");
    transaction.commit();
  }

  std::optional<std::string> result(uint32_t task_id) override {
    SqliteTransaction transaction = read("result");
    require_task("result", task_id);
    StatementScope scope(statements_.task_result);
    statements_.task_result.bind_int64(1, task_id);
    std::optional<std::string> out;
    if (statements_.task_result.step("result")) out = statements_.task_result.column_text(0);
    return out;  // the read transaction ends with the scope (nothing to commit)
  }

  std::string integrity_check() override {
    StatementScope scope(statements_.integrity);
    std::string verdict = single_text(statements_.integrity, "integrity_check");
    StatementScope foreign_scope(statements_.foreign_key_check);
    if (statements_.foreign_key_check.step("integrity_check")) {
      verdict = (verdict == "ok" ? "" : verdict + "\n") + "foreign key violation in table " +
                statements_.foreign_key_check.column_text(0);
    }
    return verdict;
  }

 private:
  struct Statements {
    explicit Statements(SqliteConnection& c)
        : begin_read(c, "BEGIN"),
          begin_write(c, "BEGIN IMMEDIATE"),
          commit(c, "COMMIT"),
          rollback(c, "ROLLBACK"),
          task_exists(c, "SELECT 1 FROM tasks WHERE task_id = ?"),
          task_definition(c, "SELECT definition FROM tasks WHERE task_id = ?"),
          insert_task(c, "INSERT INTO tasks(task_id, definition, state) VALUES (?, ?, ?)"),
          all_tasks(c, "SELECT task_id, definition, state FROM tasks ORDER BY task_id"),
          update_state(c, "UPDATE tasks SET state = ? WHERE task_id = ?"),
          insert_event(c,
                       "INSERT INTO events(task_id, client_id, kind, payload) VALUES (?, ?, ?, ?)"),
          task_events(c,
                      "SELECT sequence, client_id, kind, payload FROM events WHERE task_id = ? "
                      "ORDER BY sequence"),
          task_result(c, "SELECT json FROM results WHERE task_id = ?"),
          insert_result(c, "INSERT INTO results(task_id, json) VALUES (?, ?)"),
          integrity(c, "PRAGMA integrity_check"),
          foreign_key_check(c, "PRAGMA foreign_key_check") {}
    SqliteStatement begin_read, begin_write, commit, rollback;
    SqliteStatement task_exists, task_definition, insert_task, all_tasks, update_state;
    SqliteStatement insert_event, task_events, task_result, insert_result;
    SqliteStatement integrity, foreign_key_check;
  };

  // Runs before the statements are prepared (they need the schema).
  static SqliteConnection& configure(SqliteConnection& connection,
                                     const SqliteStoreOptions& options) {
    if (options.busy_timeout_ms < 0) {
      throw std::invalid_argument("open_sqlite_store: busy_timeout_ms must not be negative");
    }
    sqlite3_busy_timeout(connection.db(), options.busy_timeout_ms);
    connection.exec("PRAGMA foreign_keys = ON", "open");
    create_or_check_schema(connection);
    check_pages(connection);
    expect_pragma(connection, "PRAGMA journal_mode = WAL", "wal");
    const bool full = options.durability != Durability::kSurvivesProcessCrash;
    connection.exec(full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL", "open");
    expect_pragma(connection, "PRAGMA synchronous", full ? "2" : "1");
    expect_pragma(connection, "PRAGMA foreign_keys", "1");
    return connection;
  }

  // PRAGMA quick_check (every page and record, without integrity_check's index-to-table cross
  // check: linear in the file's size): a damaged store is refused before anything reads or
  // writes it, not noticed at the next integrity check (a clean stop).
  static void check_pages(SqliteConnection& connection) {
    SqliteStatement check(connection, "PRAGMA quick_check(3)");
    const std::string verdict = single_text(check, "open (quick_check)");
    if (verdict == "ok") return;
    std::string found = verdict;
    for (char& c : found) c = c == '\n' ? ';' : c;
    connection.refuse("open", "the store is damaged (PRAGMA quick_check: " + found +
                                  "): the server will not serve it; restore it from a backup "
                                  "(or salvage what reads with the sqlite3 shell's .recover)");
  }

  static void expect_pragma(SqliteConnection& connection, const char* pragma,
                            const std::string& expected) {
    SqliteStatement statement(connection, pragma);
    const std::string got = single_text(statement, "open");
    if (got != expected) {
      connection.refuse("open",
                        std::string(pragma) + " gave \"" + got + "\", not \"" + expected + "\"");
    }
  }

  // What a commit holds, for its synchronous level (Durability): device messages alone; a step
  // (a transition, a task, its state, a durable device message); or a release — a result, or a
  // server note (the rounds' secrets a release is drawn from: a noise seed) — FULL in every mode.
  enum class Commit { kDeviceMessages, kStep, kRelease };
  // Sets synchronous=FULL or NORMAL for `commit` under the store's durability, before the
  // transaction begins (a no-op when it is already so).
  void synchronous_for(Commit commit, const std::string& operation) {
    bool full = true;
    switch (durability_) {
      case Durability::kSurvivesPowerLoss:
        return;  // FULL throughout (configure)
      case Durability::kStepsSurvivePowerLoss:
        full = commit != Commit::kDeviceMessages;
        break;
      case Durability::kSurvivesProcessCrash:
        full = commit == Commit::kRelease;
        break;
    }
    if (full == synchronous_full_) return;
    connection_.exec(full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL", operation);
    synchronous_full_ = full;
  }
  SqliteTransaction write(const std::string& operation, Commit commit = Commit::kStep) {
    synchronous_for(commit, operation);
    return SqliteTransaction(connection_, statements_.begin_write, statements_.commit,
                             statements_.rollback, operation);
  }
  SqliteTransaction read(const std::string& operation) {
    return SqliteTransaction(connection_, statements_.begin_read, statements_.commit,
                             statements_.rollback, operation);
  }

  void require_task(const std::string& operation, uint32_t task_id) {
    StatementScope scope(statements_.task_exists);
    statements_.task_exists.bind_int64(1, task_id);
    if (!statements_.task_exists.step(operation)) throw_unknown_task(operation, task_id);
  }

  [[noreturn]] static void throw_unknown_task(const std::string& operation, uint32_t task_id) {
    throw std::invalid_argument(operation + ": unknown task " + std::to_string(task_id));
  }

  uint32_t task_id_column(SqliteStatement& statement, int index, const std::string& operation) {
    const int64_t value = statement.column_int64(index);
    if (statement.column_type(index) != SQLITE_INTEGER || value < 0 ||
        value > std::numeric_limits<uint32_t>::max()) {
      connection_.refuse(operation, "corrupted store: task id " + std::to_string(value) +
                                        " is not a 32-bit unsigned integer");
    }
    return static_cast<uint32_t>(value);
  }

  EventKind kind_column(int64_t value, uint64_t sequence) {
    if (!is_event_kind(value)) {
      connection_.refuse("events", "corrupted store: event " + std::to_string(sequence) +
                                       " has kind " + std::to_string(value) + ", not an EventKind");
    }
    return static_cast<EventKind>(value);
  }

  SqliteConnection connection_;
  Statements statements_;
  Durability durability_;
  bool synchronous_full_;  // the connection's synchronous setting (FULL or NORMAL)
};

}  // namespace

std::unique_ptr<Store> open_sqlite_store(const std::string& path,
                                         const SqliteStoreOptions& options) {
  return std::make_unique<SqliteStore>(path, options);
}

}  // namespace host
}  // namespace fedstat
