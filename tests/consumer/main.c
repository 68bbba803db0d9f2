/* A tiny C99 application that uses fedstat only through its installed C ABI: find_package(fedstat)
 * and fedstat::c, or pkg-config fedstat-c; one header, <fedstat/fedstat.h>. It builds the golden
 * data-shift sketch report (the same 400 updates and seed as tests/consumer/main.cpp) and the
 * report of a histogram, and prints the first one's CRC-32 for run_consumer.cmake to compare
 * with tests/common/golden_vectors.h on every architecture (x86-64, AArch64, the Cortex-M4 and M0).
 * Memory: static buffers only (about 5.5 KiB, within the Cortex-M0's 16 KiB). docs/c_abi.md quotes
 * report_from_histogram.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <fedstat/fedstat.h>

static uint64_t histogram_memory[128]; /* uint64_t: FEDSTAT_ALIGNMENT (8) */
static uint64_t sketch_memory[384];
static uint8_t report[2048];
static int failures = 0;

/* CRC-32 (IEEE 802.3, reflected), bit by bit: the check value of sdk/base/crc32.h. */
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

static void fail(const char* what, fedstat_status status, const char* message) {
  ++failures;
  printf("FAILED %s: %s (%s)\n", what, fedstat_status_name(status), message);
}

/* The device's report from its histogram, for the task's sketch shape and seed (docs/c_abi.md
 * quotes this function). */
static int report_from_histogram(const uint8_t seed[32], size_t* size) {
  fedstat_histogram* h = NULL;
  fedstat_sketch* s = NULL;
  fedstat_sketch_params p = {3, 64, 16, 64, 0, {0}}; /* R, w, H, k, buffer slots, seed */
  memcpy(p.seed, seed, 32);                          /* the task's seed */
  if (fedstat_histogram_create_sparse(histogram_memory, sizeof histogram_memory, 64, &h)) return -1;
  fedstat_histogram_add(h, 42, 3); /* the app's observations: item, count */
  fedstat_histogram_add(h, 7, 1);
  if (fedstat_sketch_create(sketch_memory, sizeof sketch_memory, &p, &s)) return -1;
  if (fedstat_sketch_add_histogram(s, h) ||
      fedstat_sketch_serialize(s, report, sizeof report, size)) {
    fprintf(stderr, "report: %s\n", fedstat_sketch_last_error(s));
    return -1;
  }
  return 0; /* report[0, *size) is what the device sends */
}

int main(void) {
  uint8_t seed[32];
  fedstat_sketch_params p = {3, 64, 16, 64, 0, {0}};
  fedstat_sketch* s = NULL;
  fedstat_status st;
  size_t size = 0, needed = 0;
  uint32_t i;
  printf("fedstat %s (C ABI)\n", fedstat_version());
  for (i = 0; i < 32; ++i) p.seed[i] = (uint8_t)(7 * 31 + i);
  st = fedstat_sketch_size(&p, &needed);
  if (st != FEDSTAT_OK || needed > sizeof sketch_memory) fail("sketch size", st, "");
  st = fedstat_sketch_create(sketch_memory, sizeof sketch_memory, &p, &s);
  for (i = 0; i < 400 && st == FEDSTAT_OK; ++i) {
    st = fedstat_sketch_add(s, (uint32_t)((i * 2654435761u) % 1000003u), (int64_t)(i % 9 + 1));
  }
  if (st == FEDSTAT_OK) st = fedstat_sketch_serialize(s, report, sizeof report, &size);
  if (st != FEDSTAT_OK || size < 4) {
    fail("golden sketch", st, s != NULL ? fedstat_sketch_last_error(s) : "");
  } else {
    printf("c sketch report: %u bytes, crc32 %08x\n", (unsigned)size,
           (unsigned)crc32_of(report, size - 4)); /* the last 4 bytes are its own CRC */
  }
  memcpy(seed, p.seed, 32);
  if (report_from_histogram(seed, &size) == 0) {
    printf("c histogram report: %u bytes\n", (unsigned)size);
  } else {
    fail("histogram report", FEDSTAT_INTERNAL, "see above");
  }
  printf("consumer c: %s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
