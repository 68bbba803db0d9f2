/* The C ABI's refusals, from C99: NULL and foreign handles, memory too small or misaligned, NaN
 * and negative privacy parameters, sizes of 2^64 - 1 (SIZE_MAX). Each call must return its
 * specific status and change nothing: the caller's memory is compared byte for byte before and
 * after a refused create, and an object's observable state (counts, blob, ledger spend, stored
 * ledger file) before and after a refused call. Prints "cabi bad input: ok" when every check holds.
 * Usage: fedstat_cabi_bad_input <scratch directory>.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <fedstat/fedstat.h>

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

/* `call` must return `expected`. */
#define EXPECT_STATUS(expected, call)                                                     \
  do {                                                                                    \
    const fedstat_status got_ = (call);                                                   \
    CHECK(got_ == (expected), "%s returned %s, not %s", #call, fedstat_status_name(got_), \
          fedstat_status_name(expected));                                                 \
  } while (0)

static uint64_t memory[1 << 14]; /* 128 KiB of caller memory, 8-byte aligned */
static uint8_t pattern_copy[sizeof(memory)];

/* Fills the caller memory with a pattern and keeps a copy to compare with. */
static void poison(void) {
  memset(memory, 0xA5, sizeof(memory));
  memcpy(pattern_copy, memory, sizeof(memory));
}
static int untouched(void) {
  return memcmp(memory, pattern_copy, sizeof(memory)) == 0;
}

static void statuses(void) {
  CHECK(strcmp(fedstat_status_name(FEDSTAT_DATA_LOSS), "data_loss") == 0, "name of data_loss");
  CHECK(strcmp(fedstat_status_name(99), "unknown") == 0, "name of 99");
  CHECK(strcmp(fedstat_status_name(-1), "unknown") == 0, "name of -1");
  CHECK(strlen(fedstat_status_message(FEDSTAT_RESOURCE_EXHAUSTED)) > 10, "message of a code");
  CHECK(fedstat_status_message(1000) != NULL, "message of an unknown code");
}

static void sizes(void) {
  size_t bytes = 12345;
  fedstat_sketch_params p;
  fedstat_model_update_config m;
  memset(&p, 0, sizeof(p));
  /* 2^64 - 1 (SIZE_MAX) as a size: never a wrapped number, and *bytes is left alone. */
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_dense_size(SIZE_MAX, &bytes));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_sparse_size(SIZE_MAX, &bytes));
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED,
                fedstat_histogram_sparse_size((SIZE_MAX >> 1) + 1, &bytes));
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED, fedstat_ledger_size(SIZE_MAX, &bytes));
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED, fedstat_client_size(SIZE_MAX, &bytes));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_dense_size(0, &bytes));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_sparse_size(6, &bytes));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_size(0, &bytes));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_random_size(NULL));
  EXPECT_STATUS(FEDSTAT_OUT_OF_RANGE, fedstat_sketch_params_for_budget(SIZE_MAX, p.seed, &p));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_sketch_params_for_budget(100, p.seed, &p));
  memset(&p, 0, sizeof(p));
  p.rows = 3;
  p.width = 64;
  p.heap_capacity = 16;
  p.k = 0; /* k >= 1 */
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_sketch_size(&p, &bytes));
  p.k = 64;
  p.rows = 16; /* at most 15 */
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_sketch_size(&p, &bytes));
  CHECK(bytes == 12345, "a refused size query wrote %zu", bytes);
  memset(&m, 0, sizeof(m));
  m.epochs = 1;
  m.batches = 1;
  m.averaging_interval = 1;
  m.eta0 = 1;
  m.clip_norm = 1;
  m.gamma = 16;
  m.beta = 0.6;
  m.modulus_bits = 32;
  m.max_rounding_tries = 10;
  m.examples_per_client = 4;
  EXPECT_STATUS(FEDSTAT_OK, fedstat_model_update_scratch_size(&m, 4, 3, &bytes));
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED,
                fedstat_model_update_scratch_size(&m, SIZE_MAX, 3, &bytes));
}

