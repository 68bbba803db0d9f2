/** @file
 * fedstat C ABI: the device's privacy-budget ledger. Tasks declare what they spend; the ledger
 * composes every spend within a rolling window and refuses one that would pass the configured
 * (epsilon, delta) budget. The C form of sdk/privacy/budget_ledger.h, whose header states the
 * clock, storage and failure rules this follows (time is the caller's wall clock, in seconds; a
 * corrupt stored ledger locks it until fedstat_ledger_reset_after_data_loss).
 *
 * Saving: the ledger is persisted (platform storage, blob config.blob_name) by every successful
 * charge, and by a reset; there is no separate save. load reads it back (none stored: empty).
 *
 * @memory caller's, FEDSTAT_ALIGNMENT-aligned; fedstat_ledger_size:
 *   L + 176*capacity (the spends) + 8 + 168*capacity (the blob's scratch) bytes
 * where L is the handle (176 bytes on 64-bit hosts; the size function includes it).
 * @paper none of 000-004 has a ledger; composition per 002 §2.1 (RDP, Lemma 1).
 */
#ifndef FEDSTAT_C_LEDGER_H_
#define FEDSTAT_C_LEDGER_H_

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A privacy-budget ledger (opaque), in caller memory. */
typedef struct fedstat_ledger fedstat_ledger;

/** The number of RDP orders of fedstat_privacy_spend.rdp: 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32,
 * 48, 64, 96, 128, 256 (also fedstat_ledger_rdp_orders()). */
#define FEDSTAT_LEDGER_ORDER_COUNT 17

/** A ledger's budget, window and storage name (fedstat_ledger_create). */
typedef struct fedstat_ledger_config {
  double epsilon_budget;   /**< the epsilon budget per window: finite, > 0 */
  double delta_budget;     /**< the delta budget per window: in (0, 1) */
  uint64_t window_seconds; /**< the rolling window: 1..2^32 seconds (30 days: 2592000) */
  /** the blob the ledger is stored as: 1-64 characters of [A-Za-z0-9_.-], not starting with
   * '.'; copied (create checks only the length: storage refuses other characters, at load) */
  const char* blob_name;
} fedstat_ledger_config;

/** What one task spends, as fedstat_ledger_check and fedstat_ledger_charge take it. */
typedef struct fedstat_privacy_spend {
  uint32_t task_id; /**< the task, recorded with the spend */
  double epsilon;   /**< the task's epsilon: finite, >= 0 (counted with or without an RDP curve) */
  double delta;     /**< the task's delta: in [0, 1) (counted with or without an RDP curve) */
  int32_t has_rdp;  /**< nonzero: `rdp` holds the task's RDP curve */
  /** RDP at the orders fedstat_ledger_rdp_orders, when has_rdp (each finite, >= 0) */
  double rdp[FEDSTAT_LEDGER_ORDER_COUNT];
} fedstat_privacy_spend;

/** What a ledger holds (fedstat_ledger_get_info). */
typedef struct fedstat_ledger_info {
  size_t spends;        /**< spends held (some may have left the window) */
  size_t capacity;      /**< spends it can hold */
  uint64_t ledger_time; /**< the latest date of a recorded spend (0: none) */
} fedstat_ledger_info;

/** The FEDSTAT_LEDGER_ORDER_COUNT RDP orders of fedstat_privacy_spend.rdp, ascending (static
 * storage). */
const uint32_t* fedstat_ledger_rdp_orders(void);

/** The memory a ledger of `capacity` spends needs, in `*bytes`.
 * @errors FEDSTAT_INVALID_ARGUMENT: capacity 0, or `bytes` is NULL. FEDSTAT_RESOURCE_EXHAUSTED:
 * the size exceeds SIZE_MAX. */
fedstat_status fedstat_ledger_size(size_t capacity, size_t* bytes);
/** A ledger of `capacity` spends in `memory`; it must be loaded before it charges. *out points
 * into `memory`, which must outlive it; no destroy is needed.
 * @errors FEDSTAT_INVALID_ARGUMENT: `config`, `memory` or `out` is NULL; capacity 0; a blob name
 * that is NULL, empty or longer than 64 characters; `memory` not FEDSTAT_ALIGNMENT-aligned; an
 * epsilon budget that is not finite and > 0, a delta budget outside (0, 1), a window outside
 * 1..2^32. FEDSTAT_RESOURCE_EXHAUSTED: `memory_bytes` is below fedstat_ledger_size(capacity), or
 * that size exceeds SIZE_MAX. Nothing is written into `memory` on any of these. */
