// GatedOutbox: an Outbox decorator that holds every answer until the store writes decided before
// it have committed — persist, then acknowledge, when the store commits behind the rounds' back
// (store/write_behind_store.h). An answer (send, close) given while a write is queued is held,
// tagged with the ticket of the last write queued; release() passes on, in the order they were
// given, every held answer whose ticket has committed. While nothing is queued or held, answers
// pass straight through. keep_open() and checked_in() always pass through: they send nothing to
// the peer.
// One exception, decided on no stored message: the Coordinator closes a device's older connection
// when the same device opens a newer one, before the newer hello is queued — so that close may
// leave before the hello commits (the device owns both connections).
// Errors: those of wait_for_commits. Threads: the rounds' thread only (release() too; the
// store's writer asks for it through the io loop). Memory: one Envelope copy per held answer
// (sizeof fedstat_v1_Envelope, 544 bytes): see kMaxHeldAnswers. Paper: none.
#ifndef FEDSTAT_HOST_ROUNDS_GATED_OUTBOX_H_
#define FEDSTAT_HOST_ROUNDS_GATED_OUTBOX_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

#include "host_server/rounds/outbox.h"

namespace fedstat {
namespace host {

// Answers held before each further answer waits (on the rounds' thread) for the queued writes
// to commit: a disk that stalls stalls the rounds, and answers are not buffered without bound.
// Held answers are then at most this many plus those one io callback gives (the frames of one
// read, each answered), until the writer's posted release(); about 600 bytes each.
inline constexpr size_t kMaxHeldAnswers = 4096;

class GatedOutbox final : public Outbox {
 public:
  // `pending()`: the ticket of the last write queued; `committed()`: of the last committed;
  // `wait_for_commits()`: returns once everything queued has committed (it may throw: a failed
  // write, passed on to the caller of send or close).
  GatedOutbox(Outbox& inner, std::function<uint64_t()> pending, std::function<uint64_t()> committed,
              std::function<void()> wait_for_commits);
  // The same over a store's writer (store/write_behind_store.h: pending_ticket(),
  // committed_ticket(), flush()), which must outlive this object.
  template <typename Writer>
  GatedOutbox(Outbox& inner, Writer& writer)
      : GatedOutbox(
            inner, [&writer] { return writer.pending_ticket(); },
            [&writer] { return writer.committed_ticket(); }, [&writer] { writer.flush(); }) {}

  void send(ConnectionId connection, const fedstat_v1_Envelope& envelope) override;
  void close(ConnectionId connection) override;
  void keep_open(ConnectionId connection, uint32_t seconds) override;
  void checked_in(ConnectionId connection) override { inner_.checked_in(connection); }

  // Passes on every held answer whose writes have committed, oldest first.
  void release();
  size_t held() const { return held_.size(); }

 private:
  struct Held {
    uint64_t ticket = 0;
    ConnectionId connection = 0;
    std::unique_ptr<fedstat_v1_Envelope> envelope;  // null: a close
  };
  // True when an answer given now must wait (a write is queued, or an earlier answer is held).
  bool must_hold() const;
  void hold(ConnectionId connection, std::unique_ptr<fedstat_v1_Envelope> envelope);

  Outbox& inner_;
  std::function<uint64_t()> pending_;
  std::function<uint64_t()> committed_;
  std::function<void()> wait_for_commits_;
  std::deque<Held> held_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ROUNDS_GATED_OUTBOX_H_