static void null_and_foreign_handles(void) {
  uint32_t count = 0;
  size_t written = 0;
  uint8_t out[64];
  int64_t values[2] = {0, 0};
  double epsilon = 0, delta = 0;
  fedstat_privacy_spend spend;
  fedstat_session_outcome outcome;
  fedstat_ledger* ledger = NULL;
  fedstat_ledger_config config;
  size_t bytes = 0;
  memset(&spend, 0, sizeof(spend));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_add(NULL, 1, 1));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_count(NULL, 1, &count));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_serialize(NULL, out, 64, &written));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_sketch_add(NULL, 1, 1));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_sketch_add_histogram(NULL, NULL));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_random_fill(NULL, out, 8));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_random_add_skellam(NULL, values, 2, 1.0));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_charge(NULL, &spend, 1800000000u));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_ledger_spent(NULL, 1800000000u, &epsilon, &delta));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_client_run_session(NULL, NULL, &outcome));
  CHECK(fedstat_histogram_last_error(NULL)[0] != '\0', "last_error(NULL) is empty");
  CHECK(fedstat_client_last_error(NULL)[0] != '\0', "client last_error(NULL) is empty");

  /* A ledger's handle passed as a histogram, a sketch or a random source: refused by its magic. */
  config.epsilon_budget = 1;
  config.delta_budget = 1e-6;
  config.window_seconds = 1000;
  config.blob_name = "cabi-bad-ledger";
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_size(2, &bytes));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_create(memory, bytes, &config, 2, &ledger));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_add((fedstat_histogram*)ledger, 1, 1));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_sketch_add((fedstat_sketch*)ledger, 1, 1));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_random_fill((fedstat_random*)ledger, out, sizeof(out)));
}

static void creates_refuse_and_write_nothing(void) {
  size_t bytes = 0;
  fedstat_histogram* h = NULL;
  fedstat_ledger* l = NULL;
  fedstat_random* r = NULL;
  fedstat_sketch* s = NULL;
  fedstat_ledger_config config;
  fedstat_sketch_params p;
  uint8_t seed[32] = {1};
  unsigned char* misaligned = (unsigned char*)memory + 4;

  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_dense_size(100, &bytes));
  poison();
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED,
                fedstat_histogram_create_dense(memory, bytes - 1, 100, &h));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_histogram_create_dense(misaligned, bytes, 100, &h));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_create_dense(NULL, bytes, 100, &h));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_create_dense(memory, bytes, 100, NULL));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_histogram_create_sparse(memory, sizeof(memory), 100, &h));
  CHECK(untouched() && h == NULL, "a refused histogram create wrote memory or *out");

  EXPECT_STATUS(FEDSTAT_OK, fedstat_random_size(&bytes));
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED,
                fedstat_random_create_seeded(memory, bytes - 1, seed, 0, &r));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_random_create_seeded(misaligned, bytes, seed, 0, &r));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_random_create_seeded(memory, bytes, NULL, 0, &r));
  CHECK(untouched() && r == NULL, "a refused random create wrote memory or *out");

  memset(&p, 0, sizeof(p));
  p.rows = 3;
  p.width = 32;
  p.heap_capacity = 8;
  p.k = 32;
  EXPECT_STATUS(FEDSTAT_OK, fedstat_sketch_size(&p, &bytes));
  poison();
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED, fedstat_sketch_create(memory, bytes - 1, &p, &s));
  p.buffer_slots = 100; /* not a power of two */
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_sketch_create(memory, sizeof(memory), &p, &s));
  CHECK(untouched() && s == NULL, "a refused sketch create wrote memory or *out");

  /* Ledger budgets that are NaN, negative, infinite, or a delta outside (0, 1). */
  config.epsilon_budget = NAN;
  config.delta_budget = 1e-6;
  config.window_seconds = 1000;
  config.blob_name = "cabi-bad-ledger";
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_size(4, &bytes));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_create(memory, bytes, &config, 4, &l));
  config.epsilon_budget = -1;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_create(memory, bytes, &config, 4, &l));
  config.epsilon_budget = INFINITY;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_create(memory, bytes, &config, 4, &l));
  config.epsilon_budget = 1;
  config.delta_budget = 1;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_create(memory, bytes, &config, 4, &l));
  config.delta_budget = 1e-6;
  config.blob_name = "a-name-of-sixty-five-characters-is-one-longer-than-the-platform-ok";
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_create(memory, bytes, &config, 4, &l));
  config.blob_name = "cabi-bad-ledger";
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED,
                fedstat_ledger_create(memory, bytes - 1, &config, 4, &l));
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED,
                fedstat_ledger_create(memory, sizeof(memory), &config, SIZE_MAX, &l));
  CHECK(untouched() && l == NULL, "a refused ledger create wrote memory or *out");
}

