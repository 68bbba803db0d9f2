// TrustedSum: the TRUSTED / TAGG / NONE path's collection of Report chunks in the clear. Each
// device's words arrive in order (offset = words received so far); a device's report counts once
// it holds vector_length words; the sum is over complete reports, mod 2^bits.
// Errors (check(), nothing changes): a chunk already received (kAlreadyExists), a chunk past the
// next expected offset or after the report is complete (kFailedPrecondition), an empty chunk, one
// running past vector_length, or a word ≥ 2^bits (kOutOfRange). What the task's kind allows
// beyond 2^bits needs the whole report (a KL count against the device's total, its last word):
// completed_report() gives it before the completing chunk is added, and the round refuses and
// drop()s a report outside the bounds (TaskSpec::check_report, task_round.h).
// Memory: vector_length words per device with an unfinished report, plus the sum. Paper: none.
#ifndef FEDSTAT_HOST_ROUNDS_TRUSTED_SUM_H_
#define FEDSTAT_HOST_ROUNDS_TRUSTED_SUM_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "host_server/rounds/messages.h"

namespace fedstat {
namespace host {

class TrustedSum {
 public:
  TrustedSum(uint32_t vector_length, uint32_t bits);

  std::optional<Refusal> check(uint64_t client, const fedstat_v1_Report& report) const;
  // Adds a chunk check() accepted; returns the client's words received so far.
  uint32_t add(uint64_t client, const fedstat_v1_Report& report);
  // For a chunk check() accepted: the client's whole report when this chunk completes it (the
  // words held, then the chunk's), else nothing. Changes nothing.
  std::optional<std::vector<uint64_t>> completed_report(uint64_t client,
                                                        const fedstat_v1_Report& report) const;
  // Forgets the client's unfinished report (it is never summed; words_from() stays).
  void drop(uint64_t client) { partial_.erase(client); }

  uint32_t words_from(uint64_t client) const;
  uint32_t contributors() const { return contributors_; }
  const std::vector<uint64_t>& sum() const { return sum_; }

 private:
  uint32_t length_;
  uint32_t bits_;
  uint64_t mask_;                                      // 2^bits − 1: the words check() takes
  std::map<uint64_t, std::vector<uint64_t>> partial_;  // unfinished reports
  std::map<uint64_t, uint32_t> received_;
  std::vector<uint64_t> sum_;
  uint32_t contributors_ = 0;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ROUNDS_TRUSTED_SUM_H_
