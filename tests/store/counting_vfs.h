// CountingVfs: SQLite's default VFS wrapped so that every xSync (an fsync of the database, its WAL
// or journal) is counted — durability as the file system sees it. A power-loss-durable commit is
// exactly one that synced the WAL; with synchronous=NORMAL a WAL commit syncs nothing. While a
// CountingVfs lives it is the default VFS, so a store opened then (open_sqlite_store) is counted;
// syncs_of(write) counts the syncs one call made. One CountingVfs per process at a time.
// Errors: registered() is false when SQLite refused the VFS. Memory: none. Paper: none.
#ifndef FEDSTAT_TESTS_STORE_COUNTING_VFS_H_
#define FEDSTAT_TESTS_STORE_COUNTING_VFS_H_

#include <sqlite3.h>

namespace fedstat {
namespace testing {
namespace counting_vfs {

inline sqlite3_vfs* g_real_vfs = nullptr;
inline int g_syncs = 0;

// A file of the counting VFS: its own header, then the real VFS's file object.
struct CountingFile {
  sqlite3_file base;
  sqlite3_file* real;
};

inline sqlite3_file* real_of(sqlite3_file* file) {
  return reinterpret_cast<CountingFile*>(file)->real;
}

inline int close_file(sqlite3_file* f) {
  return real_of(f)->pMethods->xClose(real_of(f));
}
inline int read_file(sqlite3_file* f, void* out, int n, sqlite3_int64 at) {
  return real_of(f)->pMethods->xRead(real_of(f), out, n, at);
}
inline int write_file(sqlite3_file* f, const void* in, int n, sqlite3_int64 at) {
  return real_of(f)->pMethods->xWrite(real_of(f), in, n, at);
}
inline int truncate_file(sqlite3_file* f, sqlite3_int64 size) {
  return real_of(f)->pMethods->xTruncate(real_of(f), size);
}
inline int sync_file(sqlite3_file* f, int flags) {
  ++g_syncs;
  return real_of(f)->pMethods->xSync(real_of(f), flags);
}
inline int file_size(sqlite3_file* f, sqlite3_int64* size) {
  return real_of(f)->pMethods->xFileSize(real_of(f), size);
}
inline int lock_file(sqlite3_file* f, int level) {
  return real_of(f)->pMethods->xLock(real_of(f), level);
}
inline int unlock_file(sqlite3_file* f, int level) {
  return real_of(f)->pMethods->xUnlock(real_of(f), level);
}
inline int check_reserved_lock(sqlite3_file* f, int* out) {
  return real_of(f)->pMethods->xCheckReservedLock(real_of(f), out);
}
inline int file_control(sqlite3_file* f, int op, void* arg) {
  return real_of(f)->pMethods->xFileControl(real_of(f), op, arg);
}
inline int sector_size(sqlite3_file* f) {
  return real_of(f)->pMethods->xSectorSize(real_of(f));
}
inline int device_characteristics(sqlite3_file* f) {
  return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
}
inline int shm_map(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return real_of(f)->pMethods->xShmMap(real_of(f), page, size, extend, out);
}
inline int shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  return real_of(f)->pMethods->xShmLock(real_of(f), offset, n, flags);
}
inline void shm_barrier(sqlite3_file* f) {
  real_of(f)->pMethods->xShmBarrier(real_of(f));
}
inline int shm_unmap(sqlite3_file* f, int delete_flag) {
  return real_of(f)->pMethods->xShmUnmap(real_of(f), delete_flag);
}
inline int fetch(sqlite3_file* f, sqlite3_int64 at, int n, void** out) {
  return real_of(f)->pMethods->xFetch(real_of(f), at, n, out);
}
inline int unfetch(sqlite3_file* f, sqlite3_int64 at, void* p) {
  return real_of(f)->pMethods->xUnfetch(real_of(f), at, p);
}

inline const sqlite3_io_methods kCountingMethods = {3,
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

inline int open_file(sqlite3_vfs*, const char* name, sqlite3_file* file, int flags,
                     int* out_flags) {
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

}  // namespace counting_vfs

// Makes the counting VFS the default for the test's lifetime (the store opens with the default).
class CountingVfs {
 public:
  CountingVfs() {
    counting_vfs::g_real_vfs = sqlite3_vfs_find(nullptr);
    vfs_ = *counting_vfs::g_real_vfs;
    vfs_.szOsFile =
        static_cast<int>(sizeof(counting_vfs::CountingFile)) + counting_vfs::g_real_vfs->szOsFile;
    vfs_.zName = "fedstat-counting";
    vfs_.pNext = nullptr;
    vfs_.xOpen = counting_vfs::open_file;
    registered_ = sqlite3_vfs_register(&vfs_, 1) == SQLITE_OK;
  }
  ~CountingVfs() {
    sqlite3_vfs_unregister(&vfs_);
    sqlite3_vfs_register(counting_vfs::g_real_vfs, 1);
  }
  bool registered() const { return registered_; }

 private:
  sqlite3_vfs vfs_{};
  bool registered_ = false;
};

// Syncs made by `write` (while a CountingVfs is registered).
template <typename Write>
int syncs_of(Write write) {
  const int before = counting_vfs::g_syncs;
  write();
  return counting_vfs::g_syncs - before;
}

}  // namespace testing
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_STORE_COUNTING_VFS_H_
