// The second privacy review of issue 39's secure-aggregation fix, finding A1 (branch review2,
// tests/review2/secagg_review_test.cpp): a holder's empty SecAggReveal ("I hold no valid share of
// v") is taken on its word, so holders that withhold (revealers − t + 1 of them; one when exactly
// t reveal) push an honest device's self-mask seed below t shares. The round must abort — nothing
// can rebuild the seed — but the reason told the operator to revoke the HONEST dealer's
// credential ("if client V does this again, revoke its credential"), while the withholders could
// repeat it every round. The evidence is symmetric (the dealer dealt unreadable shares, or the
// holders withheld readable ones: the server cannot tell), so the reason names the dealer and the
// withholding holders as equally suspect and advises nothing one-sided.
// In process: the Coordinator with the rounds' fake store and outbox and the SDK's SecAggClient.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "tests/rounds/dist_device.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kLength = 70;
constexpr uint32_t kBits = 32;
constexpr uint64_t kFirstId = 500;

struct Round {
  FakeStore store;
  FakeOutbox out{store};
  Coordinator c;
  Devices devices;
  std::vector<std::string> log;
  Round(uint32_t n, uint32_t t)
      : c(store, out, {make_spec(1, fedstat_v1_TrustModel_DIST, kLength, kBits, t, n, t)}, kT0) {
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t id = kFirstId + i;
      devices.push_back(std::make_unique<DistDevice>(id, n, device_words(id, kLength, kBits)));
    }
  }
  DistDevice& dev(uint64_t id) { return *devices[id - kFirstId]; }
  void run() {
    check_in_all(c, devices, 1);
    pump(c, out, devices);
    log = c.take_log();
  }
  std::string abort_line() const {
    for (const auto& line : log) {
      if (line.find("aborted") != std::string::npos) return line;
    }
    return "";
  }
  std::string all_log() const {
    std::string s;
    for (const auto& line : log) s += line + "\n";
    return s;
  }
};

// `holder` sends its reveal about `victim` (self-mask share) empty: "I hold no valid share".
void withhold_about(DistDevice& holder, uint64_t victim) {
  holder.tamper = [victim](fedstat_v1_Envelope& m) {
    if (m.which_body != fedstat_v1_Envelope_secagg_reveal_tag) return;
    fedstat_v1_SecAggReveal& rv = m.body.secagg_reveal;
    if (rv.about_id == victim && rv.self_mask) rv.share.size = 0;
  };
}

struct Scenario {
  const char* what;
  uint32_t n, t;
  std::vector<uint64_t> dropped_before_reveals;  // honest dropouts: in U3, no reveals
  std::vector<uint64_t> withholders;             // colluding holders
};

// Every device in these rounds is honest except the withholders; the victim (500) dealt every
// share correctly. (The reviewer's scenarios.)
TEST(AuditEmptyReveals, Property_EmptyRevealsDoNotGetAnHonestDealerBlamedForRevocation) {
  const uint64_t victim = kFirstId;
  const Scenario scenarios[] = {
      // Exactly t reveal (three honest devices dropped after masking): ONE withholder suffices.
      {"one withholder, exactly t revealers", 7, 4, {504, 505, 506}, {503}},
      // No dropouts: revealers − t + 1 = 3 withholders out of 7.
      {"three withholders, no dropouts", 7, 5, {}, {504, 505, 506}},
      // Third review (R3-4): 11 withholders (21 − 11 + 1). The reason named at most 8 holders
      // ("… and 3 more") while it named the dealer: 3 colluders stayed anonymous. All named now.
      {"eleven withholders, no dropouts",
       21,
       11,
       {},
       {510, 511, 512, 513, 514, 515, 516, 517, 518, 519, 520}},
  };
  for (const Scenario& s : scenarios) {
    Round r(s.n, s.t);
    for (uint64_t id : s.dropped_before_reveals) r.dev(id).drop_at = kBeforeReveals;
    for (uint64_t id : s.withholders) withhold_about(r.dev(id), victim);
    r.run();
    ASSERT_EQ(r.c.task_state(1), "aborted") << s.what << "\n" << r.all_log();
    const std::string why = r.abort_line();
    // The round aborts on the honest victim's seed (nothing can rebuild it) ...
    EXPECT_NE(why.find("client 500's self-mask seed"), std::string::npos) << why;
    // ... without advising a one-sided remedy: no revocation of either side on this evidence.
    EXPECT_EQ(why.find("if client 500 does this again, revoke its credential"), std::string::npos)
        << s.what << ": the honest dealer is named for revocation on evidence "
        << s.withholders.size() << " withholding holder(s) produced:\n"
        << why;
    EXPECT_EQ(why.find("revoke"), std::string::npos) << s.what << ": " << why;
    // The withholders are named as suspects beside the dealer.
    for (uint64_t holder : s.withholders) {
      EXPECT_NE(why.find(std::to_string(holder)), std::string::npos)
          << s.what << ": withholder " << holder << " not named: " << why;
    }
    EXPECT_NE(why.find("equally suspect"), std::string::npos) << s.what << ": " << why;
  }
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
