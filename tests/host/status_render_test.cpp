// The status page's overview and /metrics show the listener's counts (host_server/status/
// status_page.h): each count lands in its own row and its own metric, and not in another's.
#include <gtest/gtest.h>

#include <string>

#include "host_server/status/status_page.h"

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

// The listener's refusals and closes of issue 39 item 8, each in its own metric.
TEST(StatusRenderTest, EachConnectionCapHasItsMetric) {
  ServerStatus s;
  s.refused_full = 23;
  s.refused_per_address = 29;
  s.replaced_per_identity = 31;
  s.not_checked_in = 37;
  s.revoked = 41;
  const std::string metrics = render_metrics(s);
  for (const char* line : {"\nfedstat_connections_refused_full_total 23\n",
                           "\nfedstat_connections_refused_per_address_total 29\n",
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
