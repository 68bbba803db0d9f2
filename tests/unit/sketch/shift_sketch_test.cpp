#include "sdk/sketch/shift_sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "sdk/base/crc32.h"
#include "sdk/sketch/sampling_weight.h"
#include "sdk/sketch/sketch_budget.h"
#include "tests/common/golden_vectors.h"

namespace fedstat {
namespace sketch {
namespace {

ShiftSketchParams small_params(uint32_t seed_byte = 7) {
  ShiftSketchParams p;
  p.rows = 3;
  p.width = 64;
  p.heap_capacity = 16;
  p.k = 64;
  for (int i = 0; i < 32; ++i) p.seed.bytes[i] = static_cast<uint8_t>(seed_byte * 31 + i);
  return p;
}

struct Owned {
  std::vector<uint64_t> memory;
  ShiftSketch sketch;
  explicit Owned(const ShiftSketchParams& p) : memory((shift_sketch_memory_bytes(p) + 7) / 8) {
    EXPECT_TRUE(sketch
                    .init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()),
                                             shift_sketch_memory_bytes(p)))
                    .ok());
  }
};

std::vector<uint8_t> report_of(const ShiftSketch& s) {
  std::vector<uint8_t> out(shift_sketch_report_bytes(s.params(), s.heap_size()));
  EXPECT_EQ(s.serialize(MutableByteSpan(out.data(), out.size())).value(), out.size());
  return out;
}

TEST(ShiftSketch, MemoryFormulaIsExact) {
  const ShiftSketchParams p = small_params();
  // 8·R·w + 8·H + 4·(power of two ≥ 2H) = 8·3·64 + 8·16 + 4·32.
  EXPECT_EQ(shift_sketch_memory_bytes(p), 1536u + 128u + 128u);
  std::vector<uint64_t> memory(400);
  ShiftSketch s;
  EXPECT_EQ(s.init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()), 1791)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(s.init(p, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()), 1792)).ok());
  ShiftSketchParams bad = p;
  bad.rows = 16;
  EXPECT_EQ(validate_params(bad).code(), StatusCode::kInvalidArgument);
}

TEST(ShiftSketch, LinearityIsBitForBit) {
  const ShiftSketchParams p = small_params();
  Owned a(p), b(p), both(p);
  for (uint32_t i = 0; i < 300; ++i) {
    const int64_t ca = (i * 7919) % 13 + 1, cb = (i * 104729) % 5;
    ASSERT_TRUE(a.sketch.add(i, ca).ok());
    if (cb) {
      ASSERT_TRUE(b.sketch.add(i, cb).ok());
    }
    ASSERT_TRUE(both.sketch.add(i, ca + cb).ok());
  }
  ASSERT_TRUE(a.sketch.add_sketch(b.sketch).ok());
  for (uint32_t r = 0; r < p.rows; ++r) {
    for (uint32_t c = 0; c < p.width; ++c) {
      ASSERT_EQ(a.sketch.counter(r, c), both.sketch.counter(r, c));
    }
  }
  EXPECT_EQ(a.sketch.total(), both.sketch.total());
  ASSERT_TRUE(a.sketch.subtract_sketch(b.sketch).ok());  // back to sketch(P)
  Owned again(p);
  for (uint32_t i = 0; i < 300; ++i) ASSERT_TRUE(again.sketch.add(i, (i * 7919) % 13 + 1).ok());
  for (uint32_t r = 0; r < p.rows; ++r) {
    for (uint32_t c = 0; c < p.width; ++c) {
      ASSERT_EQ(a.sketch.counter(r, c), again.sketch.counter(r, c));
    }
  }
  ASSERT_TRUE(again.sketch.scale(-3).ok());
  EXPECT_EQ(again.sketch.counter(0, 0), -3 * a.sketch.counter(0, 0));
  EXPECT_EQ(again.sketch.total(), -3 * a.sketch.total());
}

TEST(ShiftSketch, MismatchedParametersOrSeedsDoNotCombine) {
  Owned a(small_params(1)), b(small_params(2));
  EXPECT_EQ(a.sketch.add_sketch(b.sketch).code(), StatusCode::kInvalidArgument);
  ShiftSketchParams wider = small_params(1);
  wider.width = 65;
  Owned c(wider);
  EXPECT_EQ(a.sketch.subtract_sketch(c.sketch).code(), StatusCode::kInvalidArgument);
}

