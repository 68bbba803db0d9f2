// ShareDecoder: rebuilds Shamir-shared secrets (sdk/secagg/shamir.h) from the shares their holders
// revealed when some of those shares may be wrong, and accepts a secret only once the caller's
// check verifies it (the owner's commitment for a self-mask seed, its public key for a masking
// key). Review findings F2, F3, F5 of issue 39's fix.
//
// Reed–Solomon unique decoding is sound only within (m − t)/2 wrong shares, and the adversary
// picks how many it sends; so nothing decoded here is used unverified, and a secret that does
// not verify is never guessed at. For one secret with m ≥ t shares (x = the holders' ids):
//   1. Interpolate at 0 from all m shares and verify. Honest shares always verify; one wrong
//      share never does (every Lagrange coefficient at 0 is non-zero). This is all an honest
//      round pays: O(m) per piece, plus the O(m·d) coefficients of the holder set (below).
//   2. m ≥ t + 2: the dual-code check of shamir.h (SCRAPE) with two random check polynomials of
//      degree m − t − 1, drawn once, after every share is fixed. For each piece whose syndromes
//      are not 0, the one share that explains them (shamir_locate_one), confirmed by a third
//      check of the other m − 1 shares; the piece rebuilt without it (O(1): see below); the
//      secret verified.
//   3. m = t + 1: the t + 1 sets of t shares, each rebuilt in O(1) per piece, until one verifies
//      — holders already found off a verified polynomial tried first, so one lying holder costs
//      one verification per secret after the first; at most `trials_left` verifications in all.
//   A share left out of a verified secret is *disputed*: its holder revealed something other
//   than what it was dealt, or the owner dealt it a share off its polynomial — the decoder
//   cannot tell which, and says so. Anything else fails, with the reason and the holders in
//   dispute where they are known: exactly t shares that do not verify (nothing to check them
//   against), shares that agree but do not verify (the owner dealt another secret, or at least
//   m − t + 1 holders changed theirs in concert), two or more wrong shares at m ≥ t + 2, no
//   candidate that verifies at m = t + 1.
//
// The arithmetic: for the session's holder set U (|U| = N), the node weights v_i^U =
// Π_{j≠i} 1/(x_i − x_j) are computed once (O(N²)); a secret's holder set S ⊆ U, missing d
// holders, has v_i^S = v_i^U · Π_{j∈U\S} (x_i − x_j) (O(m·d)) and Lagrange coefficients at 0
// λ_i = (−1)^{m−1} · Π_{j∈S} x_j / x_i · v_i^S. With A = Σ λ_i y_i and B = Σ λ_i x_i y_i, the
// interpolation at 0 from S without share c is A − B/x_c. So a secret revealed by a set of its
// own (holders sending empty reveals about it) costs O(m·d), not O(m²), where d is bounded by
// the holders that withheld or were excluded.
//
// Memory: O(N) for U, O(N) per check degree used, O(m) per secret. Not thread-safe.
// Paper: Cascudo & David, SCRAPE (2017) §3 (the dual-code check); Bonawitz et al. 2017 §4.
#ifndef FEDSTAT_HOST_SECAGG_SHARE_DECODER_H_
#define FEDSTAT_HOST_SECAGG_SHARE_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "sdk/base/random_source.h"
#include "sdk/base/result.h"
#include "sdk/secagg/shamir.h"

namespace fedstat {
namespace host {

struct DecodedSecret {
  // Why a secret could not be rebuilt (kNone: it was).
  enum class Failure {
    kNone,
    kExactlyT,          // exactly t shares, and they do not verify
    kAgreeButWrong,     // every share fits one polynomial, whose secret does not verify
    kNotOneWrongShare,  // m ≥ t + 2: the check fails and no single share explains it
    kLocatedButWrong,   // m ≥ t + 2: without the located share(s), still not verified
    kNoSubsetVerifies,  // m = t + 1: no t of the shares give a secret that verifies
    kTrialBudgetSpent,  // m = t + 1: the verifications allowed in all were used up
  };
  Failure failure = Failure::kNone;
  size_t shares = 0;  // m
  uint8_t secret[32] = {};
  // Verified: the holders whose share is off the secret's verified polynomial (disputed), in
  // ascending id. Failed: the holders whose shares are in dispute, where known (kExactlyT,
  // kNotOneWrongShare, kNoSubsetVerifies: every holder; kLocatedButWrong: the located ones).
  std::vector<uint32_t> holders;
  bool ok() const { return failure == Failure::kNone; }
};

class ShareDecoder {
 public:
  // The caller's check of a candidate secret (32 bytes): true when it is the owner's. An error
  // (not a "no") ends decode() with it.
  using Verify = std::function<Result<bool>(ByteSpan secret)>;

  // `holders`: every id any secret's shares may come from, ascending and distinct (U);
  // `max_shares`: the most shares any secret will have (the check polynomials' degree bound);
  // `random`: draws the check polynomials at the first check (must outlive the decoder).
  // Throws std::invalid_argument unless threshold ≥ 1, the holders are ascending, distinct and
  // in [1, p), and max_shares ≤ holders.size().
  ShareDecoder(uint32_t threshold, std::vector<uint32_t> holders, size_t max_shares,
               RandomSource& random);

  // Decodes one secret from `shares` (ascending x, each x one of the holders, at least t and at
  // most max_shares of them). `trials_left` counts down the verifications of step 3.
  // Errors: kInvalidArgument for shares that break the above; the random source's and
  // `verify`'s errors; kDataLoss for a share value that is not a field element.
  Result<DecodedSecret> decode(const std::vector<secagg::ShamirShare>& shares, const Verify& verify,
                               size_t& trials_left);

 private:
  struct SetWeights {
    std::vector<uint32_t> node;    // v_i^S
    std::vector<uint32_t> lambda;  // λ_i (Lagrange at 0 over S)
  };
  void weights_for(const std::vector<size_t>& positions, SetWeights& out) const;
  // G_D(x) at every holder for check polynomial `which` (0, 1) truncated to degree `degree`.
  Result<const std::vector<uint32_t>*> check_values(int which, size_t degree);

  uint32_t threshold_;
  size_t max_shares_;
  std::vector<uint32_t> xs_, node_, inverse_x_;
  size_t max_degree_;
  RandomSource& random_;
  bool drawn_ = false;
  std::vector<uint32_t> g_[2];  // the check polynomials' coefficients, constant first
  std::map<size_t, std::vector<uint32_t>> g_values_[2];
  std::map<uint32_t, size_t> disputed_;  // holder → secrets it was found disputed in so far
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SECAGG_SHARE_DECODER_H_
