// Client (client.h): the device's consent to a task — the app's TaskPolicy (task_policy.h)
// weighed against what the device's own noise spends, and the privacy ledger charged.
#include "sdk/client/client.h"

#include "sdk/client/contribution.h"

namespace fedstat {
namespace client {

// Not inlined: the accountants (a DIST MODEL_UPDATE's per-batch sensitivities) stay off the
// stack while the contribution is built and aggregated.
__attribute__((noinline)) Result<PolicyRefusal> Client::check_policy(FrameChannel& channel) {
  // Rule 0, the kinds the app answers: on the Task alone, before the charge is computed.
  if (!answers_kind(config_.task_policy, wire_enum_value(task_.kind))) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_POLICY));
    return PolicyRefusal::kTaskKind;
  }
  // What the device's own noise guarantees, never less than the task declares: what the policy
  // weighs and what the ledger is charged (charge_ledger), computed once.
  Result<DeviceSpend> owed = device_spend(task_, kinds_, config_.task_policy.assumed_honest_shares);
  if (!owed.ok()) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_REFUSED));
    return owed.status();
  }
  spend_ = owed.value();
  spend_.task_id = task_.task_id;
  const PolicyRefusal refusal = check_task_policy(config_.task_policy, wire_enum_value(task_.trust),
                                                  policy_charge(spend_, task_.delta));
  if (refusal != PolicyRefusal::kNotRefused) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_POLICY));
  }
  return refusal;
}

__attribute__((noinline)) Result<bool> Client::charge_ledger(FrameChannel& channel) {
  if (task_.trust == fedstat_v1_TrustModel_NONE) return true;  // spend_ is (0, 0)
  const Status charged = ledger_->charge(spend_, config_.wall_clock_seconds());
  if (charged.code() == StatusCode::kResourceExhausted) {
    FEDSTAT_RETURN_IF_ERROR(decline(channel, fedstat_v1_ErrorAction_BUDGET_EXHAUSTED));
    return false;
  }
  if (!charged.ok()) {
    decline(channel, fedstat_v1_ErrorAction_DEVICE_FAILURE).ignore();
    return charged;
  }
  return true;
}

}  // namespace client
}  // namespace fedstat
