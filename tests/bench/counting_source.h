// A RandomSource that counts the bytes it hands out, for the benchmarks' words-per-sample figures
// (noise_bench, skellam_stream_bench): one extra indirect call per refill, not per bit.
// Memory: sizeof(CountingSource), two words.
#ifndef FEDSTAT_TESTS_BENCH_COUNTING_SOURCE_H_
#define FEDSTAT_TESTS_BENCH_COUNTING_SOURCE_H_

#include <stdint.h>

#include "sdk/base/random_source.h"

namespace fedstat {
namespace bench {

class CountingSource final : public RandomSource {
 public:
  explicit CountingSource(RandomSource& inner) : inner_(inner) {}
  Status fill(MutableByteSpan out) override {
    bytes_ += out.size();
    return inner_.fill(out);
  }
  uint64_t bytes() const { return bytes_; }

 private:
  RandomSource& inner_;
  uint64_t bytes_ = 0;
};

}  // namespace bench
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_BENCH_COUNTING_SOURCE_H_
