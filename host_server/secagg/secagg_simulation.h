// A whole secure-aggregation session in one process: n SDK clients (sdk/secagg) and the host's
// SecAggServer exchanging real encoded messages (nanopb Envelope frames, sdk/wire), with chosen
// clients dropping out before rounds 1, 2 and 3. Used by fedstat-secagg-sim, the tests and the
// benchmarks.
//
// Client i (id i + 1) draws its keys and seeds from SeededStream(seed, id) and its input from
// SeededStream(seed, 2^63 + id) (words uniform below 2^bits), made when it masks and dropped after;
// the droppers are the first A, next B and next C clients of a seeded permutation; the public
// session id is 64 bits of SeededStream(seed, 2^64 − 1), a PRF output that does not reveal the
// seed, and a sparse graph's ring seed 256 bits of SeededStream(seed, 2^64 − 2). `ok` means the
// unmasked sum equals Σ x_u over U3 (the clients whose masked input the server received);
// `aborted` that a round fell below the threshold. `threads` clients compute at once (their
// crypto); the server takes their messages one at a time, in client order, so the result does not
// depend on `threads`.
// Signed sessions (protocol 5, `signed_keys`): a fleet CA (its key pair from SeededStream(seed,
// 2^64 − 3)) issues client i a credential (its key pair from SeededStream(seed, 2^62 + id)) with
// credential::issue_certificate before the session — provisioning, outside the timings — and the
// consistency round runs between U3 and the reveals: each member of U3 signs its view, the
// server forwards the signers of each member's view, and a member reveals once it verified t.
// The clients dropping before round 3 (C) then never sign; D more (`drop_after_consistency`,
// drawn after A, B and C) sign and vanish before revealing.
// Memory: complete graph O(n²) shares; sparse O(n·k) shares and roster entries (144 bytes each
// per client) — about 10 KB per client at k = 80 — plus O(L) words per thread; bounded by the
// limits below. Paper: Bonawitz et al. 2017 §4; Bell et al. 2020 §3 (the sparse graph).
#ifndef FEDSTAT_HOST_SECAGG_SECAGG_SIMULATION_H_
#define FEDSTAT_HOST_SECAGG_SECAGG_SIMULATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "host_server/secagg/secagg_server.h"

namespace fedstat {
namespace host {

// Bounds on a simulated session, so that no request does unbounded work: run_secagg_simulation
// throws std::invalid_argument above them, and fedstat-secagg-sim refuses them with a message.
//   clients    2 .. kMaxSimClients (1024, the roster bitmap's limit) for the complete graph (n²
//              key agreements); 2 .. kMaxSimSparseClients (10^5) for the sparse graph (n·k)
//   threshold  2 .. clients, and more than half of them (2·threshold > clients: the SDK clients
//              refuse less, secagg_client.h); sparse: more than half of degree + 1
//   length     1 .. kMaxSimLength (2^20 words)
//   clients·(degree or clients)·… : shares held ≤ kMaxSimShares (2^27: about 20 GiB at most)
constexpr uint32_t kMaxSimClients = kMaxSecAggClients;
constexpr uint32_t kMaxSimSparseClients = 100000;
constexpr uint32_t kMaxSimLength = uint32_t{1} << 20;
constexpr uint64_t kMaxSimShares = uint64_t{1} << 27;

struct SecAggSimConfig {
  uint32_t clients = 10;
  uint32_t threshold = 6;
  uint32_t length = 100;
  uint32_t bits = 32;
  uint32_t drop_before_sharing = 0;    // A: advertised keys, then vanished
  uint32_t drop_before_masking = 0;    // B: sent shares, never the masked input
  uint32_t drop_before_unmasking = 0;  // C: sent the masked input, never the reveals
  uint64_t seed = 1;
  // 0: the complete graph; an even k ≥ 2: the sparse graph of degree k (`threshold` among k + 1).
  uint32_t degree = 0;
  uint32_t threads = 1;      // clients computing at once (1 .. 64)
  bool keep_masked = false;  // keep the first survivor's masked vector (tests)
  bool zero_inputs = false;  // every input is the zero vector (tests of the masks)
  // When not empty: client i's input (length `length`, words below 2^bits) instead of random ones.
  std::vector<std::vector<uint64_t>> inputs;
  // Protocol 5: a signed session with the consistency round (above). Sparse: degree ≤ 126.
  bool signed_keys = false;
  uint32_t drop_after_consistency = 0;  // D (signed only): signed U3, never revealed
};

struct SecAggSimResult {
  bool ok = false;
  bool aborted = false;
  std::string abort_reason;
  uint32_t survivors = 0;     // the size of U3
  uint32_t reveals_sent = 0;  // SecAggReveal messages the clients sent, over all clients
  std::vector<uint64_t> sum, expected, masked_example, input_example;
  // Mean bytes one surviving client sent per round (frames, length prefixes included), and in all.
  double bytes_per_round[4] = {0, 0, 0, 0};
  double bytes_per_client = 0;
  // Mean client seconds per round and the server's seconds per round (0: keys … 3: unmasking):
  // CPU seconds of the thread doing the work (CLOCK_THREAD_CPUTIME_ID), not wall time.
  double client_seconds[4] = {0, 0, 0, 0};
  double server_seconds[4] = {0, 0, 0, 0};
  uint32_t roster_entries = 0;  // entries of each client's roster (n, or k + 1 when sparse)
  // Signed sessions, the consistency round: mean bytes a surviving client sent (its signature;
  // also in bytes_per_client) and was forwarded (the others' signatures), its CPU seconds (U3,
  // signing, verifying) and the server's.
  double consistency_bytes = 0;
  double consistency_received_bytes = 0;
  double consistency_client_seconds = 0;
  double consistency_server_seconds = 0;
  uint32_t consistency_signers = 0;  // consistency messages the server stored
};

SecAggSimResult run_secagg_simulation(const SecAggSimConfig& config);

// The sum modulo 2^bits of the clients' vectors, computed through a whole secure-aggregation
// session (no dropouts; threshold ⌈2n/3⌉, at least 2): what the host of a Dist model sees.
// Throws std::runtime_error when the session fails.
std::vector<uint64_t> secure_sum(const std::vector<std::vector<uint64_t>>& inputs, uint32_t bits,
                                 uint64_t seed);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SECAGG_SECAGG_SIMULATION_H_
