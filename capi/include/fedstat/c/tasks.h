/** @file
 * fedstat C ABI: the device routines of the KL, heterogeneity and model-update tasks (the
 * data-shift report is sketch.h, the KL answer itself histogram.h). The C form of
 * sdk/tasks/kl_answer_task.h, heterogeneity_task.h and model_update_task.h: the same refusals,
 * the same words for the same inputs and random source.
 *
 * These functions hold no state: each takes an optional `message` (may be NULL), set on failure
 * to the reason (static storage) and left alone on success.
 *
 * @memory heterogeneity and the KL calibration use the stack only (under 1 KiB; the model
 * update's calibration holds up to 256 per-batch sensitivities, 6 KiB). The model update's
 * caller scratch is fedstat_model_update_scratch_size(n, d, bits) bytes:
 *   4*n + 40*d + 80 (trainer, local model, update buffer) [+ 4*D + 3 when bits <= 32]
 * and its report D = fedstat_model_update_report_length words.
 * @paper 000 §4.2-4.3 (KL, Dist calibration); 004 Definitions 3.2-3.7, Lemmas 4.1-4.9
 * (heterogeneity); 002 Algorithms 1-4, Lemma 3 (Sk-RSGD-AR model update).
 */
#ifndef FEDSTAT_C_TASKS_H_
#define FEDSTAT_C_TASKS_H_

#include "base.h"
#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- KL (Dist model) ---------------------------------------------------------------------- */
/** The smallest per-client Skellam lambda giving (epsilon, delta) when `clients_per_sum` clients'
 * answers are summed at every point, for answers whose most-asked point is asked in m1 rounds
 * and the next in m2 (1, 1 when each distinct point is answered once; 1, 0 for a single
 * point), in `*lambda`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `lambda` is NULL; m1 = 0 or m2 > m1; clients_per_sum = 0;
 * epsilon not finite and > 0; delta outside (0, 1). FEDSTAT_OUT_OF_RANGE: no lambda up to 1e15
 * reaches epsilon. */
fedstat_status fedstat_kl_dist_skellam_lambda(double epsilon, double delta, uint32_t m1,
                                              uint32_t m2, uint32_t clients_per_sum, double* lambda,
                                              const char** message);

/* ---- Heterogeneity -------------------------------------------------------------------------- */
/** The heterogeneity task's parameters (both finite). */
typedef struct fedstat_heterogeneity_config {
  double p;          /**< the dispersion exponent, >= 1 (2: the variance) */
  double max_weight; /**< W: inverse-variance weights are clipped to at most W (>= 4) */
} fedstat_heterogeneity_config;

/** Round 1: out = [x, w*x, w, 1/w], out_length = 2d + 2, for x in [0,1]^d.
 * @errors FEDSTAT_INVALID_ARGUMENT: `config` is NULL, p < 1 or W < 4 (or either not finite);
 * `x` or `out` is NULL; d = 0; a coordinate of x outside [0, 1] or NaN; out_length other than
 * 2d + 2. */
fedstat_status fedstat_heterogeneity_round1(const fedstat_heterogeneity_config* config,
                                            const double* x, size_t d, double* out,
                                            size_t out_length, const char** message);
/** Round 2: out = [||x - mean||_p^p, w*||x - weighted_mean||^2], out_length = 2; the host's
 * means (d values each) are clamped to [0,1] first.
 * @errors FEDSTAT_INVALID_ARGUMENT: as fedstat_heterogeneity_round1 (config, NULL `x` or `out`,
 * d = 0, x outside [0, 1]); `mean` or `weighted_mean` is NULL; a mean is NaN; out_length other
 * than 2. */
fedstat_status fedstat_heterogeneity_round2(const fedstat_heterogeneity_config* config,
                                            const double* x, const double* mean,
                                            const double* weighted_mean, size_t d, double* out,
                                            size_t out_length, const char** message);
/** out[j] = round(scale * values[j]) (j < n), the fixed point a contribution is sent in. A Dist
 * contribution then adds its Skellam share: fedstat_random_add_skellam(noise, out, n, lambda).
 * @errors FEDSTAT_INVALID_ARGUMENT: `values` or `out` is NULL with a nonzero n, or `scale` is
 * not finite and > 0. FEDSTAT_OUT_OF_RANGE: a scaled value does not fit 2^62 (or is NaN);
 * nothing is written. */
fedstat_status fedstat_encode_fixed_point(const double* values, size_t n, double scale,
                                          int64_t* out, const char** message);

