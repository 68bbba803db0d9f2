// Real-valued Gaussian noise for the host's central mechanisms, without floating-point sampling.
//
// A double Gaussian sampler leaks through the gaps in its outputs (Mironov 2012). Instead
// Z = g·Y with Y an exact discrete Gaussian (sdk/noise, CKS 2020) of variance σ²/g² rounded up
// to an integer, and g = 2^(⌊log2 σ⌋ − 20) a power of two, so Y has standard deviation ≥ 2^20
// and Z is a discrete Gaussian on a grid 2^20 times finer than σ. Its variance is σ² within a
// relative 2^-39 (never below), and its privacy is that of the Gaussian mechanism at σ up to the
// grid (CKS 2020 §2). Deterministic given the random bits.
// Errors: kInvalidArgument for σ ≤ 0 or not finite. Memory: stack only. Paper: 000 Algorithm 1
// and 2 (η), 004 Lemmas 4.1–4.9.
#ifndef FEDSTAT_HOST_ESTIMATE_GAUSSIAN_NOISE_H_
#define FEDSTAT_HOST_ESTIMATE_GAUSSIAN_NOISE_H_

#include "sdk/base/random_bits.h"

namespace fedstat {
namespace host {

Result<double> sample_gaussian(RandomBits& bits, double sigma);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_GAUSSIAN_NOISE_H_
