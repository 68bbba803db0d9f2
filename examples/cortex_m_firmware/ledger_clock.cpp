// The privacy ledger's persisted clock (ledger_clock.h).
#include "examples/cortex_m_firmware/ledger_clock.h"

#include "platform/platform.h"

namespace firmware {
namespace {

constexpr char kClockBlob[] = "ledger-clock";
uint64_t g_boot_seconds = 0;    // the clock's value at boot
uint64_t g_stored_seconds = 0;  // the value last persisted

fedstat::Status persist(uint64_t seconds) {
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(seconds >> (8 * i));
  const fedstat::Status saved =
      fedstat::platform::save_blob(kClockBlob, fedstat::ByteSpan(bytes, sizeof(bytes)));
  if (saved.ok()) g_stored_seconds = seconds;
  return saved;
}

}  // namespace

fedstat::Status start_ledger_clock() {
  uint8_t bytes[8];
  const fedstat::Result<size_t> loaded =
      fedstat::platform::load_blob(kClockBlob, fedstat::MutableByteSpan(bytes, sizeof(bytes)));
  if (loaded.ok()) {
    if (loaded.value() != sizeof(bytes)) {
      return fedstat::data_loss("ledger clock: the stored clock is not 8 bytes");
    }
    uint64_t seconds = 0;
    for (int i = 7; i >= 0; --i) seconds = (seconds << 8) | bytes[i];
    g_boot_seconds = seconds;
  } else if (loaded.status().code() == fedstat::StatusCode::kNotFound) {
    g_boot_seconds = kFirstBootSeconds;
  } else {
    return loaded.status();
  }
  // Persisted at once, one step ahead: a reboot before the next persist resumes no earlier than
  // this boot began, and never repeats a second twice over.
  return persist(g_boot_seconds + 1);
}

uint64_t ledger_clock_seconds() {
  const uint64_t now = g_boot_seconds + fedstat::platform::monotonic_micros() / 1000000u;
  if (now >= g_stored_seconds + kPersistSeconds) (void)persist(now);
  return now;
}

}  // namespace firmware