fedstat_status fedstat_ledger_create(void* memory, size_t memory_bytes,
                                     const fedstat_ledger_config* config, size_t capacity,
                                     fedstat_ledger** out);
/** Reads the stored ledger (none stored: the ledger is empty); required before charge, check
 * and spent.
 * @errors FEDSTAT_INVALID_ARGUMENT: `ledger` is NULL or not a ledger, or storage refuses the blob
 * name (its characters; POSIX: the path is too long). FEDSTAT_DATA_LOSS: the stored ledger is
 * corrupt or truncated, or holds an impossible spend; the ledger is locked.
 * FEDSTAT_RESOURCE_EXHAUSTED: it holds more spends than `capacity`; the ledger is locked too.
 * FEDSTAT_UNAVAILABLE: storage could not be read. FEDSTAT_INTERNAL: the storage backend misbehaved.
 */
fedstat_status fedstat_ledger_load(fedstat_ledger* ledger);
/** After a load that locked the ledger only (FEDSTAT_DATA_LOSS, or FEDSTAT_RESOURCE_EXHAUSTED):
 * starts over from one spend of the whole budget dated now, and persists it.
 * @errors FEDSTAT_INVALID_ARGUMENT: `ledger` is NULL or not a ledger; `now_seconds` is not a
 * plausible wall-clock time (before 2024-01-01, 1704067200, or 2^40 or later).
 * FEDSTAT_FAILED_PRECONDITION: the ledger is not locked (a healthy ledger is never wiped).
 * FEDSTAT_UNAVAILABLE: the persist failed (nothing changes). */
fedstat_status fedstat_ledger_reset_after_data_loss(fedstat_ledger* ledger, uint64_t now_seconds);
/** What the spends in the window add up to at max(now_seconds, ledger time).
 * @errors FEDSTAT_INVALID_ARGUMENT: `ledger` is NULL or not a ledger, `epsilon` or `delta` is NULL,
 * or `now_seconds` is not a plausible wall-clock time (before 2024-01-01 or 2^40 or later).
 * FEDSTAT_FAILED_PRECONDITION: before a successful load, or while the ledger is locked. */
fedstat_status fedstat_ledger_spent(fedstat_ledger* ledger, uint64_t now_seconds, double* epsilon,
                                    double* delta);
/** Whether charge would record `spend` now: FEDSTAT_OK, or the refusal charge would give before
 * persisting. Changes nothing and persists nothing (a storage failure at the charge is not
 * foreseen).
 * @errors FEDSTAT_INVALID_ARGUMENT: `ledger` is NULL or not a ledger, `spend` is NULL, a bad spend
 * (epsilon not finite and >= 0, delta outside [0, 1), an RDP value not finite and >= 0) or an
 * implausible clock reading. FEDSTAT_RESOURCE_EXHAUSTED: over budget, or the ledger is full.
 * FEDSTAT_FAILED_PRECONDITION: before a successful load, or while the ledger is locked. */
fedstat_status fedstat_ledger_check(fedstat_ledger* ledger, const fedstat_privacy_spend* spend,
                                    uint64_t now_seconds);
/** Records `spend` (dated max(now, ledger time)) and persists the ledger; a refusal changes
 * nothing (a failed persist undoes the charge and returns the storage error; the spends it found
 * expired stay dropped, and the ledger time stays at the charge's date).
 * @errors As fedstat_ledger_check: FEDSTAT_INVALID_ARGUMENT, FEDSTAT_RESOURCE_EXHAUSTED (over
 * budget or full), FEDSTAT_FAILED_PRECONDITION (not loaded, or locked). Then the persist's:
 * FEDSTAT_UNAVAILABLE (storage could not be written). */
fedstat_status fedstat_ledger_charge(fedstat_ledger* ledger, const fedstat_privacy_spend* spend,
                                     uint64_t now_seconds);
/** The ledger's size, capacity and time, in `*info`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `ledger` is NULL or not a ledger, or `info` is NULL. */
fedstat_status fedstat_ledger_get_info(const fedstat_ledger* ledger, fedstat_ledger_info* info);

/** The message of the last call on `ledger` that failed ("" if none; a fixed message when
 * `ledger` is NULL or not a ledger). */
const char* fedstat_ledger_last_error(const fedstat_ledger* ledger);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_LEDGER_H_ */
