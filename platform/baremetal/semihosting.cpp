// ARM semihosting hooks (QEMU -semihosting, debug probes). Every call traps to the host with
// `bkpt 0xAB` (Thumb, M-profile); operation numbers are from ARM's "Semihosting for AArch32 and
// AArch64" specification.
#include <string.h>

#include "platform/baremetal/hooks.h"

namespace fedstat {
namespace platform {
namespace baremetal {
namespace {

#if defined(__arm__)

enum Op : int {
  kSysOpen = 0x01,
  kSysClose = 0x02,
  kSysWrite = 0x05,
  kSysRead = 0x06,
  kSysSeek = 0x0A,
  kSysFlen = 0x0C,
  kSysRemove = 0x0E,
  kSysRename = 0x0F,
  kSysClock = 0x10,
};
enum OpenMode : int { kReadBinary = 1, kWriteBinary = 5 };

int call(int op, const void* arguments) {
  int result;
  __asm__ volatile(
      "mov r0, %1\n"
      "mov r1, %2\n"
      "bkpt 0xAB\n"
      "mov %0, r0\n"
      : "=r"(result)
      : "r"(op), "r"(arguments)
      : "r0", "r1", "memory");
  return result;
}

int open_file(const char* path, int mode) {
  const uintptr_t args[3] = {reinterpret_cast<uintptr_t>(path), static_cast<uintptr_t>(mode),
                             static_cast<uintptr_t>(strlen(path))};
  return call(kSysOpen, args);
}
void close_file(int handle) {
  const uintptr_t args[1] = {static_cast<uintptr_t>(handle)};
  (void)call(kSysClose, args);
}
// Returns the number of bytes NOT transferred (0 = all), as the host reports it.
int transfer(int op, int handle, const void* buffer, size_t length) {
  const uintptr_t args[3] = {static_cast<uintptr_t>(handle), reinterpret_cast<uintptr_t>(buffer),
                             static_cast<uintptr_t>(length)};
  return call(op, args);
}

constexpr size_t kPathCapacity = kMaxBlobNameLength + 8;
void temp_path(const char* name, char (&out)[kPathCapacity]) {
  const size_t n = strlen(name);  // names are validated (<= 64 chars) before reaching a hook
  memcpy(out, name, n);
  memcpy(out + n, ".tmp", 5);
}

Status fill_entropy(MutableByteSpan out) {
  const int fd = open_file("/dev/urandom", kReadBinary);
  if (fd < 0) return unavailable("semihosting: the host's /dev/urandom could not be opened");
  const int missing = transfer(kSysRead, fd, out.data(), out.size());
  close_file(fd);
  if (missing != 0) return unavailable("semihosting: short read from the host's /dev/urandom");
  return Status();
}

uint64_t monotonic_micros() {
  const int centiseconds = call(kSysClock, nullptr);
  return centiseconds < 0 ? 0 : static_cast<uint64_t>(centiseconds) * 10000u;
}

Status write_atomically(const char* name, const ByteSpan* parts, size_t part_count) {
  char temp[kPathCapacity];
  temp_path(name, temp);
  const int fd = open_file(temp, kWriteBinary);
  if (fd < 0) return unavailable("semihosting: cannot create a blob file on the host");
  bool ok = true;
  for (size_t i = 0; i < part_count && ok; ++i) {
    if (!parts[i].empty()) ok = transfer(kSysWrite, fd, parts[i].data(), parts[i].size()) == 0;
  }
  close_file(fd);
  if (ok) {
    const uintptr_t args[4] = {reinterpret_cast<uintptr_t>(temp), strlen(temp),
                               reinterpret_cast<uintptr_t>(name), strlen(name)};
    ok = call(kSysRename, args) == 0;
  }
  if (!ok) {
    const uintptr_t args[2] = {reinterpret_cast<uintptr_t>(temp), strlen(temp)};
    (void)call(kSysRemove, args);
    return unavailable("semihosting: writing or renaming a blob file on the host failed");
  }
  return Status();
}

Result<size_t> read_at(const char* name, size_t offset, MutableByteSpan out) {
  const int fd = open_file(name, kReadBinary);
  if (fd < 0) return not_found("semihosting: no blob file with that name on the host");
  const uintptr_t flen_args[1] = {static_cast<uintptr_t>(fd)};
  const int length = call(kSysFlen, flen_args);
  size_t wanted = 0;
  if (length >= 0 && offset < static_cast<size_t>(length)) {
    wanted = static_cast<size_t>(length) - offset;
    if (wanted > out.size()) wanted = out.size();
  }
  int missing = 0;
  if (wanted > 0) {
    const uintptr_t seek_args[2] = {static_cast<uintptr_t>(fd), offset};
    missing = call(kSysSeek, seek_args) == 0 ? transfer(kSysRead, fd, out.data(), wanted)
                                             : static_cast<int>(wanted);
  }
  close_file(fd);
  if (missing < 0 || static_cast<size_t>(missing) > wanted) {
    return unavailable("semihosting: reading a blob file on the host failed");
  }
  return wanted - static_cast<size_t>(missing);
}

Result<size_t> size_of(const char* name) {
  const int fd = open_file(name, kReadBinary);
  if (fd < 0) return not_found("semihosting: no blob file with that name on the host");
  const uintptr_t args[1] = {static_cast<uintptr_t>(fd)};
  const int length = call(kSysFlen, args);
  close_file(fd);
  if (length < 0) return unavailable("semihosting: cannot read a blob file's length");
  return static_cast<size_t>(length);
}

Status remove(const char* name) {
  const uintptr_t args[2] = {reinterpret_cast<uintptr_t>(name), strlen(name)};
  if (call(kSysRemove, args) != 0) return not_found("semihosting: no blob file to remove");
  return Status();
}

#endif  // __arm__

}  // namespace

Hooks semihosting_hooks() {
  Hooks hooks;
#if defined(__arm__)
  hooks.fill_entropy = fill_entropy;
  hooks.monotonic_micros = monotonic_micros;
  hooks.write_atomically = write_atomically;
  hooks.read_at = read_at;
  hooks.size_of = size_of;
  hooks.remove = remove;
#endif  // other architectures have no semihosting: every hook stays null (kUnavailable)
  return hooks;
}

}  // namespace baremetal
}  // namespace platform
}  // namespace fedstat
