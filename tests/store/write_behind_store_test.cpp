// WriteBehindStore (host_server/store/write_behind_store.h): queued device messages commit in
// order on the writer thread, grouped; steps and reads wait for them; checks happen at the call;
// back-pressure; a failed commit stops everything after it. The backend here is the in-memory
// store behind a Gate the test holds shut to keep the writer inside a commit — no sleeps: each
// test waits on the writer's own progress (committed_ticket, the Gate's entry count).
#include "host_server/store/write_behind_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "host_server/store/memory_store.h"
#include "host_server/store/store.h"

namespace fedstat {
namespace host {
namespace {

// The in-memory store, recording each call's name in order; append_events waits while the gate
// is shut, and throws once `fail_next_append` is set.
class GatedStore final : public Store {
 public:
  void shut() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = false;
    permits_ = 0;
  }
  // While shut: lets exactly one more append through.
  void let_one_through() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++permits_;
    }
    changed_.notify_all();
  }
  void open() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_ = true;
    }
    changed_.notify_all();
  }
  // Waits until `n` append_events calls have entered (the writer is inside the n-th).
  void wait_for_appends(size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return appends_entered_ >= n; });
  }
  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_;
  }
  std::vector<size_t> batch_sizes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return batch_sizes_;
  }
  // Waits up to `limit` for a call other than a device messages' append to reach the backend
  // (one that should still be waiting for the writer). True when one did.
  bool another_call_arrives_within(std::chrono::milliseconds limit, int seen) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return other_calls_ > seen; });
  }
  int other_calls() {
    std::lock_guard<std::mutex> lock(mutex_);
    return other_calls_;
  }
  // Calls that reached the backend while the writer was shut inside an append.
  int calls_while_a_commit_was_held() {
    std::lock_guard<std::mutex> lock(mutex_);
    return calls_while_held_;
  }
  std::atomic<bool> fail_next_append{false};

  void put_task(uint32_t id, const std::string& definition) override {
    record("put_task");
    inner_->put_task(id, definition);
  }
  std::vector<StoredTask> tasks() override {
    record("tasks");
    return inner_->tasks();
  }
  void set_task_state(uint32_t id, const std::string& state) override {
    record("set_task_state");
    inner_->set_task_state(id, state);
  }
  uint64_t append_events(const std::vector<NewEvent>& events) override {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (events.front().kind != EventKind::kDeviceMessage) {
        note_other_call_locked("append_events");
      } else {
        calls_.push_back("append_events");
      }
      batch_sizes_.push_back(events.size());
      ++appends_entered_;
      ++appends_inside_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_ || permits_ > 0; });
      if (!open_) --permits_;
    }
    // Inside until the inner append has returned or thrown: a call that reaches the backend
    // during the commit itself is counted too.
    struct Leave {
      GatedStore& store;
      ~Leave() {
        std::lock_guard<std::mutex> lock(store.mutex_);
        --store.appends_inside_;
      }
    } leave{*this};
    if (fail_next_append.exchange(false)) throw std::runtime_error("disk full");
    return inner_->append_events(events);
  }
  std::vector<StoredEvent> events(uint32_t id) override {
    record("events");
    return inner_->events(id);
  }
  void put_result(uint32_t id, const std::string& result) override {
    record("put_result");
    inner_->put_result(id, result);
  }
  std::optional<std::string> result(uint32_t id) override {
    record("result");
    return inner_->result(id);
  }
  std::string integrity_check() override {
    record("integrity_check");
    return inner_->integrity_check();
  }

 private:
  void record(const std::string& call) {
    std::lock_guard<std::mutex> lock(mutex_);
    note_other_call_locked(call);
  }
  void note_other_call_locked(const std::string& call) {
    calls_.push_back(call);
    ++other_calls_;
    if (appends_inside_ > 0) ++calls_while_held_;
    changed_.notify_all();
  }
  std::unique_ptr<Store> inner_ = make_memory_store();
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true;
  int permits_ = 0;  // appends let through while shut
  size_t appends_entered_ = 0;
  int appends_inside_ = 0;
  int other_calls_ = 0;
  int calls_while_held_ = 0;
  std::vector<std::string> calls_;
  std::vector<size_t> batch_sizes_;
};

NewEvent message(uint64_t client, uint8_t byte, EventKind kind = EventKind::kDeviceMessage) {
  NewEvent e;
  e.task_id = 1;
  e.client_id = client;
  e.kind = kind;
  e.payload = {byte, byte};
  return e;
}

// Shuts `backend` and leaves the writer inside the commit of message 1 with message 2 queued
// behind it.
void hold_a_commit_with_one_queued(GatedStore& backend, WriteBehindStore& store) {
  backend.shut();
  store.append_event(message(1, 1));
  backend.wait_for_appends(1);  // the writer is inside the first commit
  store.append_event(message(2, 2));
}

class WriteBehindStoreTest : public ::testing::Test {
 protected:
  void SetUp() override { backend_.put_task(1, "{}"); }
  GatedStore backend_;
  std::atomic<int> wakes_{0};
};

