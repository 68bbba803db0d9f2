// (gated_outbox.h) Answers held in order behind the store's queued writes.
#include "host_server/rounds/gated_outbox.h"

#include <utility>

namespace fedstat {
namespace host {

GatedOutbox::GatedOutbox(Outbox& inner, std::function<uint64_t()> pending,
                         std::function<uint64_t()> committed,
                         std::function<void()> wait_for_commits)
    : inner_(inner),
      pending_(std::move(pending)),
      committed_(std::move(committed)),
      wait_for_commits_(std::move(wait_for_commits)) {}

bool GatedOutbox::must_hold() const {
  return !held_.empty() || committed_() < pending_();
}

void GatedOutbox::send(ConnectionId connection, const fedstat_v1_Envelope& envelope) {
  if (!must_hold()) {
    inner_.send(connection, envelope);
    return;
  }
  hold(connection, std::make_unique<fedstat_v1_Envelope>(envelope));
}

void GatedOutbox::close(ConnectionId connection) {
  if (!must_hold()) {
    inner_.close(connection);
    return;
  }
  hold(connection, nullptr);
}

void GatedOutbox::hold(ConnectionId connection, std::unique_ptr<fedstat_v1_Envelope> envelope) {
  held_.push_back({pending_(), connection, std::move(envelope)});
  // Past the bound the rounds' thread waits for the writer (back-pressure). It does not release
  // here, inside a round's step: a send can drop a connection and call the rounds back. The
  // release the writer posted after these commits passes everything on once the step is over.
  if (held_.size() > kMaxHeldAnswers) wait_for_commits_();
}

void GatedOutbox::keep_open(ConnectionId connection, uint32_t seconds) {
  inner_.keep_open(connection, seconds);
}

void GatedOutbox::release() {
  const uint64_t committed = committed_();
  while (!held_.empty() && held_.front().ticket <= committed) {
    const Held answer = std::move(held_.front());
    held_.pop_front();
    if (answer.envelope) {
      inner_.send(answer.connection, *answer.envelope);
    } else {
      inner_.close(answer.connection);
    }
  }
}

}  // namespace host
}  // namespace fedstat
