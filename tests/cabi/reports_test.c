/* The C ABI from C99 (built with -std=c99 -Wall -Wextra -Werror -pedantic): every report kind
 * built through <fedstat/fedstat.h> for fixed inputs and seeds, compared byte for byte with the
 * C++ API's output for the same inputs (tests/cabi/cabi_reference.h, which calls the SDK
 * directly) and, where tests/common/golden_vectors.h pins them, with the golden values recorded
 * independently of the C ABI. Prints one line per failed check and "cabi reports: ok" at the end.
 * Usage: fedstat_cabi_reports <scratch directory> (ledger blobs are written there).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fedstat/fedstat.h>

#include "tests/cabi/cabi_reference.h"

static int failures = 0;

#define CHECK(condition, ...)                       \
  do {                                              \
    if (!(condition)) {                             \
      ++failures;                                   \
      printf("FAILED %s:%d: ", __FILE__, __LINE__); \
      printf(__VA_ARGS__);                          \
      printf("\n");                                 \
    }                                               \
  } while (0)

/* A call that must succeed; on failure the check names the status. */
#define CHECK_OK(call)                                                                   \
  do {                                                                                   \
    const fedstat_status status_ = (call);                                               \
    CHECK(status_ == FEDSTAT_OK, "%s returned %s", #call, fedstat_status_name(status_)); \
  } while (0)

/* Caller memory: one static pool handed out in FEDSTAT_ALIGNMENT steps, never freed (the
 * objects need no destroy, and nothing leaks for the leak checker to report). */
static uint64_t pool[1 << 18]; /* 2 MiB */
static size_t pool_used = 0;   /* in words */

static void* memory_of(size_t bytes) {
  const size_t words = (bytes + 7) / 8;
  void* p;
  if (words > sizeof(pool) / 8 - pool_used) {
    printf("the test's memory pool is exhausted\n");
    exit(2);
  }
  p = &pool[pool_used];
  pool_used += words;
  return p;
}

static void fill_seed(uint8_t seed[32], unsigned multiplier, unsigned offset) {
  int i;
  for (i = 0; i < 32; ++i) seed[i] = (uint8_t)(multiplier * (unsigned)i + offset);
}

static int same_bytes(const uint8_t* a, size_t a_size, const uint8_t* b, size_t b_size) {
  return a_size == b_size && memcmp(a, b, a_size) == 0;
}

/* ---- Inputs ------------------------------------------------------------------------------- */
/* The updates of tests/unit/sketch/shift_sketch_test.cpp's golden report: 400 updates. */
#define GOLDEN_UPDATES 400
static uint32_t golden_items[GOLDEN_UPDATES];
static int64_t golden_counts[GOLDEN_UPDATES];

/* A histogram's adds: (ids[i], counts[i]), ids below 1000 (dense domain 1000). */
#define ADDS 300
static uint32_t add_ids[ADDS];
static uint32_t add_counts[ADDS];

static void make_inputs(void) {
  uint32_t i;
  uint64_t state = 12345;
  for (i = 0; i < GOLDEN_UPDATES; ++i) {
    golden_items[i] = (uint32_t)((i * 2654435761u) % 1000003u);
    golden_counts[i] = (int64_t)(i % 9 + 1);
  }
  for (i = 0; i < ADDS; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    /* A skewed law over 1000 items: small ids often, large ids rarely. */
    add_ids[i] = (uint32_t)(((state >> 33) % 1000) * ((state >> 20) % 1000) / 1000);
    add_counts[i] = (uint32_t)(1 + (state >> 50) % 5);
  }
}

/* A histogram of `kind` in fresh memory, with every add applied. */
static fedstat_histogram* make_histogram(int32_t kind, size_t slots) {
  size_t bytes = 0, i;
  fedstat_histogram* h = NULL;
  if (kind == FEDSTAT_HISTOGRAM_DENSE) {
    CHECK_OK(fedstat_histogram_dense_size(slots, &bytes));
    CHECK_OK(fedstat_histogram_create_dense(memory_of(bytes), bytes, slots, &h));
  } else {
    CHECK_OK(fedstat_histogram_sparse_size(slots, &bytes));
    CHECK_OK(fedstat_histogram_create_sparse(memory_of(bytes), bytes, slots, &h));
  }
  if (h == NULL) exit(1);
  for (i = 0; i < ADDS; ++i) CHECK_OK(fedstat_histogram_add(h, add_ids[i], add_counts[i]));
  return h;
}

/* ---- Random sources: the seeded stream is the published AES-256-CTR keystream ---------------- */
static void seeded_stream(void) {
  uint8_t seed[32], got[32], golden[32];
  size_t bytes = 0;
  fedstat_random* r = NULL;
  fill_seed(seed, 1, 0); /* 00 01 .. 1f */
  CHECK_OK(fedstat_random_size(&bytes));
  CHECK_OK(fedstat_random_create_seeded(memory_of(bytes), bytes, seed, 0, &r));
  CHECK_OK(fedstat_random_fill(r, got, sizeof(got)));
  cabi_ref_golden_seeded_stream0(golden);
  CHECK(memcmp(got, golden, 32) == 0, "seeded stream 0 differs from the OpenSSL vector");
  CHECK_OK(fedstat_random_destroy(r));
  CHECK(fedstat_random_fill(r, got, 1) == FEDSTAT_INVALID_ARGUMENT, "a destroyed source drew");
}

/* ---- Data-shift sketch reports ------------------------------------------------------------ */
static fedstat_sketch* make_sketch(const fedstat_sketch_params* p) {
  size_t bytes = 0;
  fedstat_sketch* s = NULL;
  CHECK_OK(fedstat_sketch_size(p, &bytes));
  CHECK_OK(fedstat_sketch_create(memory_of(bytes), bytes, p, &s));
  if (s == NULL) exit(1);
  return s;
}

static void sketch_golden(uint32_t buffer_slots) {
  static uint8_t got[65536], want[65536];
  size_t got_size = 0, want_size = 0, report_size = 0, i;
  fedstat_sketch_params p;
  fedstat_sketch* s;
  uint32_t golden = 0;
  memset(&p, 0, sizeof(p));
  p.rows = 3;
  p.width = 64;
  p.heap_capacity = 16;
  p.k = 64;
  p.buffer_slots = buffer_slots;
  fill_seed(p.seed, 1, 7 * 31);
  s = make_sketch(&p);
  for (i = 0; i < GOLDEN_UPDATES; ++i) {
    CHECK_OK(fedstat_sketch_add(s, golden_items[i], golden_counts[i]));
  }
  CHECK_OK(fedstat_sketch_report_size(s, &report_size));
  CHECK_OK(fedstat_sketch_serialize(s, got, sizeof(got), &got_size));
  CHECK(got_size == report_size, "report_size %zu, serialize wrote %zu", report_size, got_size);
  CHECK(cabi_ref_sketch_from_updates(&p, golden_items, golden_counts, GOLDEN_UPDATES, want,
                                     sizeof(want), &want_size) == 0,
        "reference sketch failed");
  CHECK(same_bytes(got, got_size, want, want_size), "sketch report (C = %zu B) differs from C++",
        got_size);
  golden = buffer_slots == 0 ? cabi_ref_golden_sketch_report_crc()
                             : cabi_ref_golden_buffered_sketch_report_crc();
  CHECK(got_size > 4 && cabi_ref_crc32(got, got_size - 4) == golden,
        "sketch report CRC %08x is not the golden %08x",
        (unsigned)cabi_ref_crc32(got, got_size - 4), (unsigned)golden);
}

static void sketch_from_histograms(void) {
  static uint8_t got[1 << 17], want[1 << 17];
  size_t got_size = 0, want_size = 0;
  uint8_t seed[32];
  fedstat_sketch_params budget, task;
  int32_t kind;
  int shape;
  fill_seed(seed, 7, 3);
  CHECK_OK(fedstat_sketch_params_for_budget(16 * 1024, seed, &budget));
  CHECK(budget.rows == 5 && budget.buffer_slots > 0 && memcmp(budget.seed, seed, 32) == 0,
        "params_for_budget: R %u, C %u", (unsigned)budget.rows, (unsigned)budget.buffer_slots);
  memset(&task, 0, sizeof(task)); /* a DATA_SHIFT task's shape: R 3, w 50, H 16, k 64, no buffer */
  task.rows = 3;
  task.width = 50;
  task.heap_capacity = 16;
  task.k = 64;
  memcpy(task.seed, seed, 32);
  for (shape = 0; shape < 2; ++shape) {
    const fedstat_sketch_params* p = shape == 0 ? &budget : &task;
    for (kind = FEDSTAT_HISTOGRAM_DENSE; kind <= FEDSTAT_HISTOGRAM_SPARSE; ++kind) {
      const size_t slots = kind == FEDSTAT_HISTOGRAM_DENSE ? 1000 : 512;
      fedstat_histogram* h = make_histogram(kind, slots);
      fedstat_sketch* s = make_sketch(p);
      CHECK_OK(fedstat_sketch_add_histogram(s, h));
      CHECK_OK(fedstat_sketch_serialize(s, got, sizeof(got), &got_size));
      CHECK(cabi_ref_sketch_from_histogram(p, kind, slots, add_ids, add_counts, ADDS, want,
                                           sizeof(want), &want_size) == 0,
            "reference sketch from histogram failed");
      CHECK(same_bytes(got, got_size, want, want_size),
            "sketch report of a %s histogram (shape %d) differs from C++",
            kind == FEDSTAT_HISTOGRAM_DENSE ? "dense" : "sparse", shape);
    }
  }
}

/* ---- Histogram blobs ---------------------------------------------------------------------- */
static void histogram_blobs(void) {
  static uint8_t got[16384], want[16384], again[16384];
  size_t got_size = 0, want_size = 0, again_size = 0, size = 0, bytes = 0, i;
  uint32_t golden_ids[200], golden_adds[200];
  int32_t kind;
  fedstat_histogram *h, *copy = NULL;
  /* The golden sparse blob: capacity 256, id (i * 2654435761) mod 1000003, count i mod 7 + 1. */
  CHECK_OK(fedstat_histogram_sparse_size(256, &bytes));
  CHECK_OK(fedstat_histogram_create_sparse(memory_of(bytes), bytes, 256, &h));
  for (i = 0; i < 200; ++i) {
    golden_ids[i] = (uint32_t)((i * 2654435761u) % 1000003u);
    golden_adds[i] = (uint32_t)(i % 7 + 1);
    CHECK_OK(fedstat_histogram_add(h, golden_ids[i], golden_adds[i]));
  }
  CHECK_OK(fedstat_histogram_serialize(h, got, sizeof(got), &got_size));
  CHECK(got_size > 4 && cabi_ref_crc32(got, got_size - 4) == cabi_ref_golden_sparse_blob_crc(),
        "sparse blob CRC is not the golden one");
  CHECK(cabi_ref_histogram_blob(FEDSTAT_HISTOGRAM_SPARSE, 256, golden_ids, golden_adds, 200, want,
                                sizeof(want), &want_size) == 0 &&
            same_bytes(got, got_size, want, want_size),
        "golden sparse blob differs from C++");

  for (kind = FEDSTAT_HISTOGRAM_DENSE; kind <= FEDSTAT_HISTOGRAM_SPARSE; ++kind) {
    const size_t slots = kind == FEDSTAT_HISTOGRAM_DENSE ? 1000 : 512;
    fedstat_histogram_info info;
    h = make_histogram(kind, slots);
    CHECK_OK(fedstat_histogram_serialized_size(h, &size));
    CHECK_OK(fedstat_histogram_serialize(h, got, sizeof(got), &got_size));
    CHECK(size == got_size, "serialized_size %zu, serialize wrote %zu", size, got_size);
    CHECK(cabi_ref_histogram_blob(kind, slots, add_ids, add_counts, ADDS, want, sizeof(want),
                                  &want_size) == 0 &&
              same_bytes(got, got_size, want, want_size),
          "%s blob differs from C++", kind == FEDSTAT_HISTOGRAM_DENSE ? "dense" : "sparse");
    /* The blob loads into an empty histogram of the same shape and gives the same bytes. */
    if (kind == FEDSTAT_HISTOGRAM_DENSE) {
      CHECK_OK(fedstat_histogram_create_dense(memory_of(4096 + 4 * slots), 4096 + 4 * slots, slots,
                                              &copy));
    } else {
      CHECK_OK(fedstat_histogram_create_sparse(memory_of(4096 + 8 * slots), 4096 + 8 * slots, slots,
                                               &copy));
    }
    CHECK_OK(fedstat_histogram_deserialize(copy, got, got_size));
    CHECK_OK(fedstat_histogram_serialize(copy, again, sizeof(again), &again_size));
    CHECK(same_bytes(got, got_size, again, again_size), "a loaded blob serializes differently");
    CHECK_OK(fedstat_histogram_get_info(copy, &info));
    CHECK(info.kind == kind && info.slots == slots && info.dropped == 0, "info after load");
    /* Saved and loaded through platform storage. */
    CHECK_OK(fedstat_histogram_save(h, "cabi-histogram", again, sizeof(again)));
    CHECK_OK(fedstat_histogram_clear(copy));
    CHECK_OK(fedstat_histogram_load(copy, "cabi-histogram", again, sizeof(again)));
    CHECK_OK(fedstat_histogram_serialize(copy, again, sizeof(again), &again_size));
    CHECK(same_bytes(got, got_size, again, again_size), "a saved and loaded histogram differs");
  }
}

/* ---- KL answers --------------------------------------------------------------------------- */
static void kl_answers(void) {
  uint32_t points[40];
  int64_t got[40], want[40];
  uint64_t got_total = 0, want_total = 0;
  uint8_t seed[32];
  size_t bytes = 0, t;
  int32_t kind;
  int noised;
  for (t = 0; t < 40; ++t) points[t] = (uint32_t)(t * t % 997); /* some held, some not */
  fill_seed(seed, 5, 1);
  CHECK_OK(fedstat_random_size(&bytes));
  for (kind = FEDSTAT_HISTOGRAM_DENSE; kind <= FEDSTAT_HISTOGRAM_SPARSE; ++kind) {
    const size_t slots = kind == FEDSTAT_HISTOGRAM_DENSE ? 1000 : 512;
    fedstat_histogram* h = make_histogram(kind, slots);
    fedstat_histogram_info info;
    CHECK_OK(fedstat_histogram_get_info(h, &info));
    for (noised = 0; noised < 2; ++noised) {
      const double lambda = noised ? 3.5 : 0;
      int64_t difference = 0;
      if (noised) {
        fedstat_random* r = NULL;
        CHECK_OK(fedstat_random_create_seeded(memory_of(bytes), bytes, seed, 12, &r));
        CHECK_OK(fedstat_histogram_kl_answer_noised(h, points, 40, lambda, r, got, &got_total));
      } else {
        CHECK_OK(fedstat_histogram_kl_answer(h, points, 40, got, &got_total));
      }
      CHECK(cabi_ref_kl_answer(kind, slots, add_ids, add_counts, ADDS, points, 40, lambda, seed, 12,
                               want, &want_total) == 0,
            "reference KL answer failed");
      CHECK(memcmp(got, want, sizeof(got)) == 0 && got_total == want_total,
            "KL answer (kind %d, lambda %g) differs from C++", (int)kind, lambda);
      CHECK(got_total == info.total, "the KL total is not the histogram's mass");
      for (t = 0; t < 40; ++t) {
        uint32_t count = 0;
        CHECK_OK(fedstat_histogram_count(h, points[t], &count));
        difference += got[t] - (int64_t)count;
      }
      CHECK(noised ? difference != 0 : difference == 0, "the answers %s the counts (kind %d)",
            noised ? "equal" : "differ from", (int)kind);
    }
  }
}

/* ---- Heterogeneity ------------------------------------------------------------------------ */
static void heterogeneity(void) {
  const double x[4] = {0.15, 0.5, 0.8, 0.3};
  const double mean[4] = {0.2, 0.45, 0.7, 0.35};
  const double weighted_mean[4] = {0.25, 0.4, 0.75, 0.3};
  fedstat_heterogeneity_config config;
  uint8_t seed[32];
  size_t bytes = 0;
  int stage, noised;
  config.p = 2;
  config.max_weight = 100;
  fill_seed(seed, 3, 9);
  CHECK_OK(fedstat_random_size(&bytes));
  for (stage = 1; stage <= 2; ++stage) {
    const size_t length = stage == 1 ? 10 : 2;
    for (noised = 0; noised < 2; ++noised) {
      const double lambda = noised ? 25 : 0, scale = 1000;
      double values[10];
      int64_t got[10], want[10];
      const char* message = NULL;
      if (stage == 1) {
        CHECK_OK(fedstat_heterogeneity_round1(&config, x, 4, values, length, &message));
      } else {
        CHECK_OK(fedstat_heterogeneity_round2(&config, x, mean, weighted_mean, 4, values, length,
                                              &message));
      }
      CHECK_OK(fedstat_encode_fixed_point(values, length, scale, got, &message));
      if (noised) {
        fedstat_random* r = NULL;
        CHECK_OK(fedstat_random_create_seeded(memory_of(bytes), bytes, seed, 4, &r));
        CHECK_OK(fedstat_random_add_skellam(r, got, length, lambda));
      }
      CHECK(cabi_ref_heterogeneity(&config, stage, x, 4, mean, weighted_mean, scale, lambda, seed,
                                   4, want, length) == 0,
            "reference heterogeneity failed");
      CHECK(memcmp(got, want, length * sizeof(int64_t)) == 0,
            "heterogeneity stage %d (lambda %g) differs from C++", stage, lambda);
      CHECK(message == NULL, "a successful call set a message");
    }
  }
}

/* ---- Model update ------------------------------------------------------------------------- */
static void model_update(void) {
  enum { N = 40, D = 4 };
  static float features[N * D];
  static int8_t labels[N];
  const double model[D] = {0.1, -0.2, 0.05, 0};
  uint64_t got[64], want[64];
  uint8_t seed[32];
  fedstat_model_update_config config;
  size_t random_bytes = 0, length = 0, scratch_bytes = 0, i;
  int bits_case, noised;
  for (i = 0; i < N; ++i) {
    features[i * D + 0] = (float)(0.3 * sin((double)i));
    features[i * D + 1] = (float)(0.3 * cos(2.0 * (double)i));
    features[i * D + 2] = 0.2f;
    features[i * D + 3] = (float)(0.1 * (double)(i % 3));
    labels[i] = (int8_t)(features[i * D] + features[i * D + 1] > 0 ? 1 : -1);
  }
  memset(&config, 0, sizeof(config));
  config.epochs = 3;
  config.batches = 2;
  config.averaging_interval = 3;
  config.eta0 = 1;
  config.mu = 0.001;
  config.clip_norm = 1;
  config.rotate = 1;
  fill_seed(config.rotation_seed, 7, 9);
  config.gamma = 1024;
  config.beta = 0.6065306597;
  config.max_rounding_tries = 1000;
  config.examples_per_client = N;
  fill_seed(seed, 11, 2);
  CHECK_OK(fedstat_random_size(&random_bytes));
  for (bits_case = 0; bits_case < 2; ++bits_case) {
    config.modulus_bits = bits_case == 0 ? 32 : 48;
    CHECK_OK(fedstat_model_update_report_length(&config, D, &length));
    CHECK_OK(fedstat_model_update_scratch_size(&config, N, D, &scratch_bytes));
    CHECK(length > 0 && length <= 64, "report length %zu", length);
    for (noised = 0; noised < 2; ++noised) {
      const double lambda = noised ? 40 : 0;
      fedstat_random* r = NULL;
      const char* message = NULL;
      int all_zero = 1;
      CHECK_OK(fedstat_random_create_seeded(memory_of(random_bytes), random_bytes, seed, 1, &r));
      CHECK_OK(fedstat_model_update_report(&config, features, labels, N, D, model, lambda, r,
                                           memory_of(scratch_bytes), scratch_bytes, got, length,
                                           &message));
      CHECK(message == NULL, "model update: %s", message);
      CHECK(cabi_ref_model_update(&config, features, labels, N, D, model, lambda, seed, 1, want,
                                  length) == 0,
            "reference model update failed");
      CHECK(memcmp(got, want, length * sizeof(uint64_t)) == 0,
            "model update (bits %u, lambda %g) differs from C++", (unsigned)config.modulus_bits,
            lambda);
      for (i = 0; i < length; ++i) {
        all_zero &= got[i] == 0;
        CHECK(got[i] >> config.modulus_bits == 0, "word %zu is not reduced mod 2^b", i);
      }
      CHECK(!all_zero, "the report is all zeros");
    }
  }
}

/* ---- Calibration: the per-client noise falls as the budget grows ---------------------------- */
static void calibration(void) {
  double strict = 0, loose = 0;
  const char* message = NULL;
  CHECK_OK(fedstat_kl_dist_skellam_lambda(0.5, 1e-6, 1, 1, 20, &strict, &message));
  CHECK_OK(fedstat_kl_dist_skellam_lambda(2.0, 1e-6, 1, 1, 20, &loose, &message));
  CHECK(isfinite(strict) && loose > 0 && loose < strict, "KL lambda %g (eps 0.5), %g (eps 2)",
        strict, loose);
  CHECK(fedstat_kl_dist_skellam_lambda(1, 1e-6, 1, 1, 0, &loose, &message) ==
                FEDSTAT_INVALID_ARGUMENT &&
            message != NULL && message[0] != '\0',
        "zero clients: no refusal or no message");
}

/* ---- Ledger: the stored blob equals the C++ ledger's after the same charges ----------------- */
static size_t read_file(const char* path, uint8_t* out, size_t capacity) {
  size_t n;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return 0;
  n = fread(out, 1, capacity, f);
  fclose(f);
  return n;
}

static void ledger(const char* directory) {
  enum { SPENDS = 6 };
  static uint8_t got[8192], want[8192];
  char path[600];
  fedstat_privacy_spend spends[SPENDS];
  uint64_t now[SPENDS];
  int32_t want_status[SPENDS];
  fedstat_ledger_config config;
  fedstat_ledger* l = NULL;
  fedstat_ledger_info info;
  const uint32_t* orders = fedstat_ledger_rdp_orders();
  size_t bytes = 0, got_size, want_size, i, k;
  double epsilon = 0, delta = 0;
  const uint64_t t0 = 1800000000u; /* 2027-01-15 */
  memset(spends, 0, sizeof(spends));
  for (i = 0; i < SPENDS; ++i) {
    spends[i].task_id = (uint32_t)(i + 1);
    spends[i].epsilon = 0.3;
    spends[i].delta = 1e-8;
    now[i] = t0 + 100 * i;
  }
  spends[2].has_rdp = 1; /* an RDP spend: its curve is composed order by order */
  spends[2].epsilon = 0;
  spends[2].delta = 0;
  for (k = 0; k < FEDSTAT_LEDGER_ORDER_COUNT; ++k) spends[2].rdp[k] = 0.001 * orders[k];
  spends[4].epsilon = 5; /* over the budget: refused */
  now[5] = t0 + 5000;    /* after the window: the first spends have expired */
  config.epsilon_budget = 1.0;
  config.delta_budget = 1e-6;
  config.window_seconds = 1000;
  /* The two ledgers in one directory under two names (a ledger's blob does not hold its name). */
  config.blob_name = "cabi-ledger-cpp";
  CHECK(cabi_ref_ledger(directory, &config, 4, spends, now, SPENDS, want_status) == 0,
        "reference ledger failed");
  config.blob_name = "cabi-ledger-c";
  CHECK_OK(fedstat_set_storage_directory(directory));
  CHECK_OK(fedstat_ledger_size(4, &bytes));
  CHECK_OK(fedstat_ledger_create(memory_of(bytes), bytes, &config, 4, &l));
  if (l == NULL) return;
  CHECK(fedstat_ledger_charge(l, &spends[0], now[0]) == FEDSTAT_FAILED_PRECONDITION,
        "a ledger charged before load");
  CHECK_OK(fedstat_ledger_load(l));
  for (i = 0; i < SPENDS; ++i) {
    const fedstat_status predicted = fedstat_ledger_check(l, &spends[i], now[i]);
    const fedstat_status charged = fedstat_ledger_charge(l, &spends[i], now[i]);
    CHECK(charged == want_status[i], "charge %zu: C %s, C++ %s", i, fedstat_status_name(charged),
          fedstat_status_name(want_status[i]));
    CHECK(predicted == charged, "check %zu said %s, charge %s", i, fedstat_status_name(predicted),
          fedstat_status_name(charged));
  }
  CHECK(want_status[4] == FEDSTAT_RESOURCE_EXHAUSTED && want_status[5] == FEDSTAT_OK,
        "the scenario lost its refusal or its expiry");
  snprintf(path, sizeof(path), "%s/cabi-ledger-c", directory);
  got_size = read_file(path, got, sizeof(got));
  snprintf(path, sizeof(path), "%s/cabi-ledger-cpp", directory);
  want_size = read_file(path, want, sizeof(want));
  CHECK(got_size > 0 && same_bytes(got, got_size, want, want_size),
        "the stored ledger (%zu B) differs from C++'s (%zu B)", got_size, want_size);
  CHECK_OK(fedstat_ledger_spent(l, now[5], &epsilon, &delta));
  CHECK(epsilon > 0.29 && epsilon < 1.0, "spent %g after the window", epsilon);
  CHECK_OK(fedstat_ledger_get_info(l, &info));
  CHECK(info.capacity == 4 && info.ledger_time == now[5], "ledger info");
}

/* Blobs an earlier run left: a stored ledger would be loaded and change the answers. */
static void remove_blobs(const char* directory) {
  const char* names[] = {"cabi-ledger-c", "cabi-ledger-cpp", "cabi-histogram"};
  char path[600];
  size_t i;
  for (i = 0; i < sizeof(names) / sizeof(names[0]); ++i) {
    snprintf(path, sizeof(path), "%s/%s", directory, names[i]);
    remove(path); /* absent is fine */
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    printf("usage: %s <scratch directory>\n", argv[0]);
    return 2;
  }
  CHECK(strcmp(fedstat_version(), FEDSTAT_EXPECTED_VERSION) == 0, "version %s", fedstat_version());
  CHECK_OK(fedstat_set_storage_directory(argv[1]));
  remove_blobs(argv[1]);
  make_inputs();
  seeded_stream();
  sketch_golden(0);
  sketch_golden(64);
  sketch_from_histograms();
  histogram_blobs();
  kl_answers();
  heterogeneity();
  model_update();
  calibration();
  ledger(argv[1]);
  printf("cabi reports: %s (%d failed checks)\n", failures == 0 ? "ok" : "FAILED", failures);
  return failures == 0 ? 0 : 1;
}
