// The device's task policy (task_policy.h): what the app accepts, checked before anything else.
#include "sdk/client/task_policy.h"

#include <math.h>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/privacy/accountants.h"
#include "sdk/secagg/graph_parameters.h"

namespace fedstat {
namespace client {

uint32_t trust_bit(int64_t trust) {
  switch (trust) {
    case fedstat_v1_TrustModel_TRUSTED:
      return kAcceptTrusted;
    case fedstat_v1_TrustModel_TAGG:
      return kAcceptTagg;
    case fedstat_v1_TrustModel_DIST:
      return kAcceptDist;
    case fedstat_v1_TrustModel_NONE:
      return kAcceptNone;
    default:
      return 0;
  }
}

namespace {

// True when [begin, end) spells `name`.
bool spells(const char* begin, const char* end, const char* name) {
  for (; begin != end; ++begin, ++name) {
    if (*name == '\0' || *begin != *name) return false;
  }
  return *name == '\0';
}

struct NamedBits {
  const char* name;
  uint32_t bits;
};

// The OR of the bits a comma-separated list of names carries; `empty` and `unknown` are the
// errors for an empty list and for a name not in `names`.
template <size_t N>
Result<uint32_t> parse_name_list(const char* list, const NamedBits (&names)[N], const char* empty,
                                 const char* unknown) {
  if (list == nullptr || *list == '\0') return invalid_argument(empty);
  uint32_t bits = 0;
  const char* item = list;
  for (;;) {
    const char* end = item;
    while (*end != '\0' && *end != ',') ++end;
    size_t i = 0;
    while (i < N && !spells(item, end, names[i].name)) ++i;
    if (i == N) return invalid_argument(unknown);
    bits |= names[i].bits;
    if (*end == '\0') return bits;
    item = end + 1;
  }
}

}  // namespace

Result<uint32_t> parse_accepted_trust(const char* list) {
  static const NamedBits kNames[] = {{"trusted", kAcceptTrusted},
                                     {"tagg", kAcceptTagg},
                                     {"dist", kAcceptDist},
                                     {"none", kAcceptNone},
                                     {"all", kAcceptAll}};
  return parse_name_list(
      list, kNames, "accepted trust models: an empty list (name trusted, tagg, dist, none)",
      "accepted trust models: each must be trusted, tagg, dist, none or all (comma-separated)");
}

Result<uint32_t> parse_answered_kinds(const char* list) {
  static const NamedBits kNames[] = {{"data_shift", kAnswerDataShift},
                                     {"kl", kAnswerKlAnswers},
                                     {"model_update", kAnswerModelUpdate},
                                     {"heterogeneity", kAnswerHeterogeneity},
                                     {"all", kAnswerAllKinds}};
  return parse_name_list(
      list, kNames,
      "answered task kinds: an empty list (name data_shift, kl, model_update, heterogeneity)",
      "answered task kinds: each must be data_shift, kl, model_update, heterogeneity or all "
      "(comma-separated)");
}

bool answers_kind(const TaskPolicy& policy, int64_t kind) {
  return kind > 0 && kind < 32 && (policy.answered_kinds & kAnswerAllKinds & (1u << kind)) != 0;
}

Status validate_task_policy(const TaskPolicy& policy) {
  if (policy.accepted_trust == 0 || (policy.accepted_trust & ~kAcceptAll) != 0) {
    return invalid_argument(
        "TaskPolicy.accepted_trust must hold at least one kAccept* bit and no other bit");
  }
  if (!(isfinite(policy.max_epsilon) && policy.max_epsilon > 0)) {
    return invalid_argument("TaskPolicy.max_epsilon must be finite and > 0");
  }
  if (!(policy.max_delta >= 0 && policy.max_delta < 1)) {
    return invalid_argument("TaskPolicy.max_delta must be in [0, 1)");
  }
  if (!(isfinite(policy.min_exact_epsilon) && policy.min_exact_epsilon >= 0)) {
    return invalid_argument("TaskPolicy.min_exact_epsilon must be finite and >= 0");
  }
  if (policy.min_exact_epsilon > policy.max_epsilon) {
    return invalid_argument("TaskPolicy.min_exact_epsilon must not exceed max_epsilon");
  }
  if (policy.answered_kinds == 0 || (policy.answered_kinds & ~kAnswerAllKinds) != 0) {
    return invalid_argument(
        "TaskPolicy.answered_kinds must hold at least one kAnswer* bit and no other bit");
  }
  if (policy.min_assumed_dropout_ppm >= secagg::kPpmOne) {
    return invalid_argument(
        "TaskPolicy.min_assumed_dropout_ppm must be below 1000000 (parts per million: 50000 is 5 "
        "%)");
  }
  if (policy.min_assumed_corrupt_ppm >= secagg::kPpmOne) {
    return invalid_argument(
        "TaskPolicy.min_assumed_corrupt_ppm must be below 1000000 (parts per million: 50000 is 5 "
        "%)");
  }
  return Status();
}

PolicyCharge policy_charge(const DeviceSpend& spend, double task_delta) {
  PolicyCharge charge{spend.epsilon, spend.delta};
  if (!spend.has_rdp) return charge;
  double best = INFINITY;
  for (size_t k = 0; k < privacy::kLedgerOrderCount; ++k) {
    const Result<double> e =
        privacy::rdp_to_dp(privacy::kLedgerOrders[k], spend.rdp[k], task_delta);
    if (e.ok() && e.value() < best) best = e.value();
  }
  charge.epsilon += best;
  charge.delta += task_delta;
  return charge;
}

PolicyRefusal check_task_policy(const TaskPolicy& policy, int64_t trust,
                                const PolicyCharge& charge) {
  if ((trust_bit(trust) & policy.accepted_trust) == 0) return PolicyRefusal::kTrustModel;
  if (!(charge.epsilon <= policy.max_epsilon)) return PolicyRefusal::kEpsilonAboveMax;
  if (!(charge.delta <= policy.max_delta)) return PolicyRefusal::kDeltaAboveMax;
  const bool exact = trust == fedstat_v1_TrustModel_TRUSTED || trust == fedstat_v1_TrustModel_TAGG;
  if (exact && charge.epsilon < policy.min_exact_epsilon) {
    return PolicyRefusal::kExactEpsilonBelow;
  }
  return PolicyRefusal::kNotRefused;
}

const char* policy_refusal_text(PolicyRefusal refusal) {
  switch (refusal) {
    case PolicyRefusal::kNotRefused:
      return "the task policy accepts the task";
    case PolicyRefusal::kTrustModel:
      return "the task's trust model is not among TaskPolicy.accepted_trust";
    case PolicyRefusal::kEpsilonAboveMax:
      return "the task's epsilon charge exceeds TaskPolicy.max_epsilon";
    case PolicyRefusal::kDeltaAboveMax:
      return "the task's delta charge exceeds TaskPolicy.max_delta";
    case PolicyRefusal::kExactEpsilonBelow:
      return "a TRUSTED/TAGG task charged below TaskPolicy.min_exact_epsilon";
    case PolicyRefusal::kTaskKind:
      return "the task's kind is not among TaskPolicy.answered_kinds";
  }
  return "an unknown task policy refusal";
}

}  // namespace client
}  // namespace fedstat
