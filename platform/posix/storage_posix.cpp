// Raw storage on POSIX: one file per blob, replaced with write-to-temporary + fsync + rename.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform/platform.h"
#include "platform/posix/posix_platform.h"
#include "platform/raw_storage.h"
#include "sdk/base/checked_size.h"

namespace fedstat {
namespace platform {
namespace posix {
namespace {

char g_directory[kMaxStorageDirectoryLength + 1] = "";
bool g_directory_set = false;

// "<dir>/<name><suffix>" into `out`; false if it does not fit.
constexpr size_t kPathCapacity = kMaxStorageDirectoryLength + kMaxBlobNameLength + 8;
bool build_path(const char* name, const char* suffix, char (&out)[kPathCapacity]) {
  const int n = snprintf(out, sizeof(out), "%s/%s%s", storage_directory(), name, suffix);
  return n > 0 && static_cast<size_t>(n) < sizeof(out);
}

Status write_all(int fd, ByteSpan bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return unavailable("writing a blob file failed (disk full, or no permission?)");
    }
    done += static_cast<size_t>(n);
  }
  return Status();
}

// The rename is durable only once the directory is synced: a failure here means the new blob
// may not survive a power cut, which the caller must hear (a ledger must not report a spend
// recorded that a reboot could undo).
Status sync_directory() {
  const int fd = open(storage_directory(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return unavailable("the storage directory could not be opened to sync the rename");
  const bool synced = fsync(fd) == 0;
  close(fd);
  if (!synced) return unavailable("syncing the storage directory failed: the blob may not last");
  return Status();
}

}  // namespace

Status set_storage_directory(const char* directory) {
  if (directory == nullptr || directory[0] == '\0') {
    return invalid_argument("storage directory must not be empty");
  }
  if (strlen(directory) > kMaxStorageDirectoryLength) {
    return invalid_argument("storage directory path is longer than kMaxStorageDirectoryLength");
  }
  strcpy(g_directory, directory);
  g_directory_set = true;
  return Status();
}

const char* storage_directory() {
  if (g_directory_set) return g_directory;
  const char* from_env = getenv("FEDSTAT_STORAGE_DIR");
  if (from_env != nullptr && from_env[0] != '\0' &&
      strlen(from_env) <= kMaxStorageDirectoryLength) {
    return from_env;
  }
  return ".";
}

}  // namespace posix

namespace raw {

Status write_atomically(const char* name, const ByteSpan* parts, size_t part_count) {
  char final_path[posix::kPathCapacity];
  char temp_path[posix::kPathCapacity];
  if (!posix::build_path(name, "", final_path) || !posix::build_path(name, ".tmp", temp_path)) {
    return invalid_argument("storage directory + blob name make too long a path");
  }
  const int fd = open(temp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    return unavailable(
        "cannot create a blob file: does the storage directory exist and is it "
        "writable? (platform::posix::set_storage_directory, FEDSTAT_STORAGE_DIR)");
  }
  Status status;
  for (size_t i = 0; i < part_count && status.ok(); ++i) status = posix::write_all(fd, parts[i]);
  if (status.ok() && fsync(fd) != 0) status = unavailable("fsync of a blob file failed");
  if (close(fd) != 0 && status.ok()) status = unavailable("closing a blob file failed");
  if (status.ok() && rename(temp_path, final_path) != 0) {
    status = unavailable("renaming the new blob file over the old one failed");
  }
  if (!status.ok()) {
    unlink(temp_path);  // the old blob, if any, is untouched
    return status;
  }
  return posix::sync_directory();
}

Result<size_t> read_at(const char* name, size_t offset, MutableByteSpan out) {
  char path[posix::kPathCapacity];
  if (!posix::build_path(name, "", path)) return invalid_argument("blob path too long");
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return not_found("no blob with that name in the storage directory");
    return unavailable("cannot open a blob file for reading");
  }
  ssize_t n;
  do {
    n = pread(fd, out.data(), out.size(), static_cast<off_t>(offset));
  } while (n < 0 && errno == EINTR);
  close(fd);
  if (n < 0) return unavailable("reading a blob file failed");
  return static_cast<size_t>(n);
}

Result<size_t> size_of(const char* name) {
  char path[posix::kPathCapacity];
  if (!posix::build_path(name, "", path)) return invalid_argument("blob path too long");
  struct stat info;
  if (stat(path, &info) != 0) {
    if (errno == ENOENT) return not_found("no blob with that name in the storage directory");
    return unavailable("cannot stat a blob file");
  }
  if (!S_ISREG(info.st_mode)) return data_loss("a blob's path is not a regular file");
  // A file larger than size_t (a 64-bit off_t on a 32-bit device) must not wrap to a small size
  // that a forged length field could match: saturate, and load_blob refuses it as corrupt.
  return size_from_u64(static_cast<uint64_t>(info.st_size));
}

Status remove(const char* name) {
  char path[posix::kPathCapacity];
  if (!posix::build_path(name, "", path)) return invalid_argument("blob path too long");
  if (unlink(path) != 0) {
    if (errno == ENOENT) return not_found("no blob with that name in the storage directory");
    return unavailable("removing a blob file failed");
  }
  return posix::sync_directory();
}

}  // namespace raw
}  // namespace platform
}  // namespace fedstat
