// The server's embedded Store: one SQLite file in WAL mode, one connection, prepared statements.
//
// A file this build did not create is refused and never modified: not SQLite, SQLite without the
// fedstat schema table (another program's database), or a schema version newer than this build
// reads. A damaged store is refused too: PRAGMA quick_check runs at every open (a read of every
// page, linear in the file's size) and anything but "ok" is an error naming what it found.
// A store that does not exist is created for its owner only — the file 0600 before SQLite opens
// it (its -wal and -shm then get the same mode), missing directories above it 0700 — whatever the
// umask: it holds every trusted and tagg device's exact words; a symbolic link at its path is
// never followed, and a store (or -wal, -shm, -journal) that is not a regular file of this
// process's user with one link is refused (store/sqlite_handle.h). Durability:
// kSurvivesProcessCrash (synchronous=NORMAL) keeps every committed transaction through kill -9;
// kSurvivesPowerLoss (synchronous=FULL) also through power loss; kStepsSurvivePowerLoss keeps every
// commit through kill -9 and, through power loss, every commit up to the last one that was not
// device messages alone (see Durability). In every mode a release — a result (put_result) or a
// batch holding a server note — commits with FULL: a result shown anywhere is never rolled back by
// a power cut, nor the noise seed it was drawn from. Errors: std::runtime_error "fedstat store
// <path>: <operation>: <SQLite's message>" (and the std::invalid_argument / std::logic_error
// store.h names). Memory: SQLite's page cache (its default, about 2 MiB) plus one prepared
// statement per operation. Paper: none.
#ifndef FEDSTAT_HOST_STORE_SQLITE_STORE_H_
#define FEDSTAT_HOST_STORE_SQLITE_STORE_H_

#include <memory>
#include <string>

#include "host_server/store/store.h"

namespace fedstat {
namespace host {

// Whatever the mode, put_result and an append_events batch holding a kServerNote commit with
// synchronous=FULL (which also syncs every commit before them): a published result, and the
// rounds' notes it depends on (the seed its central noise is drawn from, rounds/task_round.h), must
// not be rolled back after the result was shown — a second estimate would be a second release
// (issue 39 item 2). One fsync per result or note; rounds write a few notes per task.
enum class Durability {
  kSurvivesProcessCrash,  // WAL + synchronous=NORMAL (results and server notes: FULL)
  kSurvivesPowerLoss,     // WAL + synchronous=FULL
  // WAL; a batch of device messages alone commits with synchronous=NORMAL, every other write
  // (a round transition or note, a device message marked durable — an accepting TaskReply —, a
  // task, its state, a result) with FULL. A FULL commit syncs the WAL it ends, so it and every
  // commit before it survive a power loss: whatever the server decided and may have told a
  // device is never lost, while a device message acknowledged since the last such commit may be
  // (the device's resume sends it again: sdk/client, rewind).
  kStepsSurvivePowerLoss,
};

struct SqliteStoreOptions {
  Durability durability = Durability::kSurvivesProcessCrash;
  int busy_timeout_ms = 5000;  // waiting for another connection's lock before SQLITE_BUSY
};

// The schema version this build writes and reads. 2: stored Envelopes are protocol version 2
// (Report and TaggAggregate words fixed64, docs/protocol.md "Versions"); a version-1 store's
// Reports would replay as empty, so it is refused rather than recovered short.
inline constexpr int kSqliteStoreSchemaVersion = 2;

// Opens (creating when absent or empty) the store at `path`. Throws std::runtime_error when the
// file cannot be opened, is refused (see above: "the store is damaged (PRAGMA quick_check: ...)"
// among them), or WAL mode does not take effect (":memory:").
std::unique_ptr<Store> open_sqlite_store(const std::string& path,
                                         const SqliteStoreOptions& options = {});

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_SQLITE_STORE_H_
