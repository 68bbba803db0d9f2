// Durability as the file system sees it: a counting VFS wraps SQLite's default one and counts the
// xSync calls (fsync) the store makes. Power-loss durability is exactly "the commit synced the
// WAL": kStepsSurvivePowerLoss must sync every commit that is not device messages alone (a round
// step, a task, its state, a result) and none of the device-message commits in between;
// kSurvivesPowerLoss syncs every commit, kSurvivesProcessCrash none. (A power cut itself cannot
// be staged here; kill -9 durability of every mode is sqlite_store_crash_test.cpp's.)
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "host_server/store/sqlite_store.h"
#include "tests/store/temp_dir.h"

namespace fedstat {
namespace host {
namespace {

sqlite3_vfs* g_real_vfs = nullptr;
int g_syncs = 0;

// A file of the counting VFS: its own header, then the real VFS's file object.
struct CountingFile {
  sqlite3_file base;
  sqlite3_file* real;
};

sqlite3_file* real_of(sqlite3_file* file) {
  return reinterpret_cast<CountingFile*>(file)->real;
}

int close_file(sqlite3_file* f) {
  return real_of(f)->pMethods->xClose(real_of(f));
}
int read_file(sqlite3_file* f, void* out, int n, sqlite3_int64 at) {
  return real_of(f)->pMethods->xRead(real_of(f), out, n, at);
}
int write_file(sqlite3_file* f, const void* in, int n, sqlite3_int64 at) {
  return real_of(f)->pMethods->xWrite(real_of(f), in, n, at);
}
int truncate_file(sqlite3_file* f, sqlite3_int64 size) {
  return real_of(f)->pMethods->xTruncate(real_of(f), size);
}
int sync_file(sqlite3_file* f, int flags) {
  ++g_syncs;
  return real_of(f)->pMethods->xSync(real_of(f), flags);
}
int file_size(sqlite3_file* f, sqlite3_int64* size) {
  return real_of(f)->pMethods->xFileSize(real_of(f), size);
}
int lock_file(sqlite3_file* f, int level) {
  return real_of(f)->pMethods->xLock(real_of(f), level);
}
int unlock_file(sqlite3_file* f, int level) {
  return real_of(f)->pMethods->xUnlock(real_of(f), level);
}
int check_reserved_lock(sqlite3_file* f, int* out) {
  return real_of(f)->pMethods->xCheckReservedLock(real_of(f), out);
}
int file_control(sqlite3_file* f, int op, void* arg) {
  return real_of(f)->pMethods->xFileControl(real_of(f), op, arg);
}
int sector_size(sqlite3_file* f) {
  return real_of(f)->pMethods->xSectorSize(real_of(f));
}
int device_characteristics(sqlite3_file* f) {
  return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
}
int shm_map(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return real_of(f)->pMethods->xShmMap(real_of(f), page, size, extend, out);
}
int shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  return real_of(f)->pMethods->xShmLock(real_of(f), offset, n, flags);
}
void shm_barrier(sqlite3_file* f) {
  real_of(f)->pMethods->xShmBarrier(real_of(f));
}
int shm_unmap(sqlite3_file* f, int delete_flag) {
  return real_of(f)->pMethods->xShmUnmap(real_of(f), delete_flag);
}
int fetch(sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
  return real_of(f)->pMethods->xFetch(real_of(f), at, n, out);
}
int unfetch(sqlite3_file* f, sqlite3_int64 at, void* p) {
  return real_of(f)->pMethods->xUnfetch(real_of(f), at, p);
}

const sqlite3_io_methods kCountingMethods = {3,
                                             close_file,
                                             read_file,
                                             write_file,
                                             truncate_file,
                                             sync_file,
                                             file_size,
                                             lock_file,
                                             unlock_file,
                                             check_reserved_lock,
                                             file_control,
                                             sector_size,
                                             device_characteristics,
                                             shm_map,
                                             shm_lock,
                                             shm_barrier,
                                             shm_unmap,
                                             fetch,
                                             unfetch};

int open_file(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags, int* out_flags) {
  auto* counting = reinterpret_cast<CountingFile*>(file);
  counting->real = reinterpret_cast<sqlite3_file*>(counting + 1);
  const int rc = g_real_vfs->xOpen(g_real_vfs, name, counting->real, flags, out_flags);
  // The real file's methods must be version 3 (unix's are) for the forwarding above.
  counting->base.pMethods = rc == SQLITE_OK && counting->real->pMethods != nullptr &&
                                    counting->real->pMethods->iVersion >= 3
                                ? &kCountingMethods
                                : nullptr;
  return rc;
}

// Makes the counting VFS the default for the test's lifetime (the store opens with the default).
class CountingVfs {
 public:
  CountingVfs() {
    g_real_vfs = sqlite3_vfs_find(nullptr);
    vfs_ = *g_real_vfs;
    vfs_.szOsFile = static_cast<int>(sizeof(CountingFile)) + g_real_vfs->szOsFile;
    vfs_.zName = "fedstat-counting";
    vfs_.pNext = nullptr;
    vfs_.xOpen = open_file;
    registered_ = sqlite3_vfs_register(&vfs_, 1) == SQLITE_OK;
  }
  ~CountingVfs() {
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(g_real_vfs, 1);
  }
  bool registered() const { return registered_; }

 private:
  sqlite3_vfs vfs_{};
  bool registered_ = false;
};

NewEvent event_of(EventKind kind, uint64_t n) {
  return NewEvent{1, 100 + n, kind, std::vector<uint8_t>(40, static_cast<uint8_t>(n))};
}

// Syncs made by `write`.
template <typename Write>
int syncs_of(Write write) {
  const int before = g_syncs;
  write();
  return g_syncs - before;
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

TEST(SqliteStoreSync, FullModeSyncsEveryCommitAndNormalModeNone) {
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
}

}  // namespace
}  // namespace host
}  // namespace fedstat
