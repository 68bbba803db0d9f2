#include "host_server/store/postgres_store.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>

#include "host_server/store/backend_helpers.h"
#include "host_server/store/event_checks.h"
#include "host_server/store/postgres_connection.h"
#include "host_server/store/postgres_schema.h"
#include "host_server/store/store_spec.h"

namespace fedstat {
namespace host {
namespace {

uint64_t big_endian(const char* bytes, int length) {
  uint64_t out = 0;
  for (int i = 0; i < length; ++i) out = (out << 8) | static_cast<uint8_t>(bytes[i]);
  return out;
}

std::string text_at(const PgResult& result, int row, int column) {
  return std::string(PQgetvalue(result.get(), row, column),
                     static_cast<size_t>(PQgetlength(result.get(), row, column)));
}

class PostgresStore final : public Store {
 public:
  PostgresStore(const std::string& conninfo, const PostgresStoreOptions& options)
      : connection_(conninfo, redacted_store_spec(conninfo)), options_(options) {
    connection_.add_setup("SET synchronous_commit = on");
    connection_.add_setup("SET client_min_messages = warning");
    connection_.add_setup("SET default_transaction_isolation = 'read committed'");
    // A role's or database's time-outs would cancel a standby's wait for the serving lock, or end
    // the serving session while it idles (a spurious take-over): none for this session.
    connection_.add_setup("SET statement_timeout = 0");
    connection_.add_setup("SET lock_timeout = 0");
    connection_.add_setup("SET idle_in_transaction_session_timeout = 0");
    connection_.add_setup("SET idle_session_timeout = 0");
    for (const char* setting : {"synchronous_commit", "fsync"}) {
      const PgResult shown = connection_.exec(std::string("SHOW ") + setting, "open");
      if (PQntuples(shown.get()) != 1 || text_at(shown, 0, 0) != "on") {
        connection_.refuse("open", std::string(setting) +
                                       " is not on: a committed message could be lost, and "
                                       "fedstat acknowledges only what is durable");
      }
    }
    create_or_check_postgres_schema(connection_);
    connection_.add_prepared("task_definition",
                             "SELECT definition FROM tasks WHERE task_id = $1::bigint");
    connection_.add_prepared("task_exists", "SELECT 1 FROM tasks WHERE task_id = $1::bigint");
    connection_.add_prepared(
        "insert_task",
        "INSERT INTO tasks(task_id, definition, state) VALUES ($1::bigint, $2::text, $3::text) "
        "ON CONFLICT (task_id) DO NOTHING");
    connection_.add_prepared("all_tasks",
                             "SELECT task_id, definition, state FROM tasks ORDER BY task_id");
    connection_.add_prepared("update_state",
                             "UPDATE tasks SET state = $1::text WHERE task_id = $2::bigint");
    // The append's transaction id, asked for before COMMIT: a COMMIT that gets no answer is then
    // resolved by asking PostgreSQL for that transaction's status (postgres_store.h).
    connection_.add_prepared("append_begin",
                             options_.serialise_appends
                                 ? "SELECT pg_current_xact_id()::text, pg_backend_pid(), "
                                   "pg_advisory_xact_lock(" +
                                       std::to_string(kPostgresAppendLock) + ")"
                                 : std::string("SELECT pg_current_xact_id()::text, "
                                               "pg_backend_pid()"));
    connection_.add_prepared("event_exists", "SELECT 1 FROM events WHERE sequence = $1::bigint");
    // An id beyond the next one to be assigned ("in the future": PostgreSQL crashed before the id
    // reached its WAL, so the transaction wrote no commit record) never committed; pg_xact_status
    // would raise an error for it.
    connection_.add_prepared("xact_status",
                             "SELECT CASE WHEN $1::xid8 >= pg_snapshot_xmax(pg_current_snapshot()) "
                             "THEN 'never assigned' ELSE pg_xact_status($1::xid8) END");
    connection_.add_prepared(
        "insert_event",
        "INSERT INTO events(task_id, client_id, kind, payload) "
        "VALUES ($1::bigint, $2::bigint, $3::integer, $4::bytea) RETURNING sequence");
    connection_.add_prepared("task_events",
                             "SELECT sequence, client_id, kind, payload FROM events "
                             "WHERE task_id = $1::bigint ORDER BY sequence");
    connection_.add_prepared("task_result", "SELECT json FROM results WHERE task_id = $1::bigint");
    connection_.add_prepared("insert_result",
                             "INSERT INTO results(task_id, json) VALUES ($1::bigint, $2::text) "
                             "ON CONFLICT (task_id) DO NOTHING");
    if (options_.serving_lock != 0) take_serving_lock();
  }

