// POSIX-only settings of the platform backend (Linux, Android, other POSIX hosts).
//
// Storage: blobs are files "<directory>/<name>" written to "<name>.tmp", fsync'ed and renamed over
// the old file (rename(2) is atomic), then the directory is fsync'ed. The directory is, in order
// of precedence: set_storage_directory(), the FEDSTAT_STORAGE_DIR environment variable, ".".
// Memory: the directory path is kept in a static buffer of kMaxStorageDirectoryLength + 1 bytes.
#ifndef FEDSTAT_PLATFORM_POSIX_POSIX_PLATFORM_H_
#define FEDSTAT_PLATFORM_POSIX_POSIX_PLATFORM_H_

#include <stddef.h>

#include "sdk/base/status.h"

namespace fedstat {
namespace platform {
namespace posix {

constexpr size_t kMaxStorageDirectoryLength = 255;

// The directory must exist. kInvalidArgument if the path is empty or too long.
Status set_storage_directory(const char* directory);
const char* storage_directory();

}  // namespace posix
}  // namespace platform
}  // namespace fedstat

#endif  // FEDSTAT_PLATFORM_POSIX_POSIX_PLATFORM_H_
