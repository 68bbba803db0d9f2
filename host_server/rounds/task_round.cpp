#include "host_server/rounds/task_round.h"

#include <sstream>
#include <stdexcept>

#include "host_server/hex.h"
#include "sdk/base/csprng.h"

namespace fedstat {
namespace host {
namespace {

constexpr const char* kOpen = "open";
constexpr const char* kAdmissionClosed = "admission_closed";
constexpr const char* kReportsClosed = "reports_closed";
constexpr const char* kSecAggClosed = "secagg_closed";
constexpr const char* kAborted = "aborted";
constexpr const char* kCompleted = "completed";
// Server notes (EventKind::kServerNote): "<word> <text>".
constexpr const char* kNoiseSeed = "noise_seed";
// A sparse DIST round's ring seed (sdk/secagg/graph.h), stored before SecAggStart commits to it.
constexpr const char* kGraphSeed = "graph_seed";
constexpr const char* kReportRefused = "report_refused";
// A server note (EventKind::kServerNote, client_id = the device): "excluded <reason>", a DIST
// member excluded from secure aggregation for what it sent; replayed into the SecAggPhase.
constexpr const char* kExcludedNote = "excluded ";
// A server note (client_id = the holder): "disputed <owner> <self|key> <text>", a share the holder
// revealed that is off the polynomial of <owner>'s verified secret — the holder or the owner is
// at fault. Not replayed (it excludes nobody); the status page lists it. Written at the close
// that finishes the round, before its result: a replay that finishes the round (a crash after
// the close's transition) writes them unless the store already holds them.
constexpr const char* kDisputedNote = "disputed ";

std::vector<uint8_t> text_bytes(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

// A note's first word, and the rest after one space.
std::pair<std::string, std::string> note_parts(const std::vector<uint8_t>& payload) {
  const std::string text(payload.begin(), payload.end());
  const size_t space = text.find(' ');
  if (space == std::string::npos) return {text, ""};
  return {text.substr(0, space), text.substr(space + 1)};
}

}  // namespace

TaskRound::TaskRound(TaskSpec spec, Store& store, RoundLinks links)
    : spec_(std::move(spec)),
      store_(store),
      links_(std::move(links)),
      trusted_(spec_.task.vector_length, spec_.task.bits) {
  spec_.task.data_words = static_cast<uint32_t>(spec_.data.size());
}

void TaskRound::open(uint64_t now) {
  transition(kOpen, now);
}

void TaskRound::mark_finished(bool completed) {
  stage_ = completed ? Stage::kCompleted : Stage::kAborted;
}

void TaskRound::recover(const std::vector<StoredEvent>& events, uint64_t now) {
  // The seed is stored after the stage whose close estimates (its transition comes first): read
  // it before the replay reaches that close.
  for (const StoredEvent& event : events) {
    if (event.kind != EventKind::kServerNote) continue;
    const auto [word, text] = note_parts(event.payload);
    if (word + " " == kDisputedNote) disputes_stored_ = true;
    if (word != kNoiseSeed && word != kGraphSeed) continue;
    std::optional<Seed256>& held = word == kNoiseSeed ? noise_seed_ : graph_seed_;
    const auto bytes = decode_hex32(text);
    if (!bytes || held) {
      throw std::runtime_error("task " + std::to_string(id()) + ": a malformed or second " + word +
                               " in the store");
    }
    Seed256 seed;
    std::copy(bytes->begin(), bytes->end(), seed.bytes);
    held = seed;
  }
  replaying_ = true;
  for (const StoredEvent& event : events) {
    if (finished()) break;
    if (event.kind == EventKind::kDeviceMessage) {
      if (!opened_) {  // every task's history begins with its "open"
        throw std::runtime_error("task " + std::to_string(id()) +
                                 ": a device message stored before the task opened");
      }
      auto refusal = on_message(event.client_id, decode_bytes(event.payload), 0);
      if (refusal && links_.log) links_.log("replay refused a stored message: " + refusal->detail);
      if (refusal && dist() && stage_ == Stage::kSecAgg) {
        // The rosters the devices acted on were built from every stored message; a replay that
        // skips one may build another U3, and devices that had not yet seen it would reveal the
        // other kind of share about a member. Fail closed: nothing is published.
        abort("a stored secure-aggregation message could not be replayed");
      }
    } else if (event.kind == EventKind::kServerNote) {
      const std::string note(event.payload.begin(), event.payload.end());
      if (note.rfind(kExcludedNote, 0) == 0 && dist() && stage_ == Stage::kSecAgg &&
          event.client_id <= UINT32_MAX) {
        secagg_->exclude(static_cast<uint32_t>(event.client_id),
                         note.substr(std::string(kExcludedNote).size()));
      } else if (note.rfind(kExcludedNote, 0) != 0) {
        apply_note(event);
      }
    } else if (event.kind == EventKind::kTransition) {
      std::istringstream in(std::string(event.payload.begin(), event.payload.end()));
      std::string word;
      uint64_t at = 0;
      in >> word >> at;
      std::string reason;
      std::getline(in, reason);
      if (!opened_ && word != kOpen) {
        throw std::runtime_error("task " + std::to_string(id()) + ": transition " + word +
                                 " stored before the task opened");
      }
      if (word == kAborted) {
        abort(reason);
      } else if (word != kCompleted) {
        apply_transition(word, at);
      }
    }
  }
  if (!opened_) {
    throw std::runtime_error("task " + std::to_string(id()) + ": no \"open\" among its " +
                             std::to_string(events.size()) + " stored events");
  }
  replaying_ = false;
  stage_started_ = now;  // a restarted server gives the current stage a fresh time-out
  if (dist() && stage_ == Stage::kSecAgg) {
    // Every member's connection died with the old process; those that dropped out before it (or
    // while it was down) will not come back, and nothing stored says so.
    awaited_ = secagg_->members();
    awaited_until_ = 0;  // counted from the first tick or message after the restart (advance)
  }
}

void TaskRound::send(uint64_t client, const fedstat_v1_Envelope& e) {
  if (!replaying_ && links_.send) links_.send(client, e);
}

void TaskRound::persist_message(uint64_t client, const fedstat_v1_Envelope& e) {
  if (replaying_) return;
  NewEvent event;
  event.task_id = id();
  event.client_id = client;
  event.kind = EventKind::kDeviceMessage;
  event.payload = encode_bytes(e);
  // An accepting reply survives a power cut (store.h, NewEvent::durable): the device charged its
  // budget for it and resumes only if the server knows it accepted.
  event.durable = e.which_body == fedstat_v1_Envelope_task_reply_tag && e.body.task_reply.accept;
  store_.append_event(event);
}

void TaskRound::transition(const std::string& word, uint64_t now) {
  if (!replaying_) {
    NewEvent event;
    event.task_id = id();
    event.kind = EventKind::kTransition;
    event.payload = text_bytes(word + " " + std::to_string(now));
    store_.append_event(event);
    if (links_.log) {
      // A secure-aggregation stage names itself and its members (a signed session shows its
      // consistency stage here: tests/emulation/round_test.sh checks it).
      std::string detail;
      if (word == kSecAggClosed && secagg_) {
        detail = " (" + std::string(SecAggPhase::stage_name(secagg_->stage())) + ", " +
                 std::to_string(secagg_->members().size()) + " members)";
      }
      links_.log("task " + std::to_string(id()) + ": " + word + detail);
    }
  }
  apply_transition(word, now);
}

void TaskRound::apply_transition(const std::string& word, uint64_t at) {
  // Each transition closes one stage; a stored one that does not fit the stage the replay has
  // reached (a store this history did not write) is refused, not applied.
  Stage from = Stage::kAdmission;
  if (word == kOpen || word == kAdmissionClosed) {
    from = Stage::kAdmission;
  } else if (word == kReportsClosed) {
    from = Stage::kReports;
  } else if (word == kSecAggClosed) {
    from = Stage::kSecAgg;
  } else {
    throw std::runtime_error("task " + std::to_string(id()) + ": unknown transition " + word);
  }
  if (stage_ != from || (word == kOpen && opened_)) {
    throw std::runtime_error("task " + std::to_string(id()) + ": transition " + word +
                             " does not fit the round's stage " +
                             std::to_string(static_cast<int>(stage_)));
  }
  stage_started_ = at;
  if (word == kOpen) {
    opened_ = true;
    opened_at_ = at;
    if (!replaying_) store_.set_task_state(id(), "open");
  } else if (word == kAdmissionClosed) {
    close_admission();
  } else if (word == kReportsClosed) {
    finish_reports();
  } else {
    close_secagg_stage();
  }
}

std::optional<Refusal> TaskRound::can_offer(uint64_t client) const {
  if (finished()) return task_closed();
  if (dist() && client > UINT32_MAX) {  // secure aggregation's client ids are 32 bits
    return refused(StatusCode::kPermissionDenied, "a DIST task takes device ids below 2^32");
  }
  if (replied(client)) return retry_later(StatusCode::kAlreadyExists, "already took part");
  if (stage_ != Stage::kAdmission) {
    return retry_later(StatusCode::kResourceExhausted, "admission is over");
  }
  if (accepted() + offered_.size() >= spec_.task.max_clients && offered_.count(client) == 0) {
    return retry_later(StatusCode::kResourceExhausted, "the round is full");
  }
  return std::nullopt;
}

void TaskRound::offer(uint64_t client, const fedstat_v1_Envelope& hello) {
  persist_message(client, hello);
  checked_in_.insert(client);
  offered_.insert(client);
  rejoined(client);
  for (const auto& e : task_offer(spec_.task, spec_.data)) send(client, e);
}

std::optional<Refusal> TaskRound::can_resume(uint64_t client) const {
  if (finished()) return task_closed();
  auto reply = replies_.find(client);
  if (reply == replies_.end() || !reply->second) {
    Refusal r = task_closed();
    r.detail = "resume: this device did not accept the task";
    return r;
  }
  if (refused_reports_.count(client) != 0) {
    Refusal r = task_closed();
    r.detail = "resume: this device's report was refused (a word out of the task's bounds)";
    return r;
  }
  if (dist() && stage_ == Stage::kSecAgg && secagg_->members().count(client) == 0) {
    Refusal r = task_closed();
    r.detail = "resume: this device dropped out of the round's secure aggregation";
    return r;
  }
  return std::nullopt;
}

void TaskRound::resume(uint64_t client, const fedstat_v1_Envelope& hello) {
  persist_message(client, hello);
  rejoined(client);
  for (const auto& e : task_offer(spec_.task, spec_.data)) send(client, e);
  if (!dist()) {
    send(client, ack(id(), trusted_.words_from(client)));
  } else if (stage_ == Stage::kSecAgg) {  // a member (can_resume)
    const uint32_t member = static_cast<uint32_t>(client);
    send(client, secagg_resume(id(), secagg_->round_number(), secagg_->held_from(member)));
    send_opening(client);
  }
}

std::optional<Refusal> TaskRound::admit_resumed(uint64_t client, const fedstat_v1_Envelope& hello,
                                                uint64_t now) {
  if (auto full = can_offer(client)) return full;  // admission over, full, already replied
  if (checked_in_.count(client) == 0) {  // its ClientHello was never stored: never offered
    return refused(StatusCode::kPermissionDenied,
                   "resume: task " + std::to_string(id()) + " was never offered to this device");
  }
  persist_message(client, hello);
  offered_.insert(client);
  fedstat_v1_Envelope reply = fedstat_v1_Envelope_init_zero;
  reply.protocol_version = hello.protocol_version;
  reply.which_body = fedstat_v1_Envelope_task_reply_tag;
  reply.body.task_reply.task_id = id();
  reply.body.task_reply.accept = true;
  auto refusal = check_and_apply(client, reply);
  if (refusal) {
    offered_.erase(client);
    return refusal;
  }
  rejoined(client);
  for (const auto& e : task_offer(spec_.task, spec_.data)) send(client, e);
  if (!dist()) send(client, ack(id(), trusted_.words_from(client)));
  advance(now);
  return std::nullopt;
}

void TaskRound::rejoined(uint64_t client) {
  // A connection it lost (a reboot, a dead link, the server's own restart) made it a dropout, or
  // one awaited: it is back, on whichever path it came (offer, resume, admit_resumed).
  if (client > UINT32_MAX) return;
  dropped_.erase(static_cast<uint32_t>(client));
  awaited_.erase(static_cast<uint32_t>(client));
}

std::optional<Refusal> TaskRound::on_message(uint64_t client, const fedstat_v1_Envelope& e,
                                             uint64_t now) {
  if (finished()) return task_closed();
  const size_t refused_before = refused_reports_.size();
  auto refusal = check_and_apply(client, e);
  // A refused report ends the device's part: the round may be complete without it.
  const bool left = refused_reports_.size() != refused_before;
  if ((!refusal || left) && !replaying_) advance(now);
  return refusal;
}

std::optional<Refusal> TaskRound::check_and_apply(uint64_t client, const fedstat_v1_Envelope& e) {
  const auto reply = replies_.find(client);
  const bool admitted = reply != replies_.end() && reply->second;
  switch (e.which_body) {
    case fedstat_v1_Envelope_client_hello_tag:  // stored by offer()/resume(): it checked in
      if (!replaying_) {
        return refused(StatusCode::kInvalidArgument, "ClientHello is the Coordinator's");
      }
      checked_in_.insert(client);
      return std::nullopt;
    case fedstat_v1_Envelope_task_reply_tag: {
      if (reply != replies_.end()) {
        return refused(StatusCode::kAlreadyExists, "task reply: already replied");
      }
      if (!replaying_ && offered_.count(client) == 0) {
        return refused(StatusCode::kFailedPrecondition, "task reply: the task was not offered");
      }
      if (stage_ != Stage::kAdmission) {
        return retry_later(StatusCode::kResourceExhausted, "admission is over");
      }
      const bool accept = e.body.task_reply.accept;
      // What can_offer() ensured before the offer, again for a replayed reply: a store this
      // history did not write admits no more than max_clients, nor (DIST) ids above 32 bits.
      if (accept && accepted_ >= spec_.task.max_clients) {
        return retry_later(StatusCode::kResourceExhausted, "the round is full");
      }
      if (dist() && client > UINT32_MAX) {
        return refused(StatusCode::kPermissionDenied, "a DIST task takes device ids below 2^32");
      }
      persist_message(client, e);
      replies_[client] = accept;
      if (accept) ++accepted_;
      offered_.erase(client);
      if (!accept && !replaying_ && links_.close) links_.close(client);
      return std::nullopt;
    }
    case fedstat_v1_Envelope_report_tag: {
      if (dist()) {
        return refused(StatusCode::kFailedPrecondition,
                       "report: a DIST task takes secagg messages");
      }
      if (!admitted) return refused(StatusCode::kPermissionDenied, "report: not admitted");
      if (refused_reports_.count(client) != 0) {
        return refused(StatusCode::kFailedPrecondition,
                       "report: this device's report was refused (out of bounds): not summed");
      }
      auto bad = trusted_.check(client, e.body.report);
      if (bad) return bad;
      if (spec_.check_report) {
        if (auto whole = trusted_.completed_report(client, e.body.report)) {
          if (auto why = spec_.check_report(*whole)) return refuse_report(client, *why);
        }
      }
      persist_message(client, e);
      const uint32_t words = trusted_.add(client, e.body.report);
      send(client, ack(id(), words));
      return std::nullopt;
    }
    case fedstat_v1_Envelope_secagg_keys_tag:
    case fedstat_v1_Envelope_secagg_share_tag:
    case fedstat_v1_Envelope_secagg_masked_chunk_tag:
    case fedstat_v1_Envelope_secagg_consistency_tag:
    case fedstat_v1_Envelope_secagg_reveal_tag: {
      if (!dist() || stage_ != Stage::kSecAgg) {
        return refused(StatusCode::kFailedPrecondition, "secagg: no secure aggregation running");
      }
      if (client > UINT32_MAX) return refused(StatusCode::kPermissionDenied, "secagg: bad id");
      const size_t excluded_before = secagg_->excluded().size();
      Status s = secagg_->on_message(static_cast<uint32_t>(client), e);
      if (!s.ok() && secagg_->excluded().size() > excluded_before) {
        // Its message was malformed (secagg_phase.h): it is out of the round, which goes on.
        record_exclusions(excluded_before);
        Refusal r = task_closed();
        r.detail = "excluded from secure aggregation: " + secagg_->excluded().back().second;
        r.close = true;
        return r;
      }
      if (!s.ok()) return refused(s);
      persist_message(client, e);
      return std::nullopt;
    }
    default:
      return refused(StatusCode::kInvalidArgument, "not a device message for a task");
  }
}

void TaskRound::on_disconnect(uint64_t client, uint64_t now) {
  offered_.erase(client);
  if (client <= UINT32_MAX) dropped_.insert(static_cast<uint32_t>(client));
  if (!finished()) advance(now);
}

void TaskRound::on_tick(uint64_t now) {
  if (!finished()) advance(now);
}

void TaskRound::advance(uint64_t now) {
  while (!finished()) {
    if (spec_.task.deadline_unix_seconds != 0 && now >= spec_.task.deadline_unix_seconds) {
      abort("the deadline passed");
      return;
    }
    const bool timed_out = now >= stage_started_ + spec_.phase_timeout_seconds;
    if (stage_ == Stage::kAdmission) {
      if (accepted() < spec_.task.max_clients && now < opened_at_ + spec_.admission_seconds) {
        return;
      }
      transition(kAdmissionClosed, now);
    } else if (stage_ == Stage::kReports) {
      // Only admitted devices add, and each completes once, or is refused (out of bounds): all
      // are done when the counts meet.
      const bool all = trusted_.contributors() + refused_reports_.size() == accepted_;
      if (!all && !timed_out) return;
      transition(kReportsClosed, now);
    } else if (stage_ == Stage::kSecAgg) {
      // The grace runs from the first tick or message after the restart — the server is
      // listening by then — not from before the replay, however long that took.
      if (!awaited_.empty() && awaited_until_ == 0) {
        awaited_until_ = now + spec_.reconnect_grace_seconds;
      } else if (!awaited_.empty() && now >= awaited_until_) {
        dropped_.insert(awaited_.begin(), awaited_.end());
        awaited_.clear();
      }
      if (!secagg_->all_done(dropped_) && !timed_out) return;
      transition(kSecAggClosed, now);
    } else {
      return;
    }
  }
}

void TaskRound::close_admission() {
  std::set<uint32_t> accepted;
  for (const auto& r : replies_) {
    if (r.second) accepted.insert(static_cast<uint32_t>(r.first));
  }
  const std::set<uint64_t> late = std::move(offered_);  // a close may call on_disconnect back
  offered_.clear();
  for (uint64_t client : late) {
    send(client, server_error(retry_later(StatusCode::kResourceExhausted, "admission is over")));
    if (!replaying_ && links_.close) links_.close(client);
  }
  if (accepted.size() < spec_.task.min_clients) {
    abort("fewer than min_clients when admission ended");
    return;
  }
  if (!dist()) {
    stage_ = Stage::kReports;
    return;
  }
  secagg_ = std::make_unique<SecAggPhase>(
      spec_.task, accepted,
      spec_.task.secagg_degree != 0 ? stored_seed(kGraphSeed, graph_seed_) : Seed256{},
      spec_.secagg_ca_public_key ? spec_.secagg_ca_public_key->data() : nullptr);
  stage_ = Stage::kSecAgg;
  for (uint32_t m : accepted) send_opening(m);
}

void TaskRound::record_exclusions(size_t from) {
  const auto& excluded = secagg_->excluded();
  for (size_t i = from; i < excluded.size() && !replaying_; ++i) {
    NewEvent event;
    event.task_id = id();
    event.client_id = excluded[i].first;
    event.kind = EventKind::kServerNote;
    event.payload = text_bytes(kExcludedNote + excluded[i].second);
    store_.append_event(event);
    if (links_.log) {
      links_.log("task " + std::to_string(id()) + ": device " + std::to_string(excluded[i].first) +
                 " excluded from secure aggregation: " + excluded[i].second);
    }
  }
}

void TaskRound::record_disputes(size_t from) {
  const auto& disputes = secagg_->disputes();
  // A replay that finishes the round writes the notes the crash kept from the store (one commit
  // holds them all: the store has all of them or none).
  if (from >= disputes.size() || (replaying_ && disputes_stored_)) return;
  std::vector<NewEvent> notes;
  std::map<uint32_t, std::vector<const SecAggDispute*>> by_holder;
  for (size_t i = from; i < disputes.size(); ++i) {
    const SecAggDispute& d = disputes[i];
    const std::string secret = "device " + std::to_string(d.owner) +
                               (d.self_mask ? "'s self-mask seed" : "'s masking key");
    NewEvent event;
    event.task_id = id();
    event.client_id = d.holder;
    event.kind = EventKind::kServerNote;
    event.payload = text_bytes(kDisputedNote + std::to_string(d.owner) +
                               (d.self_mask ? " self " : " key ") + "its share of " + secret +
                               " is off the polynomial the secret was rebuilt and verified from: "
                               "device " +
                               std::to_string(d.holder) + " or device " + std::to_string(d.owner) +
                               " is at fault");
    notes.push_back(std::move(event));
    by_holder[d.holder].push_back(&d);
  }
  store_.append_events(notes);  // one commit for the lot
  if (!links_.log) return;
  constexpr size_t kNamed = 16;
  for (const auto& [holder, list] : by_holder) {
    std::string secrets;
    for (size_t i = 0; i < list.size() && i < kNamed; ++i) {
      secrets += (i == 0 ? "" : ", ") + std::string("device ") + std::to_string(list[i]->owner) +
                 (list[i]->self_mask ? "'s self-mask seed" : "'s masking key");
    }
    if (list.size() > kNamed) secrets += " and " + std::to_string(list.size() - kNamed) + " more";
    links_.log("task " + std::to_string(id()) + ": disputed: the share" +
               (list.size() == 1 ? "" : "s") + " device " + std::to_string(holder) +
               " revealed of " + secrets + (list.size() == 1 ? " is" : " are") +
               " off the polynomial the secret was rebuilt and verified from (left out): device " +
               std::to_string(holder) +
               " revealed other than it was dealt, or the dealer dealt it "
               "a bad share; nobody is excluded for it");
  }
}

void TaskRound::close_secagg_stage() {
  std::vector<uint64_t> sum;
  const size_t excluded_before = secagg_->excluded().size();
  const size_t disputes_before = secagg_->disputes().size();
  const SecAggPhase::Stage closed = secagg_->stage();
  Status s = secagg_->close(&sum);
  record_exclusions(excluded_before);
  record_disputes(disputes_before);  // finish()'s: reveals off a verified secret's polynomial
  if (!s.ok()) {
    abort("secure aggregation aborted: " + secagg_->abort_reason());
    return;
  }
  if (secagg_->stage() == SecAggPhase::Stage::kDone) {
    complete(sum, secagg_->survivors());
    return;
  }
  // The stages up to the masked input decide who is in the sum (U3 ⊆ U2 ⊆ U1): below
  // min_clients the release would hold fewer devices than the task promises. The consistency
  // stage (signed sessions) decides nothing of the sum: the reveals need t holders only, which
  // SecAggServer::close_consistency checked.
  if (closed != SecAggPhase::Stage::kConsistency &&
      secagg_->members().size() < spec_.task.min_clients) {
    const SecAggPhase::Stage next = secagg_->stage();
    const char* sent = next == SecAggPhase::Stage::kShares    ? "their keys"
                       : next == SecAggPhase::Stage::kMasking ? "their shares"
                                                              : "their masked input";
    abort("fewer than min_clients (" + std::to_string(spec_.task.min_clients) + ") sent " + sent +
          ": " + std::to_string(secagg_->members().size()));
    return;
  }
  for (uint32_t m : secagg_->members()) {
    if (dropped_.count(m) == 0) send_opening(m);
  }
}

void TaskRound::send_opening(uint64_t member) {
  for (const auto& e : secagg_->opening_for(static_cast<uint32_t>(member))) send(member, e);
}

void TaskRound::finish_reports() {
  if (trusted_.contributors() < spec_.task.min_clients) {
    abort("fewer than min_clients complete reports");
    return;
  }
  complete(trusted_.sum(), trusted_.contributors());
}

std::vector<uint64_t> TaskRound::members_to_notify() const {
  std::vector<uint64_t> out;  // a device whose report was refused was told so, and closed
  for (const auto& r : replies_) {
    if (r.second && refused_reports_.count(r.first) == 0) out.push_back(r.first);
  }
  return out;
}

Seed256 TaskRound::noise_seed() {
  return stored_seed(kNoiseSeed, noise_seed_);
}

Seed256 TaskRound::stored_seed(const char* name, std::optional<Seed256>& held) {
  if (held) return *held;
  Csprng csprng;
  Seed256 seed;
  Status s = csprng.init();
  if (s.ok()) s = csprng.fill(MutableByteSpan(seed.bytes, sizeof(seed.bytes)));
  if (!s.ok()) throw std::runtime_error(std::string(name) + ": csprng: " + s.message());
  // Stored (a note: committed to survive a power cut, store.h) before it is used — before
  // anything is estimated (noise) or committed to in SecAggStart (graph) — during a replay too,
  // when the crash came before the note: no draw was ever shown then.
  NewEvent note;
  note.task_id = id();
  note.kind = EventKind::kServerNote;
  note.payload = text_bytes(std::string(name) + " " + encode_hex(seed.bytes, 32));
  store_.append_event(note);
  held = seed;
  return seed;
}

Refusal TaskRound::refuse_report(uint64_t client, const std::string& why) {
  if (!replaying_) {  // a refused chunk is never stored: a replay never gets here
    NewEvent note;
    note.task_id = id();
    note.client_id = client;
    note.kind = EventKind::kServerNote;
    note.payload = text_bytes(std::string(kReportRefused) + " " + why);
    store_.append_event(note);
    if (links_.log) {
      links_.log("task " + std::to_string(id()) + ": device " + std::to_string(client) +
                 ": report refused, not summed: " + why);
    }
  }
  refused_reports_.insert(client);
  trusted_.drop(client);
  Refusal r = refused(StatusCode::kOutOfRange, "report: " + why + " (refused, not summed)");
  r.close = true;
  return r;
}

void TaskRound::apply_note(const StoredEvent& event) {
  const auto [word, text] = note_parts(event.payload);
  if (word == kNoiseSeed) return;  // read before the replay
  if (word == kGraphSeed) {        // read before the replay; a sparse DIST round's only
    if (dist() && spec_.task.secagg_degree != 0) return;
    throw std::runtime_error("task " + std::to_string(id()) +
                             ": a graph_seed note, but the task is no sparse DIST round");
  }
  if (word + " " == kDisputedNote) return;  // evidence only (see kDisputedNote)
  if (word == kReportRefused) {
    // Written only for an admitted clear-path device whose report was not complete, once.
    const uint64_t client = event.client_id;
    const auto reply = replies_.find(client);
    if (dist() || reply == replies_.end() || !reply->second ||
        refused_reports_.count(client) != 0 ||
        trusted_.words_from(client) == spec_.task.vector_length) {
      throw std::runtime_error("task " + std::to_string(id()) + ": a report_refused note for " +
                               "device " + std::to_string(client) + " that it does not fit");
    }
    refused_reports_.insert(client);
    trusted_.drop(client);
    return;
  }
  throw std::runtime_error("task " + std::to_string(id()) + ": an unknown server note \"" + word +
                           "\"");
}

void TaskRound::complete(const std::vector<uint64_t>& sum, uint32_t contributors) {
  // A result published before a crash is kept.
  const bool published = store_.result(id()).has_value();
  // TAGG: this server never estimates. The round is over for the devices; the aggregate goes to
  // the TAgg — again after a restart, whose replay rebuilds the same sum and comes back here.
  const bool forwarded = spec_.forward && !published;
  if (!published && !forwarded) {
    // One noise draw per aggregate: from the stored seed's stream (see the header).
    const Seed256 seed = noise_seed();
    SeededStream stream(seed, 0);
    RandomBits noise(stream);
    std::string result;
    try {
      result = spec_.estimate(sum, contributors, noise);
    } catch (const std::exception& e) {
      // Not out of the io loop (and again at every restart's replay): the round aborts, stored.
      // The devices get a fixed reason; the message, which may depend on the sum, stays here.
      if (links_.log && !replaying_) {
        links_.log("task " + std::to_string(id()) + ": the estimate failed: " + e.what());
      }
      abort("the estimate failed");
      return;
    }
    store_.put_result(id(), result);
  }
  if (!replaying_) {
    NewEvent event;
    event.task_id = id();
    event.kind = EventKind::kTransition;
    event.payload = text_bytes(std::string(kCompleted) + " " + std::to_string(stage_started_));
    store_.append_event(event);
  }
  store_.set_task_state(id(), forwarded ? kAwaitingTagg : "completed");
  stage_ = Stage::kCompleted;
  if (links_.log && !replaying_) {
    links_.log("task " + std::to_string(id()) +
               (forwarded ? ": completed, awaiting tagg" : ": completed"));
  }
  if (forwarded) spec_.forward(sum, contributors);
  for (uint64_t m : members_to_notify()) {
    send(m, round_outcome(id(), true, "completed"));
    if (!replaying_ && links_.close) links_.close(m);
  }
}

void TaskRound::abort(const std::string& reason) {
  if (!replaying_) {
    NewEvent event;
    event.task_id = id();
    event.kind = EventKind::kTransition;
    event.payload =
        text_bytes(std::string(kAborted) + " " + std::to_string(stage_started_) + " " + reason);
    store_.append_event(event);
    if (links_.log) links_.log("task " + std::to_string(id()) + ": aborted: " + reason);
  }
  store_.set_task_state(id(), "aborted");
  stage_ = Stage::kAborted;
  for (uint64_t m : members_to_notify()) {
    send(m, round_outcome(id(), false, reason));
    if (!replaying_ && links_.close) links_.close(m);
  }
}

}  // namespace host
}  // namespace fedstat