  void put_task(uint32_t task_id, const std::string& definition) override {
    call("put_task", [&] {
      PostgresTransaction transaction(connection_, "put_task");
      connection_.run(
          "insert_task",
          {PgParam::int64(task_id), PgParam::text(definition), PgParam::text(kDeclaredTaskState)},
          "put_task");
      const PgResult stored =
          connection_.run("task_definition", {PgParam::int64(task_id)}, "put_task");
      if (PQntuples(stored.get()) != 1 || text_at(stored, 0, 0) != definition) {
        throw std::invalid_argument("put_task: task " + std::to_string(task_id) +
                                    " is already declared with another definition");
      }
      transaction.commit();
    });
  }

  std::vector<StoredTask> tasks() override {
    return call("tasks", [&] {
      const PgResult rows = connection_.run("all_tasks", {}, "tasks");
      std::vector<StoredTask> out;
      for (int row = 0; row < PQntuples(rows.get()); ++row) {
        StoredTask task;
        task.task_id = task_id_text(text_at(rows, row, 0), "tasks");
        task.definition = text_at(rows, row, 1);
        task.state = text_at(rows, row, 2);
        out.push_back(std::move(task));
      }
      return out;
    });
  }

  void set_task_state(uint32_t task_id, const std::string& state) override {
    call("set_task_state", [&] {
      const PgResult updated = connection_.run(
          "update_state", {PgParam::text(state), PgParam::int64(task_id)}, "set_task_state");
      if (std::string(PQcmdTuples(updated.get())) == "0") {
        throw_unknown_task("set_task_state", task_id);
      }
    });
  }

  uint64_t append_events(const std::vector<NewEvent>& events) override {
    check_event_batch(events);
    // A batch whose COMMIT got no answer: its transaction id and its last sequence number.
    std::optional<std::pair<std::string, uint64_t>> in_doubt;
    return call("append_events", [&]() -> uint64_t {
      if (in_doubt) {
        if (committed(in_doubt->first)) {
          require_committed_event(in_doubt->second, "append_events");
          last_committed_ = in_doubt->second;
          return in_doubt->second;
        }
        in_doubt.reset();  // rolled back: appended again below, once
      }
      PostgresTransaction transaction(connection_, "append_events");
      // The transaction id; serialises appends across connections until this one commits.
      const PgResult begun = connection_.run("append_begin", {}, "append_events");
      const std::string xact = text_at(begun, 0, 0);
      if (serving_ && text_at(begun, 0, 1) != serving_pid_) {
        // Not the session that holds the serving lock, with no reconnect between: something
        // between this process and PostgreSQL hands its statements to other sessions.
        connection_.refuse("append_events",
                           "the store's PostgreSQL session changed under it (a connection pooler "
                           "in transaction mode?): fedstat-server needs a session of its own, "
                           "which holds its serving lock");
      }
      std::set<uint32_t> known;
      for (const NewEvent& event : events) {
        if (known.insert(event.task_id).second) require_task("append_events", event.task_id);
      }
      // One round trip for the batch's inserts (pipeline mode), not one per event.
      std::vector<std::vector<PgParam>> rows;
      rows.reserve(events.size());
      for (const NewEvent& event : events) {
        rows.push_back({PgParam::int64(event.task_id), PgParam::int64(to_column(event.client_id)),
                        PgParam::int64(static_cast<int64_t>(event.kind)),
                        PgParam::bytes(event.payload)});
      }
      const std::vector<PgResult> inserted =
          connection_.run_pipelined("insert_event", rows, "append_events");
      const uint64_t last = std::stoull(text_at(inserted.back(), 0, 0));
      try {
        transaction.commit();
        if (lost_answers_ > 0) {  // test only: the COMMIT's answer lost after it committed
          --lost_answers_;
          connection_.drop();
          throw PostgresConnectionLost(
              "fedstat store " + connection_.label() + ": append_events: connection lost (test)",
              true);
        }
      } catch (const PostgresConnectionLost& lost) {
        if (lost.commit_unknown()) in_doubt.emplace(xact, last);
        throw;
      }
      last_committed_ = last;
      return last;
    });
  }

