#include "sdk/sketch/stability_histogram.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
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

// How many items survive the noise depends on the data, so an `out` that could fill up would
// make the refusal itself data-dependent: an out smaller than in is refused before any noise,
// whatever in holds, and out keeps what it had.
TEST(StabilityHistogram, OutSmallerThanInIsRefusedWhateverTheData) {
  std::vector<histogram::SparseEntry> in_table(64), out_table(32);
  histogram::SparseHistogram in, out;
  ASSERT_TRUE(in.init(Span<histogram::SparseEntry>(in_table.data(), 64)).ok());
  ASSERT_TRUE(out.init(Span<histogram::SparseEntry>(out_table.data(), 32)).ok());
  ASSERT_TRUE(out.add(5, 7).ok());
  const StabilityParams p = stability_params(1, 1e-6).value();
  noise::testing_util::SeededBits bits(4);
  for (uint32_t held : {0u, 1u, 40u}) {  // empty, one small count, more than out could hold
    for (uint32_t id = 1; id <= held; ++id) ASSERT_TRUE(in.add(id, 1000).ok());
    EXPECT_EQ(stability_histogram(in, p, bits.bits, out).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(out.count(5), 7u);
    in.clear();
  }
}

// The review's attack: items whose home slots collide (capacity 8: ids 8, 16 and 21 all start
// at slot 7) put the released items in an order that showed whether a DROPPED item was held.
// Now the released table's layout depends only on the released ids: with and without the
// dropped item (a count of 1, kept only with probability δ), the released ids come out in the
// same order on every seed.
TEST(StabilityHistogram, ReleasedLayoutDoesNotShowDroppedItems) {
  const StabilityParams p = stability_params(1, 1e-6).value();
  auto released_ids = [&](bool with_dropped, uint64_t seed) {
    std::vector<histogram::SparseEntry> in_table(8), out_table(8);
    histogram::SparseHistogram in, out;
    EXPECT_TRUE(in.init(Span<histogram::SparseEntry>(in_table.data(), 8)).ok());
    EXPECT_TRUE(out.init(Span<histogram::SparseEntry>(out_table.data(), 8)).ok());
    if (with_dropped) {
      EXPECT_TRUE(in.add(21, 1).ok());  // in the table first: its slot is 7
    }
    EXPECT_TRUE(in.add(8, 1000).ok());
    EXPECT_TRUE(in.add(16, 1000).ok());
    noise::testing_util::SeededBits bits(seed);
    EXPECT_TRUE(stability_histogram(in, p, bits.bits, out).ok());
    std::vector<uint32_t> ids;
    for (const histogram::SparseEntry& e : out.slots()) {
      if (e.count != 0) ids.push_back(e.id);
    }
    return ids;
  };
  for (uint64_t seed = 100; seed < 300; ++seed) {
    const std::vector<uint32_t> with = released_ids(true, seed);
    ASSERT_EQ(with.size(), 2u) << "the count of 1 was released: a δ event at a fixed seed";
    EXPECT_EQ(with, released_ids(false, seed)) << seed;
  }
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

// Issue 11 item 7: ε = +inf passed `!(epsilon > 0)` and gave scale 1/inf = 0, i.e. no noise.
TEST(StabilityHistogram, RefusesEpsilonAndDeltaOutsideTheirRange) {
  const double nan = std::nan(""), inf = HUGE_VAL;
  for (double epsilon : {inf, -inf, nan, 0.0, -1.0, 20.5, 1e6, 1e300, 0.0009, 1e-12}) {
    const auto p = stability_params(epsilon, 1e-6);
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << epsilon;
    EXPECT_NE(std::string(p.status().message()).find("epsilon must be finite and in [0.001, 20]"),
              std::string::npos)
        << p.status().message();
  }
  for (double delta : {nan, inf, -inf, 0.0, 1.0, -1e-6, 2.0}) {
    const auto p = stability_params(1, delta);
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << delta;
    EXPECT_NE(std::string(p.status().message()).find("delta"), std::string::npos);
  }
  // The ends of the range work, and the scale is never below 1/ε.
  for (double epsilon : {20.0, 0.001}) {
    const auto p = stability_params(epsilon, 1e-6);
    ASSERT_TRUE(p.ok()) << epsilon << ": " << p.status().message();
    EXPECT_GE(p->scale.to_double(), 1 / epsilon);
    EXPECT_LE(p->delta, 1e-6);
  }
}

TEST(StabilityHistogram, BoundIsTheSmallestAcrossTheRange) {
  for (double epsilon : {0.001, 0.01, 0.3, 1.0, 7.0, 20.0}) {
    for (double delta : {1e-50, 1e-12, 1e-6, 0.1, 0.9}) {
      const auto p = stability_params(epsilon, delta);
      if (!p.ok()) {
        EXPECT_EQ(p.status().code(), StatusCode::kOutOfRange) << epsilon << " " << delta;
        continue;
      }
      const double scale = p->scale.to_double();
      EXPECT_LE(p->delta, delta);
      EXPECT_EQ(p->delta, privacy::truncated_discrete_laplace_delta(scale, p->bound, 1).value());
      if (p->bound > 1) {
        EXPECT_GT(privacy::truncated_discrete_laplace_delta(scale, p->bound - 1, 1).value(), delta)
            << epsilon << " " << delta;
      }
    }
  }
}

TEST(StabilityHistogram, RefusesHandBuiltParamsThatWouldNotNoise) {
  std::vector<histogram::SparseEntry> in_table(16), out_table(16);
  histogram::SparseHistogram in, out;
  ASSERT_TRUE(in.init(Span<histogram::SparseEntry>(in_table.data(), 16)).ok());
  ASSERT_TRUE(out.init(Span<histogram::SparseEntry>(out_table.data(), 16)).ok());
  for (uint32_t id = 1; id <= 5; ++id) ASSERT_TRUE(in.add(id, 50).ok());
  const StabilityParams good = stability_params(1, 1e-6).value();
  noise::testing_util::SeededBits bits(5);
  auto refused = [&](StabilityParams p) {
    ASSERT_TRUE(out.add(999, 1).ok());  // something already held
    const Status s = stability_histogram(in, p, bits.bits, out);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(s.message()).find("stability_params"), std::string::npos) << s.message();
    EXPECT_EQ(out.count(999), 1u) << "refused params must leave out alone";
    out.clear();
  };
  StabilityParams p = good;
  p.scale = noise::Rational{0, 1};  // no noise at all
  refused(p);
  p.scale = noise::Rational{1, 0};
  refused(p);
  p.scale = noise::Rational{1, 1000};  // ε = 1000: noise almost always 0
  refused(p);
  p.scale = noise::Rational{2001, 1};  // ε < 0.001
  refused(p);
  p = good;
  p.bound = 0;
  refused(p);
  p = good;
  p.bound = 1;  // δ of (T, 1) is far above the claimed 1e-6
  refused(p);
  p = good;
  p.delta = std::nan("");
  refused(p);
  p = good;
  p.delta = 1;
  refused(p);
  ASSERT_TRUE(stability_histogram(in, good, bits.bits, out).ok());
}

}  // namespace
}  // namespace sketch
}  // namespace fedstat
