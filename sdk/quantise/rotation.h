/// @file
/// Randomised Walsh–Hadamard rotation: R = (1/√D)·H·S, with H the D×D Walsh–Hadamard matrix
/// (D a power of two) and S a diagonal of random signs drawn from a PUBLIC task seed, so every
/// client and the host apply the same R. R is orthonormal (H·H = D·I), so it preserves L2 norms
/// and therefore sensitivities; R⁻¹ = S·(1/√D)·H. In place, O(D log D) additions, float
/// arithmetic (the inverse is exact to float rounding, ~1e-6 relative).
///
/// @memory none beyond the caller's vector (and a SeededStream on the stack while signing).
/// @paper 002 §4 "Random rotation" (Kairouz, Liu & Steinke 2021, the distributed discrete
/// Gaussian).
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

/// The smallest power of two ≥ d (1 for d = 0); kSizeOverflow (sdk/base/checked_size.h) when
/// there is none in size_t.
size_t padded_dimension(size_t d);

/// Unnormalised fast Walsh–Hadamard transform (values ← H·values) in place, in float.
/// @errors kInvalidArgument: values.size() is not a power of two (values unchanged).
Status walsh_hadamard(Span<float> values);
/// Unnormalised fast Walsh–Hadamard transform (values ← H·values) in place, in double.
/// @errors kInvalidArgument: values.size() is not a power of two (values unchanged).
Status walsh_hadamard(Span<double> values);
/// values ← R·values, R from (seed, stream), in float (devices rotate floats). Size: a power of
/// two.
/// @errors kInvalidArgument: values.size() is not a power of two (values unchanged).
/// kInternal: the seeded AES keystream failed inside mbedTLS.
Status rotate(Span<float> values, const Seed256& seed, uint64_t stream);
/// values ← R⁻¹·values, R from (seed, stream), in float. Size: a power of two.
/// @errors kInvalidArgument: values.size() is not a power of two (values unchanged).
/// kInternal: the seeded AES keystream failed inside mbedTLS.
Status unrotate(Span<float> values, const Seed256& seed, uint64_t stream);
/// values ← R·values, R from (seed, stream), in double. Size: a power of two.
/// @errors kInvalidArgument: values.size() is not a power of two (values unchanged).
/// kInternal: the seeded AES keystream failed inside mbedTLS.
Status rotate(Span<double> values, const Seed256& seed, uint64_t stream);
/// values ← R⁻¹·values, R from (seed, stream), in double (the host inverts sums of many
/// clients in double). Size: a power of two.
/// @errors kInvalidArgument: values.size() is not a power of two (values unchanged).
/// kInternal: the seeded AES keystream failed inside mbedTLS.
Status unrotate(Span<double> values, const Seed256& seed, uint64_t stream);

}  // namespace quantise
}  // namespace fedstat

#endif  // FEDSTAT_SDK_QUANTISE_ROTATION_H_
