// TabulatedPoissonSampler (tabulated_poisson.h): the table's construction — the plan of the
// proposal (C, the blocks and tails) from λ in double precision, sizes_for, and init, which
// builds the alias table of block weights and A's known prefixes.
#include "sdk/noise/tabulated_poisson.h"

#include <math.h>

#include "sdk/noise/poisson.h"
#include "sdk/noise/tabulated_poisson_internal.h"

// Only correctly rounded IEEE double operations decide C and the block weights W (which define
// A exactly, and so the samples): +, −, ·, / and the exact ldexp/frexp/nextafter/ceil. Every
// product that is added (s·h, 2·w·f) has a power-of-two factor, so it is exact and a fused
// multiply-add (clang's -ffp-contract=on) cannot change the sum either.

namespace fedstat {
namespace noise {
namespace {

constexpr double kNegligible = 0x1p-62;     // the table ends where A < 2^−62 (so a_1..a_58 = 0)
constexpr int64_t kMaxHalfWidth = 1 << 26;  // 64 M entries: far beyond any sensible λ
constexpr uint64_t kMaxHalfBlocks = 63;     // central blocks per side

unsigned bit_length(uint64_t v) {
  unsigned n = 0;
  for (; v != 0; v >>= 1) ++n;
  return n;
}

// The bits that every integer in [low, high] shares at the top (at most 58 of them), as a table
// entry: bit-reversed in bits 0..57, their number in bits 58..63.
PoissonThreshold known_prefix(uint64_t low, uint64_t high) {
  const uint64_t differ = low ^ high;
  unsigned known = differ == 0 ? 64 : static_cast<unsigned>(__builtin_clzll(differ));
  if (known > kKnownShift) known = kKnownShift;
  const uint64_t prefix = known == 0 ? 0 : reverse_bits(low) & ((uint64_t{1} << known) - 1);
  return PoissonThreshold{prefix | (static_cast<uint64_t>(known) << kKnownShift)};
}

// The relative error bound of n roundings of relative size ≤ 2^−53.
double rounding_bound(double n) {
  const double u = 0x1p-53;
  return n * u / (1 - n * u);
}

// log2 of the smallest power of two w with x^w ≤ 0.49 (x < 1), by squarings: only correctly
// rounded operations (pow() is not), and the computed x^w ≤ 0.49 makes the exact one < 1/2.
unsigned halving_width(double x) {
  unsigned log2_w = 0;
  while (x > 0.49 && log2_w < 40) {
    x *= x;
    ++log2_w;
  }
  return log2_w;
}

}  // namespace

// Everything the proposal and the table's shape need, computed in double precision from λ
// alone (so sizes_for() and init() agree, and every architecture gets the same C and W).
struct TabulatedPoissonSampler::Plan {
  uint64_t p = 0, q = 1, m = 0;
  double lambda = 0;
  unsigned log2_s = 0;  // central block width s = 2^log2_s
  int64_t c_lo = 0, c_hi = 0;
  uint64_t central_blocks = 0;
  unsigned log2_slots = 0;
  unsigned log2_tail[2] = {0, 0};  // tail staircase widths, [0] above c_hi, [1] below c_lo
  bool lower_tail = false;         // false when the central blocks reach −m
  double envelope_gamma = 0;       // relative error bound of f̃ within the central blocks ± 1
  double c_value = 1;              // C
  uint64_t tail_weight[2] = {0, 0};
  uint64_t mode_block = 0;  // where the rounding slack of the weights goes
  uint64_t slack = 0;       // 2^63 − Σ W before it is added to mode_block
  int64_t j_min = 0, j_max = 0;

