/// @file
/// The narrow interface between the SDK and the machine it runs on: entropy, a monotonic clock,
/// persistent named blobs, and a byte transport. Nothing else in sdk/ talks to an OS.
///
/// Backends (exactly one is linked into libfedstat_sdk.a):
///   platform/posix      Linux, Android and other POSIX hosts: getrandom(2), clock_gettime(2),
///                       files replaced atomically with rename(2), TCP sockets.
///   platform/baremetal  microcontrollers: every service is a hook the application installs
///                       (baremetal/hooks.h); a semihosting set of hooks serves QEMU tests.
///
/// Vocabulary: the interface uses sdk/base's leaf types (Status, Result, Span), which depend on
/// nothing; no other SDK code is visible from here.
///
///
/// @memory the interface keeps no buffers; posix storage uses a stack buffer of
/// kBlobIoChunkBytes; the baremetal backend keeps one table of hook pointers.
/// @paper none (infrastructure).
#ifndef FEDSTAT_PLATFORM_PLATFORM_H_
#define FEDSTAT_PLATFORM_PLATFORM_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace platform {

// ---- Entropy ----------------------------------------------------------------------------------
/// Fills `out` with bytes from the platform's true random source (for seeding the CSPRNG).
/// @errors kUnavailable: the source failed (POSIX: getrandom(2)) or none is installed (bare
/// metal: no Hooks::fill_entropy); on bare metal otherwise whatever the hook returns.
Status fill_entropy(MutableByteSpan out);

// ---- Monotonic clock --------------------------------------------------------------------------
/// Microseconds since an arbitrary fixed origin; never decreases. 0 if no clock is available.
uint64_t monotonic_micros();

// ---- Persistent storage of named blobs ----------------------------------------------------------
// A name is 1..kMaxBlobNameLength characters from [A-Za-z0-9_.-], not starting with '.'.
// save_blob replaces the blob atomically: after a crash, load_blob returns either the old or the
// new contents, never a mix. Blobs are integrity-checked (blob_format.h): load_blob returns
// kDataLoss for a corrupt or truncated blob, kNotFound when there is none, and
// kResourceExhausted when `out` is smaller than the stored payload; on success it returns the
// payload size. On any error the contents of `out` are unspecified (it may hold a partial read).
/// The longest blob name: names are 1..kMaxBlobNameLength characters from [A-Za-z0-9_.-], not
/// starting with '.'.
constexpr size_t kMaxBlobNameLength = 64;
/// Replaces the blob `name` with `payload` atomically: after a crash, load_blob returns either
/// the old or the new contents, never a mix. The payload is stored framed with a CRC-32
/// (blob_format.h).
/// @errors kInvalidArgument: `name` is null, empty, too long, starts with '.' or holds another
/// character; the payload is larger than kMaxBlobPayloadBytes; (POSIX) the storage directory plus
/// the name make too long a path. kUnavailable: the write, sync or rename failed (POSIX: disk
/// full, no permission) or, on bare metal, no storage hook is installed; otherwise the hook's
/// status.
Status save_blob(const char* name, ByteSpan payload);
/// Reads the payload of blob `name` into `out` and returns its size. On any error the contents
/// of `out` are unspecified (it may hold a partial read).
/// @errors kInvalidArgument: a name save_blob would refuse, or (POSIX) too long a path.
/// kNotFound: there is no such blob. kDataLoss: the blob is corrupt or truncated (wrong magic,
/// length or CRC-32; POSIX: not a regular file). kResourceExhausted: `out` is smaller than the
/// stored payload. kUnavailable: the storage could not be read (or, on bare metal, no storage hook
/// is installed). kInternal: a backend's read_at returned more bytes than asked for.
Result<size_t> load_blob(const char* name, MutableByteSpan out);
/// Deletes blob `name`.
/// @errors kNotFound: there is no such blob. kInvalidArgument: a name save_blob would refuse, or
/// (POSIX) too long a path. kUnavailable: the removal failed (or, on bare metal, no storage hook
/// is installed); otherwise the hook's status.
Status remove_blob(const char* name);

// ---- Transport --------------------------------------------------------------------------------
// A reliable, ordered byte stream to one peer (TCP on POSIX). `endpoint` is "host:port" on POSIX,
// host a numeric IPv4 address, an IPv6 address in brackets, or "localhost" (names are resolved by
// the application: resolvers allocate); its meaning on bare metal is the application's. A
// connection is a small integer handle.
/// A transport connection: a small integer handle.
struct Connection {
  int32_t handle = -1;  ///< the backend's handle (POSIX: a socket); -1 for none
};
/// Opens a reliable, ordered byte stream to `endpoint` within `timeout_ms`. On POSIX `endpoint`
/// is "host:port", host a numeric IPv4 address, an IPv6 address in brackets, or "localhost"
/// (names are resolved by the application: resolvers allocate); on bare metal its meaning is
/// the application's.
/// @errors kInvalidArgument: (POSIX) `endpoint` is null or not "host:port" with a numeric
/// address or localhost and a port 1–65535. kUnavailable: the connection was refused or is
/// unreachable, socket(2) or poll(2) failed, or (bare metal) no transport hook is installed.
/// kDeadlineExceeded: (POSIX) no connection within `timeout_ms`. On bare metal otherwise the
/// hook's status.
Result<Connection> transport_connect(const char* endpoint, uint32_t timeout_ms);
/// Sends every byte or fails.
/// @errors kUnavailable: the peer is gone or the connection broke (or, on bare metal, no
/// transport hook is installed). kFailedPrecondition: (POSIX) the connection is closed. On bare
/// metal otherwise the hook's status.
Status transport_send(Connection connection, ByteSpan bytes);
/// Receives at least one and at most out.size() bytes and returns how many.
/// @errors kDeadlineExceeded: no data within `timeout_ms`. kUnavailable: the peer closed the
/// stream or it broke (or, on bare metal, no transport hook is installed). kFailedPrecondition:
/// (POSIX) the connection is closed. kInvalidArgument: (POSIX) `out` is empty. On bare metal
/// otherwise the hook's status.
Result<size_t> transport_receive(Connection connection, MutableByteSpan out, uint32_t timeout_ms);
/// Closes the connection (on bare metal: nothing without a close hook).
void transport_close(Connection connection);

}  // namespace platform
}  // namespace fedstat

#endif  // FEDSTAT_PLATFORM_PLATFORM_H_
