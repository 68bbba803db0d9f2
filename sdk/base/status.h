/// @file
/// Status: the outcome of every fallible SDK call (the SDK has no exceptions).
///
/// A Status is a code plus a message that says what went wrong and, where it can, what to do;
/// messages are string literals with static storage, so a Status is two words, never allocates,
/// and can be returned from anywhere. `[[nodiscard]]` makes ignoring one a compile error under
/// -Werror.
///
/// A build configured with `-DFEDSTAT_STATUS_MESSAGES=OFF` keeps every code but drops the
/// messages' text: each message() is then kMessageLeftOut, and the literals at the error sites
/// are never referenced, so they leave flash (12 KiB of the Cortex-M4 core, docs/footprint.md).
/// The codes, and so every decision an app takes on them, are the same in both builds.
///
/// @memory sizeof(Status) = one pointer + one byte (rounded to 2 pointers).
/// @paper none (infrastructure for every stage).
#ifndef FEDSTAT_SDK_BASE_STATUS_H_
#define FEDSTAT_SDK_BASE_STATUS_H_

#include <stdint.h>

#include "sdk/build_options.h"

namespace fedstat {

/// What kind of failure a Status reports (the C ABI's fedstat_status_code, value for value).
enum class StatusCode : uint8_t {
  kOk = 0,              ///< success
  kInvalidArgument,     ///< the caller passed a value the call can never accept
  kOutOfRange,          ///< a value lies outside the documented range
  kResourceExhausted,   ///< a buffer, arena, table or budget is full
  kFailedPrecondition,  ///< the call is valid, but not in the object's current state
  kNotFound,            ///< a named thing does not exist
  kAlreadyExists,       ///< a thing that must be unique is already there
  kDataLoss,            ///< stored or received bytes are corrupt or truncated
  kUnavailable,         ///< a platform service (entropy, storage, network) failed or is absent
  kDeadlineExceeded,    ///< a timeout expired
  kPermissionDenied,    ///< authentication or authorisation failed
  kAborted,             ///< a protocol round was abandoned
  kUnimplemented,       ///< not provided on this platform or build
  kInternal,            ///< a library the SDK calls failed in a way the SDK did not expect
};

/// A stable, lower-case name for a code ("invalid_argument", ...; "unknown" for other values).
const char* status_code_name(StatusCode code);

/// A code and a static message; the result of every fallible call. Two words, never allocates.
class [[nodiscard]] Status {
 public:
  /// The message of every error in a build without messages (FEDSTAT_STATUS_MESSAGES=OFF).
  static constexpr const char* kMessageLeftOut =
      "(message left out: SDK built with FEDSTAT_STATUS_MESSAGES=OFF)";

  /// Success (kOk, empty message).
  constexpr Status() : message_(""), code_(StatusCode::kOk) {}
#if FEDSTAT_STATUS_MESSAGES
  /// A status with `code`; `message` must be a string literal (or otherwise outlive every copy).
  constexpr Status(StatusCode code, const char* message) : message_(message), code_(code) {}
#else
  /// A status with `code`; this build keeps no message (kMessageLeftOut for every error).
  constexpr Status(StatusCode code, const char* /*message*/)
      : message_(code == StatusCode::kOk ? "" : kMessageLeftOut), code_(code) {}
#endif

  /// Success, spelled out at a return site.
  /// @errors none: it is kOk.
  static constexpr Status ok_status() {
    return Status();
  }

  /// True for kOk.
  constexpr bool ok() const {
    return code_ == StatusCode::kOk;
  }
  /// The code.
  constexpr StatusCode code() const {
    return code_;
  }
  /// What went wrong and, where it can, what to do (static storage; "" for kOk).
  constexpr const char* message() const {
    return message_;
  }

  /// Explicitly discards a status the caller has decided not to act on; greppable.
  constexpr void ignore() const {}

 private:
  const char* message_;
  StatusCode code_;
};

/// Statuses compare by code only (messages differ between call sites).
constexpr bool operator==(const Status& a, const Status& b) {
  return a.code() == b.code();
}
/// The negation of operator==.
constexpr bool operator!=(const Status& a, const Status& b) {
  return !(a == b);
}

// Shorthands for `Status(StatusCode::k..., message)` (they read well at the error site);
// `m` must be a string literal.
/// Status(StatusCode::kInvalidArgument, m). @errors none: it builds that status.
constexpr Status invalid_argument(const char* m) {
  return {StatusCode::kInvalidArgument, m};
}
/// Status(StatusCode::kOutOfRange, m). @errors none: it builds that status.
constexpr Status out_of_range(const char* m) {
  return {StatusCode::kOutOfRange, m};
}
/// Status(StatusCode::kResourceExhausted, m). @errors none: it builds that status.
constexpr Status resource_exhausted(const char* m) {
  return {StatusCode::kResourceExhausted, m};
}
/// Status(StatusCode::kFailedPrecondition, m). @errors none: it builds that status.
constexpr Status failed_precondition(const char* m) {
  return {StatusCode::kFailedPrecondition, m};
}
/// Status(StatusCode::kNotFound, m). @errors none: it builds that status.
constexpr Status not_found(const char* m) {
  return {StatusCode::kNotFound, m};
}
/// Status(StatusCode::kAlreadyExists, m). @errors none: it builds that status.
constexpr Status already_exists(const char* m) {
  return {StatusCode::kAlreadyExists, m};
}
/// Status(StatusCode::kDataLoss, m). @errors none: it builds that status.
constexpr Status data_loss(const char* m) {
  return {StatusCode::kDataLoss, m};
}
/// Status(StatusCode::kUnavailable, m). @errors none: it builds that status.
constexpr Status unavailable(const char* m) {
  return {StatusCode::kUnavailable, m};
}
/// Status(StatusCode::kDeadlineExceeded, m). @errors none: it builds that status.
constexpr Status deadline_exceeded(const char* m) {
  return {StatusCode::kDeadlineExceeded, m};
}
/// Status(StatusCode::kPermissionDenied, m). @errors none: it builds that status.
constexpr Status permission_denied(const char* m) {
  return {StatusCode::kPermissionDenied, m};
}
/// Status(StatusCode::kAborted, m). @errors none: it builds that status.
constexpr Status aborted(const char* m) {
  return {StatusCode::kAborted, m};
}
/// Status(StatusCode::kUnimplemented, m). @errors none: it builds that status.
constexpr Status unimplemented(const char* m) {
  return {StatusCode::kUnimplemented, m};
}
/// Status(StatusCode::kInternal, m). @errors none: it builds that status.
constexpr Status internal_error(const char* m) {
  return {StatusCode::kInternal, m};
}

}  // namespace fedstat

/// Returns the status of `expr` from the enclosing function if it is an error.
#define FEDSTAT_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    const ::fedstat::Status fedstat_status_ = (expr);  \
    if (!fedstat_status_.ok()) return fedstat_status_; \
  } while (0)

#endif  // FEDSTAT_SDK_BASE_STATUS_H_