  uint64_t slots() const { return uint64_t{1} << log2_slots; }
  int64_t half_width() const { return j_max > -j_min ? j_max : -j_min; }
  // Limbs for A's numerator or denominator at |j| ≤ J: J factors below 2^bits each (p, or
  // q·(m+i) ≤ q·(m+J) < 2^64), then C's mantissa, W and a shift (the 32 spare limbs).
  size_t region() const {
    const uint64_t j = static_cast<uint64_t>(half_width());
    const uint64_t largest = q * (m + j);
    const unsigned bits = bit_length(p) > bit_length(largest) ? bit_length(p) : bit_length(largest);
    return static_cast<size_t>((j * bits + 63) / 64) + 32;
  }
  // Two regions + 16 for the exact path, 2 words a slot while the alias table is built.
  size_t scratch_limbs() const {
    const size_t exact = 2 * region() + 16;
    const size_t construction = 2 * static_cast<size_t>(slots());
    return exact > construction ? exact : construction;
  }

  // f̃(j)/f̃(j∓1) for the step to j = ±i (i ≥ 1): λ/(m+i) above the mode, (m−i+1)/λ below.
  double factor(bool negative, int64_t i) const {
    return negative ? static_cast<double>(static_cast<int64_t>(m) - i + 1) / lambda
                    : lambda / static_cast<double>(m + static_cast<uint64_t>(i));
  }

  // Calls visit(j, f̃(j)) for j = 0, then ±1, ±2, … on one side, while visit returns true and
  // j stays in the support (j ≥ −m).
  template <typename Visit>
  void walk_side(bool negative, Visit visit) const {
    double f = 1;
    for (int64_t i = 1;; ++i) {
      if (negative && i > static_cast<int64_t>(m)) return;
      f *= factor(negative, i);
      if (!visit(negative ? -i : i, f)) return;
    }
  }

  // max f̃ over each central block, and f̃ at c_hi + 1 and c_lo − 1, through visit(block, max)
  // with block = central_blocks for the upper tail's edge and central_blocks + 1 for the lower
  // (0 without a lower tail). Blocks are [c_lo + b·s, c_lo + (b+1)·s); j = 0 starts one, so each
  // side walks its own blocks, each reported once (a block partly below −m: its part above).
  template <typename Visit>
  void block_maxima(Visit visit) const {
    double edge[2] = {0, 0};
    for (int side = 0; side < 2; ++side) {
      const bool negative = side == 1;
      int64_t current_block = negative ? -1 : (0 - c_lo) >> log2_s;
      double current = negative ? 0 : 1;  // f̃(0) = 1, in the upper side's first block
      walk_side(negative, [&](int64_t j, double f) {
        if (j > c_hi || j < c_lo) {
          edge[side] = f;
          return false;
        }
        const int64_t block = (j - c_lo) >> log2_s;
        if (block != current_block) {
          if (current_block >= 0) visit(static_cast<uint64_t>(current_block), current);
          current_block = block;
          current = 0;
        }
        if (f > current) current = f;
        return true;
      });
      if (current_block >= 0) visit(static_cast<uint64_t>(current_block), current);
    }
    visit(central_blocks, edge[0]);
    visit(central_blocks + 1, lower_tail ? edge[1] : 0.0);
  }

  // W for a block whose f̃ is at most h (central: s·h; tails: 2·w_t·h), rounded up.
  double weight_value(uint64_t block, double h) const {
    const unsigned log2_width =
        block < central_blocks ? log2_s : log2_tail[block - central_blocks] + 1;
    return ceil(ldexp(h, static_cast<int>(log2_width) + 63) * (1 + 8 * envelope_gamma) / c_value);
  }

