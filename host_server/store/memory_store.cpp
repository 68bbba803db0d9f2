#include "host_server/store/memory_store.h"

#include <map>
#include <stdexcept>

#include "host_server/store/event_checks.h"

namespace fedstat {
namespace host {
namespace {

struct MemoryTask {
  std::string definition;
  std::string state = kDeclaredTaskState;
  std::vector<StoredEvent> events;
  std::optional<std::string> result;
};

class MemoryStore final : public Store {
 public:
  void put_task(uint32_t task_id, const std::string& definition) override {
    const auto found = tasks_.find(task_id);
    if (found == tasks_.end()) {
      MemoryTask declared;
      declared.definition = definition;
      tasks_.emplace(task_id, std::move(declared));
    } else if (found->second.definition != definition) {
      throw std::invalid_argument("put_task: task " + std::to_string(task_id) +
                                  " is already declared with another definition");
    }
  }

  std::vector<StoredTask> tasks() override {
    std::vector<StoredTask> out;
    for (const auto& [task_id, task] : tasks_)
      out.push_back({task_id, task.definition, task.state});
    return out;
  }

  void set_task_state(uint32_t task_id, const std::string& state) override {
    task("set_task_state", task_id).state = state;
  }

  uint64_t append_events(const std::vector<NewEvent>& events) override {
    check_event_batch(events);
    // Everything that can throw happens before the first event is stored.
    std::map<uint32_t, size_t> added;
    for (const NewEvent& event : events) {
      task("append_events", event.task_id);
      ++added[event.task_id];
    }
    for (const auto& [task_id, count] : added) {
      std::vector<StoredEvent>& stored = tasks_[task_id].events;
      stored.reserve(stored.size() + count);
    }
    std::vector<StoredEvent> copies;
    copies.reserve(events.size());
    for (const NewEvent& event : events) {
      copies.push_back({0, event.task_id, event.client_id, event.kind, event.payload});
    }
    for (StoredEvent& copy : copies) {
      copy.sequence = ++last_sequence_;
      tasks_[copy.task_id].events.push_back(std::move(copy));  // reserved: cannot throw
    }
    return last_sequence_;
  }

  std::vector<StoredEvent> events(uint32_t task_id) override {
    return task("events", task_id).events;
  }

  void put_result(uint32_t task_id, const std::string& result_json) override {
    MemoryTask& held = task("put_result", task_id);
    if (!held.result) {
      held.result = result_json;
    } else if (*held.result != result_json) {
      throw std::logic_error("put_result: task " + std::to_string(task_id) +
                             " already has another published result");
    }
  }

  std::optional<std::string> result(uint32_t task_id) override {
    return task("result", task_id).result;
  }

  std::string integrity_check() override {
    for (const auto& [task_id, held] : tasks_) {
      uint64_t previous = 0;
      for (const StoredEvent& event : held.events) {
        if (event.sequence <= previous || event.task_id != task_id) {
          return "events of task " + std::to_string(task_id) + " out of order";
        }
        previous = event.sequence;
      }
    }
    return "ok";
  }

 private:
  MemoryTask& task(const std::string& operation, uint32_t task_id) {
    const auto found = tasks_.find(task_id);
    if (found == tasks_.end()) {
      throw std::invalid_argument(operation + ": unknown task " + std::to_string(task_id));
    }
    return found->second;
  }

  std::map<uint32_t, MemoryTask> tasks_;
  uint64_t last_sequence_ = 0;
};

}  // namespace

std::unique_ptr<Store> make_memory_store() {
  return std::make_unique<MemoryStore>();
}

}  // namespace host
}  // namespace fedstat
