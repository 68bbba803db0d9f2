/* fedstat C ABI: the device's privacy-budget ledger. Tasks declare what they spend; the ledger
 * composes every spend within a rolling window and refuses one that would pass the configured
 * (epsilon, delta) budget. The C form of sdk/privacy/budget_ledger.h, whose header states the
 * clock, storage and failure rules this follows (time is the caller's wall clock, in seconds; a
 * corrupt stored ledger locks it until fedstat_ledger_reset_after_data_loss).
 *
 * Saving: the ledger is persisted (platform storage, blob config.blob_name) by every successful
 * charge, and by a reset; there is no separate save. load reads it back (none stored: empty).
 *
 * Memory (caller's, FEDSTAT_ALIGNMENT-aligned; fedstat_ledger_size):
 *   L + 176*capacity (the spends) + 8 + 168*capacity (the blob's scratch) bytes
 * where L is the handle (184 bytes on 64-bit hosts; the size function includes it).
 * Paper: none of 000-004 has a ledger; composition per 002 §2.1 (RDP, Lemma 1).
 */
#ifndef FEDSTAT_C_LEDGER_H_
#define FEDSTAT_C_LEDGER_H_

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fedstat_ledger fedstat_ledger;

/* The RDP orders of fedstat_privacy_spend.rdp: 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64,
 * 96, 128, 256 (also fedstat_ledger_rdp_orders()). */
#define FEDSTAT_LEDGER_ORDER_COUNT 17

typedef struct fedstat_ledger_config {
  double epsilon_budget;   /* finite, > 0 */
  double delta_budget;     /* in (0, 1) */
  uint64_t window_seconds; /* 1..2^32 (30 days: 2592000) */
  const char* blob_name;   /* 1-64 characters of [A-Za-z0-9_.-]; copied */
} fedstat_ledger_config;

typedef struct fedstat_privacy_spend {
  uint32_t task_id;
  double epsilon; /* finite, >= 0 */
  double delta;   /* in [0, 1) */
  int32_t has_rdp;
  double rdp[FEDSTAT_LEDGER_ORDER_COUNT]; /* RDP at the orders above, when has_rdp */
} fedstat_privacy_spend;

typedef struct fedstat_ledger_info {
  size_t spends;        /* spends held (some may have left the window) */
  size_t capacity;      /* spends it can hold */
  uint64_t ledger_time; /* the latest date of a recorded spend (0: none) */
} fedstat_ledger_info;

const uint32_t* fedstat_ledger_rdp_orders(void);

/* FEDSTAT_INVALID_ARGUMENT for capacity 0; FEDSTAT_RESOURCE_EXHAUSTED past SIZE_MAX. */
fedstat_status fedstat_ledger_size(size_t capacity, size_t* bytes);
/* A ledger of `capacity` spends in `memory`; it must be loaded before it charges. */
fedstat_status fedstat_ledger_create(void* memory, size_t memory_bytes,
                                     const fedstat_ledger_config* config, size_t capacity,
                                     fedstat_ledger** out);
/* Reads the stored ledger. FEDSTAT_DATA_LOSS: it is corrupt, and the ledger is locked. */
fedstat_status fedstat_ledger_load(fedstat_ledger* ledger);
/* After FEDSTAT_DATA_LOSS only: starts over from one spend of the whole budget dated now. */
fedstat_status fedstat_ledger_reset_after_data_loss(fedstat_ledger* ledger, uint64_t now_seconds);
/* What the spends in the window add up to at now_seconds. */
fedstat_status fedstat_ledger_spent(fedstat_ledger* ledger, uint64_t now_seconds, double* epsilon,
                                    double* delta);
/* Whether charge would record `spend` now: FEDSTAT_OK, or the refusal charge would give
 * (FEDSTAT_RESOURCE_EXHAUSTED over budget or full, FEDSTAT_INVALID_ARGUMENT for a bad spend or
 * clock reading, FEDSTAT_FAILED_PRECONDITION before load). Changes nothing. */
fedstat_status fedstat_ledger_check(fedstat_ledger* ledger, const fedstat_privacy_spend* spend,
                                    uint64_t now_seconds);
/* Records `spend` (dated max(now, ledger time)) and persists the ledger; a refusal changes
 * nothing (a failed persist undoes the charge and returns the storage error). */
fedstat_status fedstat_ledger_charge(fedstat_ledger* ledger, const fedstat_privacy_spend* spend,
                                     uint64_t now_seconds);
fedstat_status fedstat_ledger_get_info(const fedstat_ledger* ledger, fedstat_ledger_info* info);

const char* fedstat_ledger_last_error(const fedstat_ledger* ledger);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_LEDGER_H_ */
