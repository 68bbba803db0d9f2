// The TAgg's connections (tagg_intake.h).
#include "host_server/tagg/tagg_intake.h"

#include <utility>

namespace fedstat {
namespace host {

TaggIntake::TaggIntake(TaggService& service, Outbox& outbox, TaskCollectors owners,
                       std::function<void(const std::string&)> log)
    : service_(service), outbox_(outbox), owners_(std::move(owners)), log_(std::move(log)) {}

void TaggIntake::on_open(ConnectionId connection, const std::string& identity) {
  connections_[connection].identity = identity;
}

void TaggIntake::on_close(ConnectionId connection, const std::string&) {
  connections_.erase(connection);
}

void TaggIntake::refuse(ConnectionId connection, Connection& c, const Refusal& refusal) {
  c.answered = true;
  if (log_) log_("collector " + c.identity + ": refused: " + refusal.detail);
  // Not closed here: the collector may still be sending the aggregate's other chunks, and
  // reads this answer after its last one (it closes; else the idle time-out does).
  outbox_.send(connection, server_error(refusal));
}

void TaggIntake::on_frame(ConnectionId connection, const fedstat_v1_Envelope& envelope) {
  auto it = connections_.find(connection);
  if (it == connections_.end()) return;  // never opened (the net layer's order makes this moot)
  Connection& c = it->second;
  if (c.answered) return;
  if (envelope.which_body != fedstat_v1_Envelope_tagg_aggregate_tag) {
    refuse(connection, c, refused(StatusCode::kInvalidArgument, "a TAgg takes TaggAggregate only"));
    return;
  }
  const fedstat_v1_TaggAggregate& chunk = envelope.body.tagg_aggregate;
  const auto owner = owners_.find(chunk.task_id);
  if (owner == owners_.end() || owner->second != c.identity) {
    refuse(connection, c,
           refused(StatusCode::kPermissionDenied,
                   "tagg: task " + std::to_string(chunk.task_id) + " is not this collector's"));
    return;
  }
  const bool first = !c.assembly.started();
  if (auto bad = c.assembly.add(chunk)) {  // the first chunk: only its header is kept
    refuse(connection, c, *bad);
    return;
  }
  if (first) {
    const ExactAggregate& header = c.assembly.aggregate();
    if (auto bad = service_.check_header(header.task_id, header.contributors, c.assembly.length(),
                                         header.task_fingerprint)) {
      refuse(connection, c, *bad);
      return;
    }
  }
  if (!c.assembly.complete()) return;
  const uint32_t task_id = c.assembly.aggregate().task_id;
  auto answer = service_.submit(c.assembly.aggregate());
  if (const Refusal* refusal = std::get_if<Refusal>(&answer)) {
    refuse(connection, c, *refusal);
    return;
  }
  fedstat_v1_Envelope result;
  try {
    result = tagg_result(task_id, std::get<std::string>(answer));
  } catch (const std::invalid_argument&) {
    refuse(connection, c, refused(StatusCode::kInternal, "tagg: the result does not fit"));
    return;
  }
  c.answered = true;
  if (log_) log_("collector " + c.identity + ": task " + std::to_string(task_id) + " released");
  outbox_.send(connection, result);
}

}  // namespace host
}  // namespace fedstat
