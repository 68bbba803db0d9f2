#include "sdk/privacy/budget_ledger.h"

#include <math.h>
#include <string.h>

#include "platform/platform.h"
#include "sdk/base/bytes.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace privacy {
namespace {

constexpr uint32_t kLedgerVersion = 1;

uint64_t bits_of(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof(b));
  return b;
}
double double_of(uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof(x));
  return x;
}

Status check_spend(const PrivacySpend& s) {
  if (!(s.epsilon >= 0) || !isfinite(s.epsilon) || !(s.delta >= 0) || !(s.delta < 1)) {
    return invalid_argument("a spend needs finite epsilon >= 0 and 0 <= delta < 1");
  }
  if (s.has_rdp) {
    for (double r : s.rdp) {
      if (!(r >= 0) || !isfinite(r)) return invalid_argument("RDP values must be finite, >= 0");
    }
  }
  return Status();
}

}  // namespace

Status BudgetLedger::init(const LedgerConfig& config, Span<PrivacySpend> entries,
                          MutableByteSpan scratch) {
  // Everything is checked before anything changes: a refused init() leaves an earlier one.
  if (!(config.epsilon_budget > 0) || !isfinite(config.epsilon_budget)) {
    return invalid_argument("ledger epsilon_budget must be finite and > 0");
  }
  if (!(config.delta_budget > 0 && config.delta_budget < 1)) {
    return invalid_argument("ledger delta_budget must lie strictly between 0 and 1");
  }
  if (config.window_seconds < 1 || config.window_seconds > kLedgerMaxWindowSeconds) {
    return invalid_argument(
        "ledger window_seconds must be at least 1 and at most kLedgerMaxWindowSeconds (2^32)");
  }
  if (config.blob_name == nullptr || config.blob_name[0] == '\0') {
    return invalid_argument("ledger blob_name must be a non-empty string");
  }
  if (entries.empty()) return invalid_argument("ledger needs room for at least one entry");
  if (scratch.size() < blob_bytes(entries.size())) {
    return resource_exhausted("ledger scratch buffer is smaller than blob_bytes(capacity)");
  }
  config_ = config;
  entries_ = entries;
  scratch_ = scratch;
  count_ = 0;
  latest_ = 0;
  loaded_ = false;
  locked_ = false;
  ready_ = true;
  return Status();
}

Status BudgetLedger::usable() const {
  if (!ready_) return failed_precondition("ledger used before init()");
  if (locked_) {
    return failed_precondition(
        "the stored ledger was corrupt: no spend is allowed until "
        "reset_after_data_loss() deliberately starts a new one");
  }
  if (!loaded_) {
    return failed_precondition(
        "ledger used before a successful load(): charging without the stored spends would "
        "hand out budget already spent");
  }
  return Status();
}

Result<uint64_t> BudgetLedger::effective_time(uint64_t now_seconds) const {
  if (now_seconds < kLedgerMinClockSeconds) {
    return invalid_argument(
        "the clock reading is not a plausible time (before 2024-01-01, 1704067200 s since "
        "1970: the wall clock is not set): check the clock source");
  }
  if (now_seconds >= kLedgerMaxClockSeconds) {
    return invalid_argument(
        "the clock reading is not a plausible time (2^40 s or more, e.g. a negative reading "
        "cast to unsigned, or milliseconds): check the clock source");
  }
  return now_seconds > latest_ ? now_seconds : latest_;
}

bool BudgetLedger::active(const PrivacySpend& s, uint64_t effective_seconds) const {
  // effective_seconds ≥ every stored date, but stay exact for any pair: a spend dated later
  // than the time asked about counts.
  return effective_seconds < s.time_seconds ||
         effective_seconds - s.time_seconds < config_.window_seconds;
}

