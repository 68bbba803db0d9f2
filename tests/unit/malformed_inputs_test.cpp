// The shared hostile-input cases (tests/common/malformed_inputs.h), one test each on the host;
// the Cortex-M4 self-test runs the same cases where size_t is 32 bits.
#include "tests/common/malformed_inputs.h"

#include <gtest/gtest.h>

#include <string>

namespace fedstat {
namespace malformed {
namespace {

class MalformedInputs : public ::testing::TestWithParam<size_t> {};

TEST_P(MalformedInputs, IsRefused) {
  size_t count = 0;
  const Case& c = cases(count)[GetParam()];
  EXPECT_TRUE(c.refused()) << c.name;
}

INSTANTIATE_TEST_SUITE_P(AllCases, MalformedInputs,
                         ::testing::Range(size_t{0},
                                          [] {
                                            size_t count = 0;
                                            cases(count);
                                            return count;
                                          }()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           size_t count = 0;
                           return std::string(cases(count)[info.param].id);
                         });

}  // namespace
}  // namespace malformed
}  // namespace fedstat