TEST(ShiftSketch, HeapKeepsTheLargestWeightedItems) {
  ShiftSketchParams p = small_params();
  p.width = 1 << 14;  // no collisions among 200 items: estimates are exact
  p.heap_capacity = 10;
  Owned s(p);
  std::vector<std::pair<int64_t, uint32_t>> truth;
  for (uint32_t i = 0; i < 200; ++i) {
    const int64_t count = 1 + (i * 37) % 11;
    ASSERT_TRUE(s.sketch.add(i, count).ok());
    truth.push_back({count * static_cast<int64_t>(s.sketch.hashes().weight(i)), i});
  }
  for (uint32_t i = 0; i < 200; ++i) EXPECT_EQ(s.sketch.estimate(i), truth[i].first);
  std::sort(truth.rbegin(), truth.rend());
  std::vector<uint32_t> held;
  for (const HeapEntry& e : s.sketch.heap()) held.push_back(e.item);
  std::sort(held.begin(), held.end());
  std::vector<uint32_t> top;
  for (int i = 0; i < 10; ++i) top.push_back(truth[i].second);
  std::sort(top.begin(), top.end());
  EXPECT_EQ(held, top);
}

TEST(ShiftSketch, ExtremeWeightsStayExactAndBounded) {
  // The smallest u (2^-53): W = 1/(1 − u) = 1 at k = 1; W = k/ln(1/u) + O(1) ≈ 110.6 at k = 4096.
  EXPECT_EQ(fixed_sampling_weight(0, 1), 16u);
  const double u0 = uniform_from_hash(0);
  EXPECT_NEAR(sampling_weight(u0, 4096), -1 / std::expm1(std::log(u0) / 4096), 1e-10);
  EXPECT_EQ(fixed_sampling_weight(0, 4096),
            static_cast<uint64_t>(sampling_weight(u0, 4096) * 16 + 0.5));
  // The largest u (1 − 2^-53) is below 1 and its weight is capped at 2^35 (W = 2^31).
  EXPECT_LT(uniform_from_hash(~uint64_t{0}), 1.0);
  EXPECT_EQ(fixed_sampling_weight(~uint64_t{0}, 4096), kMaxFixedWeight);
  EXPECT_EQ(fixed_sampling_weight(~uint64_t{0}, 1), kMaxFixedWeight);
  // W = 1/(1 − u^(1/k)) at u = ½, k = 1 is 2 exactly; at k = 2, 1/(1 − √½) = 3.414...
  EXPECT_DOUBLE_EQ(sampling_weight(0.5, 1), 2.0);
  EXPECT_NEAR(sampling_weight(0.5, 2), 3.4142135623730951, 1e-14);
  // The largest representable update: a count of 2^27 at the cap adds 2^62 exactly.
  ShiftSketchParams p = small_params();
  Owned s(p);
  ASSERT_TRUE(s.sketch.add(5, int64_t{1} << 27).ok());
  const int64_t expected = (int64_t{1} << 27) * static_cast<int64_t>(s.sketch.hashes().weight(5));
  EXPECT_EQ(s.sketch.estimate(5), expected);
}

TEST(ShiftSketch, ReportRoundTripsAndEveryCorruptionIsRejected) {
  const ShiftSketchParams p = small_params();
  Owned s(p);
  for (uint32_t i = 0; i < 50; ++i) ASSERT_TRUE(s.sketch.add(i * 3, i + 1).ok());
  const std::vector<uint8_t> blob = report_of(s.sketch);
  SketchReport r;
  ASSERT_TRUE(parse_sketch_report(ByteSpan(blob.data(), blob.size()), r).ok());
  EXPECT_EQ(r.total, s.sketch.total());
  EXPECT_EQ(r.heap_count, s.sketch.heap_size());
  EXPECT_EQ(r.counter(p.width + 3), s.sketch.counter(1, 3));
  for (size_t i = 0; i < blob.size(); ++i) {
    std::vector<uint8_t> bad = blob;
    bad[i] ^= 0x10;
    EXPECT_FALSE(parse_sketch_report(ByteSpan(bad.data(), bad.size()), r).ok()) << i;
  }
  EXPECT_EQ(parse_sketch_report(ByteSpan(blob.data(), blob.size() - 1), r).code(),
            StatusCode::kDataLoss);
}

static_assert(golden::kShiftSketchReportCrc != 0x2144DF1Cu,
              "pin the CRC of the content: 0x2144DF1C is the residue of any data plus its CRC");

