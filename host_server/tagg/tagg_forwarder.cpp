// The collector's worker for the TAgg (tagg_forwarder.h).
#include "host_server/tagg/tagg_forwarder.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace fedstat {
namespace host {

constexpr uint32_t kMaxRetryMs = 30000;

TaggForwarder::TaggForwarder(TaggEndpoint endpoint, Deliver deliver, Exchange exchange,
                             uint32_t first_retry_ms)
    : endpoint_(std::move(endpoint)),
      deliver_(std::move(deliver)),
      exchange_(std::move(exchange)),
      first_retry_ms_(first_retry_ms),
      worker_([this] { run(); }) {}

TaggForwarder::~TaggForwarder() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

void TaggForwarder::submit(ExactAggregate aggregate) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(aggregate));
  }
  wake_.notify_all();
}

void TaggForwarder::run() {
  for (;;) {
    ExactAggregate next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    forward(next);
  }
}

void TaggForwarder::forward(const ExactAggregate& aggregate) {
  const uint32_t attempts = std::max<uint32_t>(1, endpoint_.attempts);
  uint32_t wait_ms = first_retry_ms_;
  for (uint32_t attempt = 1;; ++attempt) {
    TaggAttempt report;
    report.task_id = aggregate.task_id;
    report.answer = exchange_(endpoint_, aggregate);
    report.attempt = attempt;
    report.final = report.answer.kind != TaggAnswer::Kind::kUnreachable || attempt >= attempts;
    report.retry_in_ms = report.final ? 0 : wait_ms;
    deliver_(report);
    if (report.final) return;
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] { return stopping_; })) {
      return;
    }
    wait_ms = std::min(kMaxRetryMs, wait_ms * 2);
  }
}

}  // namespace host
}  // namespace fedstat
