// Store: what the server must not lose — the tasks, every message a device sent that the server
// accepted, every round transition, and the published results — behind a small interface, so a
// shared database for several server nodes is a second implementation (ARCHITECTURE.md).
//
// Persist, then acknowledge: every mutating call is one committed transaction when it returns,
// so a server killed with kill -9 after answering a device has the message on disk. The rounds
// (host_server/rounds/) are rebuilt after a restart by replaying a task's events in order.
// Errors: std::runtime_error naming the operation and the backend's message; a failed call
// changes nothing. A task id that was never declared is std::invalid_argument everywhere.
// One thread at a time per Store object (the server's single writer). Memory: the backend's
// (SQLite: its page cache; in memory: everything stored). Paper: none.
#ifndef FEDSTAT_HOST_STORE_STORE_H_
#define FEDSTAT_HOST_STORE_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fedstat {
namespace host {

// What an event records (its payload's meaning is the rounds' business).
enum class EventKind : uint32_t {
  kDeviceMessage = 1,  // an Envelope a device sent and the server accepted (its encoded bytes)
  kTransition = 2,     // the round moved on (payload: the rounds' description of the step)
  kServerNote = 3,     // anything else the rounds need to replay (payload: theirs)
};

struct NewEvent {
  uint32_t task_id = 0;
  uint64_t client_id = 0;  // 0: not about one device
  EventKind kind = EventKind::kDeviceMessage;
  std::vector<uint8_t> payload;
  // A device message the server must keep through a power cut even where device messages need
  // not be (SqliteStore's kStepsSurvivePowerLoss): an accepting TaskReply, after which the device
  // has charged its privacy budget and would be refused a resume were the reply lost. Not stored.
  bool durable = false;
};

struct StoredEvent {
  uint64_t sequence = 0;  // increasing in commit order, over the whole store
  uint32_t task_id = 0;
  uint64_t client_id = 0;
  EventKind kind = EventKind::kDeviceMessage;
  std::vector<uint8_t> payload;
};

// A declared task's state until the first set_task_state.
inline constexpr char kDeclaredTaskState[] = "declared";

struct StoredTask {
  uint32_t task_id = 0;
  std::string definition;  // the task's declaration (JSON), as put_task stored it
  std::string state;       // the rounds' word for where it is ("open", "completed", ...)
};

class Store {
 public:
  virtual ~Store() = default;
  // Declares a task. Declaring it again with the same definition does nothing; with another
  // definition it throws std::invalid_argument (a task id names one task forever).
  virtual void put_task(uint32_t task_id, const std::string& definition) = 0;
  virtual std::vector<StoredTask> tasks() = 0;  // ascending task id
  // std::invalid_argument for an unknown task.
  virtual void set_task_state(uint32_t task_id, const std::string& state) = 0;
  // Appends events in one transaction (group commit); returns the last one's sequence number.
  // std::invalid_argument for an empty batch, an unknown task or a kind outside EventKind
  // (nothing of the batch is appended then).
  virtual uint64_t append_events(const std::vector<NewEvent>& events) = 0;
  uint64_t append_event(const NewEvent& event) { return append_events({event}); }
  virtual std::vector<StoredEvent> events(uint32_t task_id) = 0;  // ascending sequence
  // A task's result is published once: the same result again does nothing; a different one
  // throws std::logic_error. result() is empty until then. A backend commits a result so that it
  // survives a power loss too, whatever else it trades for speed: a result may be shown (status
  // page, `results`, the log) as soon as this returns, and must never be rolled back and
  // published again. The same holds for an append_events batch holding a kServerNote.
  virtual void put_result(uint32_t task_id, const std::string& result_json) = 0;
  virtual std::optional<std::string> result(uint32_t task_id) = 0;
  // The backend's consistency check: "ok" when sound (SQLite: PRAGMA integrity_check).
  virtual std::string integrity_check() = 0;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_STORE_H_
