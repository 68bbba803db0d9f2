// TabulatedPoissonSampler and TabulatedSkellamSampler (tabulated_poisson.h): the sampling —
// the alias-block and tail proposals, the lazy decision against the table, the exact fallback
// (BigUint), and Skellam from two Poisson draws or one and a binomial split. Skellam stays here:
// it draws through the Poisson sampler's inline draw(). The table is built in
// tabulated_poisson_table.cpp.
#include "sdk/noise/tabulated_poisson.h"

#include "sdk/noise/poisson.h"
#include "sdk/noise/tabulated_poisson_internal.h"

namespace fedstat {
namespace noise {

namespace {

// Beyond the table A < 2^−62: its first 58 bits are zeros.
constexpr PoissonThreshold kNegligibleEntry{uint64_t{kKnownShift} << kKnownShift};

}  // namespace

// The proposal's first part bit by bit (slot, keep-or-alias, offset), for the rare proposal
// whose bits do not fit one 64-bit lookahead: the same bits in the same order as draw().
Result<uint64_t> TabulatedPoissonSampler::propose_block_slowly(RandomBits& bits, uint64_t& r) {
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t slot, bits.bits(log2_slots_));
  const unsigned theta_bits = 63 - log2_slots_;
  const uint64_t entry = alias_[static_cast<size_t>(slot)].bits;
  const uint64_t theta = entry & ((uint64_t{1} << theta_bits) - 1);  // reversed
  const unsigned last = theta == 0 ? 0 : 64 - static_cast<unsigned>(__builtin_clzll(theta));
  bool keep = false;
  for (unsigned i = 0; i < last; ++i) {
    FEDSTAT_ASSIGN_OR_RETURN(const bool b, bits.bit());
    const bool t = ((theta >> i) & 1) != 0;
    if (b != t) {
      keep = !b;
      break;
    }
  }
  FEDSTAT_ASSIGN_OR_RETURN(r, bits.bits(log2_s_));
  return keep ? slot : entry >> theta_bits;
}

// A tail proposal: K zeros and a one, then log2(w_t) bits r; j = c_hi + 1 + K·w_t + r or
// c_lo − 1 − (K·w_t + r). False if rejected outright (below −m, or K absurdly large).
Result<bool> TabulatedPoissonSampler::propose_tail(RandomBits& bits, bool lower, int64_t& j) {
  uint64_t k = 0;
  for (;;) {
    FEDSTAT_ASSIGN_OR_RETURN(const bool one, bits.bit());
    if (one) break;
    ++k;
  }
  const unsigned log2_w = log2_tail_[lower ? 1 : 0];
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t r, bits.bits(log2_w));
  if (k > (uint64_t{1} << 20)) return false;  // P = 2^−2^20: never; keeps j far from overflow
  const int64_t beyond = static_cast<int64_t>((k << log2_w) + r);
  if (!lower) {
    j = c_hi_ + 1 + beyond;
    return true;
  }
  j = c_lo_ - 1 - beyond;
  return j >= -static_cast<int64_t>(m_);
}

