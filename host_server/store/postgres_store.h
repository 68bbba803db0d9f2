// The server's Store on PostgreSQL 15 (libpq, the C API): one connection, prepared statements,
// payloads as bytea sent and read in binary. Built only with libpq (FEDSTAT_WITH_POSTGRESQL; the
// store factory refuses a postgresql:// store otherwise, store/store_factory.h).
//
// Schema (postgres_schema.cpp): created in the connection's current schema (search_path) when it
// holds no table; otherwise checked like the SQLite store's: a schema holding other tables but no
// fedstat_schema (another program's database), one written by a newer schema version, or one
// missing a fedstat table is refused and never modified. Creators racing on an empty database
// serialise on an advisory lock.
//
// Durability: every transaction commits with synchronous_commit = on (set for the session and
// checked at open, as fsync = on is), so a call returns — and the server acknowledges — only once
// PostgreSQL has flushed its commit record: every trust model gets what SQLite's
// kSurvivesPowerLoss gives. The session's statement, lock and idle time-outs are set to none.
//
// Sequence in commit order. An identity column alone is not enough once several connections
// (several server nodes) append: transaction A may take 6, B take 7 and commit first, and a reader
// would see 7 before 6 exists — a replay reading "everything after 7" would miss 6 forever. So
// every append_events transaction first takes a transaction-scoped advisory lock
// (pg_advisory_xact_lock(kPostgresAppendLock)), released only when it commits or rolls back, and
// then numbers its events: appends are serialised, and whatever holds a higher sequence committed
// after every lower one. Reads never wait for it. Cost: appends from all nodes are one queue (one
// commit at a time; group commit batches are what keeps it cheap).
//
// put_result: INSERT … ON CONFLICT DO NOTHING, then the stored one is compared: the same result
// again does nothing, another throws std::logic_error — also when two connections race.
//
// integrity_check() is "ok" when: the schema version row says this build's version, the tables and
// the events' foreign key are present and validated, no event has a kind outside EventKind and
// no task id lies outside 32 bits (a read of the events table: linear in its size); otherwise the
// lines name each finding.
//
// A lost connection (PostgreSQL restarted, a network cut): a call rides the outage out. Each
// attempt that loses the connection (or cannot connect) drops it and connects again — at once
// after the first loss, then after a pause (50 ms, doubling up to 2 s) — until
// PostgresStoreOptions::outage_limit has passed since the first loss; then it throws
// std::runtime_error naming the limit (the server stops, as before). A call runs again whole:
// put_task, set_task_state, put_result and the reads change nothing when run twice, and an
// append_events whose transaction was lost before COMMIT was sent certainly rolled back. An
// append_events whose COMMIT got no answer is resolved, not guessed: each append first asks for its
// transaction id (pg_current_xact_id()), and after reconnecting the store asks PostgreSQL whether
// that transaction committed (pg_xact_status): committed — the call returns the batch's last
// sequence number, appending nothing again; aborted — the batch is appended once more; still in
// progress (the old backend not yet gone) — asked again after the next pause. So every append that
// returned is stored exactly once. The caller's thread waits meanwhile. After every reconnect the
// store checks that PostgreSQL still holds the last event it committed; if not (a failover to an
// asynchronous replica that had not received it, a restored backup), it stops for good — every
// later call throws "… no longer holds event N …" — rather than serve on a history the devices
// it answered never saw. Use synchronous replication for a standby meant for failover.
//
// Errors: std::runtime_error "fedstat store <conninfo, password redacted>: <operation>:
// <PostgreSQL's message>" (and the std::invalid_argument / std::logic_error store.h names).
// One thread at a time (store.h). Memory: libpq's connection buffers plus the largest result read
// (events(task) holds the task's events twice while converting). Paper: none.
#ifndef FEDSTAT_HOST_STORE_POSTGRES_STORE_H_
#define FEDSTAT_HOST_STORE_POSTGRES_STORE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "host_server/store/store.h"

namespace fedstat {
namespace host {

// The schema version this build writes and reads.
inline constexpr int kPostgresStoreSchemaVersion = 1;
// The advisory lock keys (pg_advisory_xact_lock): appends, and schema creation. "fdst" + 1, 2.
inline constexpr int64_t kPostgresAppendLock = 0x6664737400000001;
inline constexpr int64_t kPostgresSchemaLock = 0x6664737400000002;
// The session-level advisory locks a serving process holds for its lifetime (serving_lock): one
// fedstat-server collector, and one TAgg, per database. "fdst" + 3, 4.
inline constexpr int64_t kPostgresCollectorServingLock = 0x6664737400000003;
inline constexpr int64_t kPostgresTaggServingLock = 0x6664737400000004;

// How long a call waits for PostgreSQL by default (the server's store_outage_seconds).
inline constexpr uint32_t kDefaultStoreOutageSeconds = 300;

struct PostgresStoreOptions {
  // Test-only switch: false leaves out the append lock (the ordering test shows what breaks).
  bool serialise_appends = true;
  // How long one call waits for a lost PostgreSQL before it throws (0: it reconnects once, at
  // once, and throws if that fails).
  std::chrono::milliseconds outage_limit{std::chrono::seconds(kDefaultStoreOutageSeconds)};
  // Called on the calling thread when a call finds PostgreSQL gone (reachable false, the error)
  // and when that call then succeeds (true). May be empty.
  std::function<void(bool reachable, const std::string& detail)> on_outage;
  // Test-only: the answers of this many append COMMITs are lost after they committed (the
  // connection closed, the call told "connection lost during COMMIT").
  int lose_committed_append_answers = 0;
  // Non-zero: the key of a session-level advisory lock the store takes at open and holds while its
  // connection lives, so that one process at a time serves the database (several serving nodes
  // are not built yet: docs/scale_out.md). Held by another session: on_standby is called and the
  // open waits until that session ends (its process stopped or was killed: PostgreSQL ends the
  // session and releases the lock), then goes on — a standby that takes over. After a lost
  // connection the store takes the lock again before anything else; held by another session by
  // then (a standby took over during the outage), every later call throws std::runtime_error
  // "... another fedstat-server took over this database ...": the process must stop. Still held
  // by this store's own previous session (its connection cut, its backend not yet gone: a COMMIT
  // in doubt), that session is ended (pg_terminate_backend) and the lock taken after a pause. An
  // append run in another session than the one holding the lock (a connection pooler in
  // transaction mode) is refused: the server needs a session of its own.
  int64_t serving_lock = 0;
  std::function<void()> on_standby;
};

// Connects with `conninfo` (a libpq URI "postgresql://…" or key=value string) and opens the store.
// Throws std::runtime_error when the connection fails, synchronous_commit cannot be on, or the
// schema is refused (see above).
std::unique_ptr<Store> open_postgres_store(const std::string& conninfo,
                                           const PostgresStoreOptions& options = {});

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_POSTGRES_STORE_H_
