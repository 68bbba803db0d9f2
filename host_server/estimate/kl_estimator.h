// PRIEST-KLD on the host: the Monte Carlo estimate of D_KL(Π‖P) from clients' counts at points
// sampled from the public reference Π, under the trust models of 000 (Algorithms 1–3).
//
// Plan: T points x_t ~ Π (exact, from the item counts) and, per round t, the clients C_t that
// answer it: every client (rate 1) or each client independently with probability `rate` (a round
// that would be empty is drawn again). The host receives per round A_t = Σ_{c∈C_t} count_c(x_t)
// (noised in Dist) and N_t = Σ_{c∈C_t} total_c, and forms r_t = (A_t/N_t)/Π(x_t). The estimate is
//     (1/T)·Σ_t λ(r_t − 1) − log r_t,
// unbiased because E_Π[r − 1] = P(supp Π) − 1 = 0 — only when P puts no mass outside supp Π
// (else the λ term is biased by λ·(P(supp Π) − 1)) and P > 0 at every sampled point (else the
// divergence is infinite: estimate_kl refuses with kl_zero_mass_error).
//
// Models (ε, δ for the whole release; neighbours substitute one item, so N is public):
//   none     no noise (the paper's non-private baseline).
//   trusted  the host adds N(0, σ²) to the estimate; Δ = log 2 + |λ|/(N_min·m) where
//            N_min = min_t N_t and m = min_t Π(x_t) (000 Theorem 4.10 with a fixed λ, over the
//            sampled points, which are public). The bound needs every sampled count ≥ 2
//            (Theorem 4.9's domain H^{>1}); a smaller count is refused, not silently noised.
//   tagg     the aggregator releases A = Σ log r_t + Z_A and B = Σ λ(r_t − 1) + Z_B, equal σ,
//            one Gaussian mechanism with Δ2 = T·√(log²2 + (λ/(N_min·m))²); the host outputs
//            (B − A)/T (our copy of Algorithm 2 prints (A + B)/T, a sign slip). Same condition.
//   dist     each client adds a Skellam share to its counts (sdk/tasks/kl_answer_task.h) so every
//            sum A_t carries Sk(μ), μ from the Skellam accountant for the answers' sensitivity;
//            the host clamps P′ = max(A_t/N_t, τ) (Algorithm 3) and counts the clamped rounds.
//            Not unbiased (the clamp). With rate 1 each distinct point is answered once.
// σ (trusted, tagg) comes from sdk/privacy: analytic (Balle & Wang) or classical calibration.
//
// Errors: std::invalid_argument for bad parameters, std::runtime_error for data the estimator
// cannot use (zero mass, a count below 2 under trusted/tagg). Memory: O(T·clients) for the plan.
// Paper: 000 §4, Algorithms 1–3, Theorems 4.3–4.11.
#ifndef FEDSTAT_HOST_ESTIMATE_KL_ESTIMATOR_H_
#define FEDSTAT_HOST_ESTIMATE_KL_ESTIMATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "host_server/estimate/item_counts.h"
#include "sdk/base/random_bits.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace host {

enum class KlModel { kNone, kTrusted, kTagg, kDist };
enum class GaussianCalibration { kAnalytic, kClassical };

const char* kl_model_name(KlModel model);
KlModel parse_kl_model(const std::string& name);  // throws std::invalid_argument

struct KlPlan {
  uint32_t clients = 0;
  bool every_client_every_round = true;
  std::vector<uint32_t> points;                      // x_t
  std::vector<double> reference;                     // Π(x_t)
  std::vector<std::vector<uint32_t>> round_clients;  // C_t, ascending (empty when every client)
  // The two largest numbers of rounds that ask one point (m1 ≥ m2; m2 = 0 with one point).
  uint32_t most_asked[2] = {0, 0};
};

KlPlan plan_kl(const ItemCounts& reference, uint32_t rounds, uint32_t clients, double rate,
               RandomBits& bits);

struct KlSums {
  std::vector<int64_t> counts;   // A_t
  std::vector<uint64_t> totals;  // N_t
};

struct KlOptions {
  KlModel model = KlModel::kNone;
  double lambda = 0.1;
  double tau = 1e-6;
  double epsilon = 1;
  double delta = 1e-6;
  GaussianCalibration calibration = GaussianCalibration::kAnalytic;
};
void validate_kl_options(const KlOptions& options);  // throws std::invalid_argument

// Dist: the answers' sensitivity and the Skellam mean μ each sum must carry.
struct KlDistNoise {
  privacy::Sensitivity sensitivity;
  double sum_lambda = 0;  // μ: Sk(μ) in every A_t
};
KlDistNoise kl_dist_noise(const KlPlan& plan, const KlOptions& options);

struct KlEstimate {
  double estimate = 0;
  double noiseless = 0;    // the same estimate without the host's noise (for measurements)
  double sensitivity = 0;  // Δ2 of the noised release (trusted, tagg)
  double sigma = 0;        // σ of each Gaussian draw (trusted, tagg)
  double estimate_sd = 0;  // the standard deviation the noise adds to the estimate
  double dist_lambda = 0;  // μ per sum (dist)
  uint32_t clamped = 0;    // rounds whose P′ was clamped to τ (dist)
};

std::string kl_zero_mass_error(uint32_t point);
KlEstimate estimate_kl(const KlPlan& plan, const KlSums& sums, const KlOptions& options,
                       RandomBits& noise_bits);

// The exact D_KL(Π‖P) = Σ Π(x)·log(Π(x)/P(x)); `covered` is false (and the value +∞) when P
// is zero somewhere on supp Π. support_mass = P(supp Π).
struct KlExact {
  double divergence = 0;
  bool covered = true;
  double support_mass = 1;
};
KlExact exact_kl(const ItemCounts& reference, const ItemCounts& p);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_KL_ESTIMATOR_H_
