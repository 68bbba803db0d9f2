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
// Models (ε, δ for the whole release; neighbours substitute one item, so every total N_t is
// public and the plan — points, rounds, clients, Π(x_t) — is public):
//   none     no noise (the paper's non-private baseline). Refuses a sampled point where P has no
//            mass (kl_zero_mass_error): without privacy that refusal releases nothing new.
//   trusted  the host releases the estimate through the central Gaussian mechanism
//            (gaussian_noise.h: rounded to a public grid, exact discrete noise).
//   tagg     the aggregator releases A = Σ log r_t and B = Σ λ(r_t − 1) as one 2-value Gaussian
//            mechanism (same σ, same grid); the host outputs (B − A)/T (our copy of Algorithm 2
//            prints (A + B)/T, a sign slip).
//   dist     each client adds a Skellam share to its counts (sdk/tasks/kl_answer_task.h) so every
//            sum A_t carries Sk(μ), μ from the Skellam accountant for the answers' sensitivity;
//            the host clamps P′ = min(max(A_t/N_t, τ), 1) (Algorithm 3's floor τ, and the
//            ceiling 1 an honest sum keeps: a count is at most its total) and counts the rounds
//            clamped at each end (post-processing of the noised sums: no privacy cost). Not
//            unbiased (the clamps). With rate 1 each distinct point is answered once.
//            One device's effect (DIST: its words are masked, no report bound applies; there is
//            no range proof): it can add any value to its counts and total mod 2^64, which moves
//            each round's P′ anywhere in [τ, 1] and no further, so the estimate stays within
//            [(1/T)·Σ_t min f_t, (1/T)·Σ_t max f_t], f_t(p) = λ(p/Π(x_t) − 1) − log(p/Π(x_t)) on
//            [τ, 1] (max at p = τ or 1; min there or at Π(x_t)/λ). Before the ceiling, one device
//            adding 2^40 to one count moved an estimate from 0.244 to 13,743,894 (second review of
//            issue 39, C1; tests/audit/rounds/dist_post_processing_test.cpp). Within that range a
//            forged sum cannot be told from an honest one: a lie towards P′ = τ (subtracting its
//            counts) reads as P having little mass at x_t, i.e. a large divergence (f_t(τ) ≈
//            log(Π(x_t)/τ) − λ: up to ≈ 13.8 at τ = 1e-6). The summed total N (a function of the
//            same sum) needs no bound of its own: N = 0 refuses (below), any other N is absorbed
//            by the clamps.
//
// Trusted and TAgg use r_t = max(A_t, 2)/(N_t·Π(x_t)): the count is clamped at 2 instead of
// refusing a count below 2 (a refusal would be an output that depends on one record: counts 2
// and 1 at a sampled point would give an estimate and a refusal). The clamp keeps every log r_t
// finite and bounded in change (000 Theorem 4.9's domain H^{>1}), costs bias only at points
// where the clients hold fewer than 2 items, and makes no decision on the data.
//
// Sensitivity (proved here; it replaces 000 Theorem 4.10's whole-estimator bound, which charges
// every one of the T rounds). A substitution moves one client's count at one point a down by 1
// and at one point b up by 1; only the rounds t with x_t ∈ {a, b} (and that client in C_t)
// change. In such a round the clamped count c′ = max(c, 2) changes by at most 1 and both values
// are ≥ 2, so |Δ log r_t| ≤ log(3/2) (the largest step, 2 → 3) and |Δ λ(r_t − 1)| ≤
// |λ|/(N_t·Π(x_t)). With, per distinct point x,
//     M_x = #{t : x_t = x},   L_x = Σ_{t: x_t = x} |λ|/(N_t·Π(x_t)),   S_x = M_x·log(3/2) + L_x,
// and (1), (2) marking the largest and second largest over the sampled points:
//   trusted  Δ = (S_(1) + S_(2))/T                       (triangle inequality over the rounds)
//   tagg     Δ2 = √( ((M_(1) + M_(2))·log(3/2))² + (L_(1) + L_(2))² )   (A and B separately)
// With one distinct point the second terms are 0. Points never sampled do not enter. Each bound
// then gets twice the double arithmetic's worst error on the computed sums: (T + 4)·2^−53 times
// Σ_t of the largest |log r_t| (resp. |λ(r_t − 1)|) any clamped count allows (public: N_t, Π),
// assuming log within an ulp (glibc, newlib) — ≈ 1e-13 of Δ at T = 1000. Versus the
// old T-fold charge this divides the noise by about T/(M_(1) + M_(2)) (≈ 28 for a uniform Π over
// 100 items at T = 1000) and uses log(3/2) for log 2.
//
// σ (trusted, tagg) comes from sdk/privacy: analytic (Balle & Wang) or classical calibration,
// at the δ gaussian_noise.h leaves after its grid term (grid_calibration_delta).
//
// Errors: std::invalid_argument for bad parameters; std::runtime_error when the clients asked in
// a round hold no items at all (N_t = 0: public under substitution) and, for `none` only, when
// P has no mass at a sampled point. No other path refuses, warns or changes what it prints
// depending on the clients' counts. Memory: O(T·clients) for the plan.
// Paper: 000 §4, Algorithms 1–3, Theorems 4.3–4.11.
#ifndef FEDSTAT_HOST_ESTIMATE_KL_ESTIMATOR_H_
#define FEDSTAT_HOST_ESTIMATE_KL_ESTIMATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "host_server/estimate/gaussian_noise.h"
#include "host_server/estimate/item_counts.h"
#include "sdk/base/random_bits.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace host {

