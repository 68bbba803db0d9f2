#include "sdk/quantise/rotation.h"

#include <math.h>

#include "sdk/base/random_bits.h"

namespace fedstat {
namespace quantise {
namespace {

bool is_power_of_two(size_t n) {
  return n != 0 && (n & (n - 1)) == 0;
}

// values[i] ← ±values[i] with the signs of (seed, stream): bit i of the stream, 1 = negate.
template <typename Real>
Status apply_signs(Span<Real> values, const Seed256& seed, uint64_t stream) {
  SeededStream source(seed, stream);
  RandomBits bits(source);
  for (Real& v : values) {
    FEDSTAT_ASSIGN_OR_RETURN(const bool negate, bits.bit());
    if (negate) v = -v;
  }
  return Status();
}

template <typename Real>
void scale(Span<Real> values, Real factor) {
  for (Real& v : values) v *= factor;
}

template <typename Real>
Status check_length(Span<Real> values) {
  if (!is_power_of_two(values.size())) {
    return invalid_argument("Walsh-Hadamard needs a power-of-two length: pad with zeros");
  }
  return Status();
}

template <typename Real>
Status fwht(Span<Real> values) {
  FEDSTAT_RETURN_IF_ERROR(check_length(values));
  for (size_t half = 1; half < values.size(); half <<= 1) {
    for (size_t start = 0; start < values.size(); start += 2 * half) {
      for (size_t i = start; i < start + half; ++i) {
        const Real a = values[i], b = values[i + half];
        values[i] = a + b;
        values[i + half] = a - b;
      }
    }
  }
  return Status();
}

template <typename Real>
Status rotate_impl(Span<Real> values, const Seed256& seed, uint64_t stream) {
  FEDSTAT_RETURN_IF_ERROR(check_length(values));  // before the signs: a refusal changes nothing
  FEDSTAT_RETURN_IF_ERROR(apply_signs(values, seed, stream));
  FEDSTAT_RETURN_IF_ERROR(fwht(values));
  scale(values, static_cast<Real>(1) / static_cast<Real>(sqrt(static_cast<double>(values.size()))));
  return Status();
}

template <typename Real>
Status unrotate_impl(Span<Real> values, const Seed256& seed, uint64_t stream) {
  FEDSTAT_RETURN_IF_ERROR(fwht(values));
  scale(values, static_cast<Real>(1) / static_cast<Real>(sqrt(static_cast<double>(values.size()))));
  return apply_signs(values, seed, stream);
}

}  // namespace

size_t padded_dimension(size_t d) {
  constexpr size_t kLargest = ~(~size_t{0} >> 1);  // the largest power of two in a size_t
  if (d > kLargest) return kSizeOverflow;          // doubling would wrap to 0 and never end
  size_t n = 1;
  while (n < d) n <<= 1;
  return n;
}

Status walsh_hadamard(Span<float> values) {
  return fwht(values);
}
Status walsh_hadamard(Span<double> values) {
  return fwht(values);
}
Status rotate(Span<float> v, const Seed256& seed, uint64_t stream) {
  return rotate_impl(v, seed, stream);
}
Status unrotate(Span<float> v, const Seed256& seed, uint64_t stream) {
  return unrotate_impl(v, seed, stream);
}
Status rotate(Span<double> v, const Seed256& seed, uint64_t stream) {
  return rotate_impl(v, seed, stream);
}
Status unrotate(Span<double> v, const Seed256& seed, uint64_t stream) {
  return unrotate_impl(v, seed, stream);
}

}  // namespace quantise
}  // namespace fedstat
