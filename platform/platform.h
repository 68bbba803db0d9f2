// The narrow interface between the SDK and the machine it runs on: entropy, a monotonic clock,
// persistent named blobs, and a byte transport. Nothing else in sdk/ talks to an OS.
//
// Backends (exactly one is linked into libfedstat_sdk.a):
//   platform/posix      Linux, Android and other POSIX hosts: getrandom(2), clock_gettime(2),
//                       files replaced atomically with rename(2), TCP sockets.
//   platform/baremetal  microcontrollers: every service is a hook the application installs
//                       (baremetal/hooks.h); a semihosting set of hooks serves QEMU tests.
//
// Vocabulary: the interface uses sdk/base's leaf types (Status, Result, Span), which depend on
// nothing; no other SDK code is visible from here.
//
// Memory: the interface keeps no buffers; posix storage uses a stack buffer of
// kBlobIoChunkBytes; the baremetal backend keeps one table of hook pointers.
// Paper: none (infrastructure).
#ifndef FEDSTAT_PLATFORM_PLATFORM_H_
#define FEDSTAT_PLATFORM_PLATFORM_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace platform {

// ---- Entropy ----------------------------------------------------------------------------------
// Fills `out` with bytes from the platform's true random source (for seeding the CSPRNG).
// kUnavailable if the source failed or none is installed.
Status fill_entropy(MutableByteSpan out);

// ---- Monotonic clock --------------------------------------------------------------------------
// Microseconds since an arbitrary fixed origin; never decreases. 0 if no clock is available.
uint64_t monotonic_micros();

// ---- Persistent storage of named blobs ----------------------------------------------------------
// A name is 1..kMaxBlobNameLength characters from [A-Za-z0-9_.-], not starting with '.'.
// save_blob replaces the blob atomically: after a crash, load_blob returns either the old or the
// new contents, never a mix. Blobs are integrity-checked (blob_format.h): load_blob returns
// kDataLoss for a corrupt or truncated blob, kNotFound when there is none, and
// kResourceExhausted when `out` is smaller than the stored payload; on success it returns the
// payload size. On any error the contents of `out` are unspecified (it may hold a partial read).
constexpr size_t kMaxBlobNameLength = 64;
Status save_blob(const char* name, ByteSpan payload);
Result<size_t> load_blob(const char* name, MutableByteSpan out);
Status remove_blob(const char* name);  // kNotFound if absent

// ---- Transport --------------------------------------------------------------------------------
// A reliable, ordered byte stream to one peer (TCP on POSIX). `endpoint` is "host:port" on POSIX,
// host a numeric IPv4 address, an IPv6 address in brackets, or "localhost" (names are resolved by
// the application: resolvers allocate); its meaning on bare metal is the application's. A
// connection is a small integer handle.
struct Connection {
  int32_t handle = -1;
};
Result<Connection> transport_connect(const char* endpoint, uint32_t timeout_ms);
// Sends every byte or fails (kUnavailable when the peer is gone).
Status transport_send(Connection connection, ByteSpan bytes);
// Receives at least one and at most out.size() bytes; kDeadlineExceeded after timeout_ms without
// data; kUnavailable when the peer closed the stream.
Result<size_t> transport_receive(Connection connection, MutableByteSpan out, uint32_t timeout_ms);
void transport_close(Connection connection);

}  // namespace platform
}  // namespace fedstat

#endif  // FEDSTAT_PLATFORM_PLATFORM_H_