TEST_F(WriteBehindStoreTest, QueuedMessagesCommitInOrderAndEveryReadSeesThem) {
  WriteBehindStore store(backend_, [this] { ++wakes_; });
  for (uint8_t i = 0; i < 100; ++i) EXPECT_EQ(store.append_event(message(i, i)), 0u);
  EXPECT_EQ(store.pending_ticket(), 100u);
  const std::vector<StoredEvent> events = store.events(1);  // waits for the writer
  EXPECT_EQ(store.committed_ticket(), 100u);
  ASSERT_EQ(events.size(), 100u);
  for (uint8_t i = 0; i < 100; ++i) {
    EXPECT_EQ(events[i].client_id, i);
    EXPECT_EQ(events[i].payload, std::vector<uint8_t>({i, i}));
    if (i > 0) {
      EXPECT_GT(events[i].sequence, events[i - 1].sequence);
    }
  }
  while (wakes_ < 1) std::this_thread::yield();  // on_committed ran (hangs if never)
}

TEST_F(WriteBehindStoreTest, AnAppendReturnsBeforeItsCommitAndWhatQueuesMeanwhileCommitsAsOne) {
  WriteBehindStore store(backend_, {});
  backend_.shut();
  store.append_event(message(1, 1));
  backend_.wait_for_appends(1);  // the writer is inside the first commit
  for (uint8_t i = 2; i <= 5; ++i) store.append_event(message(i, i));
  EXPECT_EQ(store.pending_ticket(), 5u);
  EXPECT_EQ(store.committed_ticket(), 0u);  // the gate is shut: nothing has committed
  backend_.open();
  store.flush();
  EXPECT_EQ(store.committed_ticket(), 5u);
  // The first alone (it was being committed), then the four queued meanwhile in one transaction.
  EXPECT_EQ(backend_.batch_sizes(), (std::vector<size_t>{1, 4}));
  ASSERT_EQ(store.events(1).size(), 5u);
}

// A round's own step, a task's state and a result are written after everything queued before
// them, and are on the backend when the call returns.
TEST_F(WriteBehindStoreTest, StepsStatesAndResultsWaitForEverythingQueuedBeforeThem) {
  WriteBehindStore store(backend_, {});
  hold_a_commit_with_one_queued(backend_, store);
  const int before = backend_.calls_while_a_commit_was_held();  // SetUp's put_task: 0
  const int seen = backend_.other_calls();
  std::thread step([&] {
    store.append_event(message(0, 9, EventKind::kTransition));
    store.set_task_state(1, "open");
    store.put_result(1, "{}");
  });
  // A step that did not wait for the writer would reach the backend now, the first commit still
  // held: give it 200 ms to (a correct store never does; the wait then only delays the test).
  EXPECT_FALSE(backend_.another_call_arrives_within(std::chrono::milliseconds(200), seen))
      << "a step reached the backend before the queued writes committed";
  backend_.open();
  step.join();
  EXPECT_EQ(backend_.calls_while_a_commit_was_held(), before);
  EXPECT_EQ(backend_.calls(),
            (std::vector<std::string>{"put_task", "tasks", "append_events", "append_events",
                                      "append_events", "set_task_state", "put_result"}));
  EXPECT_EQ(backend_.batch_sizes(), (std::vector<size_t>{1, 1, 1}));  // the step alone, last
  const std::vector<StoredEvent> events = store.events(1);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].kind, EventKind::kTransition);
  EXPECT_EQ(store.result(1), std::optional<std::string>("{}"));
}

// Every call other than a device messages' append waits for what was queued before it, each on
// its own (above, only the first call of the step found writes queued): with a commit held and a
// message queued behind it, the call does not reach the backend, then reaches it after both.
TEST(WriteBehindStoreEachCall, EverySynchronousCallWaitsForTheQueuedWrites) {
  const std::vector<std::pair<std::string, std::function<void(WriteBehindStore&)>>> calls = {
      {"append_events",
       [](WriteBehindStore& s) { s.append_event(message(0, 9, EventKind::kTransition)); }},
      {"put_task", [](WriteBehindStore& s) { s.put_task(2, "{}"); }},
      {"tasks", [](WriteBehindStore& s) { s.tasks(); }},
      {"set_task_state", [](WriteBehindStore& s) { s.set_task_state(1, "open"); }},
      {"events", [](WriteBehindStore& s) { s.events(1); }},
      {"put_result", [](WriteBehindStore& s) { s.put_result(1, "{}"); }},
      {"result", [](WriteBehindStore& s) { s.result(1); }},
      {"integrity_check", [](WriteBehindStore& s) { s.integrity_check(); }},
  };
  for (const auto& [name, call] : calls) {
    SCOPED_TRACE(name);
    GatedStore backend;
    backend.put_task(1, "{}");
    WriteBehindStore store(backend, {});
    hold_a_commit_with_one_queued(backend, store);
    const int seen = backend.other_calls();
    std::thread caller([&] { call(store); });
    // A call that did not wait would reach the backend now: give it 200 ms to (a correct store
    // never does; the wait then only delays the test).
    EXPECT_FALSE(backend.another_call_arrives_within(std::chrono::milliseconds(200), seen))
        << name << " reached the backend before the queued writes committed";
    // The first commit ends; the writer is inside the second. A call that waited for the first
    // alone (or for all but the last) would reach the backend now: 200 ms again.
    backend.let_one_through();
    backend.wait_for_appends(2);
    EXPECT_FALSE(backend.another_call_arrives_within(std::chrono::milliseconds(200), seen))
        << name << " reached the backend before the last queued write committed";
    backend.open();
    caller.join();
    EXPECT_EQ(backend.calls_while_a_commit_was_held(), 0);
    const std::vector<std::string> made = backend.calls();
    ASSERT_GE(made.size(), 3u);
    EXPECT_EQ(made.back(), name);  // the call's own, after both queued messages' commits
    EXPECT_EQ(made[made.size() - 2], "append_events");
    EXPECT_EQ(made[made.size() - 3], "append_events");
    EXPECT_EQ(store.committed_ticket(), 2u);
  }
}

