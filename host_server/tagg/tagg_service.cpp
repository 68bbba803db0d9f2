// The trusted aggregator's decision (tagg_service.h).
#include "host_server/tagg/tagg_service.h"

#include <stdexcept>
#include <utility>

namespace fedstat {
namespace host {
namespace {

std::string task_name(uint32_t id) {
  return "tagg: task " + std::to_string(id);
}

std::optional<std::vector<uint8_t>> stored_aggregate(Store& store, uint32_t task_id) {
  for (const StoredEvent& event : store.events(task_id)) {
    if (event.kind == EventKind::kServerNote) return event.payload;
  }
  return std::nullopt;
}

}  // namespace

TaggService::TaggService(Store& store, std::map<uint32_t, TaskPlan> plans,
                         const std::map<uint32_t, std::string>& definitions)
    : store_(store), plans_(std::move(plans)) {
  for (const auto& [id, plan] : plans_) {
    if (plan.task.trust != fedstat_v1_TrustModel_TAGG) continue;
    fingerprints_[id] = task_fingerprint(plan.task, plan.data);
    const auto definition = definitions.find(id);
    store_.put_task(id, definition == definitions.end() ? std::string("{}") : definition->second);
  }
}

std::optional<Refusal> TaggService::check_header(uint32_t task_id, uint32_t contributors,
                                                 uint32_t vector_length,
                                                 const TaskFingerprint& fingerprint) const {
  const auto it = plans_.find(task_id);
  if (it == plans_.end()) return refused(StatusCode::kNotFound, task_name(task_id) + " is unknown");
  const fedstat_v1_Task& task = it->second.task;
  if (task.trust != fedstat_v1_TrustModel_TAGG) {
    return refused(StatusCode::kFailedPrecondition, task_name(task_id) + " is not a tagg task");
  }
  if (fingerprint != fingerprints_.at(task_id)) {
    return refused(StatusCode::kFailedPrecondition,
                   task_name(task_id) +
                       " is declared otherwise here (its Task or TaskData differ from the "
                       "collector's)");
  }
  if (vector_length != task.vector_length) {
    return refused(StatusCode::kInvalidArgument,
                   task_name(task_id) + " takes " + std::to_string(task.vector_length) +
                       " words, not " + std::to_string(vector_length));
  }
  if (contributors < task.min_clients || contributors > task.max_clients) {
    return refused(StatusCode::kOutOfRange, task_name(task_id) + ": contributors must lie in [" +
                                                std::to_string(task.min_clients) + ", " +
                                                std::to_string(task.max_clients) + "], not " +
                                                std::to_string(contributors));
  }
  return std::nullopt;
}

std::variant<std::string, Refusal> TaggService::submit(const ExactAggregate& aggregate) {
  const uint32_t id = aggregate.task_id;
  auto bad = check_header(id, aggregate.contributors, static_cast<uint32_t>(aggregate.words.size()),
                          aggregate.task_fingerprint);
  if (bad) return *bad;
  const TaskPlan& plan = plans_.at(id);
  if (plan.task.bits < 64) {
    const uint64_t limit = uint64_t{1} << plan.task.bits;
    for (uint64_t word : aggregate.words) {
      if (word >= limit) {
        return refused(StatusCode::kOutOfRange,
                       task_name(id) + ": a word is not below 2^" + std::to_string(plan.task.bits));
      }
    }
  }
  const std::vector<uint8_t> bytes = aggregate_bytes(aggregate);
  const std::optional<std::vector<uint8_t>> stored = stored_aggregate(store_, id);
  if (stored && *stored != bytes) {
    return refused(StatusCode::kAlreadyExists,
                   task_name(id) + " already has another aggregate (one release per task)");
  }
  if (stored) {
    if (std::optional<std::string> result = store_.result(id)) return *result;
  } else {
    NewEvent event;
    event.task_id = id;
    event.kind = EventKind::kServerNote;
    event.payload = bytes;
    store_.append_event(event);
  }
  std::string result;
  try {
    result = plan.estimate(aggregate.words, aggregate.contributors).dump();
  } catch (const std::exception&) {
    return refused(StatusCode::kInternal, task_name(id) + ": the estimate failed");
  }
  store_.put_result(id, result);
  store_.set_task_state(id, kTaggReleased);
  return result;
}

}  // namespace host
}  // namespace fedstat
