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

}  // namespace
}  // namespace host
}  // namespace fedstat
