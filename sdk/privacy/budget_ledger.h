// BudgetLedger: the device's privacy-budget ledger. Tasks declare what they spend; the ledger
// composes everything spent within a rolling time window and refuses, with kResourceExhausted
// and nothing changed, a task that would take the total past the configured (ε, δ) budget.
// Persisted through platform storage after every charge, so a restart forgets nothing.
//
// Composition over the window: spends given as (ε_i, δ_i) add up (basic composition); spends
// that carry an RDP curve (values at the orders kLedgerOrders) add up order by order and are
// converted once, with δ_rdp = δ_budget − Σ δ_i, by 002 Lemma 1 (accountants.h). The total is
//     ε = Σ ε_i + min_α convert(Σ_j rdp_j(α), δ_rdp),   δ = Σ δ_i + δ_rdp (= δ_budget),
// a valid composition of the two groups; RDP composition is much tighter for many small spends.
//
// Time is the caller's: pass wall-clock seconds (an RTC or the network's time) to charge()/
// spent(), since the platform's monotonic clock restarts with the device. Entries from the future
// (a clock set back) keep counting, which can only over-count.
//
// Failure modes: a corrupt or truncated stored ledger makes load() return kDataLoss and locks
// the ledger (every charge kFailedPrecondition) until reset_after_data_loss() — silently starting
// from an empty ledger would hand out fresh budget. A charge whose persist fails is undone in
// memory and returns the storage error. A full ledger (no expired entry to drop) is
// kResourceExhausted.
//
// Memory: entries.size() · sizeof(PrivacySpend) (≈ 168 bytes) in caller memory, plus a scratch
// buffer of blob_bytes(capacity) = 8 + 168 · capacity bytes for (de)serialisation.
// Paper: none of 000–004 has a ledger; composition per 002 §2.1 (RDP, Lemma 1).
#ifndef FEDSTAT_SDK_PRIVACY_BUDGET_LEDGER_H_
#define FEDSTAT_SDK_PRIVACY_BUDGET_LEDGER_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace privacy {

constexpr size_t kLedgerOrderCount = 17;
constexpr uint32_t kLedgerOrders[kLedgerOrderCount] = {2,  3,  4,  5,  6,  8,  10,  12, 16,
                                                       20, 24, 32, 48, 64, 96, 128, 256};

struct PrivacySpend {
  uint64_t time_seconds = 0;  // when the task ran (filled in by charge())
  uint32_t task_id = 0;
  double epsilon = 0;  // (ε, δ) of the task, used when it has no RDP curve
  double delta = 0;
  bool has_rdp = false;
  double rdp[kLedgerOrderCount] = {};  // RDP at kLedgerOrders, when has_rdp
};

struct LedgerConfig {
  double epsilon_budget = 1.0;
  double delta_budget = 1e-6;
  uint64_t window_seconds = 30ull * 24 * 3600;  // a rolling 30 days
  const char* blob_name = "privacy-ledger";
};

struct Spent {
  double epsilon = 0;
  double delta = 0;
};

class BudgetLedger {
 public:
  static constexpr size_t kEntryBytes = 8 + 4 + 4 + 8 + 8 + 8 * kLedgerOrderCount;
  static constexpr size_t blob_bytes(size_t capacity) { return 8 + kEntryBytes * capacity; }

  // `entries` holds up to entries.size() spends; `scratch` must be ≥ blob_bytes(entries.size()).
  Status init(const LedgerConfig& config, Span<PrivacySpend> entries, MutableByteSpan scratch);
  // Reads the stored ledger (none stored: empty). kDataLoss locks the ledger (see above).
  Status load();
  // Deliberately starts over after kDataLoss: an empty ledger, persisted.
  Status reset_after_data_loss();

  // What the spends within the window before `now_seconds` add up to.
  Result<Spent> spent(uint64_t now_seconds) const;
  // Records `spend` at `now_seconds` if the composed total stays within budget, then persists.
  Status charge(const PrivacySpend& spend, uint64_t now_seconds);

  size_t size() const { return count_; }
  size_t capacity() const { return entries_.size(); }

 private:
  Result<Spent> compose(uint64_t now_seconds, const PrivacySpend* extra) const;
  bool active(const PrivacySpend& s, uint64_t now_seconds) const;
  Status persist();

  LedgerConfig config_;
  Span<PrivacySpend> entries_;
  MutableByteSpan scratch_;
  size_t count_ = 0;
  bool ready_ = false;
  bool locked_ = false;
};

}  // namespace privacy
}  // namespace fedstat

#endif  // FEDSTAT_SDK_PRIVACY_BUDGET_LEDGER_H_
