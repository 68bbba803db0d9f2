/* A device's first report, through fedstat's C ABI (<fedstat/fedstat.h>): the program of the
 * "first integration" walk-throughs (docs/first_integration.md). The same source is an app on
 * Linux/Android and a firmware image on a Cortex-M4.
 *
 * The app counts the events it observes in a histogram. When the server's data-shift task
 * arrives (here fixed: a 4 KiB sketch and the task's 32-byte seed), it builds the sketch of its
 * histogram and serialises the report, the bytes the Client would noise, mask and send.
 *   first_report [report.bin]    prints the report's size and CRC-32; writes the bytes to the
 *                                file when one is named (hosted builds)
 * Every architecture prints the same CRC-32 (tests/common/golden_vectors.h, kFirstReportCrc).
 *
 * Memory: static buffers only, 18.5 KiB (histogram 2.5 KiB, sketch 8 KiB, report 8 KiB); no heap.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <fedstat/fedstat.h>

#define DISTINCT_ITEMS 200 /* the events' item ids: 0..199, Zipf-like */
#define EVENTS 1000

static uint64_t histogram_memory[320]; /* uint64_t gives FEDSTAT_ALIGNMENT (8) */
static uint64_t sketch_memory[1024];
static uint8_t report[8192];

/* CRC-32 (IEEE 802.3) of the report, to compare architectures at a glance. */
static uint32_t crc32_of(const uint8_t* bytes, size_t size) {
  uint32_t crc = 0xFFFFFFFFu;
  size_t i;
  int bit;
  for (i = 0; i < size; ++i) {
    crc ^= bytes[i];
    for (bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/* Stops the program with the status's name and the object's own message. */
static int fail(const char* step, fedstat_status status, const char* message) {
  printf("first_report: %s failed: %s: %s\n", step, fedstat_status_name(status), message);
  return 1;
}

int main(int argc, char** argv) {
  fedstat_histogram* histogram = NULL;
  fedstat_sketch* sketch = NULL;
  fedstat_sketch_params params;
  uint8_t task_seed[32];
  const char* message = "";
  size_t bytes = 0, size = 0;
  uint32_t state = 12345u, event, i;
  fedstat_status st;

  /* 1. The app's observations: a sparse histogram (up to 256 distinct ids here). */
  st = fedstat_histogram_create_sparse(histogram_memory, sizeof histogram_memory, 256, &histogram);
  if (st != FEDSTAT_OK) return fail("histogram", st, "memory (see fedstat_histogram_sparse_size)");
  for (event = 0; event < EVENTS; ++event) {
    uint32_t item;
    state = state * 1664525u + 1013904223u; /* the "sensor": a fixed pseudo-random stream */
    item = (state >> 8) % DISTINCT_ITEMS;
    item = item * item / DISTINCT_ITEMS; /* more events on small ids */
    st = fedstat_histogram_add(histogram, item, 1);
    if (st != FEDSTAT_OK) return fail("counting", st, fedstat_histogram_last_error(histogram));
  }

  /* 2. The task: the sketch shape for its byte budget, and its seed (both from the server). */
  for (i = 0; i < 32; ++i) task_seed[i] = (uint8_t)(i * 7 + 1);
  st = fedstat_sketch_params_for_budget(4096, task_seed, &params);
  if (st == FEDSTAT_OK) st = fedstat_sketch_size(&params, &bytes);
  if (st != FEDSTAT_OK) return fail("sketch parameters", st, "");
  if (bytes > sizeof sketch_memory) return fail("sketch memory", FEDSTAT_RESOURCE_EXHAUSTED, "");
  st = fedstat_sketch_create(sketch_memory, sizeof sketch_memory, &params, &sketch);
  if (st != FEDSTAT_OK) return fail("sketch", st, "");

  /* 3. The report: the sketch of the histogram, serialised. */
  st = fedstat_sketch_add_histogram(sketch, histogram);
  if (st == FEDSTAT_OK) st = fedstat_sketch_serialize(sketch, report, sizeof report, &size);
  if (st != FEDSTAT_OK) return fail("report", st, fedstat_sketch_last_error(sketch));
  printf("fedstat %s: %u events; sketch R=%u w=%u H=%u in %u bytes\n", fedstat_version(),
         (unsigned)EVENTS, (unsigned)params.rows, (unsigned)params.width,
         (unsigned)params.heap_capacity, (unsigned)bytes);
  printf("report: %u bytes, crc32 %08x\n", (unsigned)size, (unsigned)crc32_of(report, size));

  /* 4. Hosted: keep the bytes (an analyst reads them with Python's fedstat.SketchReport). A
   * firmware image has no files (QEMU's semihosting passes it an empty argument). */
#ifndef FEDSTAT_PLATFORM_BAREMETAL
  if (argc > 1 && argv[1][0] != '\0') {
    FILE* out = fopen(argv[1], "wb");
    if (out == NULL || fwrite(report, 1, size, out) != size || fclose(out) != 0) {
      message = "cannot write the file";
      return fail(argv[1], FEDSTAT_UNAVAILABLE, message);
    }
    printf("wrote %s\n", argv[1]);
  }
#else
  (void)argc;
  (void)argv;
  (void)message;
#endif
  return 0;
}
