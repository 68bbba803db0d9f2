#include "host_server/rounds/coordinator.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "host_server/device_identity.h"
#include "sdk/secagg/graph.h"

namespace fedstat {
namespace host {
namespace {

void validate(const TaskSpec& spec) {
  const fedstat_v1_Task& t = spec.task;
  const std::string name = "task " + std::to_string(t.task_id) + ": ";
  if (!spec.estimate && !spec.forward) throw std::invalid_argument(name + "no estimate");
  if (spec.forward && (t.trust != fedstat_v1_TrustModel_TAGG || spec.follow_up)) {
    throw std::invalid_argument(name + "only a TAGG task without a follow-up is forwarded");
  }
  if (t.trust == fedstat_v1_TrustModel_TAGG && !spec.forward) {
    throw std::invalid_argument(name + "a TAGG task needs a TAgg to forward its aggregate to");
  }
  if (t.vector_length == 0 || t.bits == 0 || t.bits > 64) {
    throw std::invalid_argument(name + "vector_length >= 1 and bits in 1..64");
  }
  if (t.max_clients == 0 || t.min_clients > t.max_clients) {
    throw std::invalid_argument(name + "need 1 <= max_clients and min_clients <= max_clients");
  }
  if (t.trust == fedstat_v1_TrustModel_DIST && t.secagg_degree == 0 &&
      (t.threshold < 2 || t.threshold > t.max_clients || t.max_clients > kMaxSecAggClients)) {
    throw std::invalid_argument(name +
                                "DIST with the complete graph needs 2 <= threshold <= max_clients "
                                "<= 1024 (a larger round needs a sparse graph, secagg_degree > 0)");
  }
  // The sparse graph: the device's shape checks (client::validate_task: an even degree up to
  // secagg::kMaxGraphDegree, max_clients up to secagg::kMaxSparseClients, t among the k + 1
  // holders and more than half of them); the bound itself is the task plan's.
  if (t.trust == fedstat_v1_TrustModel_DIST && t.secagg_degree != 0 &&
      (t.secagg_degree % 2 != 0 || t.secagg_degree > secagg::kMaxGraphDegree ||
       t.max_clients > secagg::kMaxSparseClients || t.threshold < 2 ||
       t.threshold > t.secagg_degree + 1 || 2 * uint64_t{t.threshold} <= t.secagg_degree + 1)) {
    throw std::invalid_argument(name +
                                "DIST with a sparse graph needs an even secagg_degree in "
                                "2..1022, max_clients <= 10000000 and degree + 1 < 2 * threshold "
                                "<= 2 * (degree + 1)");
  }
  if (spec.reconnect_grace_seconds == 0) {  // every member a dropout at the first tick
    throw std::invalid_argument(name + "reconnect_grace_seconds must be at least 1");
  }
  if (t.trust == fedstat_v1_TrustModel_TRUST_MODEL_UNSPECIFIED) {
    throw std::invalid_argument(name + "no trust model");
  }
}

}  // namespace

Coordinator::Coordinator(Store& store, Outbox& outbox, std::vector<TaskSpec> tasks, uint64_t now,
                         uint32_t check_ins_per_minute)
    : store_(store), outbox_(outbox), now_(now), check_ins_(check_ins_per_minute) {
  std::map<uint32_t, std::string> states;
  for (const StoredTask& t : store_.tasks()) states[t.task_id] = t.state;
  for (TaskSpec& spec : tasks) {
    const uint32_t id = spec.task.task_id;
    add_task(std::move(spec), states.count(id) ? states[id] : "", now);
  }
  chain(now);
}

void Coordinator::add_task(TaskSpec spec, const std::string& state, uint64_t now) {
  const uint32_t id = spec.task.task_id;
  if (id == 0 || rounds_.count(id) != 0) {
    throw std::invalid_argument("tasks need distinct non-zero ids");
  }
  validate(spec);
  store_.put_task(id, spec.definition_json);
  if (spec.follow_up) follow_ups_[id] = spec.follow_up;
  if (spec.task.trust == fedstat_v1_TrustModel_DIST && spec.task.secagg_degree != 0) {
    sparse_tasks_.insert(id);
    if (spec.secagg_ca_public_key) signed_sparse_tasks_.insert(id);
  }
  RoundLinks links;
  links.send = [this, id](uint64_t client, const fedstat_v1_Envelope& e) {
    send_to_client(id, client, e);
  };
  links.close = [this, id](uint64_t client) { close_client(id, client); };
  links.log = [this](const std::string& line) { log_.push_back(line); };
  auto round = std::make_unique<TaskRound>(std::move(spec), store_, std::move(links));
  if (state == "completed" || state == "aborted") {
    round->mark_finished(state == "completed");
  } else {
    auto events = store_.events(id);
    if (events.empty()) {
      round->open(now);
    } else {
      round->recover(events, now);
      log_.push_back("task " + std::to_string(id) + ": recovered from " +
                     std::to_string(events.size()) + " events");
    }
  }
  if (!round->finished()) open_rounds_[id] = round.get();
  rounds_[id] = std::move(round);
}

void Coordinator::forget_finished_rounds() {
  for (auto it = open_rounds_.begin(); it != open_rounds_.end();) {
    it = it->second->finished() ? open_rounds_.erase(it) : std::next(it);
  }
}

void Coordinator::chain(uint64_t now) {
  // A follow-up may complete at once (a restart) and have its own: repeat until none is due.
  for (bool added = true; added;) {
    added = false;
    for (auto it = follow_ups_.begin(); it != follow_ups_.end(); ++it) {
      const TaskRound& round = *rounds_.at(it->first);
      if (round.stage() == TaskRound::Stage::kAborted) {
        follow_ups_.erase(it);  // never: the first stage's release did not happen
        added = true;
        break;
      }
      if (round.stage() != TaskRound::Stage::kCompleted) continue;
      const std::optional<std::string> result = store_.result(it->first);
      if (!result) {
        throw std::logic_error("task " + std::to_string(it->first) + ": completed without result");
      }
      const auto follow_up = std::move(it->second);
      follow_ups_.erase(it);
      TaskSpec next = follow_up(*result, now);
      std::string state;
      for (const StoredTask& t : store_.tasks()) {
        if (t.task_id == next.task.task_id) state = t.state;
      }
      log_.push_back("task " + std::to_string(round.id()) + ": follow-up task " +
                     std::to_string(next.task.task_id));
      add_task(std::move(next), state, now);
      added = true;
      break;  // follow_ups_ changed
    }
  }
}

std::string Coordinator::task_state(uint32_t task_id) const {
  auto it = rounds_.find(task_id);
  if (it == rounds_.end()) return "unknown";
  switch (it->second->stage()) {
    case TaskRound::Stage::kCompleted:
      return "completed";
    case TaskRound::Stage::kAborted:
      return "aborted";
    default:
      return "open";
  }
}

const TaskRound* Coordinator::round(uint32_t task_id) const {
  auto it = rounds_.find(task_id);
  return it == rounds_.end() ? nullptr : it->second.get();
}

void Coordinator::on_certificate(ConnectionId connection, const std::array<uint8_t, 65>& key) {
  certified_[connection] = key;
}

void Coordinator::on_open(ConnectionId connection, const std::string& identity) {
  // 0 (no device) when the identity names none; such a connection is refused at its hello.
  Connection c{parse_device_identity(identity).value_or(0), 0, std::nullopt};
  const auto certified = certified_.find(connection);
  if (certified != certified_.end()) {
    c.certificate_key = certified->second;
    certified_.erase(certified);
  }
  connections_[connection] = c;
}

void Coordinator::refuse(ConnectionId connection, const Refusal& refusal) {
  outbox_.send(connection, server_error(refusal));
  if (refusal.close) outbox_.close(connection);
}

void Coordinator::send_to_client(uint32_t task, uint64_t client, const fedstat_v1_Envelope& e) {
  auto it = bound_.find({task, client});
  if (it != bound_.end()) outbox_.send(it->second, e);
}

void Coordinator::close_client(uint32_t task, uint64_t client) {
  auto it = bound_.find({task, client});
  if (it == bound_.end()) return;
  const ConnectionId connection = it->second;
  bound_.erase(it);
  outbox_.close(connection);
}

void Coordinator::on_frame(ConnectionId connection, const fedstat_v1_Envelope& e) {
  auto it = connections_.find(connection);
  if (it == connections_.end()) return;  // not open: the net layer's mistake, nothing to answer
  Connection& c = it->second;
  if (e.which_body == fedstat_v1_Envelope_client_hello_tag) {
    on_hello(connection, c, e);
    const auto hello = connections_.find(connection);  // `c` may be gone: on_hello may close it
    if (hello != connections_.end() && hello->second.task != 0) outbox_.checked_in(connection);
    keep_member_open(connection);
    chain(now_);
    return;
  }
  if (c.task == 0) {
    refuse(connection, refused(StatusCode::kFailedPrecondition, "send ClientHello first"));
    return;
  }
  uint32_t named = c.task;
  if (e.which_body == fedstat_v1_Envelope_task_reply_tag) named = e.body.task_reply.task_id;
  if (e.which_body == fedstat_v1_Envelope_report_tag) named = e.body.report.task_id;
  if (named != c.task) {
    auto other = rounds_.find(named);
    if (other != rounds_.end() && other->second->finished()) {
      refuse(connection, task_closed());
    } else {
      refuse(connection, refused(StatusCode::kInvalidArgument,
                                 "message names task " + std::to_string(named) +
                                     ", this connection is for task " + std::to_string(c.task)));
    }
    return;
  }
  if (e.which_body == fedstat_v1_Envelope_secagg_keys_tag && c.certificate_key &&
      e.body.secagg_keys.has_certificate) {
    const auto& key = e.body.secagg_keys.certificate.public_key;
    if (key.size != c.certificate_key->size() ||
        !std::equal(c.certificate_key->begin(), c.certificate_key->end(), key.bytes)) {
      Refusal r = refused(StatusCode::kPermissionDenied,
                          "SecAggKeys: its certificate's key is not the key of this connection's "
                          "TLS certificate (a device's compact and X.509 certificates must be for "
                          "one key pair: fedstat-ca issue/sign writes both)");
      r.close = true;
      refuse(connection, r);
      return;
    }
  }
  auto refusal = rounds_.at(c.task)->on_message(c.client, e, now_);
  if (refusal) refuse(connection, *refusal);
  keep_member_open(connection);
  chain(now_);
}

void Coordinator::keep_member_open(ConnectionId connection) {
  auto it = connections_.find(connection);
  if (it == connections_.end() || it->second.task == 0) return;
  const TaskRound& round = *rounds_.at(it->second.task);
  if (round.finished()) return;
  auto bound = bound_.find({round.id(), it->second.client});
  if (bound == bound_.end() || bound->second != connection) return;  // a newer link took over
  outbox_.keep_open(connection, round.longest_wait_seconds());
}

void Coordinator::on_hello(ConnectionId connection, Connection& c, const fedstat_v1_Envelope& e) {
  const fedstat_v1_ClientHello& hello = e.body.client_hello;
  if (c.client == 0 || hello.client_id != c.client) {
    Refusal r = refused(StatusCode::kPermissionDenied, "client_id is not the TLS identity");
    r.close = true;
    refuse(connection, r);
    return;
  }
  // Counted per credential, refused or not by what follows: every check-in costs the server.
  const CheckInLimit::Verdict limit = check_ins_.admit(c.client, now_);
  if (limit != CheckInLimit::Verdict::kAdmitted) {
    const std::string detail = "more than " + std::to_string(check_ins_.per_minute()) +
                               " check-ins a minute from this device";
    // Logged once per run of refusals: a flood must not flood the log too.
    if (limit == CheckInLimit::Verdict::kFirstRefusal) {
      log_.push_back("client " + std::to_string(c.client) + ": " + detail + ", refused");
    }
    refuse(connection, retry_later(StatusCode::kResourceExhausted, detail));
    return;
  }
  if (e.protocol_version < kMinProtocolVersion) {
    Refusal r = refused(StatusCode::kFailedPrecondition, "protocol version too old");
    r.action = fedstat_v1_ErrorAction_VERSION_TOO_OLD;
    r.close = true;
    refuse(connection, r);
    return;
  }
  if (c.task != 0) {
    refuse(connection, refused(StatusCode::kAlreadyExists, "ClientHello already received"));
    return;
  }
  TaskRound* chosen = nullptr;
  if (hello.resume_task_id != 0) {
    auto it = rounds_.find(hello.resume_task_id);
    if (it == rounds_.end()) {
      Refusal r = refused(StatusCode::kNotFound, "no such task");
      r.close = true;
      refuse(connection, r);
      return;
    }
    TaskRound& round = *it->second;
    if (round.finished()) {
      Refusal r = task_closed();
      r.close = true;
      refuse(connection, r);
      return;
    }
    if (round.replied(c.client)) {
      if (auto refusal = round.can_resume(c.client)) {  // declined, or dropped from the round
        refusal->close = true;
        refuse(connection, *refusal);
        return;
      }
      c.task = round.id();
      bind(round.id(), c.client, connection);
      round.resume(c.client, e);
      return;
    }
    // A contribution the device computed, whose TaskReply the server does not hold.
    c.task = round.id();
    bind(round.id(), c.client, connection);
    auto refusal = round.admit_resumed(c.client, e, now_);
    if (refusal) {
      bound_.erase({round.id(), c.client});
      c.task = 0;
      refusal->close = true;
      refuse(connection, *refusal);
    }
    return;
  } else {
    Refusal last = retry_later(StatusCode::kNotFound, "no open task with room");
    forget_finished_rounds();  // a finished round's refusal is TASK_CLOSED: `last` skips it
    for (auto& entry : open_rounds_) {
      if (entry.second->dist() && e.protocol_version < kMinDistProtocolVersion) {
        last = retry_later(StatusCode::kFailedPrecondition,
                           "secure aggregation needs protocol version 3: update the SDK");
        continue;
      }
      if (sparse_tasks_.count(entry.second->id()) != 0 &&
          e.protocol_version < kMinSparseProtocolVersion) {
        last = retry_later(StatusCode::kFailedPrecondition,
                           "a sparse secure-aggregation graph needs protocol version 4: update "
                           "the SDK");
        continue;
      }
      if (signed_sparse_tasks_.count(entry.second->id()) != 0 &&
          e.protocol_version < kMinSignedSparseProtocolVersion) {
        last = retry_later(StatusCode::kFailedPrecondition,
                           "a signed sparse secure-aggregation round needs protocol version 6 "
                           "(rule D8): update the SDK");
        continue;
      }
      auto refusal = entry.second->can_offer(c.client);
      if (!refusal) {
        chosen = entry.second;
        break;
      }
      if (refusal->action == fedstat_v1_ErrorAction_RETRY_LATER) last = *refusal;
    }
    if (chosen == nullptr) {
      last.action = fedstat_v1_ErrorAction_RETRY_LATER;  // whichever round's refusal came last
      last.close = true;
      refuse(connection, last);
      return;
    }
  }
  c.task = chosen->id();
  bind(chosen->id(), c.client, connection);
  chosen->offer(c.client, e);
}

void Coordinator::bind(uint32_t task, uint64_t client, ConnectionId connection) {
  auto [it, inserted] = bound_.try_emplace({task, client}, connection);
  if (inserted || it->second == connection) return;
  const ConnectionId older = it->second;
  it->second = connection;
  auto link = connections_.find(older);
  if (link != connections_.end()) link->second.task = 0;  // its on_close is not a departure
  outbox_.close(older);
}

void Coordinator::on_close(ConnectionId connection, const std::string& reason) {
  certified_.erase(connection);  // closed before it opened
  auto it = connections_.find(connection);
  if (it == connections_.end()) return;
  const Connection c = it->second;
  connections_.erase(it);
  if (c.task == 0) return;
  auto bound = bound_.find({c.task, c.client});
  if (bound == bound_.end() || bound->second != connection) return;  // a newer link took over
  bound_.erase(bound);
  if (shutting_down_) return;  // the server's own stop: not a departure (begin_shutdown)
  log_.push_back("client " + std::to_string(c.client) + " left task " + std::to_string(c.task) +
                 ": " + reason);
  rounds_.at(c.task)->on_disconnect(c.client, now_);
  chain(now_);
}

void Coordinator::on_tick(uint64_t now_unix_seconds) {
  now_ = now_unix_seconds;
  if (now_ >= check_ins_pruned_ + 60) {  // a pass over the devices seen, once a minute
    check_ins_.prune(now_);
    check_ins_pruned_ = now_;
  }
  for (auto& entry : open_rounds_) entry.second->on_tick(now_);  // a finished one does nothing
  forget_finished_rounds();
  chain(now_);
}

}  // namespace host
}  // namespace fedstat