enum class KlModel { kNone, kTrusted, kTagg, kDist };

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
// fedstat-kl's defaults, shared by the Python module's estimate_kl and collect_kl_sums (whose
// epsilon=None is kKlDefaultEpsilon and delta=None KlOptions' delta): the private dist model at
// epsilon 2. KlOptions{} itself starts at model none (the server's planner sets every field).
constexpr KlModel kKlDefaultModel = KlModel::kDist;
constexpr double kKlDefaultEpsilon = 2;

// Dist: the answers' sensitivity and the Skellam mean μ each sum must carry.
struct KlDistNoise {
  privacy::Sensitivity sensitivity;
  double sum_lambda = 0;  // μ: Sk(μ) in every A_t
};
KlDistNoise kl_dist_noise(const KlPlan& plan, const KlOptions& options);

// Σ_t log r_t and Σ_t λ(r_t − 1) with the central models' clamped counts: what trusted (as
// (B − A)/T) and tagg (A and B) release through the Gaussian mechanism.
struct KlCentralSums {
  double log_sum = 0;     // A
  double linear_sum = 0;  // B
};
KlCentralSums kl_central_sums(const KlPlan& plan, const KlSums& sums, double lambda);

// The central models' sensitivities (see above), from the public plan and totals.
struct KlCentralSensitivity {
  double trusted = 0;     // Δ of the estimate
  double log_sum = 0;     // Δ of A = Σ log r_t (tagg)
  double linear_sum = 0;  // Δ of B = Σ λ(r_t − 1) (tagg)
  double tagg = 0;        // Δ2 of (A, B)
};
KlCentralSensitivity kl_central_sensitivity(const KlPlan& plan, const KlSums& sums, double lambda);

struct KlEstimate {
  double estimate = 0;
  double noiseless = 0;        // the same estimate without the host's noise (for measurements)
  double sensitivity = 0;      // Δ2 of the noised release (trusted, tagg)
  double sigma = 0;            // σ actually added to each released value (trusted, tagg)
  double grid = 0;             // the public grid the released values lie on (trusted, tagg)
  double estimate_sd = 0;      // the standard deviation the noise adds to the estimate
  double dist_lambda = 0;      // μ per sum (dist)
  uint32_t clamped = 0;        // rounds whose P′ was clamped to τ (dist)
  uint32_t clamped_above = 0;  // rounds whose P′ was clamped to 1 (dist: above any honest sum)
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
