// The task policy's pieces (sdk/client/task_policy.h): the trust list parser the tools and the
// firmware share, the charge of a spend with an RDP curve, and the rules' order. The sessions
// that apply them are tests/audit/device. Paper: none.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "sdk/client/contribution.h"
#include "sdk/client/task_policy.h"
#include "sdk/privacy/accountants.h"
#include "tests/client/client_test_support.h"

namespace fedstat {
namespace client_test {
namespace {

using client::PolicyRefusal;

TEST(TaskPolicy, TheTrustListParsesEveryNameAndRefusesAnythingElse) {
  EXPECT_EQ(client::parse_accepted_trust("trusted").value(), client::kAcceptTrusted);
  EXPECT_EQ(client::parse_accepted_trust("none,dist").value(),
            client::kAcceptNone | client::kAcceptDist);
  EXPECT_EQ(client::parse_accepted_trust("tagg,tagg").value(), client::kAcceptTagg);
  EXPECT_EQ(client::parse_accepted_trust("all").value(), client::kAcceptAll);
  EXPECT_EQ(client::parse_accepted_trust("trusted,tagg,dist").value(), client::kAcceptPrivate);
  for (const char* bad : {"", ",", "none,", ",none", "None", "dist ", "trustedx", "trust"}) {
    EXPECT_EQ(client::parse_accepted_trust(bad).status().code(), StatusCode::kInvalidArgument)
        << "'" << bad << "'";
  }
  EXPECT_EQ(client::parse_accepted_trust(nullptr).status().code(), StatusCode::kInvalidArgument);
}

// A DIST heterogeneity stage is charged an RDP curve with ε = δ = 0 beside it: the policy weighs
// that curve converted at the task's δ, the best order's ε — neither 0 nor the declared pair's ε.
TEST(TaskPolicy, AnRdpChargeIsItsCurveConvertedAtTheTasksDelta) {
  fedstat_v1_Task het = heterogeneity_task(fedstat_v1_TrustModel_DIST, 1);
  make_dist(het, 10, 6);
  het.delta = 1e-6;
  het.device_noise_lambda = 1e4;
  const client::DeviceSpend spend = client::device_spend(het).value();
  ASSERT_TRUE(spend.has_rdp);
  ASSERT_EQ(spend.epsilon, 0);
  double best = std::numeric_limits<double>::infinity();
  for (size_t k = 0; k < privacy::kLedgerOrderCount; ++k) {
    best = std::min(best,
                    privacy::rdp_to_dp(privacy::kLedgerOrders[k], spend.rdp[k], het.delta).value());
  }
  const client::PolicyCharge charge = client::policy_charge(spend, het.delta);
  EXPECT_EQ(charge.epsilon, best);
  EXPECT_GT(charge.epsilon, 0);
  EXPECT_EQ(charge.delta, het.delta);
  // A tenth of the noise: about ten times the RDP, so a larger charge — past a tight ceiling.
  client::TaskPolicy tight;
  tight.max_epsilon = 1.01 * charge.epsilon;
  EXPECT_EQ(client::check_task_policy(tight, fedstat_v1_TrustModel_DIST, charge),
            PolicyRefusal::kNotRefused);
  het.device_noise_lambda /= 10;
  const client::PolicyCharge thin =
      client::policy_charge(client::device_spend(het).value(), het.delta);
  EXPECT_GT(thin.epsilon, 2 * charge.epsilon);
  EXPECT_EQ(client::check_task_policy(tight, fedstat_v1_TrustModel_DIST, thin),
            PolicyRefusal::kEpsilonAboveMax);
  // No δ to convert at: no finite ε, refused by the ceiling.
  EXPECT_TRUE(std::isinf(client::policy_charge(spend, 0).epsilon));
}

TEST(TaskPolicy, TheRulesApplyInTheirOrder) {
  const client::TaskPolicy p;  // the defaults
  EXPECT_EQ(client::check_task_policy(p, fedstat_v1_TrustModel_NONE, {0, 0}),
            PolicyRefusal::kTrustModel);
  EXPECT_EQ(client::check_task_policy(p, 99, {1, 1e-6}), PolicyRefusal::kTrustModel);
  EXPECT_EQ(client::check_task_policy(p, fedstat_v1_TrustModel_TRUSTED, {50, 0.5}),
            PolicyRefusal::kEpsilonAboveMax);
  EXPECT_EQ(client::check_task_policy(p, fedstat_v1_TrustModel_TRUSTED, {1e-9, 0.5}),
            PolicyRefusal::kDeltaAboveMax);
  EXPECT_EQ(client::check_task_policy(p, fedstat_v1_TrustModel_TAGG, {1e-9, 1e-6}),
            PolicyRefusal::kExactEpsilonBelow);
  EXPECT_EQ(client::check_task_policy(p, fedstat_v1_TrustModel_DIST, {1e-9, 1e-6}),
            PolicyRefusal::kNotRefused);
  EXPECT_EQ(client::check_task_policy(p, fedstat_v1_TrustModel_DIST,
                                      {std::numeric_limits<double>::quiet_NaN(), 0}),
            PolicyRefusal::kEpsilonAboveMax);
  client::TaskPolicy with_none;
  with_none.accepted_trust = client::kAcceptNone;
  EXPECT_EQ(client::check_task_policy(with_none, fedstat_v1_TrustModel_NONE, {0, 0}),
            PolicyRefusal::kNotRefused);
  EXPECT_EQ(client::check_task_policy(with_none, fedstat_v1_TrustModel_DIST, {1, 1e-6}),
            PolicyRefusal::kTrustModel);
  for (PolicyRefusal r :
       {PolicyRefusal::kNotRefused, PolicyRefusal::kTrustModel, PolicyRefusal::kEpsilonAboveMax,
        PolicyRefusal::kDeltaAboveMax, PolicyRefusal::kExactEpsilonBelow}) {
    EXPECT_GT(std::strlen(client::policy_refusal_text(r)), 10u);
  }
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