  std::vector<StoredEvent> events(uint32_t task_id) override {
    return call("events", [&] {
      PostgresTransaction transaction(connection_, "events");
      require_task("events", task_id);
      const PgResult rows = connection_.run("task_events", {PgParam::int64(task_id)}, "events",
                                            /*result_binary=*/true);
      std::vector<StoredEvent> out;
      out.reserve(static_cast<size_t>(PQntuples(rows.get())));
      for (int row = 0; row < PQntuples(rows.get()); ++row) {
        StoredEvent event;
        event.sequence = integer_at(rows, row, 0, 8);
        event.task_id = task_id;
        event.client_id = integer_at(rows, row, 1, 8);
        const auto kind = static_cast<int32_t>(static_cast<uint32_t>(integer_at(rows, row, 2, 4)));
        if (!is_event_kind(kind)) {
          connection_.refuse("events", "corrupted store: event " + std::to_string(event.sequence) +
                                           " has kind " + std::to_string(kind) +
                                           ", not an EventKind");
        }
        event.kind = static_cast<EventKind>(kind);
        const auto* payload = reinterpret_cast<const uint8_t*>(PQgetvalue(rows.get(), row, 3));
        event.payload.assign(payload, payload + PQgetlength(rows.get(), row, 3));
        out.push_back(std::move(event));
      }
      transaction.commit();
      return out;
    });
  }

  void put_result(uint32_t task_id, const std::string& result_json) override {
    call("put_result", [&] {
      PostgresTransaction transaction(connection_, "put_result");
      require_task("put_result", task_id);
      // Whoever inserts first publishes; every other caller compares with what it published.
      connection_.run("insert_result", {PgParam::int64(task_id), PgParam::text(result_json)},
                      "put_result");
      const PgResult stored =
          connection_.run("task_result", {PgParam::int64(task_id)}, "put_result");
      if (PQntuples(stored.get()) != 1 || text_at(stored, 0, 0) != result_json) {
        throw std::logic_error("put_result: task " + std::to_string(task_id) +
                               " already has another published result");
      }
      transaction.commit();
    });
  }

  std::optional<std::string> result(uint32_t task_id) override {
    return call("result", [&] {
      PostgresTransaction transaction(connection_, "result");
      require_task("result", task_id);
      const PgResult stored = connection_.run("task_result", {PgParam::int64(task_id)}, "result");
      std::optional<std::string> out;
      if (PQntuples(stored.get()) == 1) out = text_at(stored, 0, 0);
      transaction.commit();
      return out;
    });
  }

  std::string integrity_check() override {
    return call("integrity_check", [&] { return check_postgres_schema_integrity(connection_); });
  }

 private:
  // Runs `body` until it completes, through connections lost on the way: each failed attempt
  // drops the connection and reconnects — at once after the first, then after a pause (50 ms
  // doubling up to 2 s); past the outage limit it throws (postgres_store.h). `body` runs again
  // whole, so it must be safe to: idempotent, or resolving its own doubt first (append_events).
  template <typename Body>
  auto call(const std::string& operation, Body&& body) -> decltype(body()) {
    using Out = decltype(body());
    if constexpr (std::is_void_v<Out>) {
      retrying(operation, [&] { body(); });
    } else {
      std::optional<Out> out;
      retrying(operation, [&] { out.emplace(body()); });
      return std::move(*out);
    }
  }

