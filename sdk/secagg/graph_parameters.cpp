#include "sdk/secagg/graph_parameters.h"

#include "sdk/base/portable_math.h"

namespace fedstat {
namespace secagg {
namespace {

// 2^e for an integer e with a normal result (|e| ≤ 1022), from the exponent bits.
double pow2(int e) {
  return math::double_of(static_cast<uint64_t>(1023 + e) << 52);
}
constexpr double kTwoTo256 = 0x1p256;
constexpr double kTwoToMinus256 = 0x1p-256;

// The degree search stops here (choose_sparse_graph: kNotFound beyond): at γ + 2δ = 0.9 and
// σ = 200 the degree needed at n = 10^9 is below 2^16 (Hoeffding's bound on both tails).
constexpr uint32_t kMaxSearchDegree = 1u << 16;

// A positive product m·2^e of many ratios, e a multiple of 256 and m kept in [2^−256, 2^256]
// (or 0): the scaling by 2^±256 is exact, so the product has the rounding of its multiplications
// only (below k ulps for k factors) and never underflows.
struct ScaledProduct {
  double m = 1.0;
  int32_t e = 0;  // |e| < 2^16 factors × 30 bits each

  void times(double ratio) {
    m *= ratio;
    if (m == 0.0) return;
    while (m < kTwoToMinus256) {
      m *= kTwoTo256;
      e -= 256;
    }
    while (m > kTwoTo256) {
      m *= kTwoToMinus256;
      e += 256;
    }
  }
  // The product as a double; 0 when below 2^−512 (dropped from tail sums, file comment).
  double value() const {
    if (m == 0.0 || e < -512) return 0.0;
    double v = m;
    for (int32_t i = e; i > 0; i -= 256) v *= kTwoTo256;
    for (int32_t i = e; i < 0; i += 256) v *= kTwoToMinus256;
    return v;
  }
  // ln of the product (m > 0).
  double log() const {
    const double de = static_cast<double>(e);
    return math::portable_log(m) + (de * math::kLn2Hi + de * math::kLn2Lo);
  }
};

// For X ~ Hypergeometric(total, marked, draws) (draws < total, marked ≤ total; counts as doubles,
// exact below 2^53, so a 32-bit core does no 64-bit integer arithmetic): the smallest x of its
// support with Pr[X ≤ x] ≥ q (0 < q < 1). The pmf starts at the bottom of the support, lo =
// max(0, draws − (total − marked)), as a product of ratios, and walks up by its ratio recurrence.
uint32_t hypergeometric_lower_quantile(double total, double marked, uint32_t draws, double q) {
  const double unmarked = total - marked;
  const double d = draws;
  const uint32_t lo = d > unmarked ? static_cast<uint32_t>(d - unmarked) : 0;
  const uint32_t hi = d < marked ? draws : static_cast<uint32_t>(marked);
  ScaledProduct p;
  if (lo == 0) {  // Pr[X = 0] = C(unmarked, draws)/C(total, draws) = Π (unmarked − i)/(total − i)
    for (uint32_t i = 0; i < draws; ++i) p.times((unmarked - i) / (total - i));
  } else {  // every unmarked drawn (unmarked < draws): Pr[X = lo] = C(marked, lo)/C(total, draws)
            // = Π_{j=1}^{unmarked} (lo + j)/(marked + j)
    for (uint32_t j = 1; j <= draws - lo; ++j) p.times((lo + j) / (marked + j));
  }
  double cdf = 0.0;
  for (uint32_t x = lo;; ++x) {
    cdf += p.value();
    if (cdf >= q || x >= hi) return x;
    // p(x + 1)/p(x) = (marked − x)(draws − x)/((x + 1)(unmarked − draws + x + 1)); the last
    // factor is ≥ 1 because x ≥ lo.
    p.times(((marked - x) * (d - x)) / ((x + 1.0) * (unmarked - d + x + 1.0)));
  }
}

// Bad-client counts of the model for n clients: ⌊rate·n⌋ in exact integer arithmetic.
uint64_t count_of(uint64_t n, uint32_t ppm) {
  return n * ppm / kPpmOne;
}

// Condition (1): the union bound on the survivors' Harary graph being cut is below 2^−(σ+1).
bool survivors_connected(uint64_t n, uint32_t degree, const SecAggThreatModel& model) {
  const uint64_t bad = count_of(n, model.corrupt_ppm) + count_of(n, model.dropout_ppm);
  if (degree > bad) return true;  // no run of k/2 bad clients exists: ln Pr = −∞
  const double dbad = static_cast<double>(bad);
  const double dn = static_cast<double>(n);
  ScaledProduct p;
  for (uint32_t i = 0; i < degree; ++i) p.times((dbad - i) / (dn - i));
  const double log_pairs =
      math::portable_log(dn) + math::portable_log(dn - degree - 1) - (math::kLn2Hi + math::kLn2Lo);
  const double bound =
      -static_cast<double>(model.security_bits + 1) * (math::kLn2Hi + math::kLn2Lo);
  return log_pairs + p.log() < bound;
}

// Conditions (2) and (3) at a validated (n, degree, model).
SecAggThresholdRange threshold_range(uint64_t n, uint32_t degree, const SecAggThreatModel& model) {
  const double dn = static_cast<double>(n);
  const double q_security = pow2(-static_cast<int>(model.security_bits + 1)) / dn;
  const double q_correct = pow2(-static_cast<int>(model.correctness_bits)) / dn;
  // t1 = min{a : Pr[A > a] < q} with A the corrupt neighbours; A = k − G, G the honest ones, so
  // Pr[A > a] = Pr[G ≤ k − a − 1] and t1 = k − (smallest g with Pr[G ≤ g] ≥ q).
  const double honest = static_cast<double>(n - count_of(n, model.corrupt_ppm));
  const uint32_t t1 = degree - hypergeometric_lower_quantile(dn, honest, degree, q_security);
  const double surviving = static_cast<double>(n - count_of(n, model.dropout_ppm));
  SecAggThresholdRange range;
  range.min_threshold = (t1 + degree) / 2 + 1;  // 2t > t1 + k (k < 2^31: no overflow)
  range.max_threshold = hypergeometric_lower_quantile(dn, surviving, degree, q_correct);
  return range;
}

Status check_round_size(uint64_t n) {
  if (n < 2) return invalid_argument("secagg graph: a round needs at least 2 clients (n < 2)");
  if (n > kMaxGraphClients) {
    return out_of_range("secagg graph: n above kMaxGraphClients (10^9): split the round");
  }
  return Status::ok_status();
}

Status check_degree(uint64_t n, uint32_t degree) {
  if (degree == 0) return invalid_argument("secagg graph: degree 0 (a client needs neighbours)");
  if (degree % 2 != 0) {
    return invalid_argument("secagg graph: degree odd (a Harary graph's k is even: k/2 per side)");
  }
  if (static_cast<uint64_t>(degree) + 1 >= n) {
    return out_of_range("secagg graph: degree >= n - 1: use the complete graph");
  }
  return Status::ok_status();
}

}  // namespace

Status check_threat_model(const SecAggThreatModel& model) {
  if (model.dropout_ppm >= kPpmOne) {
    return out_of_range("secagg threat model: dropout_ppm >= 10^6 (a rate below 1 in ppm)");
  }
  if (model.corrupt_ppm >= kPpmOne) {
    return out_of_range("secagg threat model: corrupt_ppm >= 10^6 (a rate below 1 in ppm)");
  }
  if (static_cast<uint64_t>(model.corrupt_ppm) + 2 * static_cast<uint64_t>(model.dropout_ppm) >
      kMaxCorruptPlusTwiceDropoutPpm) {
    return out_of_range(
        "secagg threat model: corrupt + 2*dropout above 0.9: no sparse graph is secure and "
        "correct; lower the rates");
  }
  if (model.security_bits == 0 || model.security_bits > kMaxGraphBits) {
    return out_of_range("secagg threat model: security_bits outside [1, 200] (default 40)");
  }
  if (model.correctness_bits == 0 || model.correctness_bits > kMaxGraphBits) {
    return out_of_range("secagg threat model: correctness_bits outside [1, 200] (default 30)");
  }
  return Status::ok_status();
}

Result<SecAggThresholdRange> sparse_threshold_range(uint64_t n, uint32_t degree,
                                                    const SecAggThreatModel& model) {
  FEDSTAT_RETURN_IF_ERROR(check_round_size(n));
  FEDSTAT_RETURN_IF_ERROR(check_degree(n, degree));
  FEDSTAT_RETURN_IF_ERROR(check_threat_model(model));
  return threshold_range(n, degree, model);
}

Status check_sparse_graph(uint64_t n, uint32_t degree, uint32_t threshold,
                          const SecAggThreatModel& model) {
  FEDSTAT_RETURN_IF_ERROR(check_round_size(n));
  FEDSTAT_RETURN_IF_ERROR(check_degree(n, degree));
  if (threshold < 2) return out_of_range("secagg graph: threshold < 2 (one share reveals)");
  if (threshold > degree + 1) {
    return out_of_range("secagg graph: threshold > degree + 1 (more shares than holders)");
  }
  FEDSTAT_RETURN_IF_ERROR(check_threat_model(model));
  if (!survivors_connected(n, degree, model)) {
    return out_of_range(
        "secagg graph: degree too small: the honest survivors' graph is cut with probability "
        ">= 2^-(sigma+1) (condition 1); choose_sparse_graph gives the smallest degree");
  }
  const SecAggThresholdRange range = threshold_range(n, degree, model);
  if (range.min_threshold > range.max_threshold) {
    return out_of_range(
        "secagg graph: no threshold is both secure and correct at this degree (conditions 2, 3): "
        "raise the degree; choose_sparse_graph gives the smallest");
  }
  if (threshold < range.min_threshold) {
    return out_of_range(
        "secagg graph: threshold below the security bound 2t > t1 + k (condition 2): corrupt "
        "neighbours could reconstruct; sparse_threshold_range gives the smallest");
  }
  if (threshold > range.max_threshold) {
    return out_of_range(
        "secagg graph: threshold above the correctness bound (condition 3): the round aborts "
        "with probability >= 2^-eta; sparse_threshold_range gives the largest");
  }
  return Status::ok_status();
}

Result<SecAggGraph> choose_sparse_graph(uint64_t n, const SecAggThreatModel& model) {
  FEDSTAT_RETURN_IF_ERROR(check_round_size(n));
  FEDSTAT_RETURN_IF_ERROR(check_threat_model(model));
  for (uint32_t degree = 2; static_cast<uint64_t>(degree) + 1 < n && degree <= kMaxSearchDegree;
       degree += 2) {
    if (!survivors_connected(n, degree, model)) continue;
    const SecAggThresholdRange range = threshold_range(n, degree, model);
    if (range.min_threshold <= range.max_threshold) {
      SecAggGraph graph;
      graph.degree = degree;
      graph.threshold = range.min_threshold;
      return graph;
    }
  }
  return not_found(
      "secagg graph: no sparse degree below n - 1 meets the bound: use the complete graph");
}

}  // namespace secagg
}  // namespace fedstat
