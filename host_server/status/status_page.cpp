// The status page and /metrics as text (status_page.h).
#include "host_server/status/status_page.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>

#include "fedstat/v1/envelope.pb.h"

namespace fedstat {
namespace host {
namespace {

std::string number(double value, int digits = 6) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[64];
  std::snprintf(text, sizeof(text), "%.*g", digits, value);
  return text;
}

std::string utc(uint64_t unix_seconds) {
  if (unix_seconds == 0) return "–";
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm parts{};
  gmtime_r(&t, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%SZ", &parts);
  return text;
}

std::string duration(uint64_t seconds) {
  char text[48];
  std::snprintf(text, sizeof(text), "%lluh %02llum %02llus",
                static_cast<unsigned long long>(seconds / 3600),
                static_cast<unsigned long long>(seconds / 60 % 60),
                static_cast<unsigned long long>(seconds % 60));
  return text;
}

// A CSS class from a state word: [a-z_] only, else "other".
std::string state_class(const std::string& state) {
  if (state.empty()) return "other";
  for (char c : state) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return "other";
  }
  return state;
}

template <typename T>
std::string or_dash(const std::optional<T>& value) {
  if (!value) return "–";
  if constexpr (std::is_floating_point_v<T>) {
    return number(*value);
  } else {
    return std::to_string(*value);
  }
}

constexpr char kStyle[] = R"(
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1d2330;background:#fafbfc}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.summary{color:#566;margin:0 0 16px}
table{border-collapse:collapse;background:#fff}
th,td{border:1px solid #d5dae1;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
.overview td:first-child{color:#566}
.state{font-weight:600}.state-running{color:#1f5fbf}.state-completed{color:#1a7f37}
.state-aborted{color:#c62828}.state-awaiting_tagg{color:#9a6700}.state-declared{color:#566}
.detail{color:#566;font-size:12px}
figure{display:inline-block;margin:0 16px 16px 0;background:#fff;border:1px solid #d5dae1;
padding:8px}figcaption{font-weight:600;margin-bottom:4px}
svg text{font:11px system-ui,sans-serif;fill:#566}
.axis{stroke:#8895a7;stroke-width:1}.grid{stroke:#e3e7ed;stroke-width:1}
.estimate-line{fill:none;stroke:#1f5fbf;stroke-width:2}
.estimate-point{fill:#1f5fbf;stroke:#fff;stroke-width:1.5}
.estimate-sd{stroke:#7fa6e0;stroke-width:2}
text.pending{fill:#9a6700}
pre{background:#f3f5f8;padding:8px;margin:4px 0;white-space:pre-wrap;word-break:break-all}
)";

// One chart: the series' rounds in opening order, a circle per published numeric estimate.
void render_chart(std::ostringstream& out, const std::vector<const TaskStatus*>& rounds,
                  size_t index) {
  constexpr double kWidth = 560, kHeight = 230, kLeft = 70, kRight = 16, kTop = 14, kBottom = 40;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  double low = 0, high = 0;
  bool any = false;
  for (const TaskStatus* t : rounds) {
    if (!t->estimate || !std::isfinite(*t->estimate)) continue;
    const double sd = t->estimate_sd && std::isfinite(*t->estimate_sd) ? *t->estimate_sd : 0;
    const double a = *t->estimate - sd, b = *t->estimate + sd;
    low = any ? std::min(low, a) : a;
    high = any ? std::max(high, b) : b;
    any = true;
  }
  if (any && high - low < 1e-12) {
    const double pad = std::max(std::fabs(high) * 0.1, 1e-3);
    low -= pad;
    high += pad;
  } else if (any) {
    const double pad = (high - low) * 0.08;
    low -= pad;
    high += pad;
  }
  const auto y_of = [&](double v) { return kTop + plot_h * (1 - (v - low) / (high - low)); };
  const size_t n = std::max<size_t>(rounds.size(), 1);
  const auto x_of = [&](size_t i) { return kLeft + plot_w * (static_cast<double>(i) + 0.5) / n; };

  out << "<svg class=\"chart\" id=\"chart-" << index << "\" data-series=\""
      << html_escape(rounds.front()->series) << "\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << ' ' << kHeight
      << "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" aria-label=\"estimate per round\">";
  out << "<line class=\"axis\" x1=\"" << kLeft << "\" y1=\"" << kTop << "\" x2=\"" << kLeft
      << "\" y2=\"" << kTop + plot_h << "\"/>";
  out << "<line class=\"axis\" x1=\"" << kLeft << "\" y1=\"" << kTop + plot_h << "\" x2=\""
      << kLeft + plot_w << "\" y2=\"" << kTop + plot_h << "\"/>";
  if (any) {
    for (int k = 0; k <= 2; ++k) {
      const double v = low + (high - low) * k / 2.0;
      const double y = y_of(v);
      out << "<line class=\"grid\" x1=\"" << kLeft + 1 << "\" y1=\"" << y << "\" x2=\""
          << kLeft + plot_w << "\" y2=\"" << y << "\"/>";
      out << "<text x=\"" << kLeft - 6 << "\" y=\"" << y + 4 << "\" text-anchor=\"end\">"
          << number(v, 4) << "</text>";
    }
  } else {
    out << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << kTop + plot_h / 2
        << "\" text-anchor=\"middle\">no published estimate yet</text>";
  }
  out << "<text x=\"14\" y=\"" << kTop + plot_h / 2 << "\" transform=\"rotate(-90 14 "
      << kTop + plot_h / 2 << ")\" text-anchor=\"middle\">estimate</text>";
  std::ostringstream line;
  size_t points = 0;
  for (size_t i = 0; i < rounds.size(); ++i) {
    const TaskStatus& t = *rounds[i];
    const double x = x_of(i);
    out << "<text x=\"" << x << "\" y=\"" << kTop + plot_h + 16 << "\" text-anchor=\"middle\">task "
        << t.id << "</text>";
    if (t.estimate && std::isfinite(*t.estimate)) {
      line << (points++ == 0 ? "" : " ") << x << ',' << y_of(*t.estimate);
    } else {
      out << "<text class=\"pending\" x=\"" << x << "\" y=\"" << kTop + plot_h - 6
          << "\" text-anchor=\"middle\">" << html_escape(t.state) << "</text>";
    }
  }
  out << "<text x=\"" << kLeft + plot_w / 2 << "\" y=\"" << kHeight - 4
      << "\" text-anchor=\"middle\">round (in opening order)</text>";
  if (points > 1) out << "<polyline class=\"estimate-line\" points=\"" << line.str() << "\"/>";
  for (size_t i = 0; i < rounds.size(); ++i) {
    const TaskStatus& t = *rounds[i];
    if (!t.estimate || !std::isfinite(*t.estimate)) continue;
    const double x = x_of(i), y = y_of(*t.estimate);
    if (t.estimate_sd && std::isfinite(*t.estimate_sd) && *t.estimate_sd > 0) {
      out << "<line class=\"estimate-sd\" x1=\"" << x << "\" y1=\""
          << y_of(*t.estimate - *t.estimate_sd) << "\" x2=\"" << x << "\" y2=\""
          << y_of(*t.estimate + *t.estimate_sd) << "\"/>";
    }
    out << "<circle class=\"estimate-point\" data-task=\"" << t.id << "\" cx=\"" << x << "\" cy=\""
        << y << "\" r=\"5\"><title>task " << t.id << ": " << number(*t.estimate)
        << (t.estimate_sd ? " ± " + number(*t.estimate_sd) : "") << " (opened "
        << utc(t.opened_unix_seconds) << ")</title></circle>";
  }
  out << "</svg>";
}

}  // namespace

std::string decline_reason_name(int64_t reason) {
  switch (reason) {
    case fedstat_v1_ErrorAction_ERROR_ACTION_UNSPECIFIED:
      return "unspecified";
    case fedstat_v1_ErrorAction_RETRY_LATER:
      return "retry_later";
    case fedstat_v1_ErrorAction_BUDGET_EXHAUSTED:
      return "budget_exhausted";
    case fedstat_v1_ErrorAction_TASK_CLOSED:
      return "task_closed";
    case fedstat_v1_ErrorAction_VERSION_TOO_OLD:
      return "version_too_old";
    case fedstat_v1_ErrorAction_REFUSED:
      return "refused";
    case fedstat_v1_ErrorAction_INSUFFICIENT_MEMORY:
      return "insufficient_memory";
    case fedstat_v1_ErrorAction_NO_DATA:
      return "no_data";
    case fedstat_v1_ErrorAction_DEVICE_FAILURE:
      return "device_failure";
    case fedstat_v1_ErrorAction_POLICY:
      return "policy";
    default:
      return "reason_" + std::to_string(reason);
  }
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string metric_label_escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_status_html(const ServerStatus& s) {
  std::ostringstream out;
  std::map<std::string, size_t> by_state;
  for (const TaskStatus& t : s.tasks) ++by_state[t.state];
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta http-equiv=\"refresh\" content=\"5\">"
         "<meta name=\"viewport\" content=\"width=device-width\">"
         "<title>fedstat-server status</title><style>"
      << kStyle << "</style></head><body>\n";
  out << "<h1>fedstat-server</h1><p class=\"summary\">version " << html_escape(s.version)
      << " · up "
      << duration(s.now_unix_seconds - std::min(s.now_unix_seconds, s.started_unix_seconds))
      << " · as of " << utc(s.now_unix_seconds)
      << " · read-only; refreshes every 5 s · <a href=\"/metrics\">/metrics</a></p>\n";

  out << "<table class=\"overview\" id=\"overview\"><tbody>";
  const auto row = [&](const char* name, const char* id, const std::string& value) {
    out << "<tr><td>" << name << "</td><td class=\"n\" id=\"" << id << "\">" << value
        << "</td></tr>";
  };
  row("connections open", "connections-open", std::to_string(s.connections_open));
  row("connections since start", "connections-total", std::to_string(s.connections_total));
  row("check-ins since start", "checkins-total", std::to_string(s.checkins_total));
  row("refused handshakes since start", "handshake-failures", std::to_string(s.handshake_failures));
  row("resumed TLS handshakes since start", "resumed-handshakes",
      std::to_string(s.resumed_handshakes));
  row("devices authenticated since start (pre-shared key, certificate)", "device-authentication",
      std::to_string(s.psk_connections) + ", " + std::to_string(s.certificate_connections));
  row("connections refused by the per-address limit", "refused-peers",
      std::to_string(s.refused_peers));
  row("connections refused at accept (max_connections, per address)", "refused-at-accept",
      std::to_string(s.refused_full) + ", " + std::to_string(s.refused_per_address));
  row("connections not checked in closed for a newer one (max_connections, per address)",
      "evicted-for-newer",
      std::to_string(s.evicted_full) + ", " + std::to_string(s.evicted_per_address));
  row("connections closed without a check-in", "not-checked-in", std::to_string(s.not_checked_in));
  row("connections replaced by their device's newer one", "replaced-per-identity",
      std::to_string(s.replaced_per_identity));
  row("device messages stored", "device-messages", std::to_string(s.device_messages_stored));
  row("reports stored", "reports-stored", std::to_string(s.reports_stored));
  std::string rounds;
  for (const auto& [state, count] : by_state) {
    rounds += (rounds.empty() ? "" : ", ") + std::to_string(count) + " " + html_escape(state);
  }
  row("rounds", "rounds", rounds.empty() ? "none" : rounds);
  out << "</tbody></table>\n";

  out << "<h2>Tasks and rounds</h2>\n<table id=\"tasks\"><thead><tr><th>task</th><th>kind</th>"
         "<th>trust</th><th title=\"the privacy parameters each round's release is declared "
         "with, what each device's ledger is charged\">ε (δ)</th><th>state</th><th>stage</th>"
         "<th>opened</th><th>clients (min–max)</th>"
         "<th>checked in</th><th>accepted</th><th>declined</th><th title=\"devices that failed "
         "on their own side: storage, ledger, entropy or computation (TaskReply DEVICE_FAILURE)"
         "\">failed</th><th>contributors</th>"
         "<th>dropouts</th><th>estimate</th></tr></thead><tbody>\n";
  for (const TaskStatus& t : s.tasks) {
    out << "<tr id=\"task-" << t.id << "\" data-task=\"" << t.id << "\" data-state=\""
        << html_escape(t.state) << "\"><td class=\"n\">" << t.id;
    if (t.follows != 0) out << "<div class=\"detail\">follows " << t.follows << "</div>";
    out << "</td><td>" << html_escape(t.kind) << "</td><td>" << html_escape(t.trust)
        << "</td><td class=\"n epsilon\">";
    if (t.trust == "none") {
      out << "–<div class=\"detail\">no privacy</div>";
    } else {
      out << or_dash(t.epsilon);
      if (t.delta) out << "<div class=\"detail delta\">δ " << number(*t.delta) << "</div>";
    }
    out << "</td><td class=\"state state-" << state_class(t.state) << "\">" << html_escape(t.state)
        << "</td><td>" << html_escape(t.stage);
    if (t.stage.empty() && t.state != "running" && !t.transitions.empty()) {
      out << "ended " << utc(t.transitions.back().second);
    }
    if (!t.detail.empty()) out << "<div class=\"detail\">" << html_escape(t.detail) << "</div>";
    if (!t.excluded.empty()) {
      out << "<div class=\"detail excluded\">" << t.excluded.size() << " excluded:";
      for (const auto& [device, reason] : t.excluded) {
        out << "<div class=\"excluded-device\" data-device=\"" << device << "\">device " << device
            << ": " << html_escape(reason) << "</div>";
      }
      out << "</div>";
    }
    if (!t.disputed.empty()) {
      // Not exclusions: either device of a pair may be at fault (secagg_server.h).
      constexpr size_t kShown = 32;
      out << "<div class=\"detail disputed\">" << t.disputed.size() << " disputed share"
          << (t.disputed.size() == 1 ? "" : "s")
          << " (the holder or the dealer is at fault; nobody excluded):";
      for (size_t i = 0; i < t.disputed.size() && i < kShown; ++i) {
        const TaskStatus::DisputedShare& d = t.disputed[i];
        out << "<div class=\"disputed-share\" data-holder=\"" << d.holder << "\" data-dealer=\""
            << d.owner << "\">device " << d.holder << "'s share of device " << d.owner << "'s "
            << (d.self_mask ? "self-mask seed" : "masking key") << "</div>";
      }
      if (t.disputed.size() > kShown)
        out << "<div>… and " << t.disputed.size() - kShown << " more</div>";
      out << "</div>";
    }
    out << "</td><td>" << utc(t.opened_unix_seconds) << "</td><td class=\"n\">"
        << or_dash(t.min_clients) << "–" << or_dash(t.max_clients)
        << "</td><td class=\"n checked-in\">" << t.checked_in << "</td><td class=\"n accepted\">"
        << t.accepted << "</td><td class=\"n declined\">" << t.declined;
    if (!t.declined_by_reason.empty()) {
      std::string reasons;
      for (const auto& [reason, count] : t.declined_by_reason) {
        reasons += (reasons.empty() ? "" : ", ") + std::to_string(count) + " " + reason;
      }
      out << "<div class=\"detail\">" << html_escape(reasons) << "</div>";
    }
    out << "</td><td class=\"n failed\">" << t.failed << "</td><td class=\"n contributors\">"
        << or_dash(t.contributors) << "</td><td class=\"n dropouts\">" << or_dash(t.dropouts);
    if (t.reports_refused > 0) {
      out << "<div class=\"detail reports-refused\">" << t.reports_refused
          << " refused: a word out of bounds</div>";
    }
    out << "</td><td class=\"n estimate\">" << or_dash(t.estimate);
    if (t.estimate_sd && *t.estimate_sd > 0) out << " ± " << number(*t.estimate_sd, 3);
    out << "</td></tr>\n";
  }
  if (s.tasks.empty()) out << "<tr><td colspan=\"15\">no tasks</td></tr>";
  out << "</tbody></table>\n";

  // One chart per series, in the order of the series' first task.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const TaskStatus*>> series;
  for (const TaskStatus& t : s.tasks) {
    auto& members = series[t.series];
    if (members.empty()) order.push_back(t.series);
    members.push_back(&t);
  }
  out << "<h2>Estimates over rounds</h2>\n<div id=\"charts\">";
  size_t index = 0;
  for (const std::string& key : order) {
    auto members = series[key];
    std::stable_sort(members.begin(), members.end(), [](const TaskStatus* a, const TaskStatus* b) {
      return a->opened_unix_seconds != b->opened_unix_seconds
                 ? a->opened_unix_seconds < b->opened_unix_seconds
                 : a->id < b->id;
    });
    out << "<figure class=\"series\"><figcaption>" << html_escape(members.front()->series_label)
        << "</figcaption>";
    render_chart(out, members, index++);
    out << "</figure>";
  }
  if (order.empty()) out << "<p>no tasks</p>";
  out << "</div>\n<h2>Published results and round timelines</h2>\n<div id=\"results\">";
  for (const TaskStatus& t : s.tasks) {
    out << "<details id=\"result-" << t.id << "\"" << (t.result_json ? "" : " class=\"none\"")
        << "><summary>task " << t.id << " · " << html_escape(t.state)
        << (t.result_json ? " · result published" : "") << "</summary>";
    out << "<div class=\"detail\">";
    for (size_t i = 0; i < t.transitions.size(); ++i) {
      out << (i ? " → " : "") << html_escape(t.transitions[i].first) << " "
          << utc(t.transitions[i].second);
    }
    out << "</div>";
    if (t.result_json) out << "<pre>" << html_escape(*t.result_json) << "</pre>";
    out << "</details>\n";
  }
  out << "</div></body></html>\n";
  return out.str();
}

std::string render_metrics(const ServerStatus& s) {
  std::ostringstream out;
  const auto metric = [&](const char* name, const char* type, const char* help) {
    out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  };
  const auto scalar = [&](const char* name, const char* type, const char* help, auto value) {
    metric(name, type, help);
    out << name << ' ' << value << '\n';
  };
  scalar("fedstat_up", "gauge", "1 while the server serves.", 1);
  scalar("fedstat_start_time_seconds", "gauge", "When this server process started (unix time).",
         s.started_unix_seconds);
  scalar("fedstat_connections_open", "gauge",
         "Device TLS connections past their handshake and not closed.", s.connections_open);
  scalar("fedstat_connections_total", "counter",
         "Device TLS connections whose handshake completed, since the process started.",
         s.connections_total);
  scalar("fedstat_handshake_failures_total", "counter",
         "Connections closed in their TLS handshake (unknown identity, wrong key, time-out).",
         s.handshake_failures);
  scalar("fedstat_tls_resumed_handshakes_total", "counter",
         "Completed handshakes that resumed a TLS session (no key exchange), since the process "
         "started.",
         s.resumed_handshakes);
  scalar("fedstat_connections_psk_total", "counter",
         "Completed handshakes in which the device authenticated with its pre-shared key (full "
         "or resumed), since the process started.",
         s.psk_connections);
  scalar("fedstat_connections_certificate_total", "counter",
         "Completed handshakes in which the device authenticated with an X.509 certificate "
         "(mutual TLS), since the process started.",
         s.certificate_connections);
  scalar("fedstat_connections_rate_limited_total", "counter",
         "Connections dropped before the server's key pair because their address (an IPv6 /64) "
         "made more "
         "full handshakes than handshakes_per_address_per_minute.",
         s.refused_peers);
  scalar("fedstat_connections_refused_full_total", "counter",
         "Connections closed at accept because max_connections were held, every one checked in.",
         s.refused_full);
  scalar("fedstat_connections_refused_per_address_total", "counter",
         "Connections closed at accept because their address (an IPv6 /64) held "
         "max_connections_per_address, every one checked in.",
         s.refused_per_address);
  scalar("fedstat_connections_evicted_full_total", "counter",
         "Connections not checked in, closed to make room for a newer one at max_connections.",
         s.evicted_full);
  scalar("fedstat_connections_evicted_per_address_total", "counter",
         "Connections not checked in, closed to make room for a newer one from their address (an "
         "IPv6 /64) at max_connections_per_address.",
         s.evicted_per_address);
  scalar("fedstat_connections_replaced_per_identity_total", "counter",
         "Open connections closed because their device id opened one more than "
         "max_connections_per_identity.",
         s.replaced_per_identity);
  scalar("fedstat_connections_not_checked_in_total", "counter",
         "Connections closed because no ClientHello was taken within handshake_timeout_ms of "
         "their accept.",
         s.not_checked_in);
  scalar("fedstat_connections_revoked_total", "counter",
         "Connections closed because a credentials reload (SIGHUP) removed or changed their "
         "device's key.",
         s.revoked);
  scalar("fedstat_tls_sessions_held", "gauge",
         "TLS sessions the listener holds for resumption (tls_session_cache_entries at most).",
         s.tls_sessions_held);
  scalar("fedstat_checkins_total", "counter",
         "ClientHello messages received since the process started, refused ones included.",
         s.checkins_total);
  scalar("fedstat_frames_received_total", "counter",
         "Frames received from devices since the process started.", s.frames_received);
  scalar("fedstat_device_messages_stored_total", "counter",
         "Device messages the rounds accepted and stored (the whole store).",
         s.device_messages_stored);
  scalar("fedstat_reports_stored_total", "counter",
         "Contributions stored: Report chunks and SecAggMaskedChunk messages (the whole store).",
         s.reports_stored);

  std::map<std::string, size_t> by_state{
      {"running", 0}, {"completed", 0}, {"aborted", 0}, {"awaiting_tagg", 0}, {"declared", 0}};
  for (const TaskStatus& t : s.tasks) ++by_state[t.state];
  metric("fedstat_rounds", "gauge", "Rounds (one per task) by state.");
  for (const auto& [state, count] : by_state) {
    out << "fedstat_rounds{state=\"" << metric_label_escape(state) << "\"} " << count << '\n';
  }
  size_t published = 0;
  for (const TaskStatus& t : s.tasks) published += t.result_json ? 1 : 0;
  metric("fedstat_results_published", "gauge", "Tasks whose result is published.");
  out << "fedstat_results_published " << published << '\n';

  const auto labels = [](const TaskStatus& t) {
    return "{task=\"" + std::to_string(t.id) + "\",kind=\"" + metric_label_escape(t.kind) +
           "\",trust=\"" + metric_label_escape(t.trust) + "\"}";
  };
  const auto per_task = [&](const char* name, const char* help, auto value) {
    metric(name, "gauge", help);
    for (const TaskStatus& t : s.tasks) {
      const std::optional<double> v = value(t);
      if (v) out << name << labels(t) << ' ' << number(*v, 17) << '\n';
    }
  };
  per_task("fedstat_task_devices_checked_in", "Devices offered the task.",
           [](const TaskStatus& t) { return std::optional<double>(t.checked_in); });
  per_task("fedstat_task_devices_accepted", "Devices that accepted the task.",
           [](const TaskStatus& t) { return std::optional<double>(t.accepted); });
  metric(
      "fedstat_task_devices_declined", "gauge",
      "Devices that declined the task, by TaskReply reason (policy: outside their task policy).");
  for (const TaskStatus& t : s.tasks) {
    for (const auto& [reason, count] : t.declined_by_reason) {
      std::string with_reason = labels(t);
      with_reason.insert(with_reason.size() - 1, ",reason=\"" + metric_label_escape(reason) + "\"");
      out << "fedstat_task_devices_declined" << with_reason << ' ' << count << '\n';
    }
  }
  per_task("fedstat_task_devices_failed",
           "Devices that failed on their own side (TaskReply DEVICE_FAILURE), not declines.",
           [](const TaskStatus& t) { return std::optional<double>(t.failed); });
  per_task("fedstat_task_epsilon", "The task's declared epsilon (absent for trust none).",
           [](const TaskStatus& t) { return t.trust == "none" ? std::nullopt : t.epsilon; });
  per_task("fedstat_task_delta", "The task's declared delta (absent for trust none).",
           [](const TaskStatus& t) { return t.trust == "none" ? std::nullopt : t.delta; });
  per_task("fedstat_task_contributors", "Devices summed in the published result.",
           [](const TaskStatus& t) {
             return t.contributors ? std::optional<double>(*t.contributors) : std::nullopt;
           });
  per_task("fedstat_task_dropouts", "Accepted devices not in the sum (when known).",
           [](const TaskStatus& t) {
             return t.dropouts ? std::optional<double>(*t.dropouts) : std::nullopt;
           });
  per_task("fedstat_task_reports_refused",
           "Devices whose report was refused: a word beyond the kind's largest honest word.",
           [](const TaskStatus& t) { return std::optional<double>(t.reports_refused); });
  per_task("fedstat_task_estimate", "The published estimate.",
           [](const TaskStatus& t) { return t.estimate; });
  metric("fedstat_task_state", "gauge", "1 for the task's current state.");
  for (const TaskStatus& t : s.tasks) {
    out << "fedstat_task_state{task=\"" << t.id << "\",state=\"" << metric_label_escape(t.state)
        << "\"} 1\n";
  }
  return out.str();
}

}  // namespace host
}  // namespace fedstat