/* ---- Model update (Sk-RSGD-AR) -------------------------------------------------------------- */
/** The model-update task's parameters: the local trainer's, the quantiser's and the public n. */
typedef struct fedstat_model_update_config {
  /* The local trainer (logistic regression, RSGD-AR). */
  uint32_t epochs;             /**< T, 1..10000 */
  uint32_t batches;            /**< m >= 1 (the calibration takes 1..256) */
  uint32_t averaging_interval; /**< tau, epochs >= 1 */
  double eta0;                 /**< the initial step size: finite, > 0, eta0*(1/4 + mu) <= 2 */
  double mu;                   /**< L2 regularisation: finite, >= 0 */
  /* The quantiser. */
  double clip_norm;            /**< c: finite, > 0 */
  int32_t rotate;              /**< nonzero: the randomised Walsh-Hadamard rotation */
  uint8_t rotation_seed[32];   /**< public: the task's seed */
  uint64_t rotation_stream;    /**< 0 in tasks */
  double gamma;                /**< the scale: finite, > 0 */
  double beta;                 /**< conditional rounding's bound, in [1/2, 1], e.g. exp(-1/2) */
  uint32_t modulus_bits;       /**< b, 1..64: words are reduced mod 2^b */
  uint32_t max_rounding_tries; /**< >= 1; 1000 in C++'s defaults */
  /** n, public: what the calibration assumes each client holds. */
  size_t examples_per_client;
} fedstat_model_update_config;

/** D, the report's length in words, for a model of dimension d, in `*words`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `config` or `words` is NULL, d = 0 or above 2^24, or a
 * quantiser configuration the quantiser refuses (clip_norm, gamma, beta, modulus_bits,
 * max_rounding_tries outside their ranges; c*sqrt(D) too large for float; gamma*c beyond the
 * modulus' signed range). */
fedstat_status fedstat_model_update_report_length(const fedstat_model_update_config* config,
                                                  size_t d, size_t* words);
/** The scratch fedstat_model_update_report needs for n examples of dimension d, in `*bytes`
 * (the formula in this file's memory section).
 * @errors FEDSTAT_INVALID_ARGUMENT: as fedstat_model_update_report_length (`config`, d, the
 * quantiser's configuration), or `bytes` is NULL. FEDSTAT_RESOURCE_EXHAUSTED: the size exceeds
 * SIZE_MAX. */
fedstat_status fedstat_model_update_scratch_size(const fedstat_model_update_config* config,
                                                 size_t n, size_t d, size_t* bytes);
/** One client's report: trains from `global_model` (d values) on n examples (features: n*d
 * floats, row-major, each row of L2 norm <= 1; labels: -1 or +1), then clips, rotates, scales,
 * rounds, adds Sk(lambda) (lambda 0: no noise) and wraps mod 2^bits into report[0, D). `noise`
 * (the shuffle, rounding and noise bits, through its bit reader) must be a CSPRNG in production.
 * @errors FEDSTAT_INVALID_ARGUMENT: `config` is NULL, or a configuration
 * fedstat_model_update_report_length or the trainer refuses (epochs, averaging_interval, eta0,
 * mu); n*d overflows; `features` or `labels` NULL with n > 0; `global_model`, `scratch` or
 * `report` NULL; `noise` NULL or not a random source; report_length other than D; lambda NaN or
 * < 0; a label other than -1 or +1, a feature that is not finite or a row of L2 norm above 1; a
 * model value NaN, infinite or beyond 1e12. FEDSTAT_OUT_OF_RANGE: lambda is 2^31 or more.
 * FEDSTAT_FAILED_PRECONDITION: batches = 0, or fewer examples per batch than the calibration
 * assumed (n/m < examples_per_client/m, or examples_per_client < m): the client must not
 * report. FEDSTAT_RESOURCE_EXHAUSTED: `scratch` is smaller than
 * fedstat_model_update_scratch_size. FEDSTAT_UNAVAILABLE: the random source failed (for b > 32,
 * `report` may then hold part of a report: discard it; discard `noise` too). FEDSTAT_INTERNAL:
 * mbedTLS or the quantiser's rounding bound failed unexpectedly. */
fedstat_status fedstat_model_update_report(const fedstat_model_update_config* config,
                                           const float* features, const int8_t* labels, size_t n,
                                           size_t d, const double* global_model, double lambda,
                                           fedstat_random* noise, void* scratch,
                                           size_t scratch_bytes, uint64_t* report,
                                           size_t report_length, const char** message);
/** The smallest per-client lambda for (epsilon, delta) over `clients` clients of
 * config->examples_per_client examples each (002 Lemma 3, mixture over the m batches), in
 * `*lambda`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `config` or `lambda` is NULL; batches 0 or above 256;
 * examples_per_client < batches; a trainer or quantiser configuration refused (as
 * fedstat_model_update_report); clients = 0; epsilon not finite and > 0; delta outside (0, 1).
 * FEDSTAT_OUT_OF_RANGE: no lambda up to 1e15 reaches epsilon. */
fedstat_status fedstat_model_update_lambda(const fedstat_model_update_config* config, size_t d,
                                           uint32_t clients, double epsilon, double delta,
                                           double* lambda, const char** message);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_TASKS_H_ */
