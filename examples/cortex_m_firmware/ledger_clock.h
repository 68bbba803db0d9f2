/// @file
/// The privacy ledger's clock on a board without a real-time clock: seconds that never go back,
/// across reboots too.
///
/// The ledger (sdk/privacy/budget_ledger.h) spends (ε, δ) within a rolling window of wall-clock
/// time. Without an RTC the firmware keeps its clock in the blob "ledger-clock" (8 bytes, LE), a
/// promise: the clock has not yet shown that value. At boot the clock resumes from it — or from
/// the ledger's own time + 1 (its latest spend) when that is later, or when the blob is missing
/// or damaged; kFirstBootSeconds on a device that has neither — and advances with the uptime.
/// Whenever the clock reaches the promised value, the blob is moved kPersistSeconds ahead before
/// the clock shows it. So the clock never goes back, even across a reboot, and time stands still
/// while the device is off: the budget window only counts time the device ran, so the budget
/// comes back later than real time would allow, never sooner. (The ledger also works at the
/// latest of the clock and its own time, so a failed blob write costs nothing but that.)
/// A board with an authenticated time source uses max(that time, this clock) instead — never
/// less than this clock, or spends recorded on it would expire early.
///
/// @memory 16 bytes of static state.
/// @paper none (application).
#ifndef FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_LEDGER_CLOCK_H_
#define FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_LEDGER_CLOCK_H_

#include <stdint.h>

#include "sdk/base/status.h"

namespace firmware {

/// The clock's value on a device's very first boot (2026-09-21).
constexpr uint64_t kFirstBootSeconds = 1790000000u;
/// How far ahead of the clock the blob is kept (flash writes against the seconds a reboot skips).
constexpr uint64_t kPersistSeconds = 60;

/// Resumes the clock (see the file description): from the blob, or `ledger_seconds` + 1 (the
/// ledger's ledger_time(), after its load()) when that is later or the blob is missing or
/// damaged; and persists its promise.
/// @errors the platform's blob errors when the promise cannot be written (kUnavailable, ...): the
/// clock is not started.
fedstat::Status start_ledger_clock(uint64_t ledger_seconds);
/// The clock, in seconds, for ClientConfig::wall_clock_seconds. Moves the stored promise ahead
/// when the clock reaches it; if that write fails the clock stays at the promise (it never
/// shows a value a reboot could show again) and the write is retried on the next call.
uint64_t ledger_clock_seconds();

}  // namespace firmware

#endif  // FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_LEDGER_CLOCK_H_
