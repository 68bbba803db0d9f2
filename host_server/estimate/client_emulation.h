// Emulated clients for the command-line tools and tests: one item-count file split across N
// devices, each holding an SDK SparseHistogram, as in deployment; or (model updates) one file of
// labelled examples dealt out in consecutive blocks.
//
// split_across_clients assigns every unit of count to a client chosen by a keyed hash of (item,
// unit) — uniform, so clients differ as real ones do, and a function of that unit alone, so a
// change of one item in the file moves one unit — while the total is at most 2^26; above that
// each client gets ⌊count/N⌋ of every item and the remainder is dealt the same way. The key is
// 128 bits from `bits`. Each client's table has a power-of-two capacity ≥ 2 × its distinct items
// (load ≤ 1/2); a count beyond 2^32 − 1 stops there, as a device's counter does.
// The split is the simulation's: the privacy guarantees are for one client's record substituted
// (that client's total, and every N_t, unchanged), as the headers of the estimators say.
// split_examples gives client i the rows [i·n, (i + 1)·n) of the file (n = per_client): each
// client exactly n examples, the rest of the file unused; std::invalid_argument when the file
// holds fewer than N·n rows. Deterministic and public: one record substituted changes one client.
// Memory: 16 bytes × Σ_c (distinct items of client c), at most 16 × total; examples: a copy of the
// N·n rows used.
// Paper: 000 §5 (clients' local histograms), 001 §5.
#ifndef FEDSTAT_HOST_ESTIMATE_CLIENT_EMULATION_H_
#define FEDSTAT_HOST_ESTIMATE_CLIENT_EMULATION_H_

#include <memory>
#include <vector>

#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/kl_estimator.h"
#include "host_server/estimate/labelled_examples.h"
#include "host_server/estimate/noise_bits.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/sketch/shift_sketch.h"

namespace fedstat {
namespace host {

struct EmulatedClient {
  std::vector<histogram::SparseEntry> table;  // empty: the client holds no histogram
  histogram::SparseHistogram histogram;
  LabelledExamples examples;   // MODEL_UPDATE (none for the histogram kinds)
  std::vector<double> vector;  // HETEROGENEITY: x ∈ [0,1]^d (empty: none)
};

using EmulatedClients = std::vector<std::unique_ptr<EmulatedClient>>;

EmulatedClients split_across_clients(const ItemCounts& data, uint32_t clients, RandomBits& bits);
EmulatedClients split_examples(const LabelledExamples& data, uint32_t clients, size_t per_client);

// Every client in every round's C_t answers through the SDK (tasks::answer_kl_points*, with a
// Skellam share in Dist: μ/k per client when k clients answer a sum, rounded up), and the host
// sums the answers. Client c's noise comes from noise.stream(1 + c) (noise_bits.h: the CSPRNG
// for a release). With `secure` (Dist model, every client answering every point): the noised
// answers are summed through a real secure-aggregation session (host_server/secagg) as 64-bit
// words, so the host only sees the noised sums.
KlSums collect_kl_sums(const KlPlan& plan, const EmulatedClients& clients, const KlOptions& options,
                       NoiseBits& noise, bool secure = false);

// Every client sketches its histogram through the SDK (sketch::ShiftSketch, one add per item)
// and serialises its report; with epsilon > 0 it first applies the stability-based local-DP
// histogram (sketch/stability_histogram.h, δ = 1e-6) with noise.stream(1 + c); a negative
// or non-finite epsilon throws std::invalid_argument (never silently "no local DP").
// Returns the reports' bytes, one per client.
std::vector<std::vector<uint8_t>> sketch_clients(const EmulatedClients& clients,
                                                 const sketch::ShiftSketchParams& params,
                                                 double epsilon, NoiseBits& noise);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_CLIENT_EMULATION_H_
