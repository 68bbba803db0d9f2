// The privacy ledger's persisted clock (ledger_clock.h).
#include "examples/cortex_m_firmware/ledger_clock.h"

#include "platform/platform.h"

namespace firmware {
namespace {

constexpr char kClockBlob[] = "ledger-clock";
uint64_t g_boot_seconds = 0;  // the clock's value at boot
uint64_t g_promised = 0;      // the stored value: the clock shows less than this

fedstat::Status promise(uint64_t seconds) {
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(seconds >> (8 * i));
  const fedstat::Status saved =
      fedstat::platform::save_blob(kClockBlob, fedstat::ByteSpan(bytes, sizeof(bytes)));
  if (saved.ok()) g_promised = seconds;
  return saved;
}

}  // namespace

fedstat::Status start_ledger_clock(uint64_t ledger_seconds) {
  uint64_t start = ledger_seconds == 0 ? kFirstBootSeconds : ledger_seconds + 1;
  uint8_t bytes[8];
  const fedstat::Result<size_t> loaded =
      fedstat::platform::load_blob(kClockBlob, fedstat::MutableByteSpan(bytes, sizeof(bytes)));
  if (loaded.ok() && loaded.value() == sizeof(bytes)) {
    uint64_t stored = 0;
    for (int i = 7; i >= 0; --i) stored = (stored << 8) | bytes[i];
    if (stored > start) start = stored;
  }
  // Otherwise (no blob, a damaged or short one): the ledger's time, which no spend exceeds.
  g_boot_seconds = start;
  return promise(start + kPersistSeconds);
}

uint64_t ledger_clock_seconds() {
  uint64_t now = g_boot_seconds + fedstat::platform::monotonic_micros() / 1000000u;
  if (now >= g_promised && !promise(now + kPersistSeconds).ok()) {
    now = g_promised - 1;  // not past what a reboot would resume from
  }
  return now;
}

}  // namespace firmware
