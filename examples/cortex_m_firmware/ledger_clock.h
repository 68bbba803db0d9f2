/// @file
/// The privacy ledger's clock on a board without a real-time clock: seconds that never go back,
/// across reboots too.
///
/// The ledger (sdk/privacy/budget_ledger.h) spends (ε, δ) within a rolling window of wall-clock
/// time. Without an RTC the firmware persists its clock in the blob "ledger-clock" (8 bytes, LE):
/// at boot the clock resumes from the persisted value (kFirstBootSeconds on the very first boot)
/// and advances with the uptime; it is persisted again whenever it has moved kPersistSeconds past
/// the stored value. So time stands still while the device is off, and the window only counts
/// time the device ran: the budget comes back later than real time would allow, never sooner
/// (the ledger itself also never lets time go back below its latest spend). A board with an
/// authenticated time source should use max(that time, this clock) instead — never less than
/// this clock, or spends recorded on it would expire early.
///
/// @memory 16 bytes of static state.
/// @paper none (application).
#ifndef FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_LEDGER_CLOCK_H_
#define FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_LEDGER_CLOCK_H_

#include <stdint.h>

#include "sdk/base/status.h"

namespace firmware {

/// The clock's value on the very first boot (2026-09-21).
constexpr uint64_t kFirstBootSeconds = 1790000000u;
/// How far the clock moves before it is persisted again (flash wear against lost seconds).
constexpr uint64_t kPersistSeconds = 60;

/// Resumes the clock from its blob (or starts it at kFirstBootSeconds) and persists it.
/// @errors the platform's blob errors other than kNotFound; kDataLoss for a blob that is not
/// 8 bytes.
fedstat::Status start_ledger_clock();
/// The clock, in seconds; persists it when it has moved kPersistSeconds past the stored value
/// (a failed write is retried on the next call). For ClientConfig::wall_clock_seconds.
uint64_t ledger_clock_seconds();

}  // namespace firmware

#endif  // FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_LEDGER_CLOCK_H_
