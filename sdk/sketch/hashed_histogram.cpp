// The hashed-domain histogram of the DIST data-shift task (hashed_histogram.h).
#include "sdk/sketch/hashed_histogram.h"

#include "sdk/base/portable_math.h"
#include "sdk/noise/polya.h"

namespace fedstat {
namespace sketch {
namespace {

// High 64 bits of a·b without 128-bit types (Cortex-M has none).
uint64_t mul_high(uint64_t a, uint64_t b) {
  const uint64_t a_lo = a & 0xffffffffu, a_hi = a >> 32;
  const uint64_t b_lo = b & 0xffffffffu, b_hi = b >> 32;
  const uint64_t lo_lo = a_lo * b_lo;
  const uint64_t hi_lo = a_hi * b_lo;
  const uint64_t lo_hi = a_lo * b_hi;
  const uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xffffffffu) + lo_hi;
  return a_hi * b_hi + (hi_lo >> 32) + (cross >> 32);
}

}  // namespace

Status BucketMap::check() const {
  if (buckets_ == 0 || buckets_ > kMaxHashedBuckets) {
    return invalid_argument("hashed histogram: buckets must be in [1, 2^22]");
  }
  return Status();
}

uint32_t BucketMap::bucket_of(uint64_t id) const {
  return static_cast<uint32_t>(mul_high(hasher_.hash_id(id), buckets_));
}

Status add_bucket_counts(const BucketMap& map, const histogram::SparseHistogram& local,
                         uint32_t max_events, RandomBits& noise, Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(map.check());
  if (out.size() != map.buckets()) {
    return invalid_argument("hashed histogram: the vector must hold one word per bucket");
  }
  const Span<const histogram::SparseEntry> slots = local.slots();
  uint64_t held = 0;
  for (size_t i = 0; i < slots.size(); ++i) held += slots[i].count;
  const bool bounded = max_events > 0 && held > max_events;
  if (!bounded) {
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].count != 0) out[map.bucket_of(slots[i].id)] += slots[i].count;
    }
  }
  if (max_events == 0) return Status();
  // m draws with replacement, each one event uniform among the N: its slot found by a scan of the
  // whole table (a fixed number of steps, whatever the counts). Done whether or not the device
  // holds more than m events, so the time does not tell the server which.
  for (uint32_t d = 0; d < max_events; ++d) {
    Result<uint64_t> draw = noise.uniform_below(held > 0 ? held : 1);
    FEDSTAT_RETURN_IF_ERROR(draw.status());
    uint64_t remaining = draw.value();
    size_t chosen = 0;
    bool found = false;
    for (size_t i = 0; i < slots.size(); ++i) {
      const bool here = !found && remaining < slots[i].count;
      chosen = here ? i : chosen;
      found = found || here;
      remaining -= found ? 0 : slots[i].count;
    }
    if (bounded && found) out[map.bucket_of(slots[chosen].id)] += 1;
  }
  return Status();
}

double hashed_histogram_epsilon(uint32_t max_events, double noise_scale, uint32_t shares,
                                uint32_t honest_shares) {
  // Δ: one event added or removed moves one bucket by 1; a device bounded to m events may hold
  // any m of them, so two of its histograms are up to 2m apart (m events leave one bucket and
  // enter another).
  const double events = max_events == 0 ? 1.0 : 2.0 * static_cast<double>(max_events);
  // r = honest/shares < 1: ln(1/r) = ln(shares/honest); r ≥ 1 adds nothing.
  const double missing = honest_shares < shares
                             ? math::portable_log(static_cast<double>(shares) / honest_shares)
                             : 0.0;
  // Δ/T + Δ·ln(1/r): Δ/T divided, not Δ·(1/T), so that T = Δ/ε charges ε exactly.
  return events / noise_scale + events * missing;
}

Status add_polya_shares(noise::Rational scale, uint32_t shares, RandomBits& noise,
                        Span<uint64_t> out) {
  FEDSTAT_RETURN_IF_ERROR(noise::check_polya_params(scale, shares));
  for (size_t b = 0; b < out.size(); ++b) {
    Result<int64_t> share = noise::polya_share(noise, scale, shares);
    FEDSTAT_RETURN_IF_ERROR(share.status());
    out[b] += static_cast<uint64_t>(share.value());
  }
  return Status();
}

}  // namespace sketch
}  // namespace fedstat
