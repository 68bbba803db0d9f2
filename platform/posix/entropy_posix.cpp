// Entropy and clock on POSIX: getrandom(2) and clock_gettime(kMonotonicClock): CLOCK_BOOTTIME on
// Linux, which keeps counting while the system is suspended (CLOCK_MONOTONIC stops), so an age
// measured on it — a saved TLS session's (sdk/tls/tls_channel.h), a deadline — is real time even
// across a phone's sleep; CLOCK_MONOTONIC where there is no CLOCK_BOOTTIME.
#include <errno.h>
#include <sys/random.h>
#include <time.h>

#include "platform/platform.h"
#include "platform/posix/posix_platform.h"

namespace fedstat {
namespace platform {

Status fill_entropy(MutableByteSpan out) {
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t got = getrandom(out.data() + done, out.size() - done, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return unavailable("getrandom(2) failed: the kernel's entropy source is not available");
    }
    done += static_cast<size_t>(got);
  }
  return Status();
}

uint64_t monotonic_micros() {
  struct timespec now;
  // A kernel or sandbox that refuses CLOCK_BOOTTIME (EINVAL) gets CLOCK_MONOTONIC, every time.
  if (clock_gettime(posix::kMonotonicClock, &now) != 0 &&
      clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
    return 0;
  }
  return static_cast<uint64_t>(now.tv_sec) * 1000000u + static_cast<uint64_t>(now.tv_nsec) / 1000u;
}

}  // namespace platform
}  // namespace fedstat
