/// @file
/// POSIX-only settings of the platform backend (Linux, Android, other POSIX hosts).
///
/// Storage: blobs are files "<directory>/<name>" written to "<name>.tmp", fsync'ed and renamed over
/// the old file (rename(2) is atomic), then the directory is fsync'ed. The directory is, in order
/// of precedence: set_storage_directory(), the FEDSTAT_STORAGE_DIR environment variable, ".".
///
/// @memory the directory path is kept in a static buffer of kMaxStorageDirectoryLength + 1
/// bytes.
/// @paper none (infrastructure).
#ifndef FEDSTAT_PLATFORM_POSIX_POSIX_PLATFORM_H_
#define FEDSTAT_PLATFORM_POSIX_POSIX_PLATFORM_H_

#include <stddef.h>
#include <time.h>

#include "sdk/base/status.h"

namespace fedstat {
namespace platform {
namespace posix {

/// The clock monotonic_micros() reads: CLOCK_BOOTTIME where there is one (Linux, Android), which
/// keeps counting while the system is suspended, so a maximum age (a saved TLS session's,
/// sdk/tls/tls_channel.h) is real time across a phone's sleep; CLOCK_MONOTONIC, which stops then,
/// elsewhere.
#ifdef CLOCK_BOOTTIME
constexpr clockid_t kMonotonicClock = CLOCK_BOOTTIME;
#else
constexpr clockid_t kMonotonicClock = CLOCK_MONOTONIC;
#endif

/// The longest storage directory path set_storage_directory accepts (and FEDSTAT_STORAGE_DIR is
/// used with).
constexpr size_t kMaxStorageDirectoryLength = 255;

/// Sets the directory blobs are stored in (copied; it takes precedence over FEDSTAT_STORAGE_DIR).
/// The directory must exist (not checked here: saves fail with kUnavailable otherwise).
/// @errors kInvalidArgument: `directory` is null, empty or longer than
/// kMaxStorageDirectoryLength; the setting is then unchanged.
Status set_storage_directory(const char* directory);
/// The directory in use: set_storage_directory()'s, else FEDSTAT_STORAGE_DIR (if non-empty and
/// not too long), else ".".
const char* storage_directory();

}  // namespace posix
}  // namespace platform
}  // namespace fedstat

#endif  // FEDSTAT_PLATFORM_POSIX_POSIX_PLATFORM_H_