inline Result<uint64_t> TabulatedPoissonSampler::draw(RandomBits& bits) {
  const unsigned slot_bits = log2_slots_;
  const unsigned theta_bits = 63 - slot_bits;
  const uint64_t theta_mask = (uint64_t{1} << theta_bits) - 1;
  // The bit position lives in registers (a Window) on the fast path; the rare paths that read
  // bits one by one get it back in `bits` first.
  RandomBits::Window w = bits.take_window();
  for (;;) {
    // Proposal: b bits pick a slot; the next bits decide [U' < θ/Q] (keep the slot's block, else
    // its alias) at their first difference from θ's expansion (or once θ's last 1 is matched:
    // then U' ≥ θ/Q); then log2(s) bits place j in the block. All from one lookahead.
    const Status more = bits.ensure_lookahead(w);
    if (!more.ok()) {
      bits.put_window(w);
      return more;
    }
    uint64_t v = w.peek64();
    const uint64_t slot = v & ((uint64_t{1} << slot_bits) - 1);
    const uint64_t entry = alias_[static_cast<size_t>(slot)].bits;
    const uint64_t theta = entry & theta_mask;
    const uint64_t rest = v >> slot_bits;
    const unsigned last = theta == 0 ? 0 : 64 - static_cast<unsigned>(__builtin_clzll(theta));
    const unsigned first =
        static_cast<unsigned>(__builtin_ctzll(((rest ^ theta) & theta_mask) | (theta_mask + 1)));
    const bool keep = first < last && ((rest >> first) & 1) == 0;
    const unsigned used = slot_bits + (first < last ? first + 1 : last);
    uint64_t block, r;
    unsigned pending = 0;   // bits of v the proposal used, not yet skipped
    bool v_current = true;  // v still starts at the stream's position (+ pending)
    if (used + log2_s_ <= 64) {
      block = keep ? slot : entry >> theta_bits;
      r = used == 64 ? 0 : (v >> used) & ((uint64_t{1} << log2_s_) - 1);
      pending = used + log2_s_;
    } else {
      v_current = false;
      bits.put_window(w);
      FEDSTAT_ASSIGN_OR_RETURN(block, propose_block_slowly(bits, r));
      w = bits.take_window();
    }
    int64_t j;
    if (block < central_blocks_) {
      j = c_lo_ + static_cast<int64_t>((block << log2_s_) + r);
      if (j < -static_cast<int64_t>(m_)) {  // f = 0 below the support
        w.skip(pending);
        continue;
      }
    } else {
      w.skip(pending);
      pending = 0;
      v_current = false;
      bits.put_window(w);
      FEDSTAT_ASSIGN_OR_RETURN(const bool proposed,
                               propose_tail(bits, block != central_blocks_, j));
      w = bits.take_window();
      if (!proposed) continue;
    }
    // Decision: the first bit where U and A(j) differ, if A's known prefix holds it — from the
    // rest of v when the difference is there, else from a fresh lookahead.
    const PoissonThreshold a =
        j >= j_min_ && j <= j_max_ ? table_[static_cast<size_t>(j - j_min_)] : kNegligibleEntry;
    unsigned known = static_cast<unsigned>(a.bits >> kKnownShift);
    if (known > known_limit_) known = known_limit_;
    bool accept;
    if (v_current && pending < 64) {
      const uint64_t u = v >> pending;  // 64 − pending valid bits
      const unsigned limit = known < 64 - pending ? known : 64 - pending;
      const unsigned differ = static_cast<unsigned>(
          __builtin_ctzll(((u ^ a.bits) & kPrefixMask) | (uint64_t{1} << limit)));
      if (differ < limit) {
        w.skip(pending + differ + 1);
        if (((u >> differ) & 1) != 0) continue;  // U's bit 1 where A's is 0: U > A
        bits.put_window(w);
        return m_ + static_cast<uint64_t>(j);  // wraps correctly for j < 0 (j ≥ −m)
      }
    }
    w.skip(pending);
    const Status again = bits.ensure_lookahead(w);
    if (!again.ok()) {
      bits.put_window(w);
      return again;
    }
    v = w.peek64();
    const unsigned differ = static_cast<unsigned>(
        __builtin_ctzll(((v ^ a.bits) & kPrefixMask) | (uint64_t{1} << known)));
    if (differ < known) {
      w.skip(differ + 1);
      accept = ((v >> differ) & 1) == 0;  // U's bit 0 where A's is 1: U < A
    } else {
      bits.put_window(w);
      FEDSTAT_ASSIGN_OR_RETURN(accept, exact_accept(bits, j));
      w = bits.take_window();
    }
    if (accept) {
      bits.put_window(w);
      return m_ + static_cast<uint64_t>(j);
    }
  }
}

