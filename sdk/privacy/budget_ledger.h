/// @file
/// BudgetLedger: the device's privacy-budget ledger. Tasks declare what they spend; the ledger
/// composes everything spent within a rolling time window and refuses, with kResourceExhausted
/// and nothing changed, a task that would take the total past the configured (ε, δ) budget.
/// Persisted through platform storage after every charge, so a restart forgets nothing.
///
/// Composition over the window: every spend's (ε_i, δ_i) add up (basic composition); spends that
/// also carry an RDP curve (values at the orders kLedgerOrders) add it up order by order, converted
/// once, with δ_rdp = δ_budget − Σ δ_i, by 002 Lemma 1 (accountants.h). The total is
///     ε = Σ ε_i + min_α convert(Σ_j rdp_j(α), δ_rdp),   δ = Σ δ_i + δ_rdp (= δ_budget),
/// a valid composition of the two groups; RDP composition is much tighter for many small spends
/// (give such a spend ε = δ = 0 and its cost in rdp[]: a nonzero ε or δ there is counted too).
/// The sums are in double, rounded to nearest: over n spends the total may sit up to ~n ulps
/// (≈ 1e-14 ε for a full ledger) below the exact sum of the doubles given.
///
/// Time is the caller's: pass wall-clock seconds (an RTC or the network's time) to charge()/
/// spent(), since the platform's monotonic clock restarts with the device. What the clock may do,
/// and what the ledger does about it (it fails closed: a doubtful clock can only over-count):
///   * A reading that cannot be a wall-clock time is refused with kInvalidArgument and changes
///     nothing: below kLedgerMinClockSeconds (2024-01-01; an RTC that lost power reads 1970 or
///     2000, and spends dated there would all expire the moment the clock is set) or at or above
///     kLedgerMaxClockSeconds (2^40 s, year ~36800: every negative int64 reading cast to
///     unsigned, such as 2^64 − 1, and milliseconds passed as seconds).
///   * The ledger's time never runs backwards. It is L = the latest date of a recorded spend
///     (ledger_time(); after a restart, the latest stored date), and every call works at the
///     effective time max(now, L); spent() never moves L. A clock set back therefore frees nothing,
///     and a new spend is dated max(now, L), never before an earlier one: stored spends dated in
///     the future (the clock was ahead, then corrected) keep counting, for a full window from their
///     date.
///   * A spend dated t counts while the effective time e satisfies e − t < window (exact, no
///     overflow: e ≥ t always), i.e. at t, ..., t + window − 1, not at t + window.
///   * A clock that jumps FORWARD past the window expires the spends it leaves behind: the ledger
///     cannot tell a genuine jump (the device was off for a month) from a forged one. Someone who
///     controls the device clock can thus obtain a fresh budget per window of clock time they
///     fake — but only by moving the clock forward for good (going back afterwards frees nothing
///     more, and every later spend is dated at the advanced time). A device whose clock an
///     adversary controls needs an authenticated time source.
///   * A stored spend dated at or above kLedgerMaxClockSeconds, or before kLedgerMinClockSeconds,
///     cannot have been written by this code (older builds stored the wrapped readings): load()
///     treats it as corruption (kDataLoss, ledger locked). Counting it would pin the ledger's time
///     there forever, or expire it at once.
///   * A forged or glitched reading just below 2^40 s makes every later spend date there: the
///     ledger then refuses spends (its window never ends) until its storage is reset by hand —
///     safe, but an authenticated clock avoids it.
///
/// Storage is trusted. The ledger detects corruption (CRC) but not a blob deleted, replaced by
/// an older copy (rollback), or written by a second ledger object on the same blob name (keep one
/// per blob): each hands out budget again. A device whose storage an adversary controls needs
/// rollback-protected storage (a monotonic counter in RPMB, a TPM, a secure element) bound to the
/// blob — which platform/ does not offer yet — or a server that keeps its own per-device record
/// of the tasks a device took part in.
///
/// Failure modes: the ledger is unusable (kFailedPrecondition from charge() and spent()) until
/// load() has succeeded — charging an empty in-memory ledger would overwrite the stored spends.
/// A corrupt or truncated stored ledger makes load() return kDataLoss and locks the ledger (every
/// charge and spent() kFailedPrecondition) until reset_after_data_loss(now) — silently starting
/// from an empty ledger would hand out fresh budget, so the reset starts from one spend of the
/// whole budget, ε and δ, dated now (nothing is charged for one window). A charge whose persist
/// fails is undone in memory and returns the storage error (spends it found expired stay dropped,
/// and the ledger's time stays at that charge's effective time, so they cannot come back into the
/// window uncounted). A full ledger (no expired entry to drop) is kResourceExhausted.
///
/// Errors of init(): kInvalidArgument unless epsilon_budget is finite and > 0, delta_budget is in
/// (0, 1), 1 ≤ window_seconds ≤ kLedgerMaxWindowSeconds (2^32 s, ~136 years) and blob_name is a
/// non-empty string (the platform checks its characters); a refused init() leaves an earlier
/// successful one in force. charge() refuses a spend without finite ε ≥ 0 and δ in [0, 1), or
/// RDP values not finite and ≥ 0 (kInvalidArgument), and one that would take the total past the
/// budget (kResourceExhausted; an RDP sum that overflows to infinity is over any budget).
///
///
/// @memory entries.size() · sizeof(PrivacySpend) (≈ 168 bytes) in caller memory, plus a scratch
/// buffer of blob_bytes(capacity) = 8 + 168 · capacity bytes for (de)serialisation.
/// @paper none of 000–004 has a ledger; composition per 002 §2.1 (RDP, Lemma 1).
#ifndef FEDSTAT_SDK_PRIVACY_BUDGET_LEDGER_H_
#define FEDSTAT_SDK_PRIVACY_BUDGET_LEDGER_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/result.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace privacy {