  template <typename Attempt>
  void retrying(const std::string& operation, Attempt&& attempt) {
    using Clock = std::chrono::steady_clock;
    std::optional<Clock::time_point> outage_began;
    std::chrono::milliseconds pause(50);
    for (;;) {
      if (!stopped_because_.empty()) throw std::runtime_error(stopped_because_);  // for good
      try {
        if (connection_.lost()) {
          connection_.reconnect(operation);
          if (serving_) keep_serving_lock(operation);
          if (last_committed_ != 0) require_committed_event(last_committed_, operation);
        }
        attempt();
        if (outage_began && options_.on_outage) {
          options_.on_outage(true, operation + ": PostgreSQL reachable again");
        }
        return;
      } catch (const PostgresConnectionLost& lost) {
        connection_.drop();
        const Clock::time_point now = Clock::now();
        if (!outage_began) {  // the first loss: reconnected and run again at once
          outage_began = now;
          if (options_.on_outage) options_.on_outage(false, lost.what());
          continue;
        }
        const auto waited = now - *outage_began;
        if (waited >= options_.outage_limit) {
          throw std::runtime_error(
              std::string(lost.what()) + " (PostgreSQL unreachable for " +
              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(waited).count()) +
              " s, the store's outage limit: store_outage_seconds)");
        }
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(options_.outage_limit - waited);
        std::this_thread::sleep_for(std::min(pause, left));
        pause = std::min(pause * 2, std::chrono::milliseconds(2000));
      }
    }
  }

  std::string serving_lock_sql(const char* function) const {
    return std::string("SELECT ") + function + "(" + std::to_string(options_.serving_lock) + ")";
  }

  // At open: the serving lock, waiting as a standby while another session holds it
  // (PostgresStoreOptions::serving_lock).
  void take_serving_lock() {
    bool said_standby = false;
    retrying("open", [&] {
      const PgResult taken = connection_.exec(serving_lock_sql("pg_try_advisory_lock"), "open");
      if (text_at(taken, 0, 0) != "t") {
        if (!said_standby && options_.on_standby) options_.on_standby();
        said_standby = true;
        connection_.exec(serving_lock_sql("pg_advisory_lock"), "open");  // until the holder ends
        // The server that served meanwhile may have been newer: its schema is checked again.
        create_or_check_postgres_schema(connection_);
      }
      serving_pid_ = backend_pid("open");
      serving_ = true;
    });
  }

  std::string backend_pid(const std::string& operation) {
    return text_at(connection_.exec("SELECT pg_backend_pid()", operation), 0, 0);
  }

  // After a reconnect, PostgreSQL must still hold the last event this store committed: a failover
  // to a replica that had not received it (asynchronous replication) or a restored backup would
  // otherwise go unnoticed — the rounds in memory, and the devices they answered, would have acted
  // on a history the store no longer holds, and a restart would replay another (a secure-
  // aggregation round could then announce a second U3). Stops the process: no retry.
  void require_committed_event(uint64_t sequence, const std::string& operation) {
    const PgResult found = connection_.run(
        "event_exists", {PgParam::int64(static_cast<int64_t>(sequence))}, operation);
    if (PQntuples(found.get()) == 0) {
      stopped_because_ =
          "fedstat store " + connection_.label() + ": " + operation +
          ": PostgreSQL no longer holds event " + std::to_string(sequence) +
          ", which this server committed (a failover to a replica that had not received "
          "it, or a restored backup?): this server stops; use synchronous replication";
      throw std::runtime_error(stopped_because_);
    }
  }

