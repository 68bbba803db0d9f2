/// @file
/// The bare-metal platform backend: every platform service is a hook the application installs.
///
/// A microcontroller application fills a Hooks table with its drivers (TRNG, timer, flash,
/// radio/UART) and calls install_hooks() once at start-up, before any SDK call. A service whose
/// hook is null answers with a kUnavailable status that names the missing hook, never a crash.
/// semihosting_hooks() is a ready table for QEMU and debuggers: entropy from the host's
/// /dev/urandom, the clock from SYS_CLOCK (10 ms resolution), blobs as host files (written to
/// "<name>.tmp" and renamed over the old file), and no transport.
///
/// Storage hooks have the contract of platform/raw_storage.h (atomic replacement is the hook's
/// job, e.g. A/B flash slots); framing and CRC checks are done above them by the SDK.
///
///
/// @memory one static Hooks table (10 pointers).
/// @paper none (infrastructure).
#ifndef FEDSTAT_PLATFORM_BAREMETAL_HOOKS_H_
#define FEDSTAT_PLATFORM_BAREMETAL_HOOKS_H_

#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"

namespace fedstat {
namespace platform {
namespace baremetal {

/// The application's drivers, one per platform service; a null hook makes that service answer
/// kUnavailable.
struct Hooks {
  /// platform::fill_entropy: fill `out` from a true random source (a TRNG).
  Status (*fill_entropy)(MutableByteSpan out) = nullptr;
  /// platform::monotonic_micros: microseconds since a fixed origin, never decreasing.
  uint64_t (*monotonic_micros)() = nullptr;

  /// Replace object `name` with the concatenation of `parts`, atomically (old or new contents
  /// after a crash, never a mix; e.g. A/B flash slots).
  Status (*write_atomically)(const char* name, const ByteSpan* parts, size_t part_count) = nullptr;
  /// Read up to out.size() bytes of `name` at `offset`; return the count (0 at the end, never
  /// more than out.size()); kNotFound if absent.
  Result<size_t> (*read_at)(const char* name, size_t offset, MutableByteSpan out) = nullptr;
  /// The size of object `name` in bytes; kNotFound if absent.
  Result<size_t> (*size_of)(const char* name) = nullptr;
  /// Delete object `name`; kNotFound if absent.
  Status (*remove)(const char* name) = nullptr;

  /// platform::transport_connect: open a byte stream to `endpoint` within `timeout_ms`.
  Result<Connection> (*connect)(const char* endpoint, uint32_t timeout_ms) = nullptr;
  /// platform::transport_send: send every byte or fail (kUnavailable when the peer is gone).
  Status (*send)(Connection connection, ByteSpan bytes) = nullptr;
  /// platform::transport_receive: receive 1..out.size() bytes; kDeadlineExceeded after
  /// `timeout_ms` without data, kUnavailable when the peer closed the stream.
  Result<size_t> (*receive)(Connection connection, MutableByteSpan out,
                            uint32_t timeout_ms) = nullptr;
  /// platform::transport_close: close the connection.
  void (*close)(Connection connection) = nullptr;
};

/// Copies `hooks` into the SDK's table (replacing any earlier table). Call once at start-up,
/// before any SDK call.
void install_hooks(const Hooks& hooks);
/// The table installed last (all null before install_hooks).
const Hooks& installed_hooks();

/// Hooks built on ARM semihosting (QEMU's -semihosting, or a debug probe): entropy from the
/// host's /dev/urandom, the clock from SYS_CLOCK, blobs as host files, and no transport.
Hooks semihosting_hooks();

}  // namespace baremetal
}  // namespace platform
}  // namespace fedstat

#endif  // FEDSTAT_PLATFORM_BAREMETAL_HOOKS_H_