Result<uint64_t> TabulatedPoissonSampler::sample(RandomBits& bits) {
  if (!ready_) return failed_precondition("TabulatedPoissonSampler used before init()");
  return draw(bits);
}

Status TabulatedPoissonSampler::sample_many(RandomBits& bits, Span<uint64_t> out) {
  if (!ready_) return failed_precondition("TabulatedPoissonSampler used before init()");
  for (size_t i = 0; i < out.size(); ++i) {
    FEDSTAT_ASSIGN_OR_RETURN(out[i], draw(bits));
  }
  return Status();
}

// [U < A(j)] from U's bits and A's exact expansion; nothing of U has been read yet.
Result<bool> TabulatedPoissonSampler::exact_accept(RandomBits& bits, int64_t j) {
  ++fallbacks_;
  const size_t region = (scratch_.size() - 16) / 2;  // ≥ Plan::region()
  BigUint n(scratch_.subspan(0, region));
  BigUint d(scratch_.subspan(region, region + 16));
  // A = f(j)·2^E / (C_mantissa·W) with f(j) = Π p/(q(m+i)) for j > 0, Π q(m−i+1)/p for j < 0;
  // central j: W = the block's weight, E = 63 + log2(s) − C_exponent; tails: W = the tail's
  // weight, E = 63 + K + 1 + log2(w_t) − C_exponent.
  FEDSTAT_RETURN_IF_ERROR(n.assign(1));
  FEDSTAT_RETURN_IF_ERROR(d.assign(1));
  const uint64_t magnitude = static_cast<uint64_t>(j < 0 ? -j : j);
  for (uint64_t i = 1; i <= magnitude; ++i) {
    if (j > 0) {
      FEDSTAT_RETURN_IF_ERROR(n.multiply_word(p_));
      FEDSTAT_RETURN_IF_ERROR(d.multiply_word(q_ * (m_ + i)));  // < 2^32 · 2^32
    } else {
      FEDSTAT_RETURN_IF_ERROR(n.multiply_word(q_ * (m_ - i + 1)));
      FEDSTAT_RETURN_IF_ERROR(d.multiply_word(p_));
    }
  }
  uint64_t weight;
  int64_t e = 63 - c_exponent_;
  if (j >= c_lo_ && j <= c_hi_) {
    weight = block_weight(static_cast<uint64_t>(j - c_lo_) >> log2_s_);
    e += log2_s_;
  } else {
    const int side = j < c_lo_ ? 1 : 0;
    weight = block_weight(central_blocks_ + static_cast<uint64_t>(side));
    const int64_t beyond = side == 1 ? c_lo_ - 1 - j : j - c_hi_ - 1;
    e += (beyond >> log2_tail_[side]) + 1 + log2_tail_[side];
  }
  FEDSTAT_RETURN_IF_ERROR(d.multiply_word(c_mantissa_));
  FEDSTAT_RETURN_IF_ERROR(d.multiply_word(weight));
  if (e >= 0) {
    FEDSTAT_RETURN_IF_ERROR(n.shift_left(static_cast<uint64_t>(e)));
  } else {
    FEDSTAT_RETURN_IF_ERROR(d.shift_left(static_cast<uint64_t>(-e)));
  }
  // A's expansion 64 bits at a time by long division (n becomes the remainder). A ≥ 1 cannot
  // happen (the weights make A < 1), but would read as 0.111…, above every U < 1.
  const bool at_least_one = n.compare(d) >= 0;
  for (int chunk = 0; chunk < 5; ++chunk) {
    uint64_t a = UINT64_MAX;
    if (!at_least_one) {
      a = 0;
      for (int bit = 0; bit < 64; ++bit) {
        FEDSTAT_RETURN_IF_ERROR(n.shift_left(1));
        a <<= 1;
        if (n.compare(d) >= 0) {
          FEDSTAT_RETURN_IF_ERROR(n.subtract(d));
          a |= 1;
        }
      }
    }
    FEDSTAT_RETURN_IF_ERROR(bits.ensure_lookahead());
    const uint64_t v = bits.peek64();
    const uint64_t differ = v ^ reverse_bits(a);
    if (differ != 0) {
      const unsigned first = static_cast<unsigned>(__builtin_ctzll(differ));
      bits.skip(first + 1);
      return ((v >> first) & 1) == 0;
    }
    bits.skip(64);
  }
  return internal_error("tabulated Poisson: exact comparison undecided after 320 bits");
}