Result<Spent> BudgetLedger::compose(uint64_t effective_seconds, const PrivacySpend* extra) const {
  Spent basic;
  double rdp[kLedgerOrderCount] = {};
  bool any_rdp = false;
  auto add = [&](const PrivacySpend& s) {
    if (s.has_rdp) {
      any_rdp = true;
      for (size_t k = 0; k < kLedgerOrderCount; ++k) rdp[k] += s.rdp[k];
    }
    // A spend's (ε, δ) always count, with or without an RDP curve: ignoring them for an RDP
    // spend would let a caller's ε and δ vanish (over-counting is the safe side).
    basic.epsilon += s.epsilon;
    basic.delta += s.delta;
  };
  for (size_t i = 0; i < count_; ++i) {
    if (active(entries_[i], effective_seconds)) add(entries_[i]);
  }
  if (extra != nullptr) add(*extra);
  if (!any_rdp) return basic;
  const double delta_rdp = config_.delta_budget - basic.delta;
  if (!(delta_rdp > 0)) return Spent{INFINITY, config_.delta_budget};
  double best = INFINITY;
  for (size_t k = 0; k < kLedgerOrderCount; ++k) {
    if (!isfinite(rdp[k])) continue;  // the sum overflowed: infinite at this order
    FEDSTAT_ASSIGN_OR_RETURN(const double e, rdp_to_dp(kLedgerOrders[k], rdp[k], delta_rdp));
    best = e < best ? e : best;
  }
  return Spent{basic.epsilon + best, config_.delta_budget};
}

Result<Spent> BudgetLedger::spent(uint64_t now_seconds) const {
  FEDSTAT_RETURN_IF_ERROR(usable());
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t effective, effective_time(now_seconds));
  return compose(effective, nullptr);
}

bool BudgetLedger::holds_task(uint32_t task_id) const {
  // Not through usable(): a lookup that cannot be answered says "no", and the charge that
  // follows reports why.
  if (!ready_ || !loaded_ || locked_ || task_id == 0) return false;
  for (size_t i = 0; i < count_; ++i) {
    if (entries_[i].task_id == task_id) return true;
  }
  return false;
}

Result<PrivacySpend> BudgetLedger::admit(const PrivacySpend& spend, uint64_t now_seconds) const {
  FEDSTAT_RETURN_IF_ERROR(usable());
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t effective, effective_time(now_seconds));
  FEDSTAT_RETURN_IF_ERROR(check_spend(spend));
  PrivacySpend entry = spend;
  entry.time_seconds = effective;
  FEDSTAT_ASSIGN_OR_RETURN(const Spent total, compose(effective, &entry));
  if (!(total.epsilon <= config_.epsilon_budget) || !(total.delta <= config_.delta_budget)) {
    return resource_exhausted(
        "privacy budget exceeded: this task would take the spend in the "
        "window past the configured (epsilon, delta); run it later or "
        "with less privacy cost");
  }
  size_t kept = 0;
  for (size_t i = 0; i < count_; ++i) {
    if (active(entries_[i], effective)) ++kept;
  }
  if (kept == entries_.size()) {
    return resource_exhausted("privacy ledger is full: give it more entries or a shorter window");
  }
  return entry;
}

Status BudgetLedger::check(const PrivacySpend& spend, uint64_t now_seconds) const {
  return admit(spend, now_seconds).status();
}

Status BudgetLedger::charge(const PrivacySpend& spend, uint64_t now_seconds) {
  FEDSTAT_ASSIGN_OR_RETURN(const PrivacySpend entry, admit(spend, now_seconds));
  const uint64_t effective = entry.time_seconds;
  // Move the spends still in the window to the front (expired ones are dropped), append.
  size_t write = 0;
  const size_t old_count = count_;
  for (size_t i = 0; i < old_count; ++i) {
    if (active(entries_[i], effective)) {
      if (write != i) {
        const PrivacySpend moved = entries_[i];
        entries_[i] = entries_[write];
        entries_[write] = moved;
      }
      ++write;
    }
  }
  entries_[write] = entry;
  count_ = write + 1;
  // The dropped spends expired at `effective`: the ledger's time must not fall below it again,
  // or they would come back into the window uncounted.
  latest_ = effective;
  const Status saved = persist();
  if (!saved.ok()) {
    count_ = write;  // the new spend is not recorded; expired ones stay dropped (never counted)
    return saved;
  }
  return Status();
}

Status BudgetLedger::persist() {
  uint8_t* p = scratch_.data();
  store_le32(p, kLedgerVersion);
  store_le32(p + 4, static_cast<uint32_t>(count_));
  p += 8;
  for (size_t i = 0; i < count_; ++i) {
    const PrivacySpend& s = entries_[i];
    store_le64(p, s.time_seconds);
    store_le32(p + 8, s.task_id);
    store_le32(p + 12, s.has_rdp ? 1u : 0u);
    store_le64(p + 16, bits_of(s.epsilon));
    store_le64(p + 24, bits_of(s.delta));
    for (size_t k = 0; k < kLedgerOrderCount; ++k) store_le64(p + 32 + 8 * k, bits_of(s.rdp[k]));
    p += kEntryBytes;
  }
  return platform::save_blob(config_.blob_name, ByteSpan(scratch_.data(), blob_bytes(count_)));
}

