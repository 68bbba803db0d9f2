// (write_behind_store.h) One writer thread committing queued batches in order.
#include "host_server/store/write_behind_store.h"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

#include "host_server/store/event_checks.h"

namespace fedstat {
namespace host {

WriteBehindStore::WriteBehindStore(Store& inner, std::function<void()> on_committed,
                                   size_t max_queued_bytes)
    : inner_(inner), on_committed_(std::move(on_committed)), max_queued_bytes_(max_queued_bytes) {
  for (const StoredTask& task : inner_.tasks()) known_tasks_.insert(task.task_id);
  writer_ = std::thread([this] { run_writer(); });
}

WriteBehindStore::~WriteBehindStore() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  writer_.join();
}

void WriteBehindStore::run_writer() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty() || failure_) return;  // stopping, everything committed (or a failure)
    // Group commit: every batch queued while the last transaction ran goes into this one.
    Batch batch = std::move(queue_.front());
    queue_.pop_front();
    for (; !queue_.empty(); queue_.pop_front()) {
      Batch& next = queue_.front();
      batch.ticket = next.ticket;
      batch.bytes += next.bytes;
      for (NewEvent& e : next.events) batch.events.push_back(std::move(e));
    }
    lock.unlock();
    std::optional<std::string> failed;
    try {
      inner_.append_events(batch.events);
    } catch (const std::exception& e) {
      failed = e.what();
    }
    lock.lock();
    if (failed) {
      failure_ = std::move(failed);
      queue_.clear();
    } else {
      committed_ = batch.ticket;
      queued_bytes_ -= batch.bytes;
    }
    progressed_.notify_all();
    if (on_committed_) {
      lock.unlock();
      on_committed_();
      lock.lock();
    }
    if (failure_) return;
  }
}

void WriteBehindStore::throw_if_failed_locked() const {
  if (failure_) throw std::runtime_error("fedstat store: a queued write failed: " + *failure_);
}

void WriteBehindStore::throw_if_failed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  throw_if_failed_locked();
}

void WriteBehindStore::flush_locked(std::unique_lock<std::mutex>& lock) {
  progressed_.wait(lock, [this] { return failure_.has_value() || committed_ == pending_; });
  throw_if_failed_locked();
}

void WriteBehindStore::flush() {
  std::unique_lock<std::mutex> lock(mutex_);
  flush_locked(lock);
}

uint64_t WriteBehindStore::pending_ticket() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_;
}

uint64_t WriteBehindStore::committed_ticket() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return committed_;
}

uint64_t WriteBehindStore::append_events(const std::vector<NewEvent>& events) {
  check_event_batch(events);
  const bool device_messages_only =
      std::all_of(events.begin(), events.end(),
                  [](const NewEvent& e) { return e.kind == EventKind::kDeviceMessage; });
  if (!device_messages_only) {  // a round's own step: written now, after everything queued
    return after_queued_writes([&] { return inner_.append_events(events); });
  }
  size_t bytes = 0;
  for (const NewEvent& e : events) {
    if (known_tasks_.count(e.task_id) == 0) {
      throw std::invalid_argument("append_events: unknown task " + std::to_string(e.task_id));
    }
    bytes += e.payload.size();
  }
  Batch batch;  // built before it takes a ticket: a failed copy leaves no ticket behind
  batch.bytes = bytes;
  batch.events = events;
  std::unique_lock<std::mutex> lock(mutex_);
  throw_if_failed_locked();
  // Back-pressure: wait while the queue holds more than its bound (a batch larger than the bound
  // waits for an empty queue, then goes alone).
  progressed_.wait(lock, [&] {
    return failure_.has_value() || queued_bytes_ == 0 || queued_bytes_ + bytes <= max_queued_bytes_;
  });
  throw_if_failed_locked();
  batch.ticket = pending_ + 1;
  queue_.push_back(std::move(batch));  // may throw: then no ticket was taken
  ++pending_;
  queued_bytes_ += bytes;
  lock.unlock();
  queued_.notify_one();
  return 0;
}

void WriteBehindStore::put_task(uint32_t task_id, const std::string& definition) {
  after_queued_writes([&] {
    inner_.put_task(task_id, definition);
    known_tasks_.insert(task_id);
  });
}

std::vector<StoredTask> WriteBehindStore::tasks() {
  return after_queued_writes([&] { return inner_.tasks(); });
}

void WriteBehindStore::set_task_state(uint32_t task_id, const std::string& state) {
  after_queued_writes([&] { inner_.set_task_state(task_id, state); });
}

std::vector<StoredEvent> WriteBehindStore::events(uint32_t task_id) {
  return after_queued_writes([&] { return inner_.events(task_id); });
}

void WriteBehindStore::put_result(uint32_t task_id, const std::string& result_json) {
  after_queued_writes([&] { inner_.put_result(task_id, result_json); });
}

std::optional<std::string> WriteBehindStore::result(uint32_t task_id) {
  return after_queued_writes([&] { return inner_.result(task_id); });
}

std::string WriteBehindStore::integrity_check() {
  return after_queued_writes([&] { return inner_.integrity_check(); });
}

}  // namespace host
}  // namespace fedstat
