// FakeStore: an in-memory Store for the rounds' tests, with the interface's documented errors.
// Memory: every event and result held in vectors. Paper: none.
#ifndef FEDSTAT_TESTS_ROUNDS_FAKE_STORE_H_
#define FEDSTAT_TESTS_ROUNDS_FAKE_STORE_H_

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_server/store/store.h"

namespace fedstat {
namespace host {

class FakeStore : public Store {
 public:
  void put_task(uint32_t task_id, const std::string& definition) override {
    auto it = tasks_.find(task_id);
    if (it != tasks_.end()) {
      if (it->second.definition != definition) throw std::invalid_argument("put_task: redefined");
      return;
    }
    tasks_[task_id] = StoredTask{task_id, definition, ""};
  }
  std::vector<StoredTask> tasks() override {
    std::vector<StoredTask> out;
    for (const auto& t : tasks_) out.push_back(t.second);
    return out;
  }
  void set_task_state(uint32_t task_id, const std::string& state) override {
    auto it = tasks_.find(task_id);
    if (it == tasks_.end()) throw std::invalid_argument("set_task_state: unknown task");
    it->second.state = state;
  }
  uint64_t append_events(const std::vector<NewEvent>& events) override {
    if (events.empty()) throw std::invalid_argument("append_events: empty batch");
    for (const auto& e : events) {
      if (tasks_.count(e.task_id) == 0) throw std::invalid_argument("append_events: unknown task");
    }
    for (const auto& e : events) {
      events_.push_back(StoredEvent{++sequence_, e.task_id, e.client_id, e.kind, e.payload});
      if (e.durable) durable_.insert(sequence_);
    }
    return sequence_;
  }
  std::vector<StoredEvent> events(uint32_t task_id) override {
    std::vector<StoredEvent> out;
    for (const auto& e : events_) {
      if (e.task_id == task_id) out.push_back(e);
    }
    return out;
  }
  void put_result(uint32_t task_id, const std::string& result_json) override {
    auto it = results_.find(task_id);
    if (it != results_.end() && it->second != result_json) {
      throw std::logic_error("put_result: a different result");
    }
    results_[task_id] = result_json;
  }
  std::optional<std::string> result(uint32_t task_id) override {
    auto it = results_.find(task_id);
    if (it == results_.end()) return std::nullopt;
    return it->second;
  }
  std::string integrity_check() override { return "ok"; }

  size_t event_count() const { return events_.size(); }
  const std::vector<StoredEvent>& all_events() const { return events_; }
  // Whether the event with `sequence` was appended with NewEvent::durable.
  bool durable(uint64_t sequence) const { return durable_.count(sequence) != 0; }
  std::string state(uint32_t task_id) const {
    auto it = tasks_.find(task_id);
    return it == tasks_.end() ? "" : it->second.state;
  }

 private:
  std::map<uint32_t, StoredTask> tasks_;
  std::vector<StoredEvent> events_;
  std::set<uint64_t> durable_;
  std::map<uint32_t, std::string> results_;
  uint64_t sequence_ = 0;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_ROUNDS_FAKE_STORE_H_
