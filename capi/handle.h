// Internal to the C ABI (never installed): what a handle is and the checks every call makes.
//
// A handle is a C++ object placed at the start of the caller's memory (placement new, no heap),
// moved up to its own alignment when that is more than FEDSTAT_ALIGNMENT (the SDK's AES and DRBG
// states are 16-byte aligned; the size functions count those bytes), followed by the arrays its
// C++ object views (counters, tables, spends) at handle_bytes<T>() from the memory's start. Each
// starts with a magic word, so a NULL pointer, a handle of another type or memory that was never
// created is refused (FEDSTAT_INVALID_ARGUMENT) instead of used. A failed call records its status's
// message (static storage) in the handle it was made on.
//
// Memory: handle_bytes<T>() = sizeof(T) rounded up to 8, plus alignof(T) − 8 when alignof(T) > 8.
// Paper: none.
#ifndef FEDSTAT_CAPI_HANDLE_H_
#define FEDSTAT_CAPI_HANDLE_H_

#include <stddef.h>
#include <stdint.h>

#include "fedstat/fedstat.h"
#include "platform/platform.h"
#include "sdk/base/checked_size.h"
#include "sdk/base/status.h"

namespace fedstat {
namespace capi {

static_assert(FEDSTAT_ALIGNMENT == 8, "handles and their arrays are laid out in 8-byte steps");

// The magic words ("FHST", "FSKT", "FRND", "FLDG", "FCLI", "FTLS" read as little-endian).
constexpr uint32_t kHistogramMagic = 0x54534846u;
constexpr uint32_t kSketchMagic = 0x544B5346u;
constexpr uint32_t kRandomMagic = 0x444E5246u;
constexpr uint32_t kLedgerMagic = 0x47444C46u;
constexpr uint32_t kClientMagic = 0x494C4346u;
constexpr uint32_t kTlsChannelMagic = 0x534C5446u;

// Blob names as the platform takes them (platform.h kMaxBlobNameLength), with the NUL.
constexpr size_t kNameBytes = platform::kMaxBlobNameLength + 1;

// The length of `name` when it is 1..kMaxBlobNameLength characters, else 0 (a longer name is
// refused after kNameBytes characters, unread beyond).
inline size_t name_length(const char* name) {
  size_t n = 0;
  while (n < kNameBytes && name[n] != '\0') ++n;
  return n < kNameBytes ? n : 0;
}

inline fedstat_status code_of(const Status& status) {
  return static_cast<fedstat_status>(status.code());
}

// n rounded up to a multiple of 8; kSizeOverflow stays kSizeOverflow.
constexpr size_t round_up8(size_t n) {
  return size_add(n, 7) == kSizeOverflow ? kSizeOverflow : size_add(n, 7) / 8 * 8;
}

// The caller's memory is FEDSTAT_ALIGNMENT-aligned; a handle aligned more strictly starts up to
// alignof(Handle) − FEDSTAT_ALIGNMENT bytes into it.
template <typename Handle>
constexpr size_t handle_slack() {
  return alignof(Handle) > FEDSTAT_ALIGNMENT ? alignof(Handle) - FEDSTAT_ALIGNMENT : 0;
}
template <typename Handle>
constexpr size_t handle_bytes() {
  return handle_slack<Handle>() + round_up8(sizeof(Handle));
}
// Where the handle is built in `memory` (FEDSTAT_ALIGNMENT-aligned).
template <typename Handle>
void* handle_address(void* memory) {
  const uintptr_t a = alignof(Handle);
  return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(memory) + a - 1) & ~(a - 1));
}

// kSizeOverflow (a size past SIZE_MAX) as the ABI's status: RESOURCE_EXHAUSTED.
inline fedstat_status size_status(size_t bytes, size_t* out) {
  if (out == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  if (bytes == kSizeOverflow) return FEDSTAT_RESOURCE_EXHAUSTED;
  *out = bytes;
  return FEDSTAT_OK;
}

// The checks of every create call: memory present, aligned, large enough; an out pointer.
inline fedstat_status check_memory(const void* memory, size_t memory_bytes, size_t needed,
                                   const void* out) {
  if (memory == nullptr || out == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  if (reinterpret_cast<uintptr_t>(memory) % FEDSTAT_ALIGNMENT != 0) return FEDSTAT_INVALID_ARGUMENT;
  if (needed == kSizeOverflow || memory_bytes < needed) return FEDSTAT_RESOURCE_EXHAUSTED;
  return FEDSTAT_OK;
}

// The caller's bytes after the handle (8-byte aligned).
template <typename Handle>
uint8_t* after_handle(void* memory) {
  return static_cast<uint8_t*>(memory) + handle_bytes<Handle>();
}

// A live handle of this type (not NULL, its magic word in place).
template <typename Handle>
bool valid(const Handle* handle, uint32_t magic) {
  return handle != nullptr && handle->magic == magic;
}

// Returns `status`'s code, recording its message in the handle when it is an error.
template <typename Handle>
fedstat_status finish(Handle* handle, const Status& status) {
  if (!status.ok()) handle->last_error = status.message();
  return code_of(status);
}

// For calls without a handle: the message goes to *message when asked for.
inline fedstat_status finish_free(const Status& status, const char** message) {
  if (!status.ok() && message != nullptr) *message = status.message();
  return code_of(status);
}

// From a C entry point without a handle: returns finish_free(status of `expr`, message) when it
// is an error.
#define FEDSTAT_RETURN_IF_ERROR_C(expr, message)                                                  \
  do {                                                                                            \
    const ::fedstat::Status fedstat_c_status_ = (expr);                                           \
    if (!fedstat_c_status_.ok()) return ::fedstat::capi::finish_free(fedstat_c_status_, message); \
  } while (0)

// The message of a NULL or foreign handle, for last_error calls.
constexpr const char* kNotAHandle = "not a handle of this type (NULL, destroyed or never created)";

// The status the app's channel callback returned, as an SDK Status (its message names the code).
Status callback_status(fedstat_status code);

}  // namespace capi
}  // namespace fedstat

#endif  // FEDSTAT_CAPI_HANDLE_H_