  // After a reconnect: the lock again, at once, or this process no longer serves the database.
  void keep_serving_lock(const std::string& operation) {
    const PgResult taken = connection_.exec(serving_lock_sql("pg_try_advisory_lock"), operation);
    if (text_at(taken, 0, 0) == "t") {
      serving_pid_ = backend_pid(operation);
      return;
    }
    const uint64_t key = static_cast<uint64_t>(options_.serving_lock);
    const PgResult holders = connection_.exec(
        "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND "
        "classid = " +
            std::to_string(key >> 32) + " AND objid = " + std::to_string(key & 0xffffffffu) +
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        operation);
    const std::string holder = PQntuples(holders.get()) == 1 ? text_at(holders, 0, 0) : "";
    if (holder.empty() || holder == serving_pid_) {
      // Released meanwhile, or still held by this process's own previous session (its connection
      // was cut but its backend has not noticed yet — a COMMIT in doubt is exactly that case): that
      // session is ended (its transaction, if still open, rolls back and is resolved as aborted)
      // and the lock taken again after the next pause.
      if (!holder.empty()) {
        connection_.exec("SELECT pg_terminate_backend(" + holder + ")", operation);
      }
      throw PostgresConnectionLost(
          "fedstat store " + connection_.label() + ": " + operation +
              (holder.empty() ? std::string(": the serving lock was released meanwhile")
                              : ": the serving lock is still held by this server's previous "
                                "session (pid " +
                                    holder + "); ended it"),
          false);
    }
    {
      connection_.drop();
      stopped_because_ = "fedstat store " + connection_.label() + ": " + operation +
                         ": another fedstat-server took over this database while PostgreSQL was "
                         "unreachable; this one stops";
      throw std::runtime_error(stopped_because_);
    }
  }

  // Whether the transaction `xact` committed: PostgreSQL's own record (pg_xact_status). Still in
  // progress (a connection cut with the old backend not yet gone): asked again after a pause.
  bool committed(const std::string& xact) {
    const PgResult status = connection_.run("xact_status", {PgParam::text(xact)}, "append_events");
    if (PQgetisnull(status.get(), 0, 0)) {
      connection_.refuse("append_events", "the status of transaction " + xact +
                                              " (whose COMMIT got no answer) is no longer known");
    }
    const std::string word = text_at(status, 0, 0);
    if (word == "committed") return true;
    if (word == "aborted" || word == "never assigned") return false;
    throw PostgresConnectionLost("fedstat store " + connection_.label() +
                                     ": append_events: transaction " + xact + " still " + word,
                                 false);
  }

  void require_task(const std::string& operation, uint32_t task_id) {
    const PgResult found = connection_.run("task_exists", {PgParam::int64(task_id)}, operation);
    if (PQntuples(found.get()) == 0) throw_unknown_task(operation, task_id);
  }

  [[noreturn]] static void throw_unknown_task(const std::string& operation, uint32_t task_id) {
    throw std::invalid_argument(operation + ": unknown task " + std::to_string(task_id));
  }

  uint32_t task_id_text(const std::string& text, const std::string& operation) {
    size_t used = 0;
    long long value = -1;
    try {
      value = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || value < 0 || value > std::numeric_limits<uint32_t>::max()) {
      connection_.refuse(operation,
                         "corrupted store: task id " + text + " is not a 32-bit unsigned integer");
    }
    return static_cast<uint32_t>(value);
  }

  uint64_t integer_at(const PgResult& rows, int row, int column, int bytes) {
    if (PQgetlength(rows.get(), row, column) != bytes) {
      connection_.refuse("events", "unexpected binary width of column " + std::to_string(column));
    }
    return big_endian(PQgetvalue(rows.get(), row, column), bytes);
  }

  PostgresConnection connection_;
  PostgresStoreOptions options_;
  int lost_answers_ = options_.lose_committed_append_answers;
  bool serving_ = false;         // the serving lock is held (PostgresStoreOptions::serving_lock)
  std::string serving_pid_;      // the backend (session) that holds the serving lock
  uint64_t last_committed_ = 0;  // the last sequence this store committed (0: none yet)
  // Not empty: the store stopped for good (another process took the serving lock, or PostgreSQL
  // lost an event this store committed); every call throws it.
  std::string stopped_because_;
};

}  // namespace

std::unique_ptr<Store> open_postgres_store(const std::string& conninfo,
                                           const PostgresStoreOptions& options) {
  return std::make_unique<PostgresStore>(conninfo, options);
}

}  // namespace host
}  // namespace fedstat
