#include "host_server/store/event_checks.h"

#include <stdexcept>
#include <string>

namespace fedstat {
namespace host {

bool is_event_kind(int64_t value) {
  return value == static_cast<int64_t>(EventKind::kDeviceMessage) ||
         value == static_cast<int64_t>(EventKind::kTransition) ||
         value == static_cast<int64_t>(EventKind::kServerNote);
}

void check_event_batch(const std::vector<NewEvent>& events) {
  if (events.empty()) throw std::invalid_argument("append_events: empty batch");
  for (size_t i = 0; i < events.size(); ++i) {
    const auto kind = static_cast<uint32_t>(events[i].kind);
    if (!is_event_kind(kind)) {
      throw std::invalid_argument("append_events: event " + std::to_string(i) + " has kind " +
                                  std::to_string(kind) + ", not an EventKind");
    }
  }
}

}  // namespace host
}  // namespace fedstat
