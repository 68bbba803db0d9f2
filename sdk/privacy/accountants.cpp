#include "sdk/privacy/accountants.h"

#include <math.h>  // erfc, fabs and isfinite; ln, exp and √ are portable_math's

#include "sdk/base/portable_math.h"

namespace fedstat {
namespace privacy {
namespace {

bool positive(double x) {
  return x > 0 && isfinite(x);
}

Status check_delta(double delta) {
  if (!(delta > 0 && delta < 1)) return invalid_argument("delta must lie strictly between 0 and 1");
  return Status();
}

Status check_sensitivity(Sensitivity s) {
  if (!(s.l1 >= 0 && s.l2 >= 0 && isfinite(s.l1) && isfinite(s.l2))) {
    return invalid_argument("sensitivities must be finite and non-negative");
  }
  return Status();
}

struct SkellamCurve {
  Sensitivity single;
  Span<const Sensitivity> batches;
  double mu;
  bool composed = false;  // batches are releases composed in sequence (RDP adds), not a mixture
};

Result<double> skellam_curve(uint32_t alpha, const void* context) {
  const SkellamCurve* c = static_cast<const SkellamCurve*>(context);
  if (c->batches.empty()) return skellam_rdp(alpha, c->single, c->mu);
  if (!c->composed) return skellam_rdp_mixture(alpha, c->batches, c->mu);
  double sum = 0;
  for (const Sensitivity& s : c->batches) {
    FEDSTAT_ASSIGN_OR_RETURN(const double eps, skellam_rdp(alpha, s, c->mu));
    sum += eps;
  }
  return sum;
}

// The smallest per-client λ with ε(clients·λ) ≤ epsilon for the curve's shape: ε decreases in
// λ, so bisection on log λ between 1e-9 and 1e15; the upper end always satisfies the target.
Result<double> lambda_for(double epsilon, double delta, uint32_t clients, SkellamCurve shape) {
  if (!positive(epsilon)) return invalid_argument("target epsilon must be positive");
  FEDSTAT_RETURN_IF_ERROR(check_delta(delta));
  if (clients == 0) return invalid_argument("at least one client is needed");
  auto epsilon_at = [&](double log_lambda) -> Result<DpFromRdp> {
    shape.mu = math::portable_exp(log_lambda) * clients;
    return best_dp(skellam_curve, &shape, delta);
  };
  double lo = math::portable_log(1e-9), hi = math::portable_log(1e15);
  FEDSTAT_ASSIGN_OR_RETURN(const DpFromRdp at_hi, epsilon_at(hi));
  if (at_hi.epsilon > epsilon) {
    return out_of_range("no per-client lambda up to 1e15 reaches that epsilon: raise it");
  }
  for (int i = 0; i < 200 && hi - lo > 1e-10; ++i) {
    const double mid = 0.5 * (lo + hi);
    FEDSTAT_ASSIGN_OR_RETURN(const DpFromRdp at, epsilon_at(mid));
    (at.epsilon <= epsilon ? hi : lo) = mid;
  }
  return math::portable_exp(hi);
}

// √2 correctly rounded (0x3FF6A09E667F3BCD, what every sqrt(2.0) gives).
constexpr double kSqrt2 = 1.4142135623730951;

// Φ(x), accurate in the tails (erfc).
double normal_cdf(double x) {
  return 0.5 * erfc(-x / kSqrt2);
}

}  // namespace

Result<double> skellam_rdp(uint32_t alpha, Sensitivity s, double mu) {
  if (alpha < 2) return invalid_argument("Renyi order alpha must be an integer of at least 2");
  FEDSTAT_RETURN_IF_ERROR(check_sensitivity(s));
  if (!positive(mu)) return invalid_argument("Skellam mu (total Poisson mean) must be positive");
  const double a = static_cast<double>(alpha);
  const double l22 = s.l2 * s.l2;
  const double correction_1 = ((2 * a - 1) * l22 + 6 * s.l1) / (16 * mu * mu);
  const double correction_2 = 3 * s.l1 / (4 * mu);
  return a * l22 / (4 * mu) + (correction_1 < correction_2 ? correction_1 : correction_2);
}

Result<double> skellam_rdp_mixture(uint32_t alpha, Span<const Sensitivity> by_batch, double mu) {
  if (by_batch.empty()) return invalid_argument("the sensitivity array has no batches");
  // log((1/m)·Σ exp(x_j)) with x_j = (α−1)·ε_j, stably: two passes, nothing stored.
  const double scale = static_cast<double>(alpha - 1);
  double top = -INFINITY;
  for (const Sensitivity& s : by_batch) {
    FEDSTAT_ASSIGN_OR_RETURN(const double eps, skellam_rdp(alpha, s, mu));
    top = scale * eps > top ? scale * eps : top;
  }
  double sum = 0;
  for (const Sensitivity& s : by_batch) {
    FEDSTAT_ASSIGN_OR_RETURN(const double eps, skellam_rdp(alpha, s, mu));
    sum += math::portable_exp(scale * eps - top);
  }
  return (top + math::portable_log(sum / static_cast<double>(by_batch.size()))) / scale;
}

Result<double> rdp_to_dp(uint32_t alpha, double rdp, double delta) {
  if (alpha < 2) return invalid_argument("Renyi order alpha must be at least 2");
  FEDSTAT_RETURN_IF_ERROR(check_delta(delta));
  if (!(rdp >= 0) || !isfinite(rdp)) return invalid_argument("RDP value must be finite, >= 0");
  const double a = static_cast<double>(alpha);
  const double eps = rdp + (math::portable_log(1 / delta) +
                            (a - 1) * math::portable_log(1 - 1 / a) - math::portable_log(a)) /
                               (a - 1);
  return eps > 0 ? eps : 0.0;
}

Result<DpFromRdp> best_dp(RdpCurve curve, const void* context, double delta) {
  FEDSTAT_RETURN_IF_ERROR(check_delta(delta));
  DpFromRdp best;
  best.epsilon = INFINITY;
  for (uint32_t alpha = 2; alpha <= kMaxOrder; ++alpha) {
    FEDSTAT_ASSIGN_OR_RETURN(const double rdp, curve(alpha, context));
    FEDSTAT_ASSIGN_OR_RETURN(const double eps, rdp_to_dp(alpha, rdp, delta));
    if (eps < best.epsilon) {
      best.epsilon = eps;
      best.best_order = alpha;
    }
  }
  return best;
}

Result<DpFromRdp> skellam_epsilon(double lambda_per_client, uint32_t clients, Sensitivity s,
                                  double delta) {
  if (clients == 0) return invalid_argument("at least one client is needed");
  const SkellamCurve curve{s, Span<const Sensitivity>(), lambda_per_client * clients};
  if (!positive(curve.mu)) return invalid_argument("lambda per client must be positive");
  return best_dp(skellam_curve, &curve, delta);
}

Result<DpFromRdp> skellam_epsilon_mixture(double lambda_per_client, uint32_t clients,
                                          Span<const Sensitivity> by_batch, double delta) {
  if (clients == 0) return invalid_argument("at least one client is needed");
  // An empty span would select the curve's single (zero) sensitivity: the ε of no data.
  if (by_batch.empty()) return invalid_argument("the sensitivity array has no batches");
  const SkellamCurve curve{Sensitivity{}, by_batch, lambda_per_client * clients};
  if (!positive(curve.mu)) return invalid_argument("lambda per client must be positive");
  return best_dp(skellam_curve, &curve, delta);
}

Result<double> skellam_lambda(double epsilon, double delta, Sensitivity s, uint32_t clients) {
  FEDSTAT_RETURN_IF_ERROR(check_sensitivity(s));
  return lambda_for(epsilon, delta, clients, SkellamCurve{s, Span<const Sensitivity>(), 0});
}

Result<double> skellam_lambda_mixture(double epsilon, double delta,
                                      Span<const Sensitivity> by_batch, uint32_t clients) {
  if (by_batch.empty()) return invalid_argument("the sensitivity array has no batches");
  return lambda_for(epsilon, delta, clients, SkellamCurve{Sensitivity{}, by_batch, 0});
}

Result<DpFromRdp> skellam_epsilon_composed(double lambda_per_client, uint32_t clients,
                                           Span<const Sensitivity> releases, double delta) {
  if (clients == 0) return invalid_argument("at least one client is needed");
  if (releases.empty()) return invalid_argument("there are no releases to compose");
  const SkellamCurve curve{Sensitivity{}, releases, lambda_per_client * clients, true};
  if (!positive(curve.mu)) return invalid_argument("lambda per client must be positive");
  return best_dp(skellam_curve, &curve, delta);
}

Result<double> skellam_lambda_composed(double epsilon, double delta,
                                       Span<const Sensitivity> releases, uint32_t clients) {
  if (releases.empty()) return invalid_argument("there are no releases to compose");
  return lambda_for(epsilon, delta, clients, SkellamCurve{Sensitivity{}, releases, 0, true});
}

Result<double> gaussian_sigma_classical(double epsilon, double delta, double l2_sensitivity) {
  if (!positive(epsilon) || !positive(l2_sensitivity)) {
    return invalid_argument("epsilon and sensitivity must be positive");
  }
  FEDSTAT_RETURN_IF_ERROR(check_delta(delta));
  if (epsilon >= 1) {
    return out_of_range(
        "the classical Gaussian calibration holds only for epsilon < 1: use "
        "gaussian_sigma_analytic");
  }
  return l2_sensitivity * math::portable_sqrt(2 * math::portable_log(1.25 / delta)) / epsilon;
}

Result<double> gaussian_delta(double epsilon, double sigma, double l2_sensitivity) {
  if (!(epsilon >= 0) || !positive(sigma) || !positive(l2_sensitivity)) {
    return invalid_argument("epsilon must be >= 0, sigma and sensitivity positive");
  }
  const double a = l2_sensitivity / (2 * sigma);
  const double b = epsilon * sigma / l2_sensitivity;
  const double d = normal_cdf(a - b) - math::portable_exp(epsilon) * normal_cdf(-a - b);
  return d > 0 ? d : 0.0;
}

Result<double> gaussian_sigma_analytic(double epsilon, double delta, double l2_sensitivity) {
  if (!positive(epsilon) || !positive(l2_sensitivity)) {
    return invalid_argument("epsilon and sensitivity must be positive");
  }
  FEDSTAT_RETURN_IF_ERROR(check_delta(delta));
  // δ(σ) decreases monotonically in σ: bracket, then bisect on log σ.
  double lo = math::portable_log(l2_sensitivity) - 40, hi = math::portable_log(l2_sensitivity) + 40;
  FEDSTAT_ASSIGN_OR_RETURN(const double d_hi,
                           gaussian_delta(epsilon, math::portable_exp(hi), l2_sensitivity));
  if (d_hi > delta) return out_of_range("analytic Gaussian: no sigma below e^40·sensitivity works");
  for (int i = 0; i < 300 && hi - lo > 1e-13; ++i) {
    const double mid = 0.5 * (lo + hi);
    FEDSTAT_ASSIGN_OR_RETURN(const double d,
                             gaussian_delta(epsilon, math::portable_exp(mid), l2_sensitivity));
    (d <= delta ? hi : lo) = mid;
  }
  return math::portable_exp(hi);
}

namespace {

Status check_rsgd_ar(double convexity, double smoothness, uint32_t epochs, double eta0,
                     double batch_size, double gradient_bound, size_t batches) {
  if (batches == 0) return invalid_argument("RSGD-AR sensitivities need at least one batch");
  if (!(convexity >= 0) || !isfinite(convexity) || !positive(smoothness) || epochs == 0 ||
      !positive(eta0) || !positive(batch_size) || !(gradient_bound >= 0) ||
      !isfinite(gradient_bound)) {
    return invalid_argument(
        "RSGD-AR sensitivity parameters must be finite and positive (convexity and gradient "
        "bound >= 0), with at least one epoch");
  }
  return Status();
}

// ρ(η) = max(|1 − ημ|, |1 − ηL|).
double contraction(double eta, double convexity, double smoothness) {
  const double a = fabs(1 - eta * convexity), b = fabs(1 - eta * smoothness);
  return a > b ? a : b;
}

}  // namespace

Status rsgd_ar_sensitivities(double convexity, double smoothness, uint32_t epochs, double eta0,
                             double batch_size, double gradient_bound, Span<double> out) {
  FEDSTAT_RETURN_IF_ERROR(
      check_rsgd_ar(convexity, smoothness, epochs, eta0, batch_size, gradient_bound, out.size()));
  for (double& d : out) d = 0;
  for (uint32_t s = 1; s <= epochs; ++s) {
    const double eta = eta0 / s;
    const double rho = contraction(eta, convexity, smoothness);
    for (size_t j = 0; j < out.size(); ++j) {
      for (double& d : out) d *= rho;                   // contraction for all
      out[j] += 2 * eta * gradient_bound / batch_size;  // expansion for the current batch
    }
  }
  return Status();
}

Status rsgd_ar_schedule_sensitivities(double convexity, double smoothness, uint32_t epochs,
                                      uint32_t averaging_interval, double eta0, double batch_size,
                                      double gradient_bound, Span<double> out) {
  FEDSTAT_RETURN_IF_ERROR(
      check_rsgd_ar(convexity, smoothness, epochs, eta0, batch_size, gradient_bound, out.size()));
  if (averaging_interval == 0) return invalid_argument("the averaging interval must be >= 1");
  const size_t batches = out.size();
  for (size_t j = 0; j < batches; ++j) {  // the differing record in batch j
    double delta = 0, window_sum = 0;
    uint64_t window_steps = 0;
    uint32_t h = 0;
    for (uint32_t s = 1; s <= epochs; ++s) {
      ++h;
      const double eta = eta0 / h;
      const double rho = contraction(eta, convexity, smoothness);
      for (size_t b = 0; b < batches; ++b) {
        delta *= rho;
        if (b == j) delta += 2 * eta * gradient_bound / batch_size;
        window_sum += delta;
        ++window_steps;
      }
      if (s % averaging_interval == 0) {
        delta = window_sum / static_cast<double>(window_steps);
        window_sum = 0;
        window_steps = 0;
        h = 0;
      }
    }
    out[j] = delta;
  }
  return Status();
}

Sensitivity discretised_sensitivity(double l2, double gamma, double beta, uint32_t dimension) {
  const double root_d = math::portable_sqrt(static_cast<double>(dimension));
  const double l2_star = gamma * l2 + 2 * beta * root_d;
  const double l1_star =
      root_d * l2_star < l2_star * l2_star ? root_d * l2_star : l2_star * l2_star;
  return Sensitivity{l1_star, l2_star};
}

Result<double> discrete_laplace_epsilon(double scale, double l1_sensitivity) {
  if (!positive(scale) || !(l1_sensitivity >= 0) || !isfinite(l1_sensitivity)) {
    return invalid_argument("scale must be positive and sensitivity finite, >= 0");
  }
  return l1_sensitivity / scale;
}

Result<double> truncated_discrete_laplace_delta(double scale, uint64_t bound,
                                                uint64_t l1_sensitivity) {
  if (!positive(scale)) return invalid_argument("scale must be positive");
  if (bound > kMaxTruncationBound) {
    return invalid_argument("the truncation bound is at most 2^32 (the sum runs over every k)");
  }
  if (l1_sensitivity > bound) return 1.0;  // a neighbour's outputs can be entirely disjoint
  const double q = math::portable_exp(-1 / scale);  // the same q on every platform
  double total = 1, tail = 0;                       // Σ_{|k|≤B} q^|k| and Σ_{k=B−Δ+1..B} q^k
  double power = 1;
  for (uint64_t k = 1; k <= bound; ++k) {
    power *= q;
    total += 2 * power;
    if (k + l1_sensitivity > bound) tail += power;
  }
  if (l1_sensitivity == 0) return 0.0;
  return tail / total;
}

}  // namespace privacy
}  // namespace fedstat