// ---- Skellam ----------------------------------------------------------------------------------

Result<Rational> TabulatedSkellamSampler::table_lambda(Rational lambda, Method method,
                                                       bool& split) {
  FEDSTAT_ASSIGN_OR_RETURN(const Rational r, checked_poisson_lambda(lambda));
  split = false;
  if (method == Method::kDifference) return r;
  const Rational twice = reduced(Rational{2 * r.num, r.den});  // r.num < 2^32: no overflow
  const Result<Rational> checked = checked_poisson_lambda(twice);
  if (method == Method::kSplit) {
    if (!checked.ok()) return checked.status();
    split = true;
    return checked.value();
  }
  if (checked.ok() && twice.num <= 2 * kSplitMaxLambda * twice.den) {
    split = true;
    return checked.value();
  }
  return r;
}

Result<TabulatedPoissonSampler::Sizes> TabulatedSkellamSampler::sizes_for(Rational lambda,
                                                                          Method method) {
  bool split = false;
  FEDSTAT_ASSIGN_OR_RETURN(const Rational table, table_lambda(lambda, method, split));
  return TabulatedPoissonSampler::sizes_for(table);
}

Status TabulatedSkellamSampler::init(Rational lambda, Span<PoissonThreshold> table,
                                     Span<uint64_t> scratch, Method method) {
  bool split = false;
  FEDSTAT_ASSIGN_OR_RETURN(const Rational table_rate, table_lambda(lambda, method, split));
  FEDSTAT_RETURN_IF_ERROR(poisson_.init(table_rate, table, scratch));
  split_ = split;
  return Status();
}

inline Result<int64_t> TabulatedSkellamSampler::draw(RandomBits& bits) {
  FEDSTAT_ASSIGN_OR_RETURN(const uint64_t a, poisson_.draw(bits));
  if (!split_) {
    FEDSTAT_ASSIGN_OR_RETURN(const uint64_t b, poisson_.draw(bits));
    return static_cast<int64_t>(a) - static_cast<int64_t>(b);
  }
  // X = the number of ones among the next N = a bits: Binomial(N, 1/2).
  uint64_t ones = 0;
  for (uint64_t left = a; left > 0;) {
    const unsigned take = left < 64 ? static_cast<unsigned>(left) : 64;
    FEDSTAT_RETURN_IF_ERROR(bits.ensure_lookahead());
    const uint64_t v = bits.peek64();
    ones += static_cast<uint64_t>(
        __builtin_popcountll(take == 64 ? v : v & ((uint64_t{1} << take) - 1)));
    bits.skip(take);
    left -= take;
  }
  return 2 * static_cast<int64_t>(ones) - static_cast<int64_t>(a);
}

Result<int64_t> TabulatedSkellamSampler::sample(RandomBits& bits) {
  if (!poisson_.ready_) return failed_precondition("TabulatedSkellamSampler used before init()");
  return draw(bits);
}

Status TabulatedSkellamSampler::sample_many(RandomBits& bits, Span<int64_t> out) {
  if (!poisson_.ready_) return failed_precondition("TabulatedSkellamSampler used before init()");
  for (size_t i = 0; i < out.size(); ++i) {
    FEDSTAT_ASSIGN_OR_RETURN(out[i], draw(bits));
  }
  return Status();
}

}  // namespace noise
}  // namespace fedstat
