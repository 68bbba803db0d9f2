// Randomised Walsh–Hadamard rotation: R = (1/√D)·H·S, with H the D×D Walsh–Hadamard matrix
// (D a power of two) and S a diagonal of random signs drawn from a PUBLIC task seed, so every
// client and the host apply the same R. R is orthonormal (H·H = D·I), so it preserves L2 norms
// and therefore sensitivities; R⁻¹ = S·(1/√D)·H. In place, O(D log D) additions, float
// arithmetic (the inverse is exact to float rounding, ~1e-6 relative).
//
// Memory: none beyond the caller's vector. Paper: 002 §4 "Random rotation" (Kairouz, Liu &
// Steinke 2021, the distributed discrete Gaussian).
#ifndef FEDSTAT_SDK_QUANTISE_ROTATION_H_
#define FEDSTAT_SDK_QUANTISE_ROTATION_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/checked_size.h"
#include "sdk/base/result.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/base/span.h"

namespace fedstat {
namespace quantise {

// The smallest power of two ≥ d (d ≥ 1); kSizeOverflow (sdk/base/checked_size.h) when there is
// none in size_t.
size_t padded_dimension(size_t d);

// Unnormalised fast Walsh–Hadamard transform; values.size() must be a power of two.
Status walsh_hadamard(Span<float> values);
Status walsh_hadamard(Span<double> values);
// values ← R·values and values ← R⁻¹·values, R from (seed, stream). Size: a power of two.
// Devices rotate floats; the host inverts sums in double (a sum of many clients needs it).
Status rotate(Span<float> values, const Seed256& seed, uint64_t stream);
Status unrotate(Span<float> values, const Seed256& seed, uint64_t stream);
Status rotate(Span<double> values, const Seed256& seed, uint64_t stream);
Status unrotate(Span<double> values, const Seed256& seed, uint64_t stream);

}  // namespace quantise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_QUANTISE_ROTATION_H_
