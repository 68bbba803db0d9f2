/// @file
/// The (k, t) bound of SecAgg+: how many neighbours k each client needs in the random Harary
/// graph, and which Shamir threshold t among its k + 1 share holders (its k neighbours and
/// itself), so that a round of n clients stays private and completes under a threat model of a
/// dropout fraction δ, a corrupt fraction γ, a security parameter σ and a correctness parameter η.
/// The device checks the (k, t) the server announces with check_sparse_graph(); the host server
/// picks them with choose_sparse_graph(); both run this code, so they agree bit for bit.
///
/// The graph: the n clients on a ring in a random order, each joined to the k/2 clients before it
/// and the k/2 after it (a Harary graph H(k, n), k even, self excluded). The bound is that of
/// Bell, Bonawitz, Gascón, Lepoint, Raykova, "Secure Single-Server Aggregation with
/// (Poly)Logarithmic Overhead", CCS 2020 (ePrint 2020/704): §3, the properties of a "good" graph
/// on which the protocol's security and correctness rest (the honest survivors stay connected; no
/// client has t corrupt share holders; every client keeps t surviving ones), and §4's margin for
/// a semi-malicious server, so that a client's two secrets (self-mask seed, key-agreement key)
/// are never both reconstructible from one consistent view: the honest holders give a share of
/// only one of them, hence 2t > k + (its corrupt neighbours). That margin holds only when every
/// holder is shown the same survivors: a server that shows different holders different U2/U3
/// views can collect both secrets without any corrupt client (in the complete graph too), which
/// only the consistency round of Bonawitz et al. §4 closes (not built: issue 42). So the bound's
/// guarantee is for a server that follows the protocol and reports dropouts honestly, with
/// corrupt clients among the devices (docs/protocol.md, "The sparse graph"). The concrete
/// inequalities below are the Harary-graph instantiation of Google's federated-compute
/// (fcp/secagg/server/graph_parameter_finder.cc, adversary class SEMI_MALICIOUS_SERVER), written
/// anew; tests/unit/secagg/graph_parameters_test.cpp reproduces its tested table.
///
/// With B_γ = ⌊γ·n⌋ corrupt clients, B_δ = ⌊δ·n⌋ dropouts (rates in parts per million, integer
/// arithmetic), A ~ Hypergeometric(n, B_γ, k) the corrupt neighbours of a client and
/// S ~ Hypergeometric(n, n − B_δ, k) its surviving neighbours, (k, t) passes when
///   (1) connectivity: the ring of honest survivors is cut only if two disjoint runs of k/2
///       consecutive clients are all corrupt or dropped; a union bound over the n(n − k − 1)/2
///       pairs of runs gives
///         ln(n(n − k − 1)/2) + Σ_{i<k} ln((B_γ + B_δ − i)/(n − i)) < −(σ + 1)·ln 2
///       (−∞ when k > B_γ + B_δ: not enough bad clients to make one run);
///   (2) security: t1 = min{a : Pr[A > a] < 2^−(σ+1)/n} (union bound over the n clients), and
///         t > ⌈(t1 + k − 1.25)/2⌉, i.e. 2t > t1 + k
///       (so 2t ≥ k + 2 > k + 1 for every even k, the rule a device enforces on its own);
///   (3) correctness: Pr[S ≤ t − 1] < 2^−η/n, i.e. t ≤ t2 = min{s : Pr[S ≤ s] ≥ 2^−η/n};
/// and 2 ≤ t ≤ k + 1, 2 ≤ k < n − 1, γ + 2δ ≤ 0.9 (federated-compute's feasibility rule for this
/// adversary class). (1) and (2) each fail with probability below 2^−(σ+1), so the privacy
/// guarantee fails with probability at most 2^−σ: the caller adds 2^−σ to the δ of its
/// differential-privacy accounting. By (3) the round aborts (some client keeps fewer than t
/// surviving holders) with probability at most 2^−η.
///
/// Numerics: no lgamma, no libm (the Cortex-M4 image keeps libm out): every ratio of factorials
/// is a product of k ratios, held as a significand and a binary exponent (renormalised by 2^256,
/// exactly), with one portable_log at the end where a logarithm is compared; the hypergeometric
/// pmf starts from such a product at the bottom of its support and walks up by its ratio
/// recurrence p(x + 1)/p(x) = (K − x)(k − x)/((x + 1)(N − K − k + x + 1)). Terms below 2^−512
/// are dropped from tail sums (together below k·2^−512, far under the smallest tail compared,
/// 2^−201/n). Time O(k) per check; choose_sparse_graph tries k = 2, 4, … so O(k*²) for the k* it
/// returns: k* below 100 at the default rates (microseconds), 11,136 at γ = δ = 0.3 and n = 10^6
/// (0.3 s on a host core), 52,176 in the worst accepted case (γ + 2δ = 0.9, σ = η = 200,
/// n = 10^9: 7 s). The search stops at k = 2^16.
///
/// k and t this code gives (δ = γ = 5 %, σ = 40, η = 30; checked by the test
/// GraphParameters.TheHeadersTableIsWhatTheCodeGives):
///
///   | n | 10^2 | 10^3 | 10^4 | 10^5 | 10^6 | 10^7 |
///   |---|------|------|------|------|------|------|
///   | k |   16 |   62 |   74 |   80 |   86 |   92 |
///   | t |   11 |   43 |   51 |   55 |   59 |   63 |
///
/// @memory O(1): a few words of stack, no tables, no heap.
/// @paper Bell et al. CCS 2020 §3–§4 (SecAgg+ graph parameters); 000–004 Dist models.
#ifndef FEDSTAT_SDK_SECAGG_GRAPH_PARAMETERS_H_
#define FEDSTAT_SDK_SECAGG_GRAPH_PARAMETERS_H_

