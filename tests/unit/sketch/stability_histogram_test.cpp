#include "sdk/sketch/stability_histogram.h"

#include <gtest/gtest.h>

#include <vector>

#include "sdk/privacy/accountants.h"
#include "tests/unit/noise/sampler_test_util.h"

namespace fedstat {
namespace sketch {
namespace {

TEST(StabilityHistogram, BoundIsTheSmallestMeetingDelta) {
  const StabilityParams p = stability_params(3, 1e-6).value();
  EXPECT_LE(p.delta, 1e-6);
  EXPECT_GT(privacy::truncated_discrete_laplace_delta(p.scale.to_double(), p.bound - 1, 1).value(),
            1e-6);
  EXPECT_GE(p.scale.to_double(), 1.0 / 3);
  EXPECT_EQ(stability_params(0, 1e-6).status().code(), StatusCode::kInvalidArgument);
}

TEST(StabilityHistogram, KeepsOnlyHeldItemsAboveTheBound) {
  std::vector<histogram::SparseEntry> in_table(64), out_table(64);
  histogram::SparseHistogram in, out;
  ASSERT_TRUE(in.init(Span<histogram::SparseEntry>(in_table.data(), 64)).ok());
  ASSERT_TRUE(out.init(Span<histogram::SparseEntry>(out_table.data(), 64)).ok());
  for (uint32_t id = 1; id <= 20; ++id) ASSERT_TRUE(in.add(id * 100, id).ok());
  const StabilityParams p = stability_params(1, 1e-6).value();
  noise::testing_util::SeededBits bits(3);
  ASSERT_TRUE(stability_histogram(in, p, bits.bits, out).ok());
  const Span<const histogram::SparseEntry> slots = out.slots();
  size_t kept = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].count == 0) continue;
    ++kept;
    EXPECT_EQ(slots[i].id % 100, 0u);  // only items the client holds
    const int64_t original = slots[i].id / 100;
    EXPECT_GT(slots[i].count, p.bound);
    EXPECT_LE(static_cast<int64_t>(slots[i].count) - original, static_cast<int64_t>(p.bound));
    EXPECT_GE(static_cast<int64_t>(slots[i].count) - original, -static_cast<int64_t>(p.bound));
  }
  EXPECT_GT(kept, 0u);
  // A count of 1 is kept only if its noise is exactly +B — the δ event (< 1e-6); fixed seed.
  EXPECT_EQ(out.count(100), 0u);
  EXPECT_EQ(stability_histogram(in, p, bits.bits, in).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace sketch
}  // namespace fedstat
