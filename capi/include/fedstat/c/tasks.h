/* fedstat C ABI: the device routines of the KL, heterogeneity and model-update tasks (the
 * data-shift report is sketch.h, the KL answer itself histogram.h). The C form of
 * sdk/tasks/kl_answer_task.h, heterogeneity_task.h and model_update_task.h: the same refusals,
 * the same words for the same inputs and random source.
 *
 * These functions hold no state: each takes an optional `message` (may be NULL), set on failure
 * to the reason (static storage) and left alone on success.
 *
 * Memory: heterogeneity and the KL calibration use the stack only (under 1 KiB; the model
 * update's calibration holds up to 256 per-batch sensitivities, 6 KiB). The model update's
 * caller scratch is fedstat_model_update_scratch_size(n, d, bits) bytes:
 *   4*n + 40*d + 80 (trainer, local model, update buffer) [+ 4*D + 8 when bits <= 32]
 * and its report D = fedstat_model_update_report_length words.
 * Paper: 000 §4.2-4.3 (KL, Dist calibration); 004 Definitions 3.2-3.7, Lemmas 4.1-4.9
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
/* The smallest per-client Skellam lambda giving (epsilon, delta) when `clients_per_sum` clients'
 * answers are summed at every point, for answers whose most-asked point is asked in m1 rounds
 * and the next in m2 (1, 1 when each distinct point is answered once; 1, 0 for a single
 * point; m1 >= 1 and m2 <= m1, else FEDSTAT_INVALID_ARGUMENT). */
fedstat_status fedstat_kl_dist_skellam_lambda(double epsilon, double delta, uint32_t m1,
                                              uint32_t m2, uint32_t clients_per_sum, double* lambda,
                                              const char** message);

/* ---- Heterogeneity -------------------------------------------------------------------------- */
typedef struct fedstat_heterogeneity_config {
  double p;          /* the dispersion exponent, >= 1 (2: the variance) */
  double max_weight; /* W: inverse-variance weights are clipped to at most W (>= 4) */
} fedstat_heterogeneity_config;

/* Round 1: out = [x, w*x, w, 1/w], out_length = 2d + 2, for x in [0,1]^d. */
fedstat_status fedstat_heterogeneity_round1(const fedstat_heterogeneity_config* config,
                                            const double* x, size_t d, double* out,
                                            size_t out_length, const char** message);
/* Round 2: out = [||x - mean||_p^p, w*||x - weighted_mean||^2], out_length = 2; the host's
 * means (d values each) are clamped to [0,1] first. */
fedstat_status fedstat_heterogeneity_round2(const fedstat_heterogeneity_config* config,
                                            const double* x, const double* mean,
                                            const double* weighted_mean, size_t d, double* out,
                                            size_t out_length, const char** message);
/* out[j] = round(scale * values[j]) (j < n), the fixed point a contribution is sent in
 * (FEDSTAT_OUT_OF_RANGE when a value does not fit 2^62). A Dist contribution then adds its
 * Skellam share: fedstat_random_add_skellam(noise, out, n, lambda). */
fedstat_status fedstat_encode_fixed_point(const double* values, size_t n, double scale,
                                          int64_t* out, const char** message);

/* ---- Model update (Sk-RSGD-AR) -------------------------------------------------------------- */
typedef struct fedstat_model_update_config {
  /* The local trainer (logistic regression, RSGD-AR). */
  uint32_t epochs;             /* T, 1..10000 */
  uint32_t batches;            /* m >= 1 */
  uint32_t averaging_interval; /* tau, epochs >= 1 */
  double eta0;                 /* the initial step size */
  double mu;                   /* L2 regularisation */
  /* The quantiser. */
  double clip_norm;            /* c */
  int32_t rotate;              /* nonzero: the randomised Walsh-Hadamard rotation */
  uint8_t rotation_seed[32];   /* public: the task's seed */
  uint64_t rotation_stream;    /* 0 in tasks */
  double gamma;                /* the scale */
  double beta;                 /* conditional rounding's bound, e.g. exp(-1/2) */
  uint32_t modulus_bits;       /* b, 1..64: words are reduced mod 2^b */
  uint32_t max_rounding_tries; /* 1000 in C++'s defaults */
  /* n, public: what the calibration assumes each client holds. */
  size_t examples_per_client;
} fedstat_model_update_config;

/* D, the report's length in words, for a model of dimension d. */
fedstat_status fedstat_model_update_report_length(const fedstat_model_update_config* config,
                                                  size_t d, size_t* words);
fedstat_status fedstat_model_update_scratch_size(const fedstat_model_update_config* config,
                                                 size_t n, size_t d, size_t* bytes);
/* One client's report: trains from `global_model` (d values) on n examples (features: n*d
 * floats, row-major, each row of L2 norm <= 1; labels: -1 or +1), then clips, rotates, scales,
 * rounds, adds Sk(lambda) (lambda 0: no noise) and wraps mod 2^bits into report[0, D). `noise`
 * (the shuffle, rounding and noise bits) must be a CSPRNG in production. */
fedstat_status fedstat_model_update_report(const fedstat_model_update_config* config,
                                           const float* features, const int8_t* labels, size_t n,
                                           size_t d, const double* global_model, double lambda,
                                           fedstat_random* noise, void* scratch,
                                           size_t scratch_bytes, uint64_t* report,
                                           size_t report_length, const char** message);
/* The smallest per-client lambda for (epsilon, delta) over `clients` clients of
 * config->examples_per_client examples each (002 Lemma 3, mixture over the m batches). */
fedstat_status fedstat_model_update_lambda(const fedstat_model_update_config* config, size_t d,
                                           uint32_t clients, double epsilon, double delta,
                                           double* lambda, const char** message);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_TASKS_H_ */
