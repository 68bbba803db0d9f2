// The status page's overview and /metrics show the listener's counts (host_server/status/
// status_page.h): each count lands in its own row and its own metric, and not in another's.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "host_server/rounds/messages.h"
#include "host_server/status/operator_view.h"
#include "host_server/status/status_page.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/rounds/fake_store.h"

namespace fedstat {
namespace host {
namespace {

TEST(StatusRenderTest, EachListenerCountHasItsRowAndItsMetric) {
  ServerStatus s;
  s.handshake_failures = 11;
  s.resumed_handshakes = 13;
  s.refused_peers = 17;
  s.tls_sessions_held = 19;
  const std::string html = render_status_html(s);
  EXPECT_NE(html.find("id=\"handshake-failures\">11<"), std::string::npos);
  EXPECT_NE(html.find("id=\"resumed-handshakes\">13<"), std::string::npos);
  EXPECT_NE(html.find("id=\"refused-peers\">17<"), std::string::npos);
  const std::string metrics = render_metrics(s);
  EXPECT_NE(metrics.find("\nfedstat_handshake_failures_total 11\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\nfedstat_tls_resumed_handshakes_total 13\n"), std::string::npos);
  EXPECT_NE(metrics.find("\nfedstat_connections_rate_limited_total 17\n"), std::string::npos);
  EXPECT_NE(metrics.find("# TYPE fedstat_connections_rate_limited_total counter\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("\nfedstat_tls_sessions_held 19\n"), std::string::npos);
}

// Declines are counted by their TaskReply reason: a fleet whose task policy refuses the task shows
// on the page and in /metrics as "policy", not only as a number of declines.
TEST(StatusRenderTest, DeclinesAreShownByTheirReason) {
  FakeStore inner;
  inner.put_task(4, "{}");
  TallyingStore store(inner);
  store.load();
  const auto reply = [](bool accept, fedstat_v1_ErrorAction reason) {
    wire::Envelope e = wire::make_envelope();
    e.which_body = fedstat_v1_Envelope_task_reply_tag;
    e.body.task_reply.task_id = 4;
    e.body.task_reply.accept = accept;
    e.body.task_reply.reason = reason;
    return encode_bytes(e);
  };
  std::vector<NewEvent> events;
  for (uint64_t device : {1, 2, 3}) {
    events.push_back(
        {4, device, EventKind::kDeviceMessage, reply(false, fedstat_v1_ErrorAction_POLICY), false});
  }
  events.push_back({4, 5, EventKind::kDeviceMessage,
                    reply(false, fedstat_v1_ErrorAction_BUDGET_EXHAUSTED), false});
  events.push_back({4, 6, EventKind::kDeviceMessage,
                    reply(true, fedstat_v1_ErrorAction_ERROR_ACTION_UNSPECIFIED), true});
  store.append_events(events);
  const TaskTally& tally = store.tallies().at(4);
  EXPECT_EQ(tally.declined.size(), 4u);
  EXPECT_EQ(tally.accepted.size(), 1u);
  ASSERT_EQ(tally.declined_by_reason.size(), 2u);
  EXPECT_EQ(tally.declined_by_reason.at("policy").size(), 3u);
  EXPECT_EQ(tally.declined_by_reason.at("budget_exhausted").size(), 1u);

  ServerStatus s;
  TaskStatus t;
  t.id = 4;
  t.kind = "data_shift";
  t.trust = "none";
  t.declined = 4;
  t.declined_by_reason = {{"policy", 3}, {"budget_exhausted", 1}};
  s.tasks.push_back(t);
  const std::string html = render_status_html(s);
  EXPECT_NE(html.find("<div class=\"detail\">1 budget_exhausted, 3 policy</div>"),
            std::string::npos)
      << html;
  const std::string metrics = render_metrics(s);
  EXPECT_NE(metrics.find("\nfedstat_task_devices_declined{task=\"4\",kind=\"data_shift\","
                         "trust=\"none\",reason=\"policy\"} 3\n"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(decline_reason_name(fedstat_v1_ErrorAction_POLICY), "policy");
  EXPECT_EQ(decline_reason_name(42), "reason_42");
}

// A device that failed on its own side (TaskReply DEVICE_FAILURE: storage, ledger, entropy or
// its computation) is counted as failed, apart from the declines (its budget, its policy): on
// the page's "failed" column and in fedstat_task_devices_failed, never among the declined.
TEST(StatusRenderTest, DevicesThatFailedAreCountedApartFromDeclines) {
  FakeStore inner;
  inner.put_task(4, "{}");
  TallyingStore store(inner);
  store.load();
  const auto decline = [](fedstat_v1_ErrorAction reason) {
    wire::Envelope e = wire::make_envelope();
    e.which_body = fedstat_v1_Envelope_task_reply_tag;
    e.body.task_reply.task_id = 4;
    e.body.task_reply.reason = reason;
    return encode_bytes(e);
  };
  std::vector<NewEvent> events;
  for (uint64_t device : {1, 2}) {
    events.push_back({4, device, EventKind::kDeviceMessage,
                      decline(fedstat_v1_ErrorAction_DEVICE_FAILURE), false});
  }
  events.push_back(
      {4, 3, EventKind::kDeviceMessage, decline(fedstat_v1_ErrorAction_BUDGET_EXHAUSTED), false});
  store.append_events(events);
  const TaskTally& tally = store.tallies().at(4);
  EXPECT_EQ(tally.failed, (std::set<uint64_t>{1, 2}));
  EXPECT_EQ(tally.declined, (std::set<uint64_t>{3}));
  ASSERT_EQ(tally.declined_by_reason.size(), 1u);
  EXPECT_EQ(tally.declined_by_reason.count("budget_exhausted"), 1u);

  struct NoFrames final : net::FrameHandler {
    void on_open(net::ConnectionId, const std::string&) override {}
    void on_frame(net::ConnectionId, const wire::Envelope&) override {}
    void on_close(net::ConnectionId, const std::string&) override {}
  } frames;
  OperatorView view(inner, frames);  // folds the stored events itself
  const ServerStatus s = view.snapshot(nullptr, 1000);
  ASSERT_EQ(s.tasks.size(), 1u);
  EXPECT_EQ(s.tasks[0].failed, 2u);
  EXPECT_EQ(s.tasks[0].declined, 1u);
  const std::string html = render_status_html(s);
  EXPECT_NE(html.find("<td class=\"n declined\">1<div class=\"detail\">1 budget_exhausted</div>"
                      "</td><td class=\"n failed\">2</td>"),
            std::string::npos)
      << html;
  EXPECT_EQ(html.find("device_failure"), std::string::npos) << html;
  const std::string metrics = render_metrics(s);
  EXPECT_NE(metrics.find("\nfedstat_task_devices_failed{task=\"4\",kind=\"?\",trust=\"?\"} 2\n"),
            std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("reason=\"device_failure\""), std::string::npos) << metrics;
}

// Each task's row shows the ε and δ its declaration states (read from the stored definition, as
// the rounds store it), /metrics has them as fedstat_task_epsilon and _delta; a trust "none" task
// shows "no privacy" and has neither metric.
TEST(StatusRenderTest, EachTaskShowsTheEpsilonAndDeltaItDeclares) {
  FakeStore inner;
  inner.put_task(1, R"({"declaration": {"id": 1, "kind": "kl", "trust": "dist",
                                        "epsilon": 1.5, "delta": 1e-6}})");
  inner.put_task(2, R"({"declaration": {"id": 2, "kind": "data_shift", "trust": "none",
                                        "epsilon": 0, "delta": 0}})");
  struct NoFrames final : net::FrameHandler {
    void on_open(net::ConnectionId, const std::string&) override {}
    void on_frame(net::ConnectionId, const wire::Envelope&) override {}
    void on_close(net::ConnectionId, const std::string&) override {}
  } frames;
  OperatorView view(inner, frames);
  const ServerStatus s = view.snapshot(nullptr, 1000);
  ASSERT_EQ(s.tasks.size(), 2u);
  EXPECT_EQ(s.tasks[0].epsilon, 1.5);
  EXPECT_EQ(s.tasks[0].delta, 1e-6);
  const std::string html = render_status_html(s);
  EXPECT_NE(html.find("<th title=\"the privacy parameters"), std::string::npos) << html;
  EXPECT_NE(html.find("<td>kl</td><td>dist</td><td class=\"n epsilon\">1.5<div class=\"detail "
                      "delta\">δ 1e-06</div></td>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<td>data_shift</td><td>none</td><td class=\"n epsilon\">–<div "
                      "class=\"detail\">no privacy</div></td>"),
            std::string::npos)
      << html;
  const std::string metrics = render_metrics(s);
  EXPECT_NE(metrics.find("\nfedstat_task_epsilon{task=\"1\",kind=\"kl\",trust=\"dist\"} 1.5\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(
      metrics.find(
          "\nfedstat_task_delta{task=\"1\",kind=\"kl\",trust=\"dist\"} 9.9999999999999995e-07\n"),
      std::string::npos)
      << metrics;
  EXPECT_EQ(metrics.find("fedstat_task_epsilon{task=\"2\""), std::string::npos) << metrics;
}

// A report refused for a word out of the kind's bounds (issue 39 item 7) is a server note the
// rounds store under the device's id: the tallies count its devices, the page and /metrics show
// the count.
TEST(StatusRenderTest, RefusedReportsAreTalliedFromTheirNotesAndShown) {
  FakeStore inner;
  inner.put_task(1, "{}");
  TallyingStore store(inner);
  store.load();
  for (uint64_t client : {7u, 9u, 7u}) {
    NewEvent note;
    note.task_id = 1;
    note.client_id = client;
    note.kind = EventKind::kServerNote;
    const std::string text = "report_refused word 0 is out of bounds";
    note.payload.assign(text.begin(), text.end());
    store.append_event(note);
  }
  NewEvent seed;  // another note: not a refusal
  seed.task_id = 1;
  seed.kind = EventKind::kServerNote;
  seed.payload = {'n', 'o', 'i', 's', 'e', '_', 's', 'e', 'e', 'd', ' ', '0'};
  store.append_event(seed);
  EXPECT_EQ(store.tallies().at(1).reports_refused, (std::set<uint64_t>{7, 9}));

  ServerStatus s;
  TaskStatus t;
  t.id = 1;
  t.kind = "kl";
  t.trust = "trusted";
  t.reports_refused = 2;
  s.tasks.push_back(t);
  EXPECT_NE(render_status_html(s).find("reports-refused\">2 refused"), std::string::npos);
  EXPECT_NE(render_metrics(s).find(
                "\nfedstat_task_reports_refused{task=\"1\",kind=\"kl\",trust=\"trusted\"} 2\n"),
            std::string::npos)
      << render_metrics(s);
}

// The listener's refusals and closes of issue 39 item 8, each in its own metric.
TEST(StatusRenderTest, EachConnectionCapHasItsMetric) {
  ServerStatus s;
  s.refused_full = 23;
  s.refused_per_address = 29;
  s.evicted_full = 47;
  s.evicted_per_address = 53;
  s.replaced_per_identity = 31;
  s.not_checked_in = 37;
  s.revoked = 41;
  const std::string metrics = render_metrics(s);
  for (const char* line : {"\nfedstat_connections_refused_full_total 23\n",
                           "\nfedstat_connections_refused_per_address_total 29\n",
                           "\nfedstat_connections_evicted_full_total 47\n",
                           "\nfedstat_connections_evicted_per_address_total 53\n",
                           "\nfedstat_connections_replaced_per_identity_total 31\n",
                           "\nfedstat_connections_not_checked_in_total 37\n",
                           "\nfedstat_connections_revoked_total 41\n",
                           "# TYPE fedstat_connections_not_checked_in_total counter\n"}) {
    EXPECT_NE(metrics.find(line), std::string::npos) << line;
  }
  const std::string html = render_status_html(s);
  EXPECT_NE(html.find("id=\"refused-at-accept\">23, 29<"), std::string::npos);
  EXPECT_NE(html.find("id=\"not-checked-in\">37<"), std::string::npos);
  EXPECT_NE(html.find("id=\"replaced-per-identity\">31<"), std::string::npos);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
