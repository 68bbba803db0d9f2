// The exact samplers (sdk/noise) as functions returning numpy int64 arrays. With a seed S the
// draws come from the tools' seeded stream (seed_from_u64(S), stream id `stream`), so
// skellam(L, n, seed=S) prints the same numbers as `fedstat-noise skellam --lambda L --n n
// --seed S` (and the same for every distribution and --method); without a seed they come from
// the platform CSPRNG, as a release's noise must. At most 10^8 samples per call (fedstat-noise's
// bound). The draw loops are the SDK's (add_noise over zeros, sample_many); the GIL is released
// while drawing. rational_at_least is the SDK's way from an accountant's double to a sampler's
// exact parameter (never below it).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "host_server/estimate/host_common.h"
#include "python/src/bindings.h"
#include "python/src/conversions.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/poisson.h"
#include "sdk/noise/tabulated_poisson.h"

namespace fedstat {
namespace python {

namespace {

using noise::NoiseKind;
using noise::NoiseSpec;

constexpr uint64_t kMaxSamples = 100000000;

// The bits a draw uses: the CSPRNG, or stream `stream` of a seed's streams.
class Draws {
 public:
  Draws(OptionalIntArg seed, IntArg stream, IntArg size)
      : noise_(noise_bits(seed, "seed")),
        stream_(to_seed(stream, "stream")),
        count_(static_cast<size_t>(to_whole_number(size, "size", 0, kMaxSamples))) {
    if (seed.is_none() && stream_ != 0) {
      throw py::value_error("stream selects one of a seed's streams: give a seed too");
    }
  }
  RandomBits& bits() { return noise_.stream(stream_); }
  size_t count() const { return count_; }

