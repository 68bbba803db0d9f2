#include "sdk/noise/rational.h"

namespace fedstat {
namespace noise {

uint64_t gcd(uint64_t a, uint64_t b) {
  while (b != 0) {
    const uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

Rational reduced(Rational r) {
  const uint64_t g = gcd(r.num, r.den);
  return g <= 1 ? r : Rational{r.num / g, r.den / g};
}

uint64_t integer_sqrt(uint64_t n) {
  uint64_t root = 0;
  uint64_t bit = uint64_t{1} << 62;
  while (bit > n) bit >>= 2;
  while (bit != 0) {
    if (n >= root + bit) {
      n -= root + bit;
      root = (root >> 1) + bit;
    } else {
      root >>= 1;
    }
    bit >>= 2;
  }
  return root;
}

namespace {
// Reads decimal digits into `value`; false on overflow or no digits. `scale` counts digits read.
bool read_digits(const char*& c, uint64_t& value, uint64_t* scale) {
  const char* start = c;
  for (; *c >= '0' && *c <= '9'; ++c) {
    const uint64_t digit = static_cast<uint64_t>(*c - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
    if (scale != nullptr) {
      if (*scale > UINT64_MAX / 10) return false;
      *scale *= 10;
    }
  }
  return c != start;
}
}  // namespace

Result<Rational> rational_at_least(double x) {
  if (!(x >= 0)) return invalid_argument("rational_at_least: x must be >= 0");
  if (!(x < 2147483648.0)) return out_of_range("rational_at_least: x must be below 2^31");
  uint64_t q = 1000000;
  while (q > 1 && x * static_cast<double>(q) >= 4294967295.0) q /= 10;
  // ⌈x·q⌉ of the double x·q (below 2^32, where every integer is a double): the truncation, plus
  // one if a fraction was cut (no libm's ceil: the device's core links no libm for it).
  const double scaled = x * static_cast<double>(q);
  uint64_t p = static_cast<uint64_t>(scaled);
  if (static_cast<double>(p) < scaled) ++p;
  // x·q in double can only be exact or too low by rounding: step up until p/q ≥ x.
  while (static_cast<double>(p) / static_cast<double>(q) < x) ++p;
  return reduced(Rational{p, q});
}

Result<Rational> parse_rational(const char* text) {
  if (text == nullptr || *text == '\0') return invalid_argument("empty number");
  const char* c = text;
  Rational r;
  if (!read_digits(c, r.num, nullptr)) {
    return invalid_argument("a number must be digits, \"p/q\" or a decimal like 0.25");
  }
  if (*c == '/') {
    ++c;
    r.den = 0;
    if (!read_digits(c, r.den, nullptr) || r.den == 0) {
      return invalid_argument("\"p/q\" needs a non-zero integer q below 2^64");
    }
  } else if (*c == '.') {
    ++c;
    uint64_t fraction = 0, scale = 1;
    if (!read_digits(c, fraction, &scale)) return invalid_argument("a decimal point needs digits");
    const Rational whole = r;
    if (whole.num > (UINT64_MAX - fraction) / scale) {
      return out_of_range("decimal has too many digits for an exact 64-bit fraction");
    }
    r = Rational{whole.num * scale + fraction, scale};
  }
  if (*c != '\0') return invalid_argument("unexpected characters after the number");
  return reduced(r);
}

}  // namespace noise
}  // namespace fedstat
