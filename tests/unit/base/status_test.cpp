#include "sdk/base/status.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iterator>

#include "sdk/base/result.h"

namespace fedstat {
namespace {

TEST(StatusTest, DefaultIsOkWithEmptyMessage) {
  const Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_STREQ(s.message(), "");
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  const Status s = resource_exhausted("table full: raise the capacity");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_STREQ(s.message(), "table full: raise the capacity");
  EXPECT_STREQ(status_code_name(s.code()), "resource_exhausted");
}

TEST(StatusTest, EveryCodeHasADistinctName) {
  const StatusCode codes[] = {StatusCode::kOk,
                              StatusCode::kInvalidArgument,
                              StatusCode::kOutOfRange,
                              StatusCode::kResourceExhausted,
                              StatusCode::kFailedPrecondition,
                              StatusCode::kNotFound,
                              StatusCode::kAlreadyExists,
                              StatusCode::kDataLoss,
                              StatusCode::kUnavailable,
                              StatusCode::kDeadlineExceeded,
                              StatusCode::kPermissionDenied,
                              StatusCode::kAborted,
                              StatusCode::kUnimplemented,
                              StatusCode::kInternal};
  for (size_t i = 0; i < std::size(codes); ++i) {
    EXPECT_STRNE(status_code_name(codes[i]), "unknown");
    for (size_t j = 0; j < i; ++j) {
      EXPECT_STRNE(status_code_name(codes[i]), status_code_name(codes[j]));
    }
  }
}

Status fails_at(int step, int* reached) {
  for (int i = 0; i < 3; ++i) {
    FEDSTAT_RETURN_IF_ERROR(i == step ? data_loss("step failed") : Status());
    *reached = i;
  }
  return Status();
}

TEST(StatusTest, ReturnIfErrorStopsAtTheFirstError) {
  int reached = -1;
  const Status s = fails_at(1, &reached);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_EQ(reached, 0);
  reached = -1;
  EXPECT_TRUE(fails_at(5, &reached).ok());
  EXPECT_EQ(reached, 2);
}

Result<int> half(int x) {
  if (x % 2 != 0) return invalid_argument("odd");
  return x / 2;
}

Result<int> quarter(int x) {
  FEDSTAT_ASSIGN_OR_RETURN(const int h, half(x));
  FEDSTAT_ASSIGN_OR_RETURN(const int q, half(h));
  return q;
}

TEST(ResultTest, HoldsValueOrError) {
  const Result<int> good = half(8);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good.value(), 4);
  const Result<int> bad = half(7);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.value_or(-1), -1);
}

TEST(ResultTest, AssignOrReturnPropagatesTheInnerError) {
  EXPECT_EQ(quarter(12).value(), 3);
  EXPECT_EQ(quarter(6).status().code(), StatusCode::kInvalidArgument);  // 6 -> 3 is odd
  EXPECT_FALSE(quarter(5).ok());
}

TEST(ResultTest, OkStatusWithoutValueBecomesAnInternalError) {
  const Result<int> r = Status();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

struct Counted {
  static int live;
  int v = 0;
  Counted() { ++live; }
  explicit Counted(int x) : v(x) { ++live; }
  Counted(const Counted& o) : v(o.v) { ++live; }
  Counted& operator=(const Counted&) = default;
  ~Counted() { --live; }
};
int Counted::live = 0;

TEST(ResultTest, ConstructsAndDestroysItsValueExactlyOnce) {
  {
    Result<Counted> a = Counted(5);
    Result<Counted> b = a;
    Result<Counted> c = not_found("x");
    c = b;
    EXPECT_EQ(c.value().v, 5);
    EXPECT_EQ(Counted::live, 3);
  }
  EXPECT_EQ(Counted::live, 0);
}

}  // namespace
}  // namespace fedstat
