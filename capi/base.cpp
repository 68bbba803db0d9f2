// The C ABI's common part (c/base.h): status names and meanings, the version, the storage
// directory, and the app's callback codes as SDK statuses.
#include "capi/handle.h"
#include "sdk/version.h"
#if FEDSTAT_PLATFORM_POSIX
#include "platform/posix/posix_platform.h"
#endif

namespace fedstat {
namespace capi {
namespace {

// The C codes are fedstat::StatusCode's values, one for one.
static_assert(FEDSTAT_OK == static_cast<int>(StatusCode::kOk), "status codes drifted");
static_assert(FEDSTAT_INVALID_ARGUMENT == static_cast<int>(StatusCode::kInvalidArgument), "");
static_assert(FEDSTAT_OUT_OF_RANGE == static_cast<int>(StatusCode::kOutOfRange), "");
static_assert(FEDSTAT_RESOURCE_EXHAUSTED == static_cast<int>(StatusCode::kResourceExhausted), "");
static_assert(FEDSTAT_FAILED_PRECONDITION == static_cast<int>(StatusCode::kFailedPrecondition), "");
static_assert(FEDSTAT_NOT_FOUND == static_cast<int>(StatusCode::kNotFound), "");
static_assert(FEDSTAT_ALREADY_EXISTS == static_cast<int>(StatusCode::kAlreadyExists), "");
static_assert(FEDSTAT_DATA_LOSS == static_cast<int>(StatusCode::kDataLoss), "");
static_assert(FEDSTAT_UNAVAILABLE == static_cast<int>(StatusCode::kUnavailable), "");
static_assert(FEDSTAT_DEADLINE_EXCEEDED == static_cast<int>(StatusCode::kDeadlineExceeded), "");
static_assert(FEDSTAT_PERMISSION_DENIED == static_cast<int>(StatusCode::kPermissionDenied), "");
static_assert(FEDSTAT_ABORTED == static_cast<int>(StatusCode::kAborted), "");
static_assert(FEDSTAT_UNIMPLEMENTED == static_cast<int>(StatusCode::kUnimplemented), "");
static_assert(FEDSTAT_INTERNAL == static_cast<int>(StatusCode::kInternal), "");

constexpr fedstat_status kLastCode = FEDSTAT_INTERNAL;

bool known(fedstat_status status) {
  return status >= FEDSTAT_OK && status <= kLastCode;
}

// What each code means (sdk/base/status.h's comments).
constexpr const char* kMeanings[] = {
    "ok",
    "the caller passed a value the call can never accept",
    "a value lies outside the documented range",
    "a buffer, arena, table or budget is full, or the memory given is too small",
    "the call is valid, but not in the object's current state",
    "a named thing does not exist",
    "a thing that must be unique is already there",
    "stored or received bytes are corrupt or truncated",
    "a platform service (entropy, storage, network) failed or is absent",
    "a timeout expired",
    "authentication or authorisation failed",
    "a protocol round was abandoned",
    "not provided on this platform or build",
    "a library the SDK calls failed in a way the SDK did not expect",
};
static_assert(sizeof(kMeanings) / sizeof(kMeanings[0]) == kLastCode + 1, "one meaning per code");

// The message an app's callback error carries through the SDK (one literal per code).
constexpr const char* kCallbackMessages[] = {
    "ok",
    "the app's callback returned invalid_argument",
    "the app's callback returned out_of_range",
    "the app's callback returned resource_exhausted",
    "the app's callback returned failed_precondition",
    "the app's callback returned not_found",
    "the app's callback returned already_exists",
    "the app's callback returned data_loss",
    "the app's callback returned unavailable (the peer is gone)",
    "the app's callback returned deadline_exceeded (nothing arrived in time)",
    "the app's callback returned permission_denied",
    "the app's callback returned aborted",
    "the app's callback returned unimplemented",
    "the app's callback returned internal",
};
static_assert(sizeof(kCallbackMessages) / sizeof(kCallbackMessages[0]) == kLastCode + 1,
              "one message per code");

}  // namespace

Status callback_status(fedstat_status code) {
  if (code == FEDSTAT_OK) return Status();
  if (!known(code))
    return internal_error("the app's callback returned a code fedstat does not know");
  return Status(static_cast<StatusCode>(code), kCallbackMessages[code]);
}

}  // namespace capi
}  // namespace fedstat

extern "C" {

const char* fedstat_status_name(fedstat_status status) {
  using fedstat::capi::known;
  return known(status) ? fedstat::status_code_name(static_cast<fedstat::StatusCode>(status))
                       : "unknown";
}

const char* fedstat_status_message(fedstat_status status) {
  using fedstat::capi::known;
  return known(status) ? fedstat::capi::kMeanings[status] : "not a fedstat status code";
}

const char* fedstat_version(void) {
  return FEDSTAT_VERSION_STRING;
}

fedstat_status fedstat_set_storage_directory(const char* directory) {
#if FEDSTAT_PLATFORM_POSIX
  if (directory == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  return fedstat::capi::code_of(fedstat::platform::posix::set_storage_directory(directory));
#else
  (void)directory;
  return FEDSTAT_UNIMPLEMENTED;
#endif
}

}  // extern "C"