// The same seed and inputs give the same report bytes on every architecture (x86-64, AArch64
// under qemu-aarch64 and the Cortex-M4 self-test pin the same CRC).
TEST(ShiftSketch, SameBytesOnEveryArchitecture) {
  const ShiftSketchParams p = small_params();
  Owned s(p);
  for (uint32_t i = 0; i < 400; ++i) {
    ASSERT_TRUE(s.sketch.add((i * 2654435761u) % 1000003u, i % 9 + 1).ok());
  }
  const std::vector<uint8_t> blob = report_of(s.sketch);
  // The content without the trailing CRC (data followed by its CRC always gives 0x2144DF1C).
  EXPECT_EQ(crc32(ByteSpan(blob.data(), blob.size() - 4)), golden::kShiftSketchReportCrc);
}

TEST(SketchBudget, ParametersFitTheBudget) {
  Seed256 seed;
  for (size_t bytes : {size_t{1024}, size_t{49152}, size_t{163840}, size_t{262144}, size_t{409600},
                       size_t{1} << 22}) {
    const ShiftSketchParams p = params_for_budget(bytes, seed).value();
    EXPECT_LE(shift_sketch_memory_bytes(p), bytes) << bytes;
    EXPECT_GT(shift_sketch_memory_bytes(p), bytes * 9 / 10) << bytes;
    EXPECT_EQ(p.rows, bytes < 256 * 1024 ? 5u : 3u);
    EXPECT_EQ(p.k, 4 * p.heap_capacity);
  }
  EXPECT_EQ(params_for_budget(1000, seed).status().code(), StatusCode::kInvalidArgument);
}

// The heap the rule documents: the largest H whose 8·H + 4·S(H) bytes fit heap_fraction·B,
// found here by the plain linear search (fine for small budgets).
uint32_t largest_heap(size_t bytes, double fraction) {
  auto cost = [](uint64_t h) { return 8 * h + 4 * uint64_t{heap_index_slots(uint32_t(h))}; };
  uint32_t h = 1;
  while (static_cast<double>(cost(h + 1)) <= fraction * static_cast<double>(bytes)) ++h;
  return h;
}

TEST(SketchBudget, HeapIsTheLargestThatFits) {
  Seed256 seed;
  for (size_t bytes = 1024; bytes <= (size_t{1} << 21); bytes = bytes * 3 / 2 + 7) {
    for (double fraction : {0.001, 0.35, 0.9}) {
      const ShiftSketchParams p = params_for_budget(bytes, seed, BudgetRule{fraction, 4}).value();
      EXPECT_EQ(p.heap_capacity, largest_heap(bytes, fraction)) << bytes << " " << fraction;
      EXPECT_LE(shift_sketch_memory_bytes(p), bytes) << bytes << " " << fraction;
    }
  }
}

// Budgets at and above the maximum answer at once (a 32-bit heap counter once wrapped at
// ~1.96e11 bytes and the search never ended): the maximum itself fits, anything above is
// refused with an error that names the maximum.
TEST(SketchBudget, HugeBudgetsAreRefusedAtOnce) {
  Seed256 seed;
  const ShiftSketchParams largest = params_for_budget(kMaxBudgetBytes, seed).value();
  EXPECT_EQ(largest.rows, 3u);
  EXPECT_LE(shift_sketch_memory_bytes(largest), kMaxBudgetBytes);
  EXPECT_GT(shift_sketch_memory_bytes(largest), kMaxBudgetBytes / 10 * 9);
  EXPECT_TRUE(validate_params(largest).ok());
  for (uint64_t bytes : {uint64_t{kMaxBudgetBytes} + 1, uint64_t{196000000000},
                         uint64_t{200000000000}, uint64_t{1} << 40, uint64_t{SIZE_MAX}}) {
    if (bytes > SIZE_MAX) continue;
    const auto p = params_for_budget(static_cast<size_t>(bytes), seed);
    EXPECT_EQ(p.status().code(), StatusCode::kOutOfRange) << bytes;
    EXPECT_NE(std::strstr(p.status().message(), "2^31 bytes"), nullptr) << p.status().message();
  }
  // k = k_per_heap·H must not wrap either.
  EXPECT_EQ(params_for_budget(1024, seed, BudgetRule{0.35, 0x80000000u}).status().code(),
            StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace sketch
}  // namespace fedstat