/* Reads a file whole (the stored ledger), for comparing before and after. */
static size_t read_file(const char* path, uint8_t* out, size_t capacity) {
  size_t n;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return 0;
  n = fread(out, 1, capacity, f);
  fclose(f);
  return n;
}

static void ledger_spends_refused_change_nothing(const char* directory) {
  static uint8_t before[4096], after[4096];
  char path[600];
  size_t bytes = 0, before_size, after_size;
  double e0 = 0, d0 = 0, e1 = 0, d1 = 0;
  const uint64_t now = 1800000000u;
  fedstat_ledger* l = NULL;
  fedstat_ledger_config config;
  fedstat_ledger_info info0, info1;
  fedstat_privacy_spend spend;
  int i;
  const double bad_epsilons[] = {NAN, -0.1, INFINITY, -INFINITY};
  config.epsilon_budget = 1;
  config.delta_budget = 1e-6;
  config.window_seconds = 1000;
  config.blob_name = "cabi-refusals";
  EXPECT_STATUS(FEDSTAT_OK, fedstat_set_storage_directory(directory));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_size(4, &bytes));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_create(memory, bytes, &config, 4, &l));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_load(l));
  memset(&spend, 0, sizeof(spend));
  spend.task_id = 1;
  spend.epsilon = 0.25;
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_charge(l, &spend, now));
  snprintf(path, sizeof(path), "%s/cabi-refusals", directory);
  before_size = read_file(path, before, sizeof(before));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_spent(l, now, &e0, &d0));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_get_info(l, &info0));

  for (i = 0; i < 4; ++i) {
    spend.epsilon = bad_epsilons[i];
    EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_check(l, &spend, now + 1));
    EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_charge(l, &spend, now + 1));
    CHECK(fedstat_ledger_last_error(l)[0] != '\0', "a refused charge left no message");
  }
  spend.epsilon = 0.1;
  spend.delta = NAN;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_charge(l, &spend, now + 1));
  spend.delta = -1e-9;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_charge(l, &spend, now + 1));
  spend.delta = 0;
  spend.has_rdp = 1;
  spend.rdp[3] = NAN;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_charge(l, &spend, now + 1));
  spend.has_rdp = 0;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_charge(l, &spend, UINT64_MAX));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_ledger_charge(l, NULL, now + 1));
  spend.epsilon = 0.9; /* over the budget with the 0.25 held */
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED, fedstat_ledger_check(l, &spend, now + 1));
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED, fedstat_ledger_charge(l, &spend, now + 1));

  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_spent(l, now, &e1, &d1));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_ledger_get_info(l, &info1));
  after_size = read_file(path, after, sizeof(after));
  CHECK(e1 == e0 && d1 == d0 && info1.spends == info0.spends &&
            info1.ledger_time == info0.ledger_time,
        "refused spends changed the ledger (%g -> %g)", e0, e1);
  CHECK(before_size > 0 && before_size == after_size && memcmp(before, after, before_size) == 0,
        "refused spends changed the stored ledger");
}

