// TaggService: the trusted aggregator's decision — what the TAgg does with an exact aggregate a
// collector sent (docs/protocol.md "TAgg"). No I/O of its own (tagg_intake.h feeds it).
//
// A TAgg holds the task declarations (the plans: points, Π, the KL options) and the noise source;
// the collectors hold neither. For an aggregate of a TAGG task it runs the plan's estimator (the
// kl plan's tagg model: A = Σ log r_t and B = Σ λ(r_t − 1) through one 2-value Gaussian
// mechanism, kl_estimator.h) and answers with the result JSON, which is everything that leaves.
//
// Checks (a Refusal, nothing stored): the task unknown here (kNotFound) or not TAGG
// (kFailedPrecondition); a task fingerprint other than this TAgg's plan's (kFailedPrecondition:
// the devices were charged for, or answered, another task than the one it would noise); a length
// other than the task's vector_length (kInvalidArgument); contributors outside [min_clients,
// max_clients] or a word ≥ 2^bits (kOutOfRange); a second, different aggregate for a task that has
// one (kAlreadyExists). A byte-identical resend gets the stored result again — no second noise
// draw.
//
// Persist, then answer: the accepted aggregate is appended to the store (kServerNote, its
// aggregate_bytes) before the estimator runs, and the result is put (Store::put_result, state
// "released") before submit returns. A TAgg that crashed between the two recomputes the result
// from the stored aggregate at the resend: the first draw never left the process.
//
// Privacy. Adversary: knows every record but one, sees everything the TAgg answers and whether
// it answers (the collector may be that adversary; it holds the exact aggregate anyway, so the
// TAgg's guard is against the analyst and anyone the collector publishes to).
//  - Whether it answers: every check above reads only what is public under the substitution
//    neighbours the tasks are calibrated for — the task's declaration and fingerprint, the
//    vector's length, the contributor count, the word width — and the task's stored aggregate,
//    which only its own collector reaches (tagg_intake.h refuses every other identity first:
//    without that, a second listed collector could send guesses and learn which one equals the
//    stored bytes). None reads a word's value beyond the public width, so neighbouring
//    aggregates are answered alike.
//  - What it answers: the plan's estimator's JSON — the noised estimate, its public standard
//    deviation, the contributor count and the item total N (public under substitution) — never
//    a word of the aggregate nor a hash of it (with_sum_digest omits it for TAGG). The kl plan
//    answers a round with N_t = 0 (public under substitution) with a JSON "refused" and no
//    estimate; anything else an estimator throws gets a fixed "the estimate failed" (kInternal).
//  - When it answers: the estimator is one pass over the T points whatever the counts; libm's
//    log is not constant-time, so response timing is not claimed private (a network observer of
//    the collector ↔ TAgg link sees it; the link is TLS between two operators' servers).
//  - How often: once per task. Were a different aggregate for the same task noised again, a
//    collector could send the same sums shifted by known offsets and average the independent
//    noises away; a resend of the same bytes returns the stored draw.
// Errors: Store failures propagate as exceptions. Memory: the plans, plus one aggregate while it
// is checked. Paper: 000 §4 (the TAgg model, Algorithm 2).
#ifndef FEDSTAT_HOST_TAGG_TAGG_SERVICE_H_
#define FEDSTAT_HOST_TAGG_TAGG_SERVICE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>

#include "host_server/rounds/messages.h"
#include "host_server/store/store.h"
#include "host_server/tagg/tagg_wire.h"
#include "host_server/tasks/task_plan.h"

namespace fedstat {
namespace host {

// The stored state of a TAgg task whose noised result is published.
inline constexpr char kTaggReleased[] = "released";

class TaggService {
 public:
  // `plans`: every task the TAgg was declared (non-TAGG ones are refused by name); each TAGG
  // task is put in the store with `definitions`' entry (its declaration).
  TaggService(Store& store, std::map<uint32_t, TaskPlan> plans,
              const std::map<uint32_t, std::string>& definitions);

  // The first chunk's header: refused before any word is taken.
  std::optional<Refusal> check_header(uint32_t task_id, uint32_t contributors,
                                      uint32_t vector_length,
                                      const TaskFingerprint& fingerprint) const;
  // The whole aggregate: the result JSON to answer with, or why not.
  std::variant<std::string, Refusal> submit(const ExactAggregate& aggregate);

 private:
  Store& store_;
  std::map<uint32_t, TaskPlan> plans_;
  std::map<uint32_t, TaskFingerprint> fingerprints_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TAGG_TAGG_SERVICE_H_
