// The status page's sources and wiring (operator_view.h).
#include "host_server/status/operator_view.h"

#include <algorithm>
#include <chrono>
#include <sstream>

#include "host_server/rounds/messages.h"
#include "host_server/rounds/task_round.h"
#include "nlohmann/json.hpp"
#include "sdk/client/contribution.h"
#include "sdk/version.h"

namespace fedstat {
namespace host {

using nlohmann::json;

namespace {

// As server_app.h's unix_seconds and log_line (this library sits below the serving mode's).
uint64_t now_seconds() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

uint64_t TallyingStore::append_events(const std::vector<NewEvent>& events) {
  const uint64_t last = inner_.append_events(events);
  if (loaded_) {
    for (const NewEvent& e : events) fold(e.task_id, e.client_id, e.kind, e.payload);
  }
  return last;
}

void TallyingStore::load() {
  if (loaded_) return;
  for (const StoredTask& task : inner_.tasks()) {
    tallies_[task.task_id];
    for (const StoredEvent& e : inner_.events(task.task_id)) {
      fold(e.task_id, e.client_id, e.kind, e.payload);
    }
  }
  loaded_ = true;
}

void TallyingStore::fold(uint32_t task_id, uint64_t client_id, EventKind kind,
                         const std::vector<uint8_t>& payload) {
  TaskTally& t = tallies_[task_id];
  if (kind == EventKind::kTransition) {
    std::istringstream in(std::string(payload.begin(), payload.end()));
    std::string word, reason;
    uint64_t at = 0;
    in >> word >> at;
    std::getline(in, reason);
    if (!reason.empty() && reason.front() == ' ') reason.erase(0, 1);
    t.transitions.emplace_back(word, at);
    if (word == "aborted") t.abort_reason = reason;
    return;
  }
  if (kind == EventKind::kServerNote) {  // the rounds' notes (task_round.h): "<word> <text>"
    const std::string note(payload.begin(), payload.end());
    static const std::string kExcluded = "excluded ";  // task_round.cpp's note
    if (note.rfind(kExcluded, 0) == 0) t.excluded.emplace_back(client_id, note.substr(9));
    static const std::string kDisputed = "disputed ";  // task_round.cpp's note
    if (note.rfind(kDisputed, 0) == 0) {
      std::istringstream in(note.substr(kDisputed.size()));
      TaskStatus::DisputedShare d;
      std::string kind;
      if (in >> d.owner >> kind && (kind == "self" || kind == "key")) {
        d.holder = client_id;
        d.self_mask = kind == "self";
        t.disputed.push_back(d);
      }
    }
    if (note.rfind("report_refused ", 0) == 0) t.reports_refused.insert(client_id);
    return;
  }
  if (kind != EventKind::kDeviceMessage) return;
  ++device_messages_;
  fedstat_v1_Envelope e;
  try {
    e = decode_bytes(payload);
  } catch (const std::exception&) {
    return;  // the rounds stored it; what it was is theirs to know
  }
  switch (e.which_body) {
    case fedstat_v1_Envelope_client_hello_tag:
      t.checked_in.insert(client_id);
      break;
    case fedstat_v1_Envelope_task_reply_tag:
      if (e.body.task_reply.accept) {
        t.accepted.insert(client_id);
      } else if (e.body.task_reply.reason == fedstat_v1_ErrorAction_DEVICE_FAILURE) {
        t.failed.insert(client_id);  // not the device's choice: not a decline
      } else {
        t.declined.insert(client_id);
        t.declined_by_reason[decline_reason_name(client::wire_enum_value(e.body.task_reply.reason))]
            .insert(client_id);
      }
      break;
    case fedstat_v1_Envelope_report_tag:
      t.reported.insert(client_id);
      ++reports_;
      break;
    case fedstat_v1_Envelope_secagg_keys_tag:
      t.secagg[0].insert(client_id);
      break;
    case fedstat_v1_Envelope_secagg_share_tag:
      t.secagg[1].insert(client_id);
      break;
    case fedstat_v1_Envelope_secagg_masked_chunk_tag:
      t.secagg[2].insert(client_id);
      ++reports_;
      break;
    case fedstat_v1_Envelope_secagg_reveal_tag:
      t.secagg[3].insert(client_id);
      break;
    default:
      break;
  }
}

void ConnectionCounter::on_authenticated(net::ConnectionId id, const net::PeerAuthentication& how) {
  if (how.method == net::AuthenticationMethod::kCertificate) {
    ++by_certificate_;
  } else {
    ++by_psk_;
  }
  inner_.on_authenticated(id, how);
}

void ConnectionCounter::on_open(net::ConnectionId id, const std::string& identity) {
  open_.insert(id);
  ++opened_;
  inner_.on_open(id, identity);
}

void ConnectionCounter::on_frame(net::ConnectionId id, const wire::Envelope& message) {
  ++frames_;
  if (message.which_body == fedstat_v1_Envelope_client_hello_tag) ++check_ins_;
  inner_.on_frame(id, message);
}

void ConnectionCounter::on_close(net::ConnectionId id, const std::string& reason) {
  if (open_.erase(id) == 0) ++never_opened_;  // closed in (or for) its handshake
  inner_.on_close(id, reason);
}

OperatorView::OperatorView(Store& store, net::FrameHandler& handler)
    : store_(store), counter_(handler), started_(now_seconds()) {}

void OperatorView::serve(asio::io_context& io, const ServerConfig& config,
                         const Coordinator& coordinator, std::ostream& log) {
  if (config.status_listen.empty()) return;
  ServerConfig where;
  parse_listen(config.status_listen, where);
  const Coordinator* c = &coordinator;
  http_ = std::make_unique<StatusHttpServer>(
      io, where.address, where.port, [this, c](const std::string& path) {
        // Rendered at most once a second per page: a client (or a web page's blind <img>
        // requests) asking faster costs the io thread nothing more.
        const uint64_t now = now_seconds();
        const bool html = path == "/" || path == "/index.html";
        if (!html && path != "/metrics") return std::optional<HttpResponse>();
        Rendered& cached = html ? html_cache_ : metrics_cache_;
        if (!cached.valid || cached.at != now) {
          const ServerStatus status = snapshot(c, now);
          cached.response =
              html ? HttpResponse{200, "text/html; charset=utf-8", render_status_html(status)}
                   : HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8",
                                  render_metrics(status)};
          cached.at = now;
          cached.valid = true;
        }
        return std::optional<HttpResponse>(cached.response);
      });
  http_->start();
  if (const std::optional<std::string> problem = peer_lookup_problem()) {
    log << json{{"event", "warning"},
                {"detail", "the status page cannot tell local users apart (" + *problem +
                               "): its 16 connections are shared by every local user, whose idle "
                               "sockets can keep the operator out for 5 s each; allow AF_NETLINK "
                               "(sock_diag) to the server, or keep other users off this machine"},
                {"time", now_seconds()}}
               .dump()
        << std::endl;
  }
  log << json{{"event", "status_listening"},
              {"address", where.address},
              {"port", http_->port()},
              {"paths", {"/", "/metrics"}},
              {"time", now_seconds()}}
             .dump()
      << std::endl;
}

void OperatorView::stop() {
  if (http_) http_->stop();
}

namespace {

std::string stage_text(const TaskRound& round, const TaskTally& tally) {
  switch (round.stage()) {
    case TaskRound::Stage::kAdmission:  // clear-path devices report as soon as they accept
      return "admission: " + std::to_string(tally.accepted.size()) + " accepted" +
             (tally.reported.empty() ? ""
                                     : ", " + std::to_string(tally.reported.size()) + " reported");
    case TaskRound::Stage::kReports:
      return "reports: " + std::to_string(tally.reported.size()) + " of " +
             std::to_string(tally.accepted.size()) + " in";
    case TaskRound::Stage::kSecAgg: {
      static const char* names[] = {"keys", "shares", "masked input", "consistency", "reveals"};
      const SecAggPhase* s = round.secagg();
      if (s == nullptr) return "secure aggregation";
      const size_t i = std::min<size_t>(static_cast<size_t>(s->stage()), 4);
      size_t done = 0;
      for (uint32_t m : s->members()) done += s->member_done(m) ? 1 : 0;
      return std::string("secure aggregation: ") + names[i] + ", " + std::to_string(done) + " of " +
             std::to_string(s->members().size()) + " done";
    }
    case TaskRound::Stage::kCompleted:
      return "completed";
    case TaskRound::Stage::kAborted:
      return "aborted";
  }
  return "";
}

std::optional<double> number_field(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return {};
  return object[key].get<double>();
}

}  // namespace

ServerStatus OperatorView::snapshot(const Coordinator* coordinator, uint64_t now) {
  store_.load();
  // First: with a write-behind store this waits for the queued writes, so the counts below are
  // of committed messages, not of messages still queued (store/write_behind_store.h).
  const std::vector<StoredTask> tasks = store_.tasks();
  ServerStatus s;
  s.version = FEDSTAT_VERSION_STRING;
  s.now_unix_seconds = now;
  s.started_unix_seconds = started_;
  s.connections_open = counter_.open();
  s.connections_total = counter_.opened();
  s.handshake_failures = counter_.never_opened();
  s.psk_connections = counter_.by_psk();
  s.certificate_connections = counter_.by_certificate();
  if (tls_stats_) {
    const net::TlsServerStats tls = tls_stats_();
    s.resumed_handshakes = tls.resumed_handshakes;
    s.refused_peers = tls.refused_peers;
    s.tls_sessions_held = tls.cached_sessions;
    s.refused_full = tls.refused_full;
    s.refused_per_address = tls.refused_per_address;
    s.evicted_full = tls.evicted_full;
    s.evicted_per_address = tls.evicted_per_address;
    s.replaced_per_identity = tls.replaced_per_identity;
    s.not_checked_in = tls.not_checked_in;
    s.revoked = tls.revoked;
  }
  s.checkins_total = counter_.check_ins();
  s.frames_received = counter_.frames();
  s.device_messages_stored = store_.device_messages();
  s.reports_stored = store_.reports();
  static const TaskTally kNone;
  for (const StoredTask& stored : tasks) {
    TaskStatus t;
    t.id = stored.task_id;
    json declaration;
    try {
      const json definition = json::parse(stored.definition);
      declaration = definition.value("declaration", json::object());
      t.follows = definition.value("follows", 0u);
      t.opened_unix_seconds = definition.value("opened_unix_seconds", uint64_t{0});
    } catch (const std::exception&) {
      declaration = json::object();
    }
    if (declaration.is_object()) {
      if (declaration.contains("kind") && declaration["kind"].is_string()) {
        t.kind = declaration["kind"].get<std::string>();
      }
      if (declaration.contains("trust") && declaration["trust"].is_string()) {
        t.trust = declaration["trust"].get<std::string>();
      }
      if (auto v = number_field(declaration, "epsilon")) t.epsilon = *v;
      if (auto v = number_field(declaration, "delta")) t.delta = *v;
      if (auto v = number_field(declaration, "min_clients")) t.min_clients = uint32_t(*v);
      if (auto v = number_field(declaration, "max_clients")) t.max_clients = uint32_t(*v);
    }
    // A series: the same measurement again (kind, trust, the kind's parameters, chain stage).
    const json parameters =
        declaration.is_object() && declaration.contains(t.kind) ? declaration[t.kind] : json();
    t.series = t.kind + " " + t.trust + (t.follows ? " stage 2 " : " ") + parameters.dump();
    t.series_label = t.kind + " · " + t.trust + (t.follows ? " · stage 2" : "");
    if (parameters.is_object() && parameters.contains("reference") &&
        parameters["reference"].is_string()) {
      t.series_label += " · against " + parameters["reference"].get<std::string>();
    }

    t.state = stored.state == "open" ? "running" : stored.state;
    const auto tally_it = store_.tallies().find(t.id);
    const TaskTally& tally = tally_it == store_.tallies().end() ? kNone : tally_it->second;
    t.checked_in = tally.checked_in.size();
    t.accepted = tally.accepted.size();
    t.declined = tally.declined.size();
    t.failed = tally.failed.size();
    for (const auto& [reason, devices] : tally.declined_by_reason) {
      t.declined_by_reason[reason] = devices.size();
    }
    t.reports_refused = tally.reports_refused.size();
    t.transitions = tally.transitions;
    t.excluded = tally.excluded;
    t.disputed = tally.disputed;
    if (t.state == "aborted") t.detail = tally.abort_reason;

    const TaskRound* round = coordinator ? coordinator->round(t.id) : nullptr;
    if (t.state == "running") {
      t.stage = round ? stage_text(*round, tally) : "not served by this process";
      if (round && round->stage() == TaskRound::Stage::kSecAgg && round->secagg() != nullptr) {
        const size_t members = round->secagg()->members().size();
        t.dropouts = t.accepted > members ? t.accepted - members : 0;
      }
    } else if (t.state == "aborted" && t.accepted > 0) {
      // The devices that had not sent the last step the round reached (its last stage's senders
      // on the DIST path, a report on the clear path).
      size_t last = tally.reported.size();
      bool reached = !tally.reported.empty();
      for (const auto& senders : tally.secagg) {
        if (!senders.empty()) {
          last = senders.size();
          reached = true;
        }
      }
      if (reached) t.dropouts = t.accepted > last ? t.accepted - last : 0;
    } else if (t.state == "awaiting_tagg") {
      t.stage = "the TAgg's noised result is awaited";
    }

    auto cached = results_.find(t.id);
    if (cached == results_.end()) {
      if (std::optional<std::string> result = store_.result(t.id)) {
        cached = results_.emplace(t.id, *result).first;
      }
    }
    if (cached != results_.end()) {
      t.result_json = cached->second;
      try {
        const json result = json::parse(cached->second);
        t.estimate = number_field(result, "estimate");
        t.estimate_sd = number_field(result, "estimate_sd");
        if (auto c = number_field(result, "contributors")) {
          t.contributors = static_cast<size_t>(*c);
          t.dropouts = t.accepted > *t.contributors ? t.accepted - *t.contributors : 0;
        }
      } catch (const std::exception&) {
        // shown as stored, nothing plotted
      }
    }
    s.tasks.push_back(std::move(t));
  }
  return s;
}

}  // namespace host
}  // namespace fedstat
