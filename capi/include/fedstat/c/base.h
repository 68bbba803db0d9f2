/** @file
 * fedstat C ABI, common part: status codes, memory alignment, version, storage directory.
 *
 * Every fallible function returns a fedstat_status (int32_t): FEDSTAT_OK or one of the codes
 * below, which mirror fedstat::StatusCode (sdk/base/status.h) value for value. A handle keeps the
 * message of the last call on it that failed (fedstat_<object>_last_error); functions without a
 * handle take an optional `const char** message`. Every message has static storage: it stays
 * valid for the life of the program and is never freed. A refused call writes none of its
 * outputs (a create's *out included); a create refused for its memory (NULL, misaligned, smaller
 * than the size function says) writes nothing into that memory either.
 *
 * @memory none here. Objects live in caller memory aligned to FEDSTAT_ALIGNMENT bytes, sized
 * by their fedstat_<object>_size function.
 * @paper none (infrastructure).
 */
#ifndef FEDSTAT_C_BASE_H_
#define FEDSTAT_C_BASE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The alignment every object's memory must have (a multiple of 8 bytes; misaligned memory is
 * FEDSTAT_INVALID_ARGUMENT). malloc, static uint64_t arrays and _Alignas(8) buffers qualify. */
#define FEDSTAT_ALIGNMENT 8

/** What every fallible call returns: FEDSTAT_OK or a fedstat_status_code. */
typedef int32_t fedstat_status;

/** The status codes (fedstat::StatusCode, value for value). */
enum fedstat_status_code {
  FEDSTAT_OK = 0,                  /**< success */
  FEDSTAT_INVALID_ARGUMENT = 1,    /**< a value the call can never accept (NULL, NaN, ...) */
  FEDSTAT_OUT_OF_RANGE = 2,        /**< a value outside the documented range */
  FEDSTAT_RESOURCE_EXHAUSTED = 3,  /**< a buffer, table or budget is full, or too small */
  FEDSTAT_FAILED_PRECONDITION = 4, /**< valid, but not in the object's current state */
  FEDSTAT_NOT_FOUND = 5,           /**< a named thing does not exist */
  FEDSTAT_ALREADY_EXISTS = 6,      /**< a thing that must be unique is already there */
  FEDSTAT_DATA_LOSS = 7,           /**< stored or received bytes are corrupt or truncated */
  FEDSTAT_UNAVAILABLE = 8,         /**< a platform service (entropy, storage, network) failed */
  FEDSTAT_DEADLINE_EXCEEDED = 9,   /**< a timeout expired */
  FEDSTAT_PERMISSION_DENIED = 10,  /**< authentication or authorisation failed */
  FEDSTAT_ABORTED = 11,            /**< a protocol round was abandoned */
  FEDSTAT_UNIMPLEMENTED = 12,      /**< not provided on this platform or build */
  FEDSTAT_INTERNAL = 13            /**< a library fedstat calls failed unexpectedly */
};

/** A stable lower-case name ("invalid_argument"); "unknown" for a value not listed above. */
const char* fedstat_status_name(fedstat_status status);
/** One sentence saying what the code means; the failed call's own message is more specific. */
const char* fedstat_status_message(fedstat_status status);

/** "major.minor.patch" of this library (semantic versioning; docs/package.md). */
const char* fedstat_version(void);

/** POSIX builds: the directory where named blobs (ledgers, histograms, the Client's round marker)
 * are stored; it must exist (default: $FEDSTAT_STORAGE_DIR, else ".").
 * @errors FEDSTAT_INVALID_ARGUMENT for NULL, "" or more than 255 characters. Bare-metal builds:
 * FEDSTAT_UNIMPLEMENTED (storage is the application's hooks, platform/baremetal/hooks.h). */
fedstat_status fedstat_set_storage_directory(const char* directory);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_BASE_H_ */