  Status make(Rational r_in) {
    FEDSTAT_ASSIGN_OR_RETURN(const Rational r, checked_poisson_lambda(r_in));
    p = r.num;
    q = r.den;
    m = r.floor();
    lambda = static_cast<double>(p) / static_cast<double>(q);
    // Blocks of width s ≈ √λ/8 (a power of two), at most 63 per side, reaching ~4√λ + 4 from
    // the mode (acceptance ≈ 0.95 or better), down to −m at most.
    const uint64_t root = integer_sqrt(m);
    log2_s = root / 8 <= 1 ? 0 : bit_length(root / 8) - 1;
    const uint64_t s = uint64_t{1} << log2_s;
    uint64_t half_blocks = (4 * root + 4 + s - 1) / s;
    if (half_blocks > kMaxHalfBlocks) half_blocks = kMaxHalfBlocks;
    uint64_t lower_blocks = (m + s - 1) / s;
    if (lower_blocks > half_blocks) lower_blocks = half_blocks;
    c_hi = static_cast<int64_t>(half_blocks * s) - 1;
    c_lo = -static_cast<int64_t>(lower_blocks * s);
    lower_tail = static_cast<uint64_t>(-c_lo) < m;
    central_blocks = half_blocks + lower_blocks;
    log2_slots = bit_length(central_blocks + 1);  // 2^b ≥ central_blocks + 2
    // Tails: j = c_hi + 1 + (K·w + r) and j = c_lo − 1 − (K·w + r), w a power of two at least
    // 2^⌊log2 √m⌋ and such that the first factor past the edge — the largest of them — has
    // w-th power ≤ 1/2; so f(edge ± (K·w + r)) ≤ f(edge)·2^−K.
    const unsigned wide = root == 0 ? 0 : bit_length(root) - 1;
    log2_tail[0] = halving_width(factor(false, c_hi + 2));
    log2_tail[1] = lower_tail ? halving_width(factor(true, -c_lo + 2)) : 0;
    for (unsigned& t : log2_tail) t = t > wide ? t : wide;
    // f̃ within the central blocks and at their edges: ≤ 2·(c + 1) + 1 roundings.
    const int64_t central_reach = (c_hi > -c_lo ? c_hi : -c_lo) + 2;
    envelope_gamma = rounding_bound(3.0 * static_cast<double>(central_reach) + 8);
    // C: Σ of the blocks' s·max f̃ (and the tails' 2·w_t·f̃(edge)), enlarged by 2^−20 so that
    // the weights W = ⌈(s·max f̃)·(1 + 8γ)·2^63/C⌉ sum to at most 2^63 (checked exactly).
    double h = 0;
    block_maxima([&](uint64_t block, double max_f) {
      const unsigned log2_width =
          block < central_blocks ? log2_s : log2_tail[block - central_blocks] + 1;
      h += ldexp(max_f, static_cast<int>(log2_width));  // exact products: no fused rounding
    });
    c_value = nextafter(h * (1 + 0x1p-20), INFINITY);
    for (int attempt = 0;; ++attempt) {
      if (attempt == 8) return internal_error("tabulated Poisson: block weights do not fit 2^63");
      uint64_t sum = 0;
      bool fits = true;
      uint64_t largest = 0;
      block_maxima([&](uint64_t block, double max_f) {
        const double wv = weight_value(block, max_f);
        if (!(wv < 0x1p63)) {
          fits = false;
          return;
        }
        const uint64_t w = static_cast<uint64_t>(wv);
        if (block >= central_blocks) tail_weight[block - central_blocks] = w;
        if (w > largest) {
          largest = w;
          mode_block = block;
        }
        if (sum > (uint64_t{1} << 63) - w) fits = false;
        sum += w;
      });
      if (fits) {
        slack = (uint64_t{1} << 63) - sum;
        break;
      }
      c_value = nextafter(c_value * (1 + 0x1p-20), INFINITY);
    }
    // The table: every j whose A may be ≥ 2^−62 — the central blocks, then each tail until
    // w_t entries in a row are below (A(j + w_t) ≤ A(j) there: f at least halves, 2^K doubles).
    j_max = table_reach(false);
    j_min = -table_reach(true);
    if (j_max >= kMaxHalfWidth || -j_min >= kMaxHalfWidth) {
      return out_of_range("tabulated Poisson: the table would exceed 2^26 entries per side");
    }
    return Status();
  }

  // Ã(j) for j > c_hi (upper) or j < c_lo (lower) from f̃(j).
  double tail_acceptance(bool negative, int64_t j, double f) const {
    const int side = negative ? 1 : 0;
    const int64_t beyond = negative ? c_lo - 1 - j : j - c_hi - 1;  // K·w + r
    const int64_t k = beyond >> log2_tail[side];
    const double scale = ldexp(1.0 / static_cast<double>(tail_weight[side]),
                               static_cast<int>(k + 1 + log2_tail[side]) + 63);
    return f * scale / c_value;
  }

