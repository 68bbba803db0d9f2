// TaggForwarder: the collector's worker that takes TAGG aggregates to the TAgg, off the io thread
// (each exchange blocks: tagg_client.h). Aggregates are sent one at a time, in submission order.
// An unreachable TAgg is tried again after 1, 2, 4, … s (at most 30 s between tries) until
// `attempts` tries failed; a refusal is not retried (the same bytes get the same answer). Every
// try's outcome goes to `deliver` — on the worker thread: post it to the io thread — with
// `final` set on the last one for that aggregate. A task the forwarder gave up on stays
// "awaiting_tagg" in the store; the next start of the server forwards it again (the rounds'
// replay rebuilds the same aggregate, task_round.h).
// Destruction stops the worker: waits are cut short, an exchange under way finishes first (at
// most its time-outs). Threads: submit from any thread. Memory: the queued aggregates.
// Paper: none.
#ifndef FEDSTAT_HOST_TAGG_TAGG_FORWARDER_H_
#define FEDSTAT_HOST_TAGG_TAGG_FORWARDER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "host_server/server_config.h"
#include "host_server/tagg/tagg_client.h"

namespace fedstat {
namespace host {

struct TaggAttempt {
  uint32_t task_id = 0;
  TaggAnswer answer;
  uint32_t attempt = 1;  // 1-based
  bool final = false;    // no further try for this aggregate in this process
  uint32_t retry_in_ms = 0;
};

class TaggForwarder {
 public:
  using Exchange = std::function<TaggAnswer(const TaggEndpoint&, const ExactAggregate&)>;
  using Deliver = std::function<void(const TaggAttempt&)>;

  TaggForwarder(TaggEndpoint endpoint, Deliver deliver, Exchange exchange = exchange_with_tagg,
                uint32_t first_retry_ms = 1000);
  ~TaggForwarder();
  TaggForwarder(const TaggForwarder&) = delete;
  TaggForwarder& operator=(const TaggForwarder&) = delete;

  void submit(ExactAggregate aggregate);

 private:
  void run();
  void forward(const ExactAggregate& aggregate);

  const TaggEndpoint endpoint_;
  const Deliver deliver_;
  const Exchange exchange_;
  const uint32_t first_retry_ms_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<ExactAggregate> queue_;
  bool stopping_ = false;
  std::thread worker_;  // last: started once everything above is constructed
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TAGG_TAGG_FORWARDER_H_