 private:
  host::NoiseBits noise_;
  uint64_t stream_;
  size_t count_;
};

void check_method(const std::string& method) {
  if (method != "tabulated" && method != "integer") {
    throw py::value_error("method must be 'tabulated' or 'integer', not '" + method + "'");
  }
}

// n draws of a NoiseSampler distribution: add_noise over zeros (the SDK's own loop).
py::array_t<int64_t> draw_spec(const NoiseSpec& spec, const std::string& name, Draws& draws) {
  noise::NoiseSampler sampler;
  host::check(sampler.init(spec), name);
  std::vector<int64_t> out(draws.count(), 0);
  {
    py::gil_scoped_release unlocked;
    host::check(noise::add_noise(Span<const int64_t>(out.data(), out.size()),
                                 Span<int64_t>(out.data(), out.size()), sampler, draws.bits()),
                name);
  }
  return to_array(out);
}

py::array_t<int64_t> skellam(RationalArg lam, IntArg size, OptionalIntArg seed, IntArg stream,
                             const std::string& method) {
  check_method(method);
  const noise::Rational lambda = to_rational(lam, "lam");
  Draws draws(seed, stream, size);
  if (method == "integer")
    return draw_spec(NoiseSpec{NoiseKind::kSkellam, lambda, 1}, "skellam", draws);
  // fedstat-noise's tabulated Skellam: the difference of two draws of the λ table.
  constexpr auto kMethod = noise::TabulatedSkellamSampler::Method::kDifference;
  const auto sizes =
      host::value_or_throw(noise::TabulatedSkellamSampler::sizes_for(lambda, kMethod), "skellam");
  std::vector<noise::PoissonThreshold> table(sizes.table_entries);
  std::vector<uint64_t> scratch(sizes.scratch_limbs);
  noise::TabulatedSkellamSampler sampler;
  host::check(sampler.init(lambda, Span<noise::PoissonThreshold>(table.data(), table.size()),
                           Span<uint64_t>(scratch.data(), scratch.size()), kMethod),
              "skellam");
  std::vector<int64_t> out(draws.count(), 0);
  {
    py::gil_scoped_release unlocked;
    host::check(sampler.sample_many(draws.bits(), Span<int64_t>(out.data(), out.size())),
                "skellam");
  }
  return to_array(out);
}

py::array_t<int64_t> poisson(RationalArg lam, IntArg size, OptionalIntArg seed, IntArg stream,
                             const std::string& method) {
  check_method(method);
  const noise::Rational lambda = to_rational(lam, "lam");
  Draws draws(seed, stream, size);
  std::vector<uint64_t> out(draws.count(), 0);
  if (method == "integer") {
    noise::PoissonSampler sampler;
    host::check(sampler.init(lambda), "poisson");
    py::gil_scoped_release unlocked;
    for (uint64_t& value : out)
      value = host::value_or_throw(sampler.sample(draws.bits()), "poisson");
  } else {
    const auto sizes =
        host::value_or_throw(noise::TabulatedPoissonSampler::sizes_for(lambda), "poisson");
    std::vector<noise::PoissonThreshold> table(sizes.table_entries);
    std::vector<uint64_t> scratch(sizes.scratch_limbs);
    noise::TabulatedPoissonSampler sampler;
    host::check(sampler.init(lambda, Span<noise::PoissonThreshold>(table.data(), table.size()),
                             Span<uint64_t>(scratch.data(), scratch.size())),
                "poisson");
    py::gil_scoped_release unlocked;
    host::check(sampler.sample_many(draws.bits(), Span<uint64_t>(out.data(), out.size())),
                "poisson");
  }
  // λ ≤ 2^31, so every draw fits int64 with room to spare (a draw beyond 2^63 has probability 0
  // to machine precision and would need ~2^62 proposals).
  return to_array(std::vector<int64_t>(out.begin(), out.end()));
}

}  // namespace

void bind_noise(py::module_& m) {
  m.def(
      "rational_at_least",
      [](double x) -> FractionResult {
        const noise::Rational r =
            host::value_or_throw(noise::rational_at_least(x), "rational_at_least");
        return py::module_::import("fractions").attr("Fraction")(r.num, r.den);
      },
      py::arg("x"),
      "The SDK's sampler parameter for an accountant's double: the smallest p/q >= x with q a "
      "power of ten <= 10^6 (a Fraction), so noise is never rounded below what was calibrated.");
  const char* seed_doc =
      " With seed=S (an int in [0, 2^64 - 1]) the draws are those of fedstat-noise --seed S"
      " (stream 0; `stream` picks another); seed=None draws from the platform CSPRNG.";
  m.def("skellam", &skellam, py::arg("lam"), py::arg("size"), py::arg("seed") = py::none(),
        py::arg("stream") = 0, py::arg("method") = "tabulated",
        (std::string("Exact Skellam Sk(lam) = Poisson(lam) - Poisson(lam) samples (variance "
                     "2*lam) as an int64 array. lam: int, Fraction, str ('7/3') or float (its "
                     "decimal), 0 < lam <= 2^31. method: 'tabulated' (fast) or 'integer' (small "
                     "memory); both exact, different streams.") +
         seed_doc)
            .c_str());
  m.def("poisson", &poisson, py::arg("lam"), py::arg("size"), py::arg("seed") = py::none(),
        py::arg("stream") = 0, py::arg("method") = "tabulated",
        (std::string("Exact Poisson(lam) samples as an int64 array; lam and method as skellam.") +
         seed_doc)
            .c_str());
  m.def(
      "discrete_laplace",
      [](RationalArg scale, IntArg size, OptionalIntArg seed, IntArg stream) {
        Draws draws(seed, stream, size);
        return draw_spec(NoiseSpec{NoiseKind::kDiscreteLaplace, to_rational(scale, "scale"), 1},
                         "discrete_laplace", draws);
      },
      py::arg("scale"), py::arg("size"), py::arg("seed") = py::none(), py::arg("stream") = 0,
      (std::string("Exact discrete Laplace samples, P(k) proportional to exp(-|k|/scale).") +
       seed_doc)
          .c_str());
  m.def(
      "discrete_gaussian",
      [](RationalArg sigma2, IntArg size, OptionalIntArg seed, IntArg stream) {
        Draws draws(seed, stream, size);
        return draw_spec(NoiseSpec{NoiseKind::kDiscreteGaussian, to_rational(sigma2, "sigma2"), 1},
                         "discrete_gaussian", draws);
      },
      py::arg("sigma2"), py::arg("size"), py::arg("seed") = py::none(), py::arg("stream") = 0,
      (std::string("Exact discrete Gaussian samples, P(k) proportional to exp(-k^2/(2*sigma2)).") +
       seed_doc)
          .c_str());
  m.def(
      "polya_share",
      [](RationalArg scale, IntArg clients, IntArg size, OptionalIntArg seed, IntArg stream) {
        const auto n = static_cast<uint32_t>(to_whole_number(clients, "clients", 1, UINT32_MAX));
        Draws draws(seed, stream, size);
        return draw_spec(NoiseSpec{NoiseKind::kPolyaShare, to_rational(scale, "scale"), n},
                         "polya_share", draws);
      },
      py::arg("scale"), py::arg("clients"), py::arg("size"), py::arg("seed") = py::none(),
      py::arg("stream") = 0,
      (std::string("One client's Polya shares: `clients` independent shares sum to "
                   "discrete_laplace(scale); scale <= 10^4.") +
       seed_doc)
          .c_str());
}

}  // namespace python
}  // namespace fedstat