/// The earliest plausible wall-clock reading, in seconds since 1970-01-01 UTC:
/// 2024-01-01T00:00:00Z. Plausible readings lie in [kLedgerMinClockSeconds,
/// kLedgerMaxClockSeconds).
constexpr uint64_t kLedgerMinClockSeconds = 1704067200;  // 2024-01-01T00:00:00Z
/// The first implausible wall-clock reading (2^40 s, year ~36800).
constexpr uint64_t kLedgerMaxClockSeconds = uint64_t{1} << 40;
/// The longest rolling window a LedgerConfig may set (2^32 s, ~136 years).
constexpr uint64_t kLedgerMaxWindowSeconds = uint64_t{1} << 32;

/// How many Rényi orders a spend's RDP curve holds.
constexpr size_t kLedgerOrderCount = 17;
/// The Rényi orders of PrivacySpend::rdp, in order.
constexpr uint32_t kLedgerOrders[kLedgerOrderCount] = {2,  3,  4,  5,  6,  8,  10,  12, 16,
                                                       20, 24, 32, 48, 64, 96, 128, 256};

/// One task's privacy cost, as recorded by the ledger.
struct PrivacySpend {
  uint64_t time_seconds = 0;  ///< when the task ran (filled in by charge())
  uint32_t task_id = 0;       ///< the caller's task identifier (stored; holds_task() looks it up)
  double epsilon = 0;         ///< ε of the task (always counted, with or without an RDP curve)
  double delta = 0;           ///< δ of the task (always counted), in [0, 1)
  bool has_rdp = false;       ///< whether rdp[] holds the task's RDP curve
  double rdp[kLedgerOrderCount] = {};  ///< RDP at kLedgerOrders, when has_rdp
};

/// The budget a BudgetLedger enforces and where it persists.
struct LedgerConfig {
  double epsilon_budget = 1.0;  ///< ε allowed per window; finite and > 0
  double delta_budget = 1e-6;   ///< δ allowed per window; in (0, 1)
  /// The rolling window in seconds: 30 days by default; 1..kLedgerMaxWindowSeconds.
  uint64_t window_seconds = 30ull * 24 * 3600;
  const char* blob_name = "privacy-ledger";  ///< storage blob name; must outlive the ledger
};

/// The composed (ε, δ) of the spends within the window.
struct Spent {
  double epsilon = 0;  ///< Σ ε_i plus the converted RDP sum (infinite if δ_i use up δ_budget)
  double delta = 0;    ///< Σ δ_i, or δ_budget when any spend carries an RDP curve
};

/// The device's privacy-budget ledger over a rolling window (see the file comment).
class BudgetLedger {
 public:
  /// Bytes of one stored spend.
  static constexpr size_t kEntryBytes = 8 + 4 + 4 + 8 + 8 + 8 * kLedgerOrderCount;
  /// Bytes of a stored ledger of `capacity` spends (the scratch init() needs).
  static constexpr size_t blob_bytes(size_t capacity) { return 8 + kEntryBytes * capacity; }