#include <stdint.h>

#include "sdk/base/result.h"

namespace fedstat {
namespace secagg {

/// The largest round size the bound accepts (10^9: every count and product stays exact in a
/// double's 53 bits and a uint64's range).
constexpr uint64_t kMaxGraphClients = 1000000000ull;
/// The largest security or correctness parameter, in bits.
constexpr uint32_t kMaxGraphBits = 200;
/// One in parts per million.
constexpr uint32_t kPpmOne = 1000000;
/// γ + 2δ at most this (0.9, in ppm): beyond it no degree below n − 1 is secure and correct.
constexpr uint32_t kMaxCorruptPlusTwiceDropoutPpm = 900000;

/// What a round of secure aggregation must withstand. All rates in parts per million: integers,
/// so that they travel in SecAggStart and a device and the server compute the same counts.
struct SecAggThreatModel {
  uint32_t dropout_ppm = 50000;    ///< δ: fraction of clients that may drop out during the round
  uint32_t corrupt_ppm = 50000;    ///< γ: fraction of clients the adversary controls
  uint32_t security_bits = 40;     ///< σ: privacy fails with probability ≤ 2^−σ
  uint32_t correctness_bits = 30;  ///< η: the round aborts with probability ≤ 2^−η
};

/// A sparse graph's parameters.
struct SecAggGraph {
  uint32_t degree = 0;     ///< k: neighbours of each client (even, self excluded)
  uint32_t threshold = 0;  ///< t: Shamir threshold among the k + 1 holders (neighbours and self)
};

/// The thresholds that pass at a given degree: [min_threshold, max_threshold].
struct SecAggThresholdRange {
  uint32_t min_threshold = 0;  ///< the smallest t with 2t > t1 + k (condition (2))
  uint32_t max_threshold = 0;  ///< the largest t with Pr[S ≤ t − 1] < 2^−η/n (condition (3))
};

/// Whether the threat model itself is usable: rates below 10^6 ppm, γ + 2δ ≤ 0.9, σ and η in
/// [1, 200].
/// @errors kOutOfRange: dropout_ppm or corrupt_ppm ≥ 10^6; corrupt_ppm + 2·dropout_ppm > 900000;
/// security_bits or correctness_bits 0 or above 200 (each its own message).
Status check_threat_model(const SecAggThreatModel& model);

/// The thresholds t that pass conditions (2) and (3) for n clients at degree k (condition (1) not
/// checked here). min_threshold > max_threshold when none does (raise the degree).
/// @errors kInvalidArgument: n < 2; degree 0 or odd. kOutOfRange: n > kMaxGraphClients; degree
/// ≥ n − 1 (use the complete graph); the model fails check_threat_model.
Result<SecAggThresholdRange> sparse_threshold_range(uint64_t n, uint32_t degree,
                                                    const SecAggThreatModel& model);

/// Whether (degree k, threshold t) meets conditions (1)–(3) for n clients under `model`.
/// @errors kInvalidArgument: n < 2; degree 0 or odd. kOutOfRange: n > kMaxGraphClients; degree
/// ≥ n − 1 (use the complete graph); threshold < 2 or > degree + 1; the model fails
/// check_threat_model; the degree fails (1) (the survivors' graph may be cut: raise it,
/// choose_sparse_graph gives the smallest); no threshold passes at this degree; the threshold is
/// below (2)'s bound or above (3)'s (sparse_threshold_range gives the passing thresholds). Each
/// condition has its own message.
Status check_sparse_graph(uint64_t n, uint32_t degree, uint32_t threshold,
                          const SecAggThreatModel& model);

/// The smallest even k (searching k = 2, 4, … below n − 1) for which some t passes, with the
/// smallest such t (the cheapest reconstruction). The result passes check_sparse_graph.
/// @errors kInvalidArgument: n < 2. kOutOfRange: n > kMaxGraphClients; the model fails
/// check_threat_model. kNotFound: no even k < n − 1 passes (small rounds: use the complete graph).
Result<SecAggGraph> choose_sparse_graph(uint64_t n, const SecAggThreatModel& model);

}  // namespace secagg
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SECAGG_GRAPH_PARAMETERS_H_