static void objects_refuse_and_keep_their_state(void) {
  static uint8_t before[8192], after[8192];
  size_t bytes = 0, before_size = 0, after_size = 0;
  fedstat_histogram* h = NULL;
  fedstat_histogram_info info;
  fedstat_random* r = NULL;
  uint8_t seed[32] = {7};
  int64_t values[3] = {10, 20, 30};
  double x[3] = {0.1, NAN, 0.2}, out[8];
  fedstat_heterogeneity_config config;
  const char* message = NULL;
  uint32_t count = 0;

  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_dense_size(50, &bytes));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_create_dense(memory, bytes, 50, &h));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_add(h, 7, 3));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_serialize(h, before, sizeof(before), &before_size));
  EXPECT_STATUS(FEDSTAT_OUT_OF_RANGE, fedstat_histogram_add(h, 50, 1));
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED, fedstat_histogram_add(h, 7, UINT32_MAX));
  CHECK(strstr(fedstat_histogram_last_error(h), "overflow") != NULL, "last error: %s",
        fedstat_histogram_last_error(h));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_count(h, 7, &count));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_get_info(h, &info));
  CHECK(count == 3 && info.total == 3 && info.dropped == 1 + (uint64_t)UINT32_MAX,
        "refused adds changed a count or lost the dropped mass");
  /* A corrupt blob (one byte flipped) and a truncated one: refused, the counts kept. */
  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_clear(h));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_add(h, 9, 2));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_serialize(h, after, sizeof(after), &after_size));
  before[40] ^= 1;
  EXPECT_STATUS(FEDSTAT_DATA_LOSS, fedstat_histogram_deserialize(h, before, before_size));
  before[40] ^= 1;
  EXPECT_STATUS(FEDSTAT_DATA_LOSS, fedstat_histogram_deserialize(h, before, before_size - 1));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_histogram_deserialize(h, NULL, 10));
  EXPECT_STATUS(FEDSTAT_RESOURCE_EXHAUSTED, fedstat_histogram_serialize(h, before, 10, &bytes));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_histogram_serialize(h, before, sizeof(before), &before_size));
  CHECK(before_size == after_size && memcmp(before, after, after_size) == 0,
        "refused loads changed the histogram");

  /* Skellam noise with lambda NaN, negative, 0 or past 2^31: refused, the values untouched. */
  EXPECT_STATUS(FEDSTAT_OK, fedstat_random_size(&bytes));
  EXPECT_STATUS(FEDSTAT_OK, fedstat_random_create_seeded(memory + 4096, bytes, seed, 0, &r));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_random_add_skellam(r, values, 3, NAN));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_random_add_skellam(r, values, 3, -1));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_random_add_skellam(r, values, 3, 0));
  EXPECT_STATUS(FEDSTAT_OUT_OF_RANGE, fedstat_random_add_skellam(r, values, 3, 4294967296.0));
  EXPECT_STATUS(FEDSTAT_OUT_OF_RANGE, fedstat_random_add_skellam(r, values, 3, INFINITY));
  CHECK(values[0] == 10 && values[1] == 20 && values[2] == 30, "refused noise changed values");

  /* Heterogeneity: a NaN coordinate, p NaN or below 1, W below 4, a wrong output length. */
  config.p = 2;
  config.max_weight = 100;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_heterogeneity_round1(&config, x, 3, out, 8, &message));
  CHECK(message != NULL && message[0] != '\0', "no message for a NaN coordinate");
  x[1] = 0.5;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_heterogeneity_round1(&config, x, 3, out, 7, &message));
  config.p = NAN;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_heterogeneity_round1(&config, x, 3, out, 8, &message));
  config.p = 0.5;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_heterogeneity_round1(&config, x, 3, out, 8, &message));
  config.p = 2;
  config.max_weight = 3;
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                fedstat_heterogeneity_round1(&config, x, 3, out, 8, &message));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_encode_fixed_point(x, 3, NAN, values, NULL));
  EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT, fedstat_encode_fixed_point(x, 3, -1, values, NULL));
  x[0] = 1e300;
  EXPECT_STATUS(FEDSTAT_OUT_OF_RANGE, fedstat_encode_fixed_point(x, 3, 1e10, values, NULL));

  /* KL calibration with epsilon NaN or negative. */
  {
    double lambda = 123;
    EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                  fedstat_kl_dist_skellam_lambda(NAN, 1e-6, 1, 1, 10, &lambda, NULL));
    EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                  fedstat_kl_dist_skellam_lambda(-1, 1e-6, 1, 1, 10, &lambda, NULL));
    EXPECT_STATUS(FEDSTAT_INVALID_ARGUMENT,
                  fedstat_kl_dist_skellam_lambda(1, 1e-6, 0, 0, 10, &lambda, NULL));
    CHECK(lambda == 123, "a refused calibration wrote lambda");
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    printf("usage: %s <scratch directory>\n", argv[0]);
    return 2;
  }
  {
    char path[600]; /* a stored ledger from an earlier run would change the answers */
    snprintf(path, sizeof(path), "%s/cabi-refusals", argv[1]);
    remove(path);
  }
  statuses();
  sizes();
  null_and_foreign_handles();
  creates_refuse_and_write_nothing();
  ledger_spends_refused_change_nothing(argv[1]);
  objects_refuse_and_keep_their_state();
  printf("cabi bad input: %s (%d failed checks)\n", failures == 0 ? "ok" : "FAILED", failures);
  return failures == 0 ? 0 : 1;
}
