// WriteBehindStore: a Store decorator that commits the rounds' device messages on a writer
// thread of its own. The server's io thread decrypts, decodes and answers the next message while
// SQLite commits, and the writer commits every message queued during its last commit in one
// transaction (group commit): fewer commits, fewer WAL frames, fewer checkpoint fsyncs. Measured
// on 2 cores (tests/bench/ingest_bench.cpp): 40-chunk data-shift reports from returning devices,
// 305-345 reports/s against 190-205 with each message committed on the io thread.
//
// Persist, then acknowledge, still holds, through a gate. append_events() of device messages
// alone checks the batch, queues it and returns; pending_ticket() counts the batches queued,
// committed_ticket() the batches committed, in queue order. An answer decided after batch T
// leaves only once committed_ticket() >= T (rounds/gated_outbox.h holds it; `on_committed` is
// called on the writer thread after each commit to wake whoever holds it). So a kill -9 loses
// only batches no peer was ever answered about, and what is on disk is always a prefix of what
// the rounds appended. Everything else — a batch holding a round's transition or note, tasks,
// events, task state, results, the integrity check — first waits until everything queued has
// committed, then runs on the caller's thread: reads see every append, writes keep call order,
// and a round's step is on disk when its call returns, as before.
//
// Errors: append_events throws store.h's std::invalid_argument (an empty batch, a kind outside
// EventKind, a task not declared) at the call, queueing nothing. A commit that fails on the
// writer thread (a full disk, an I/O error) stops it: nothing queued after it is committed,
// held answers are never released, on_committed is called once more, and every later call
// throws std::runtime_error "fedstat store: a queued write failed: <the backend's message>" —
// the server stops, as it does when a direct write throws. With more than `max_queued_bytes` of
// payload queued, append_events waits for the writer: a fleet that sends faster than the disk
// commits is slowed, not buffered without bound. append_events returns 0 for a queued batch (the
// backend's sequence number exists only once it commits; the rounds never read it).
// Threads: one caller thread (the io thread) and the writer; the backend is used by one of them
// at a time. Memory: the queued batches (at most max_queued_bytes of payload, default 16 MiB,
// plus about 80 bytes per event) and one thread. Paper: none.
#ifndef FEDSTAT_HOST_STORE_WRITE_BEHIND_STORE_H_
#define FEDSTAT_HOST_STORE_WRITE_BEHIND_STORE_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "host_server/store/store.h"

namespace fedstat {
namespace host {

// Payload bytes queued before append_events waits for the writer.
inline constexpr size_t kMaxQueuedBytes = size_t{16} << 20;

class WriteBehindStore final : public Store {
 public:
  // `inner` must outlive this object and is used by no one else while it lives. `on_committed`
  // (may be empty) is called on the writer thread after each batch commits, and once after a
  // commit fails; it must not call back into this store.
  // `max_queued_bytes`: the back-pressure bound (tests pass a small one).
  WriteBehindStore(Store& inner, std::function<void()> on_committed,
                   size_t max_queued_bytes = kMaxQueuedBytes);
  ~WriteBehindStore() override;  // commits what is queued (unless a commit failed), then joins
  WriteBehindStore(const WriteBehindStore&) = delete;
  WriteBehindStore& operator=(const WriteBehindStore&) = delete;

  void put_task(uint32_t task_id, const std::string& definition) override;
  std::vector<StoredTask> tasks() override;
  void set_task_state(uint32_t task_id, const std::string& state) override;
  uint64_t append_events(const std::vector<NewEvent>& events) override;
  std::vector<StoredEvent> events(uint32_t task_id) override;
  void put_result(uint32_t task_id, const std::string& result_json) override;
  std::optional<std::string> result(uint32_t task_id) override;
  std::string integrity_check() override;

  // The ticket of the last batch queued (0: none yet), and of the last one committed. An answer
  // decided after append number T may leave once committed_ticket() >= T.
  uint64_t pending_ticket() const;
  uint64_t committed_ticket() const;
  // Throws std::runtime_error when a queued write failed (then nothing more commits).
  void throw_if_failed() const;
  // Waits until everything queued has committed; throws as throw_if_failed().
  void flush();

 private:
  struct Batch {
    uint64_t ticket = 0;
    size_t bytes = 0;
    std::vector<NewEvent> events;
  };
  void run_writer();
  void flush_locked(std::unique_lock<std::mutex>& lock);
  // Runs `call` on the caller's thread once everything queued has committed (the writer is then
  // idle, and stays so while the lock is held: the caller is the only one who queues).
  template <typename Call>
  auto after_queued_writes(Call call) {
    std::unique_lock<std::mutex> lock(mutex_);
    flush_locked(lock);
    return call();
  }
  void throw_if_failed_locked() const;

  Store& inner_;
  std::function<void()> on_committed_;
  size_t max_queued_bytes_;
  std::set<uint32_t> known_tasks_;  // what put_task declared (the caller's thread only)

  mutable std::mutex mutex_;
  std::condition_variable queued_;      // the writer waits for a batch or the stop
  std::condition_variable progressed_;  // flush() and back-pressure wait for commits
  std::deque<Batch> queue_;             // not yet taken by the writer
  size_t queued_bytes_ = 0;             // payload of the batches not yet committed
  uint64_t pending_ = 0;
  uint64_t committed_ = 0;
  std::optional<std::string> failure_;
  bool stopping_ = false;
  std::thread writer_;  // last: started once everything above is ready
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_WRITE_BEHIND_STORE_H_