// store.h's refusals come from the call itself, and nothing is queued.
TEST_F(WriteBehindStoreTest, ABadBatchIsRefusedAtTheCallAndNothingIsQueued) {
  WriteBehindStore store(backend_, {});
  EXPECT_THROW(store.append_events({}), std::invalid_argument);
  NewEvent unknown_task = message(1, 1);
  unknown_task.task_id = 2;
  EXPECT_THROW(store.append_event(unknown_task), std::invalid_argument);
  EXPECT_THROW(store.append_event(message(1, 1, static_cast<EventKind>(4))), std::invalid_argument);
  EXPECT_EQ(store.pending_ticket(), 0u);
  store.put_task(2, "{}");  // declared through the decorator: now known
  store.append_event(unknown_task);
  store.flush();
  EXPECT_EQ(store.events(2).size(), 1u);
}

// A commit that fails stops the writer: what was queued after it is not committed, the failure
// is reported once through on_committed, and every later call throws naming it.
TEST_F(WriteBehindStoreTest, AFailedCommitStopsEverythingAfterIt) {
  WriteBehindStore store(backend_, [this] { ++wakes_; });
  store.append_event(message(1, 1));
  store.flush();
  while (wakes_ < 1) std::this_thread::yield();  // the first commit's wake-up
  backend_.shut();
  backend_.fail_next_append = true;
  store.append_event(message(2, 2));
  backend_.wait_for_appends(2);
  store.append_event(message(3, 3));  // queued behind the failing commit
  backend_.open();
  try {
    store.flush();
    FAIL() << "flush after a failed commit returned";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("a queued write failed: disk full"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(store.committed_ticket(), 1u);
  while (wakes_ < 2) std::this_thread::yield();  // the failure's wake-up (hangs if never)
  EXPECT_THROW(store.append_event(message(4, 4)), std::runtime_error);
  EXPECT_THROW(store.set_task_state(1, "open"), std::runtime_error);
  EXPECT_THROW(store.events(1), std::runtime_error);
  EXPECT_THROW(store.throw_if_failed(), std::runtime_error);
  EXPECT_EQ(backend_.events(1).size(), 1u);  // only the first: 2 failed, 3 was never tried
}

// Past the queue's bound an append waits for the writer instead of buffering more.
TEST_F(WriteBehindStoreTest, AnAppendPastTheQueuesBoundWaitsForTheWriter) {
  WriteBehindStore store(backend_, {}, /*max_queued_bytes=*/3);
  backend_.shut();
  store.append_event(message(1, 1));  // 2 bytes, being committed
  backend_.wait_for_appends(1);
  uint64_t committed_when_admitted = 99;
  std::atomic<bool> calling{false};
  std::thread second([&] {
    calling = true;
    store.append_event(message(2, 2));  // 2 + 2 > 3: waits until the first has committed
    committed_when_admitted = store.committed_ticket();
  });
  while (!calling) std::this_thread::yield();
  // A store without back-pressure queues the second batch at once: give it 200 ms to (a correct
  // store cannot while the first commit is held; the wait then only delays the test).
  const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (store.pending_ticket() < 2 && std::chrono::steady_clock::now() < limit) {
    std::this_thread::yield();
  }
  EXPECT_EQ(store.pending_ticket(), 1u) << "queued past the bound while the writer was held";
  backend_.open();
  second.join();
  EXPECT_GE(committed_when_admitted, 1u);  // admitted only once the first had committed
  store.flush();
  EXPECT_EQ(store.events(1).size(), 2u);
}

TEST_F(WriteBehindStoreTest, DestroyingItCommitsWhatIsQueued) {
  {
    WriteBehindStore store(backend_, {});
    hold_a_commit_with_one_queued(backend_, store);
    backend_.open();
  }
  EXPECT_EQ(backend_.events(1).size(), 2u);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
