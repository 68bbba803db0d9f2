// The checks every Store backend makes on a batch of events before storing any of it.
// Errors: std::invalid_argument naming the first bad event. Memory: none. Paper: none.
#ifndef FEDSTAT_HOST_STORE_EVENT_CHECKS_H_
#define FEDSTAT_HOST_STORE_EVENT_CHECKS_H_

#include <cstdint>
#include <vector>

#include "host_server/store/store.h"

namespace fedstat {
namespace host {

// True for the values EventKind names (a stored or passed-in kind may be anything).
bool is_event_kind(int64_t value);

// Throws std::invalid_argument for an empty batch or an event whose kind is not an EventKind.
// (Whether each task is known is the backend's check.)
void check_event_batch(const std::vector<NewEvent>& events);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STORE_EVENT_CHECKS_H_
