// The C ABI's privacy-budget ledger (c/ledger.h): a BudgetLedger in the caller's memory, its
// spends and its blob scratch after it, its blob name copied into the handle.
#include <string.h>

#include <new>

#include "capi/handle.h"
#include "capi/objects.h"

namespace fedstat {
namespace capi {
namespace {

using privacy::BudgetLedger;
using privacy::PrivacySpend;

static_assert(FEDSTAT_LEDGER_ORDER_COUNT == privacy::kLedgerOrderCount, "RDP orders drifted");

constexpr size_t kHandle = handle_bytes<fedstat_ledger>();

size_t spends_bytes(size_t capacity) {
  return round_up8(size_mul(sizeof(PrivacySpend), capacity));
}
size_t ledger_bytes(size_t capacity) {
  // BudgetLedger::blob_bytes(capacity), without its unchecked product on a 32-bit size_t.
  const size_t blob = size_add(8, size_mul(BudgetLedger::kEntryBytes, capacity));
  return size_add(size_add(kHandle, spends_bytes(capacity)), blob);
}

bool live(const fedstat_ledger* l) {
  return valid(l, kLedgerMagic);
}

Status spend_of(const fedstat_privacy_spend* c, PrivacySpend& out) {
  if (c == nullptr) return invalid_argument("ledger: spend is NULL");
  out.task_id = c->task_id;
  out.epsilon = c->epsilon;
  out.delta = c->delta;
  out.has_rdp = c->has_rdp != 0;
  for (size_t k = 0; k < privacy::kLedgerOrderCount; ++k) out.rdp[k] = c->rdp[k];
  return Status();
}

}  // namespace
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

const uint32_t* fedstat_ledger_rdp_orders(void) {
  return privacy::kLedgerOrders;
}

fedstat_status fedstat_ledger_size(size_t capacity, size_t* bytes) {
  if (capacity == 0) return FEDSTAT_INVALID_ARGUMENT;
  return size_status(ledger_bytes(capacity), bytes);
}

fedstat_status fedstat_ledger_create(void* memory, size_t memory_bytes,
                                     const fedstat_ledger_config* config, size_t capacity,
                                     fedstat_ledger** out) {
  if (config == nullptr || capacity == 0 || config->blob_name == nullptr) {
    return FEDSTAT_INVALID_ARGUMENT;
  }
  const size_t name_bytes = name_length(config->blob_name);
  if (name_bytes == 0) return FEDSTAT_INVALID_ARGUMENT;
  const fedstat_status checked = check_memory(memory, memory_bytes, ledger_bytes(capacity), out);
  if (checked != FEDSTAT_OK) return checked;
  // The C++ init checks the budget and window before anything is placed: a refusal writes
  // nothing into the caller's memory.
  privacy::LedgerConfig c;
  c.epsilon_budget = config->epsilon_budget;
  c.delta_budget = config->delta_budget;
  c.window_seconds = config->window_seconds;
  c.blob_name = config->blob_name;
  uint8_t probe_scratch[BudgetLedger::blob_bytes(1)];
  PrivacySpend probe_entry;
  BudgetLedger probe;
  const Status valid_config =
      probe.init(c, Span<PrivacySpend>(&probe_entry, 1), MutableByteSpan(probe_scratch));
  if (!valid_config.ok()) return code_of(valid_config);

  fedstat_ledger* l = new (handle_address<fedstat_ledger>(memory)) fedstat_ledger();
  memcpy(l->blob_name, config->blob_name, name_bytes + 1);
  c.blob_name = l->blob_name;
  uint8_t* spends = after_handle<fedstat_ledger>(memory);
  uint8_t* scratch = spends + spends_bytes(capacity);
  PrivacySpend* entries = reinterpret_cast<PrivacySpend*>(spends);
  for (size_t i = 0; i < capacity; ++i) new (entries + i) PrivacySpend();
  const Status status =
      l->ledger.init(c, Span<PrivacySpend>(entries, capacity),
                     MutableByteSpan(scratch, BudgetLedger::blob_bytes(capacity)));
  if (!status.ok()) {  // checked above: not expected
    l->magic = 0;
    return code_of(status);
  }
  *out = l;
  return FEDSTAT_OK;
}

fedstat_status fedstat_ledger_load(fedstat_ledger* ledger) {
  if (!live(ledger)) return FEDSTAT_INVALID_ARGUMENT;
  return finish(ledger, ledger->ledger.load());
}

fedstat_status fedstat_ledger_reset_after_data_loss(fedstat_ledger* ledger, uint64_t now_seconds) {
  if (!live(ledger)) return FEDSTAT_INVALID_ARGUMENT;
  return finish(ledger, ledger->ledger.reset_after_data_loss(now_seconds));
}

fedstat_status fedstat_ledger_spent(fedstat_ledger* ledger, uint64_t now_seconds, double* epsilon,
                                    double* delta) {
  if (!live(ledger)) return FEDSTAT_INVALID_ARGUMENT;
  if (epsilon == nullptr || delta == nullptr) {
    return finish(ledger, invalid_argument("spent: epsilon or delta is NULL"));
  }
  const Result<privacy::Spent> spent = ledger->ledger.spent(now_seconds);
  if (spent.ok()) {
    *epsilon = spent->epsilon;
    *delta = spent->delta;
  }
  return finish(ledger, spent.status());
}

fedstat_status fedstat_ledger_check(fedstat_ledger* ledger, const fedstat_privacy_spend* spend,
                                    uint64_t now_seconds) {
  if (!live(ledger)) return FEDSTAT_INVALID_ARGUMENT;
  PrivacySpend s;
  const Status read = spend_of(spend, s);
  if (!read.ok()) return finish(ledger, read);
  return finish(ledger, ledger->ledger.check(s, now_seconds));
}

fedstat_status fedstat_ledger_charge(fedstat_ledger* ledger, const fedstat_privacy_spend* spend,
                                     uint64_t now_seconds) {
  if (!live(ledger)) return FEDSTAT_INVALID_ARGUMENT;
  PrivacySpend s;
  const Status read = spend_of(spend, s);
  if (!read.ok()) return finish(ledger, read);
  return finish(ledger, ledger->ledger.charge(s, now_seconds));
}

fedstat_status fedstat_ledger_get_info(const fedstat_ledger* ledger, fedstat_ledger_info* info) {
  if (!live(ledger) || info == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  fedstat_ledger_info i = {};
  i.spends = ledger->ledger.size();
  i.capacity = ledger->ledger.capacity();
  i.ledger_time = ledger->ledger.ledger_time();
  *info = i;
  return FEDSTAT_OK;
}

const char* fedstat_ledger_last_error(const fedstat_ledger* ledger) {
  return live(ledger) ? ledger->last_error : kNotAHandle;
}

}  // extern "C"