  /// Configures the ledger: `entries` holds up to entries.size() spends; `scratch` must be ≥
  /// blob_bytes(entries.size()); both must outlive the ledger. The ledger then needs load().
  /// A refused init() leaves an earlier successful one in force.
  /// @errors kInvalidArgument: epsilon_budget not finite and > 0, delta_budget outside (0, 1),
  /// window_seconds outside 1..kLedgerMaxWindowSeconds, blob_name null or empty, or `entries`
  /// empty. kResourceExhausted: `scratch` smaller than blob_bytes(entries.size()).
  Status init(const LedgerConfig& config, Span<PrivacySpend> entries, MutableByteSpan scratch);
  /// Reads the stored ledger (none stored: empty); required before charge() and spent().
  /// kDataLoss locks the ledger (see above).
  /// @errors kFailedPrecondition: no successful init(). kDataLoss: the stored ledger is corrupt or
  /// truncated, has an unknown version or a wrong length, or holds an impossible spend or date;
  /// the ledger is locked until reset_after_data_loss(). kResourceExhausted: the stored ledger
  /// holds more entries than this ledger's capacity; the ledger is locked too. Any other storage
  /// error (e.g. kUnavailable, or kInvalidArgument for a blob name the platform refuses): the
  /// ledger stays unusable until a load() succeeds.
  Status load();
  /// Deliberately starts over after kDataLoss, failing closed: the new ledger (persisted) holds
  /// one spend of the whole budget (ε and δ) dated `now_seconds`, since the lost spends may still
  /// be in the window, so nothing is charged for one window.
  /// @errors kFailedPrecondition: no successful init(), or the ledger is not locked (a healthy
  /// one must never be wiped: that is fresh budget). kInvalidArgument: an implausible clock
  /// reading. kResourceExhausted: no entry to hold the spend (not after a successful init()).
  /// The storage error of the save (e.g. kUnavailable): nothing changes, the ledger stays locked.
  Status reset_after_data_loss(uint64_t now_seconds);

  /// What the spends within the window at max(now_seconds, ledger_time()) add up to.
  /// @errors kFailedPrecondition: no successful init() or load(), or the ledger is locked after
  /// kDataLoss. kInvalidArgument: `now_seconds` outside [kLedgerMinClockSeconds,
  /// kLedgerMaxClockSeconds).
  Result<Spent> spent(uint64_t now_seconds) const;
  /// Whether the ledger holds a spend of task `task_id` (PrivacySpend::task_id): recorded and not
  /// yet dropped. A spend is dropped by the first charge that finds it expired, so one just past
  /// its window may still be held until then. The Client reads it (sdk/client/client.h, check
  /// 3): a task it was already charged for is declined again for free, so an app that charges
  /// this ledger itself should give its own spends ids no server's task carries. false when the
  /// ledger is not usable (no successful init() or load(), or locked: charge() then says why)
  /// and for id 0 (no task, as the spend reset_after_data_loss() records).
  /// @errors none (see above).
  bool holds_task(uint32_t task_id) const;
  /// Whether charge(spend, now_seconds) would record the spend: OK, or the status charge() would
  /// return before persisting. Changes nothing and persists nothing (a storage failure at the
  /// charge is not foreseen).
  /// @errors As charge() before it persists: kFailedPrecondition, kInvalidArgument,
  /// kResourceExhausted.
  Status check(const PrivacySpend& spend, uint64_t now_seconds) const;
  /// Records `spend`, dated max(now_seconds, ledger_time()), if the composed total stays within
  /// budget, then persists; spends that expired at that time are dropped.
  /// @errors kFailedPrecondition: no successful init() or load(), or the ledger is locked after
  /// kDataLoss. kInvalidArgument: an implausible clock reading, a spend without finite ε ≥ 0 and
  /// δ in [0, 1), or RDP values not finite and ≥ 0. kResourceExhausted: the total would exceed
  /// the budget, or the ledger is full (no expired entry to drop); nothing changes. The storage
  /// error of the save (e.g. kUnavailable): the spend is not recorded (see the file comment).
  Status charge(const PrivacySpend& spend, uint64_t now_seconds);

  /// Spends held in memory (some may have expired since the last charge()).
  size_t size() const { return count_; }
  /// The most spends the ledger can hold (entries.size() at init()).
  size_t capacity() const { return entries_.size(); }
  /// The ledger's time: the latest date of a recorded spend, or the effective time of a charge
  /// that dropped expired spends and then failed to persist (0 when none). Never decreases
  /// except through load() (the latest stored date) and reset_after_data_loss().
  uint64_t ledger_time() const { return latest_; }

 private:
  Status usable() const;
  Result<uint64_t> effective_time(uint64_t now_seconds) const;
  // The checks charge() makes before it changes anything: the spend dated at its effective time.
  Result<PrivacySpend> admit(const PrivacySpend& spend, uint64_t now_seconds) const;
  Result<Spent> compose(uint64_t effective_seconds, const PrivacySpend* extra) const;
  bool active(const PrivacySpend& s, uint64_t effective_seconds) const;
  Status persist();

  LedgerConfig config_;
  Span<PrivacySpend> entries_;
  MutableByteSpan scratch_;
  size_t count_ = 0;
  uint64_t latest_ = 0;
  bool ready_ = false;   // init() succeeded
  bool loaded_ = false;  // memory mirrors storage: load() or reset_after_data_loss() succeeded
  bool locked_ = false;  // the stored ledger was corrupt
};

}  // namespace privacy
}  // namespace fedstat

#endif  // FEDSTAT_SDK_PRIVACY_BUDGET_LEDGER_H_
