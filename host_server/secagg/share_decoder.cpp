#include "host_server/secagg/share_decoder.h"

#include <algorithm>
#include <stdexcept>

#include "sdk/base/crypto.h"
#include "sdk/base/random_bits.h"

namespace fedstat {
namespace host {
namespace {

using secagg::field_add;
using secagg::field_inverse;
using secagg::field_mul;
using secagg::field_sub;
using secagg::kShamirPieces;
using secagg::kShamirPrime;
using secagg::ShamirShare;

// Writes `pieces` as a secret into `out`; false when a piece exceeds its bit width (no secret).
bool to_secret(const uint32_t (&pieces)[kShamirPieces], uint8_t (&out)[32]) {
  return secagg::shamir_pieces_to_secret(pieces, MutableByteSpan(out, 32)).ok();
}

}  // namespace

ShareDecoder::ShareDecoder(uint32_t threshold, std::vector<uint32_t> holders, size_t max_shares,
                           RandomSource& random)
    : threshold_(threshold), max_shares_(max_shares), xs_(std::move(holders)), random_(random) {
  if (threshold == 0) throw std::invalid_argument("share decoder: the threshold must be >= 1");
  if (max_shares > xs_.size()) {
    throw std::invalid_argument("share decoder: more shares than holders");
  }
  for (size_t i = 0; i < xs_.size(); ++i) {
    if (xs_[i] == 0 || xs_[i] >= kShamirPrime || (i > 0 && xs_[i] <= xs_[i - 1])) {
      throw std::invalid_argument("share decoder: holders must be ascending, distinct, in [1, p)");
    }
  }
  max_degree_ = max_shares > threshold + size_t{1} ? max_shares - threshold - 1 : 0;
  // v_i^U = Π_{j≠i} 1/(x_i − x_j): O(N²) once for the session.
  node_.resize(xs_.size());
  inverse_x_.resize(xs_.size());
  for (size_t i = 0; i < xs_.size(); ++i) {
    uint32_t product = 1;
    for (size_t j = 0; j < xs_.size(); ++j) {
      if (j != i) product = field_mul(product, field_sub(xs_[i], xs_[j]));
    }
    node_[i] = field_inverse(product);
    inverse_x_[i] = field_inverse(xs_[i]);
  }
}

void ShareDecoder::weights_for(const std::vector<size_t>& positions, SetWeights& out) const {
  // The holders of U missing from S (positions ascending): v_i^S = v_i^U · Π_{j∈U\S} (x_i − x_j).
  std::vector<uint32_t> missing;
  missing.reserve(xs_.size() - positions.size());
  for (size_t p = 0, k = 0; p < xs_.size(); ++p) {
    if (k < positions.size() && positions[k] == p) {
      ++k;
    } else {
      missing.push_back(xs_[p]);
    }
  }
  const size_t m = positions.size();
  out.node.resize(m);
  out.lambda.resize(m);
  uint32_t product_x = 1;  // Π_{j∈S} x_j
  for (size_t i = 0; i < m; ++i) {
    const uint32_t x = xs_[positions[i]];
    uint32_t v = node_[positions[i]];
    for (uint32_t gone : missing) v = field_mul(v, field_sub(x, gone));
    out.node[i] = v;
    product_x = field_mul(product_x, x);
  }
  // λ_i = (−1)^{m−1} · Π_{j∈S} x_j / x_i · v_i^S.
  const bool negate = (m - 1) % 2 == 1;
  for (size_t i = 0; i < m; ++i) {
    uint32_t l = field_mul(field_mul(product_x, inverse_x_[positions[i]]), out.node[i]);
    out.lambda[i] = negate ? field_sub(0, l) : l;
  }
}

Result<const std::vector<uint32_t>*> ShareDecoder::check_values(int which, size_t degree) {
  if (degree > max_degree_) return internal_error("share decoder: a check beyond its degree");
  if (!drawn_) {  // after every share is fixed: the decoder is made once they all arrived
    RandomBits bits(random_);
    for (int p = 0; p < 2; ++p) {
      g_[p].resize(max_degree_ + 1);
      for (auto& coefficient : g_[p]) {
        FEDSTAT_ASSIGN_OR_RETURN(const uint64_t c, bits.uniform_below(kShamirPrime));
        coefficient = static_cast<uint32_t>(c);
      }
    }
    drawn_ = true;
  }
  auto it = g_values_[which].find(degree);
  if (it != g_values_[which].end()) return &it->second;
  std::vector<uint32_t> values(xs_.size());
  for (size_t i = 0; i < xs_.size(); ++i) {
    uint32_t value = 0;  // Horner over g's first degree + 1 coefficients
    for (size_t k = degree + 1; k-- > 0;) value = field_add(field_mul(value, xs_[i]), g_[which][k]);
    values[i] = value;
  }
  return &g_values_[which].emplace(degree, std::move(values)).first->second;
}

Result<DecodedSecret> ShareDecoder::decode(const std::vector<ShamirShare>& shares,
                                           const Verify& verify, size_t& trials_left) {
  const size_t m = shares.size();
  const size_t t = threshold_;
  if (m < t || m > max_shares_) {
    return invalid_argument(
        "share decoder: fewer shares than the threshold, or more than max_shares");
  }
  std::vector<size_t> positions(m);
  for (size_t i = 0; i < m; ++i) {
    const auto it = std::lower_bound(xs_.begin(), xs_.end(), shares[i].x);
    if (it == xs_.end() || *it != shares[i].x || (i > 0 && shares[i].x <= shares[i - 1].x)) {
      return invalid_argument("share decoder: shares must come from distinct holders, ascending");
    }
    positions[i] = static_cast<size_t>(it - xs_.begin());
    for (size_t k = 0; k < kShamirPieces; ++k) {
      if (shares[i].y[k] >= kShamirPrime) return data_loss("share decoder: not a field element");
    }
  }
  DecodedSecret out;
  out.shares = m;
  SetWeights set;
  weights_for(positions, set);
  // A_k = Σ λ_i y_ik (the interpolation at 0 from all of S), B_k = Σ λ_i x_i y_ik.
  uint32_t a[kShamirPieces] = {}, b[kShamirPieces] = {};
  const crypto::ScopedWipe wipe_a(a, sizeof(a)), wipe_b(b, sizeof(b));
  for (size_t i = 0; i < m; ++i) {
    const uint32_t lx = field_mul(set.lambda[i], shares[i].x);
    for (size_t k = 0; k < kShamirPieces; ++k) {
      a[k] = field_add(a[k], field_mul(set.lambda[i], shares[i].y[k]));
      b[k] = field_add(b[k], field_mul(lx, shares[i].y[k]));
    }
  }
  auto all_holders = [&] {
    out.holders.clear();
    for (const auto& s : shares) out.holders.push_back(s.x);
  };
  auto verified = [&](const uint32_t(&pieces)[kShamirPieces]) -> Result<bool> {
    if (!to_secret(pieces, out.secret)) return false;
    return verify(ByteSpan(out.secret, 32));
  };
  // 1. All of S: what an honest round pays.
  FEDSTAT_ASSIGN_OR_RETURN(const bool whole, verified(a));
  if (whole) return out;
  if (m == t) {
    out.failure = DecodedSecret::Failure::kExactlyT;
    all_holders();
    return out;
  }
  // Leaving out share c of S, piece k is A_k − B_k / x_c.
  auto without = [&](size_t k, size_t c) {
    return field_sub(a[k], field_mul(b[k], inverse_x_[positions[c]]));
  };
  uint32_t pieces[kShamirPieces] = {};
  const crypto::ScopedWipe wipe_pieces(pieces, sizeof(pieces));
  if (m == t + 1) {
    // 3. The only check at m = t + 1 is B_k = 0 (B is a multiple of the syndrome Σ v_i y_ik).
    bool consistent = true;
    for (size_t k = 0; k < kShamirPieces; ++k) consistent = consistent && b[k] == 0;
    if (consistent) {
      out.failure = DecodedSecret::Failure::kAgreeButWrong;
      return out;
    }
    std::vector<size_t> order(m);
    for (size_t i = 0; i < m; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t p, size_t q) {
      const auto dp = disputed_.find(shares[p].x), dq = disputed_.find(shares[q].x);
      return (dp == disputed_.end() ? 0 : dp->second) > (dq == disputed_.end() ? 0 : dq->second);
    });
    for (size_t c : order) {
      if (trials_left == 0) {
        out.failure = DecodedSecret::Failure::kTrialBudgetSpent;
        all_holders();
        return out;
      }
      for (size_t k = 0; k < kShamirPieces; ++k) pieces[k] = without(k, c);
      if (!to_secret(pieces, out.secret)) continue;  // not a secret: no verification spent
      --trials_left;
      FEDSTAT_ASSIGN_OR_RETURN(const bool ok, verify(ByteSpan(out.secret, 32)));
      if (ok) {
        out.holders = {shares[c].x};
        ++disputed_[shares[c].x];
        return out;
      }
    }
    out.failure = DecodedSecret::Failure::kNoSubsetVerifies;
    all_holders();
    return out;
  }
  // 2. m ≥ t + 2: locate one wrong share per piece with two random checks of degree m − t − 1.
  const size_t degree = m - t - 1;
  FEDSTAT_ASSIGN_OR_RETURN(const std::vector<uint32_t>* g, check_values(0, degree));
  FEDSTAT_ASSIGN_OR_RETURN(const std::vector<uint32_t>* g2, check_values(1, degree));
  FEDSTAT_ASSIGN_OR_RETURN(const std::vector<uint32_t>* g_less, check_values(0, degree - 1));
  std::vector<uint32_t> w(m), w2(m), w_less(m);
  for (size_t i = 0; i < m; ++i) {
    w[i] = field_mul(set.node[i], (*g)[positions[i]]);
    w2[i] = field_mul(set.node[i], (*g2)[positions[i]]);
  }
  const Span<const uint32_t> ws(w.data(), m), w2s(w2.data(), m);
  const Span<const ShamirShare> ys(shares.data(), m);
  std::vector<size_t> located;
  bool off = false;
  for (size_t k = 0; k < kShamirPieces; ++k) {
    const uint32_t s = secagg::shamir_syndrome(ws, ys, k);
    const uint32_t s2 = secagg::shamir_syndrome(w2s, ys, k);
    if (s == 0 && s2 == 0) {
      pieces[k] = a[k];
      continue;
    }
    off = true;
    const Result<size_t> c = secagg::shamir_locate_one(ws, w2s, s, s2);
    if (!c.ok()) {
      out.failure = DecodedSecret::Failure::kNotOneWrongShare;
      all_holders();
      return out;
    }
    // Confirmed: the other m − 1 shares pass a check of their own (degree m − t − 2, weights
    // v_i^S · (x_i − x_c) · G(x_i)).
    const size_t cut = c.value();
    uint32_t rest = 0;
    for (size_t i = 0; i < m; ++i) {
      if (i == cut) continue;
      const uint32_t weight = field_mul(
          field_mul(set.node[i], field_sub(shares[i].x, shares[cut].x)), (*g_less)[positions[i]]);
      rest = field_add(rest, field_mul(weight, shares[i].y[k]));
    }
    if (rest != 0) {
      out.failure = DecodedSecret::Failure::kNotOneWrongShare;
      all_holders();
      return out;
    }
    pieces[k] = without(k, cut);
    if (std::find(located.begin(), located.end(), cut) == located.end()) located.push_back(cut);
  }
  std::sort(located.begin(), located.end());
  out.holders.clear();
  for (size_t c : located) out.holders.push_back(shares[c].x);
  if (!off) {  // every share fits one polynomial, and its secret did not verify
    out.failure = DecodedSecret::Failure::kAgreeButWrong;
    return out;
  }
  FEDSTAT_ASSIGN_OR_RETURN(const bool ok, verified(pieces));
  if (!ok) {
    out.failure = DecodedSecret::Failure::kLocatedButWrong;
    return out;
  }
  for (uint32_t h : out.holders) ++disputed_[h];
  return out;
}

}  // namespace host
}  // namespace fedstat