  int64_t table_reach(bool negative) const {
    const int side = negative ? 1 : 0;
    const int64_t edge = negative ? c_lo : c_hi;
    int64_t reach = negative ? -c_lo : c_hi;
    if (negative && !lower_tail) return static_cast<int64_t>(m) < reach ? m : reach;
    int64_t below = 0;
    const int64_t needed = int64_t{1} << log2_tail[side];
    walk_side(negative, [&](int64_t j, double f) {
      const int64_t i = negative ? -j : j;
      reach = i;
      if (i >= kMaxHalfWidth) return false;
      if (negative ? j >= edge : j <= edge) return true;
      below = tail_acceptance(negative, j, f) < kNegligible ? below + 1 : 0;
      return below < needed;
    });
    return reach;
  }
};

Result<TabulatedPoissonSampler::Sizes> TabulatedPoissonSampler::sizes_for(Rational lambda) {
  Plan plan;
  FEDSTAT_RETURN_IF_ERROR(plan.make(lambda));
  Sizes sizes;
  sizes.table_entries = static_cast<size_t>(plan.slots() + (plan.j_max - plan.j_min + 1));
  sizes.scratch_limbs = plan.scratch_limbs();
  return sizes;
}

Status TabulatedPoissonSampler::init(Rational lambda, Span<PoissonThreshold> table,
                                     Span<uint64_t> scratch) {
  // A refused λ or a short buffer changes nothing: an earlier successful init() stays in force.
  Plan plan;
  FEDSTAT_RETURN_IF_ERROR(plan.make(lambda));
  const size_t slots = static_cast<size_t>(plan.slots());
  const size_t entries = static_cast<size_t>(plan.j_max - plan.j_min + 1);
  if (table.size() < slots + entries || scratch.size() < plan.scratch_limbs()) {
    return resource_exhausted("tabulated Poisson: table or scratch smaller than sizes_for()");
  }
  ready_ = false;
  p_ = plan.p;
  q_ = plan.q;
  m_ = plan.m;
  log2_s_ = plan.log2_s;
  c_lo_ = plan.c_lo;
  c_hi_ = plan.c_hi;
  central_blocks_ = plan.central_blocks;
  log2_slots_ = plan.log2_slots;
  log2_tail_[0] = plan.log2_tail[0];
  log2_tail_[1] = plan.log2_tail[1];
  j_min_ = plan.j_min;
  j_max_ = plan.j_max;
  alias_ = table.first(slots);
  table_ = table.subspan(slots, entries);
  scratch_ = scratch;
  fallbacks_ = 0;
  int exponent = 0;
  const double mantissa = frexp(plan.c_value, &exponent);  // C = mantissa · 2^exponent
  c_mantissa_ = static_cast<uint64_t>(ldexp(mantissa, 53));
  c_exponent_ = exponent - 53;
  while ((c_mantissa_ & 1) == 0) {
    c_mantissa_ >>= 1;
    ++c_exponent_;
  }

  // The block weights (the slack on the largest), then Vose's alias table in exact integers:
  // slot i keeps block i with probability θ_i/Q (Q = 2^(63−b)), else takes alias_i.
  uint64_t* weight = scratch.data();
  uint64_t* stack = scratch.data() + slots;
  for (size_t i = 0; i < slots; ++i) weight[i] = 0;
  plan.block_maxima([&](uint64_t block, double max_f) {
    weight[block] = static_cast<uint64_t>(plan.weight_value(block, max_f));
  });
  weight[plan.mode_block] += plan.slack;
  const unsigned theta_bits = 63 - log2_slots_;
  const uint64_t quantum = uint64_t{1} << theta_bits;
  size_t small = 0, large = slots;  // small indices grow from the front, large from the back
  for (size_t i = 0; i < slots; ++i) {
    if (weight[i] < quantum) {
      stack[small++] = i;
    } else {
      stack[--large] = i;
    }
  }
  // residual weights live in `weight`; each finished slot's entry goes straight into alias_.
  for (size_t i = 0; i < slots; ++i) alias_[i] = PoissonThreshold{uint64_t{i} << theta_bits};
  while (small > 0 && large < slots) {
    const size_t light = static_cast<size_t>(stack[--small]);
    const size_t heavy = static_cast<size_t>(stack[large]);
    const uint64_t theta = weight[light];  // < quantum
    alias_[light] = PoissonThreshold{(theta == 0 ? 0 : reverse_bits(theta) >> (log2_slots_ + 1)) |
                                     (uint64_t{heavy} << theta_bits)};
    weight[heavy] -= quantum - theta;
    if (weight[heavy] < quantum) {
      ++large;
      stack[small++] = heavy;
    }
  }
  if (small > 0) return internal_error("tabulated Poisson: block weights do not sum to 2^63");
  // Slots left in `large` hold exactly one quantum: θ = 0 with alias = itself (set above).
  // Check: the proposal probabilities the table realises are exactly the weights.
  for (size_t i = 0; i < slots; ++i) weight[i] = 0;
  plan.block_maxima([&](uint64_t block, double max_f) {
    weight[block] = static_cast<uint64_t>(plan.weight_value(block, max_f));
  });
  weight[plan.mode_block] += plan.slack;
  for (size_t b = 0; b < slots; ++b) {
    if (block_weight(b) != weight[b]) {
      return internal_error("tabulated Poisson: the alias table does not realise the weights");
    }
  }

  // Certified rounding of Ã(j): f̃ is a product of at most J factors, each one rounding after
  // λ̃ (itself one), the product one per step; then W → double, the scale, ·f̃ and /C: at most
  // n = 3J + 8 roundings of relative size ≤ 2^−53.
  const double gamma = rounding_bound(3.0 * static_cast<double>(plan.half_width()) + 8);
  const uint64_t margin = static_cast<uint64_t>(ceil(ldexp(gamma, 64))) + 2;
  auto write = [&](int64_t j, double f) {
    double accept;
    if (j > c_hi_ || j < c_lo_) {
      accept = plan.tail_acceptance(j < c_lo_, j, f);
    } else {
      const uint64_t w = weight[static_cast<uint64_t>(j - c_lo_) >> log2_s_];
      accept = w == 0 ? 0
                      : f * (ldexp(1.0, static_cast<int>(log2_s_) + 63) / static_cast<double>(w)) /
                            plan.c_value;
    }
    const double scaled = ldexp(accept, 64);
    const uint64_t t = scaled >= 0x1p64 ? UINT64_MAX : static_cast<uint64_t>(scaled);
    const uint64_t low = t > margin ? t - margin : 0;
    const uint64_t high = t > UINT64_MAX - margin ? UINT64_MAX : t + margin;
    table_[static_cast<size_t>(j - j_min_)] = known_prefix(low, high);
  };
  write(0, 1.0);
  plan.walk_side(false, [&](int64_t j, double f) {
    if (j > j_max_) return false;
    write(j, f);
    return true;
  });
  plan.walk_side(true, [&](int64_t j, double f) {
    if (j < j_min_) return false;
    write(j, f);
    return true;
  });
  ready_ = true;
  return Status();
}

// W_b realised by the alias table: θ_b (if b keeps) plus Q − θ_i of every slot i aliased to b.
uint64_t TabulatedPoissonSampler::block_weight(uint64_t block) const {
  const unsigned theta_bits = 63 - log2_slots_;
  const uint64_t quantum = uint64_t{1} << theta_bits;
  const uint64_t theta_mask = quantum - 1;
  uint64_t total = 0;
  for (size_t i = 0; i < alias_.size(); ++i) {
    const uint64_t entry = alias_[i].bits;
    const uint64_t theta_reversed = entry & theta_mask;
    const uint64_t theta =
        theta_reversed == 0 ? 0 : reverse_bits(theta_reversed) >> (log2_slots_ + 1);
    const uint64_t alias = entry >> theta_bits;
    if (i == block) total += theta;
    if (alias == block) total += quantum - theta;
  }
  return total;
}

}  // namespace noise
}  // namespace fedstat
