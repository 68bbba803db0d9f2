// The fuzz harness's canary (test fuzz.harness_reports_failures): a target whose invariant breaks
// on one of its own seeds, "FUZZ!", so run_fuzz.cmake must fail and name the invariant.
#include <cstring>

#include "tests/fuzz/fuzz_common.h"

namespace {
void write_seeds(fedstat::fuzz::SeedWriter& out) {
  out.add(reinterpret_cast<const uint8_t*>("hello"), 5);
  out.add(reinterpret_cast<const uint8_t*>("FUZZ!"), 5);
}
}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FUZZ_CHECK(!(size == 5 && std::memcmp(data, "FUZZ!", 5) == 0));
  return 0;
}
