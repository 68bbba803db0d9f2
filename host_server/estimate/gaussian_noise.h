// The host's central Gaussian mechanism: real-valued statistics released on a public grid, with
// exact integer noise and a privacy proof that covers the grid.
//
// Why a grid at all: a double Gaussian sampler leaks through the gaps in its outputs (Mironov
// 2012), so the noise is an exact discrete Gaussian (sdk/noise, CKS 2020). But adding g·Y to a
// statistic f(D) that is not on the grid gℤ puts the output on f(D) + gℤ, and a neighbour's on
// f(D′) + gℤ: the output's offset from the grid names the dataset (the defect fixed here). The
// released value must be a function of something that is itself private, so the statistic is
// rounded to the grid FIRST:
//
//   σ       the standard deviation the calibration chose for L2 sensitivity Δ (public inputs only)
//   g       = 2^(⌊log2 σ⌋ − 25), the public grid step (a function of σ alone)
//   q(D)    = round(clamp(f(D), ±2^60·g)/g) ∈ ℤ^D, each of the D coordinates
//   s²      = ⌈(σ/g · (1 + √D·g/Δ))²⌉, an integer (s ≥ 2^25; s ≥ 2^28 is refused)
//   output  = g·(q(D) + Y), Y ∈ ℤ^D i.i.d. discrete Gaussian N_ℤ(0, s²)
// Every output is a multiple of g (up to the int → double conversion, itself post-processing),
// computed from the integer vector q(D) + Y only.
//
// Proof of (ε, δ)-DP, given that the Gaussian mechanism with noise N(0, σ²) on a function of L2
// sensitivity Δ is (ε, δ_G)-DP (δ_G from the exact analytic condition, Balle & Wang 2018; or the
// classical bound for ε < 1; or μ = Δ/σ Gaussian DP when releases compose, Dong, Roth & Su 2019):
//  1. Clamping is 1-Lipschitz and rounding moves each coordinate by ≤ ½, so for neighbours
//     ‖q(D) − q(D′)‖₂ ≤ Δ/g + √D =: K.
//  2. The ideal mechanism M̃(D) = q(D) + round(X), X ~ N(0, s²·I) continuous, equals
//     round(q(D) + X): post-processing of the Gaussian mechanism on q, whose ratio K/s equals Δ/σ
//     (s was scaled up by exactly K·g/Δ; rounding s² up only adds noise), so M̃ has the (ε, δ_G)
//     guarantee (and the same μ) that the calibration computed for σ and Δ.
//  3. The noise actually added differs from round(X) by little: for s ≥ 16,
//       TV(N_ℤ(0, s²), round(N(0, s²))) ≤ 1/(32·s²)   (grid_tv_bound)
//     — by Poisson summation Σ_y exp(−y²/2s²) = √(2π)·s·(1 + 2Σ_k e^(−2π²s²k²)), and the midpoint
//     rule |∫_{y−½}^{y+½} φ − φ(y)| ≤ max|φ″|/24 summed over y is ≤ (4e^(−½)/s + 3.8/s²)/24
//     for φ(x) = exp(−x²/2s²) (total variation of |φ″| is 3.785/s²), which gives
//     0.0202/s² + 0.0315/s³ + 1.5e^(−2π²s²) ≤ 1/(32s²). With s ≥ 2^25 this is ≤ 2^−55.
//  4. If two mechanisms are within total variation τ on every input, and one is (ε, δ)-DP, the
//     other is (ε, δ + (1 + e^ε)·τ)-DP. Over D coordinates (and over every release of a
//     composed computation) the total variations add. So the mechanism is
//     (ε, δ_G + (1 + e^ε)·D·2^−55)-DP; grid_calibration_delta gives the δ_G to calibrate for.
//  5. The output g·(q + Y) and everything computed from it is post-processing.
// Nothing else of f(D) reaches the output: in particular no refusal depends on f(D) (values
// beyond ±2^60·g are clamped, not refused; a non-finite f(D) is a caller bug, kInternal).
//
// Errors: kInvalidArgument for σ or Δ not positive and finite, or no coordinates; kOutOfRange
// when (1 + e^ε)·D·2^−55 would use up more than half of δ (raise δ or release fewer values), or
// when s would reach 2^28 (the exact sampler's 64-bit intermediate |Y|·t − s² must hold every
// draw up to 256·s; only for √D·σ/Δ near 2^28).
// Memory: stack only. Paper: 000 Algorithms 1–2 (η), 004 Lemmas 4.1–4.9 and Algorithm 1;
// CKS 2020 (the discrete Gaussian), Balle & Wang 2018 (analytic calibration).
#ifndef FEDSTAT_HOST_ESTIMATE_GAUSSIAN_NOISE_H_
#define FEDSTAT_HOST_ESTIMATE_GAUSSIAN_NOISE_H_

#include <cstddef>
#include <cstdint>

#include "sdk/base/random_bits.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace host {

enum class GaussianCalibration { kAnalytic, kClassical };

// log2(σ/g) rounded down: the grid has 2^25 steps per σ.
constexpr int kGridStepsPerSigmaLog2 = 25;
// The per-coordinate total-variation bound 1/(32·s²) at the smallest s the grid allows.
constexpr double kGridTvPerCoordinate = 0x1p-55;

// The δ left for the Gaussian calibration: δ − (1 + e^ε)·coordinates·2^−55 (proof step 4).
Result<double> grid_calibration_delta(double epsilon, double delta, size_t coordinates);

// σ for L2 sensitivity Δ at (ε, δ): analytic (exact condition) or classical (ε < 1). Pass the δ
// from grid_calibration_delta.
Result<double> gaussian_sigma(GaussianCalibration calibration, double epsilon, double delta,
                              double sensitivity);

struct GridGaussian {
  double grid = 0;           // g
  noise::Rational variance;  // s², an integer, in grid units
  double sigma = 0;          // g·s: the standard deviation each released value carries
  double sensitivity = 0;    // Δ, as calibrated (value units)
  size_t coordinates = 0;    // D
};
// The grid and integer variance for noise σ on D values of L2 sensitivity Δ.
Result<GridGaussian> make_grid_gaussian(double sigma, double sensitivity, size_t coordinates);

// One coordinate: g·(round(clamp(value)/g) + Y).
Result<double> release_on_grid(const GridGaussian& noise, double value, RandomBits& bits);

// TV(N_ℤ(0, s²), round(N(0, s²))) ≤ 1/(32·s²), valid for s ≥ 16 (proof step 3); +∞ below 16.
double grid_tv_bound(double s);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_GAUSSIAN_NOISE_H_
