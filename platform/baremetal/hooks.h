// The bare-metal platform backend: every platform service is a hook the application installs.
//
// A microcontroller application fills a Hooks table with its drivers (TRNG, timer, flash,
// radio/UART) and calls install_hooks() once at start-up, before any SDK call. A service whose
// hook is null answers with a kUnavailable status that names the missing hook, never a crash.
// semihosting_hooks() is a ready table for QEMU and debuggers: entropy from the host's
// /dev/urandom, the clock from SYS_CLOCK (10 ms resolution), blobs as host files (written to
// "<name>.tmp" and renamed over the old file), and no transport.
//
// Storage hooks have the contract of platform/raw_storage.h (atomic replacement is the hook's
// job, e.g. A/B flash slots); framing and CRC checks are done above them by the SDK.
//
// Memory: one static Hooks table (10 pointers). Paper: none.
#ifndef FEDSTAT_PLATFORM_BAREMETAL_HOOKS_H_
#define FEDSTAT_PLATFORM_BAREMETAL_HOOKS_H_

#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"

namespace fedstat {
namespace platform {
namespace baremetal {

struct Hooks {
  Status (*fill_entropy)(MutableByteSpan out) = nullptr;
  uint64_t (*monotonic_micros)() = nullptr;

  Status (*write_atomically)(const char* name, const ByteSpan* parts, size_t part_count) = nullptr;
  Result<size_t> (*read_at)(const char* name, size_t offset, MutableByteSpan out) = nullptr;
  Result<size_t> (*size_of)(const char* name) = nullptr;
  Status (*remove)(const char* name) = nullptr;

  Result<Connection> (*connect)(const char* endpoint, uint32_t timeout_ms) = nullptr;
  Status (*send)(Connection connection, ByteSpan bytes) = nullptr;
  Result<size_t> (*receive)(Connection connection, MutableByteSpan out,
                            uint32_t timeout_ms) = nullptr;
  void (*close)(Connection connection) = nullptr;
};

// Copies `hooks` into the SDK's table (replacing any earlier table).
void install_hooks(const Hooks& hooks);
const Hooks& installed_hooks();

// Hooks built on ARM semihosting (QEMU's -semihosting, or a debug probe).
Hooks semihosting_hooks();

}  // namespace baremetal
}  // namespace platform
}  // namespace fedstat

#endif  // FEDSTAT_PLATFORM_BAREMETAL_HOOKS_H_