Status BudgetLedger::load() {
  if (!ready_) return failed_precondition("ledger used before init()");
  loaded_ = false;  // until the stored spends are in memory
  auto loaded = platform::load_blob(config_.blob_name, scratch_);
  if (loaded.status().code() == StatusCode::kNotFound) {
    count_ = 0;
    latest_ = 0;
    locked_ = false;
    loaded_ = true;
    return Status();
  }
  if (loaded.status().code() == StatusCode::kResourceExhausted) {
    locked_ = true;
    return resource_exhausted("the stored ledger holds more entries than this ledger's capacity");
  }
  if (!loaded.ok()) {
    locked_ = loaded.status().code() == StatusCode::kDataLoss;
    return loaded.status();
  }
  const uint8_t* p = scratch_.data();
  const size_t size = loaded.value();
  const size_t stored = size >= 8 ? load_le32(p + 4) : 0;
  if (size < 8 || load_le32(p) != kLedgerVersion || stored > entries_.size() ||
      size != blob_bytes(stored)) {
    locked_ = true;
    return data_loss("the stored ledger has an unknown version or a wrong length");
  }
  p += 8;
  uint64_t latest = 0;
  for (size_t i = 0; i < stored; ++i) {
    PrivacySpend& s = entries_[i];
    s.time_seconds = load_le64(p);
    s.task_id = load_le32(p + 8);
    s.has_rdp = load_le32(p + 12) != 0;
    s.epsilon = double_of(load_le64(p + 16));
    s.delta = double_of(load_le64(p + 24));
    for (size_t k = 0; k < kLedgerOrderCount; ++k) s.rdp[k] = double_of(load_le64(p + 32 + 8 * k));
    if (!check_spend(s).ok()) {
      locked_ = true;
      return data_loss("the stored ledger holds an impossible spend");
    }
    if (s.time_seconds >= kLedgerMaxClockSeconds || s.time_seconds < kLedgerMinClockSeconds) {
      locked_ = true;  // a spend dated before 2024 would expire at once: as bad as one lost
      return data_loss(
          "the stored ledger holds a spend dated at an impossible time (before 2024, or 2^40 s "
          "or more): the clock that dated it was broken; reset_after_data_loss() starts over");
    }
    latest = s.time_seconds > latest ? s.time_seconds : latest;
    p += kEntryBytes;
  }
  count_ = stored;
  latest_ = latest;
  locked_ = false;
  loaded_ = true;
  return Status();
}

Status BudgetLedger::reset_after_data_loss(uint64_t now_seconds) {
  if (!ready_) return failed_precondition("ledger used before init()");
  if (!locked_) {  // wiping a healthy ledger would hand out fresh budget
    return failed_precondition(
        "the ledger is not locked by data loss: reset_after_data_loss() only starts over after "
        "load() reported kDataLoss");
  }
  if (now_seconds < kLedgerMinClockSeconds || now_seconds >= kLedgerMaxClockSeconds) {
    return invalid_argument(
        "the clock reading is not a plausible time (before 2024 or 2^40 s and later): check the "
        "clock source");
  }
  if (entries_.empty()) return resource_exhausted("ledger has no room for the blackout spend");
  // The lost spends may still be inside the window: the new ledger starts with one spend of the
  // whole budget, so nothing more is spent until a full window has passed (fail closed).
  const size_t old_count = count_;
  const PrivacySpend old_first = entries_[0];
  PrivacySpend blackout;
  blackout.time_seconds = now_seconds;
  blackout.epsilon = config_.epsilon_budget;
  blackout.delta = config_.delta_budget;  // both: a (0, δ) spend must not slip through either
  entries_[0] = blackout;
  count_ = 1;
  const Status saved = persist();
  if (!saved.ok()) {
    entries_[0] = old_first;  // nothing changes: the stored ledger is still the old one
    count_ = old_count;
    return saved;
  }
  latest_ = now_seconds;
  locked_ = false;
  loaded_ = true;
  return Status();
}

}  // namespace privacy
}  // namespace fedstat
