// NetBridge's log of refused handshakes (host_server/net_bridge.h): a burst of
// kRefusedLinesPerMinute lines, then one a second; one "refused_not_logged" line when it starts
// leaving lines out, and the next "refused" line says how many it left out. Every close still
// reaches the handler. The clock is the test's.
#include "host_server/net_bridge.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace fedstat {
namespace host {
namespace {

using nlohmann::json;

struct CountingHandler {
  void on_open(net::ConnectionId, const std::string&) {}
  void on_frame(net::ConnectionId, const wire::Envelope&) {}
  void on_close(net::ConnectionId, const std::string&) { ++closes; }
  int closes = 0;
};

class NetBridgeLogTest : public ::testing::Test {
 protected:
  NetBridgeLogTest() {
    bridge_.attach(nullptr, &handler_, &log_);
    bridge_.set_clock([this] { return now_; });
  }
  // Fails `count` handshakes; returns the log lines they wrote.
  std::vector<json> fail(int count) {
    log_.str("");
    for (int i = 0; i < count; ++i) bridge_.on_close(next_id_++, "TLS handshake failed: x");
    std::vector<json> lines;
    std::istringstream in(log_.str());
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }
  static int count_event(const std::vector<json>& lines, const std::string& event) {
    int n = 0;
    for (const json& line : lines) n += line.value("event", "") == event;
    return n;
  }

  CountingHandler handler_;
  std::ostringstream log_;
  NetBridge<CountingHandler> bridge_;
  uint64_t now_ = 1000;
  net::ConnectionId next_id_ = 1;
};

TEST_F(NetBridgeLogTest, RefusedHandshakesAreLoggedABurstThenOneASecond) {
  // 100 at once: the burst of 60 is logged, then one notice, and 40 are only counted.
  std::vector<json> lines = fail(100);
  EXPECT_EQ(count_event(lines, "refused"), static_cast<int>(kRefusedLinesPerMinute));
  EXPECT_EQ(count_event(lines, "refused_not_logged"), 1);
  EXPECT_EQ(lines.size(), kRefusedLinesPerMinute + 1);
  EXPECT_FALSE(lines.front().contains("not_logged_before"));
  EXPECT_EQ(handler_.closes, 100);

  // 5 s later: 5 lines, the first saying 40 were left out; no new notice within the minute.
  now_ += 5;
  lines = fail(10);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].value("not_logged_before", 0), 40);
  for (int i = 1; i < 5; ++i) EXPECT_FALSE(lines[i].contains("not_logged_before"));
  EXPECT_EQ(count_event(lines, "refused"), 5);
  // Under a steady flood: one line a second and one notice a minute.
  for (int second = 0; second < 120; ++second) {
    ++now_;
    lines = fail(10);
    EXPECT_EQ(count_event(lines, "refused"), 1) << second;
    EXPECT_EQ(count_event(lines, "refused_not_logged"), second == 54 || second == 114) << second;
  }

  // A minute later the burst is whole again, and its first line counts the 9 left out.
  now_ += 60;
  lines = fail(kRefusedLinesPerMinute);
  EXPECT_EQ(count_event(lines, "refused"), static_cast<int>(kRefusedLinesPerMinute));
  EXPECT_EQ(lines.front().value("not_logged_before", 0), 9);
  EXPECT_EQ(handler_.closes, 100 + 10 + 1200 + static_cast<int>(kRefusedLinesPerMinute));
}

TEST_F(NetBridgeLogTest, OtherClosesAreNeitherLoggedNorCounted) {
  for (int i = 0; i < 200; ++i) bridge_.on_close(next_id_++, "peer closed the connection");
  EXPECT_TRUE(log_.str().empty());
  EXPECT_EQ(handler_.closes, 200);
  // The budget is untouched: a full burst of refused lines is still logged.
  const std::vector<json> lines = fail(kRefusedLinesPerMinute);
  EXPECT_EQ(count_event(lines, "refused"), static_cast<int>(kRefusedLinesPerMinute));
}

}  // namespace
}  // namespace host
}  // namespace fedstat
