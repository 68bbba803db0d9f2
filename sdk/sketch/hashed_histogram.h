/// @file
/// The hashed-domain histogram of the distributed-DP data-shift task (`data_shift` with trust
/// `dist`, docs/data_shift_dp.md): a device's item counts folded into B public buckets, the
/// proportional bound on its events, and one Pólya share of discrete Laplace noise per bucket.
///
/// Buckets: bucket(id) = ⌊SipHash_k(id)·B / 2^64⌋ (multiply-shift of the 64-bit hash, so every
/// bucket gets ⌊2^64/B⌋ or ⌈2^64/B⌉ hashes), with k the first 16 bytes of the task seed — the same
/// public key the data-shift sketch hashes items with (sketch/shift_sketch.h), never a secret.
/// The server folds its reference with the same function, so the estimate needs no item ids: the
/// total variation distance of the two bucketed distributions is at most the true one (buckets
/// only merge mass), and its shortfall is the collisions' cancellation, which falls as B grows.
///
/// Privacy (the proof is in docs/data_shift_dp.md): the vector a device sends is its bucket counts
/// plus one share X − Y, X, Y ~ NB(1/s, e^{−1/T}) in every bucket (noise/polya.h). s shares sum
/// to a discrete Laplace of scale T, so with at least s honest devices' shares in a released sum
/// every bucket of the sum carries at least one full discrete Laplace(T). One event moves one
/// bucket by 1 (L1 sensitivity 1): ε = 1/T per event (added or removed; an event changed from one
/// item to another is two). A device that bounds its events to m (add_bucket_counts' max_events)
/// holds at most m in L1, so any two of its histograms are at most 2m apart (its m events moved
/// from one bucket to another): ε = 2m/T per device — the server knows the device took part, so
/// the charge covers what it held, not whether it held anything (a model update's 2c, KL's
/// substitution); the bound's draws are the device's own coins, and every output of it holds
/// exactly m events, so 2m covers any two inputs and any two coin outcomes. The total is not sent;
/// the server computes it from the noised buckets (post-processing).
///
/// @memory none beyond the caller's bucket vector (B words) and a 16-byte hasher.
/// @paper 001 §4.7 (distributed noise under secure aggregation); Goryczka & Xiong 2015 (Pólya
/// shares of the discrete Laplace).
#ifndef FEDSTAT_SDK_SKETCH_HASHED_HISTOGRAM_H_
#define FEDSTAT_SDK_SKETCH_HASHED_HISTOGRAM_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/item_hash.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/result.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/base/span.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace sketch {

/// The most buckets a hashed histogram takes (2^22 words: 16 MiB at 32 bits on the host).
constexpr uint32_t kMaxHashedBuckets = uint32_t{1} << 22;

/// The public map from item ids to B buckets of one task.
class BucketMap {
 public:
  /// B buckets under the task seed; `buckets` must be in [1, kMaxHashedBuckets] (init checks).
  BucketMap(const Seed256& seed, uint32_t buckets)
      : hasher_(ItemHasher::from_key_bytes(seed.bytes)), buckets_(buckets) {}
  /// OK when 1 ≤ buckets ≤ kMaxHashedBuckets.
  /// @errors kInvalidArgument: buckets is 0 or above kMaxHashedBuckets.
  Status check() const;
  /// B, the number of buckets.
  uint32_t buckets() const { return buckets_; }
  /// The bucket of `id`, in [0, buckets).
  uint32_t bucket_of(uint64_t id) const;

 private:
  ItemHasher hasher_;
  uint32_t buckets_;
};

/// Adds every count of `local` to its bucket of `out` (out.size() == map.buckets()), modulo 2^64.
/// With max_events m > 0 and N > m events held, only m events are added: m draws with replacement,
/// each an event uniform among the N (from `noise`, the device's CSPRNG), so every output holds
/// exactly m events (two outputs of one device are at most 2m apart in L1: the user-level
/// sensitivity) and item i's expected share is m·c_i/N — an unbiased sample (a deterministic
/// ⌊c·m/N⌋ dropped every item below N/m and cost 0.065–0.093 of D_TV without noise,
/// docs/data_shift_dp.md). Each draw scans the whole table, and the m draws are made whenever
/// m > 0, also when N ≤ m (then discarded: every event is added): m·capacity steps and m uniform
/// draws whatever the counts, so neither N nor whether N > m shows in the time (selection
/// sampling, the first version, took N draws). `noise` is not read when m = 0.
/// @errors kInvalidArgument: the map refused (check), or out.size() != buckets (`out` untouched).
/// The random source's error (e.g. kUnavailable): `out` may then hold part of the counts.
Status add_bucket_counts(const BucketMap& map, const histogram::SparseHistogram& local,
                         uint32_t max_events, RandomBits& noise, Span<uint64_t> out);

/// The ε of one device's vector when at least `honest_shares` shares (this device's included) are
/// in a released sum: Δ·(1/T + ln(1/r)), Δ = 2·max_events (1 when 0: item level; any two
/// histograms of a device bounded to m events are up to 2m apart in L1), T = noise_scale,
/// r = min(1, honest_shares/shares). The honest shares sum to NB(r, ρ) − NB(r, ρ) per bucket,
/// ρ = e^{−1/T}, whose pmf ratio P(j)/P(j+1) = (j+1)/((j+r)ρ) is at most 1/(rρ) for r ≤ 1 (1/ρ
/// for r ≥ 1); a mixture or a convolution never exceeds its terms' worst ratio, and Δ events are
/// group privacy (docs/data_shift_dp.md). Pure DP: no δ. ln is math::portable_log, so a device
/// and the server compute the same double. Preconditions (the caller checks them): T finite and
/// > 0, shares ≥ 1, honest_shares ≥ 1.
double hashed_histogram_epsilon(uint32_t max_events, double noise_scale, uint32_t shares,
                                uint32_t honest_shares);

/// Adds one Pólya share of the discrete Laplace of scale `scale` split `shares` ways to every
/// word of `out` (two's complement, modulo 2^64).
/// @errors noise::polya_share's (kInvalidArgument for scale 0 or shares 0, kOutOfRange for a
/// scale above noise::kMaxPolyaScale) and the random source's; on error `out` holds the shares of
/// the words before the failing one.
Status add_polya_shares(noise::Rational scale, uint32_t shares, RandomBits& noise,
                        Span<uint64_t> out);

}  // namespace sketch
}  // namespace fedstat

#endif  // FEDSTAT_SDK_SKETCH_HASHED_HISTOGRAM_H_
