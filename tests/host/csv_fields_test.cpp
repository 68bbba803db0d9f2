#include "host_server/estimate/csv_fields.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace fedstat {
namespace host {
namespace {

std::string error_of(const std::string& field) {
  try {
    parse_decimal_field(field, CsvPlace{"D.csv", 4, 2});
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

double value_of(const std::string& field) {
  return parse_decimal_field(field, CsvPlace{"D.csv", 4, 2});
}

TEST(CsvFields, SplitKeepsEmptyFields) {
  EXPECT_EQ(split_csv_fields("1,2,3"), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_EQ(split_csv_fields("1,,2"), (std::vector<std::string>{"1", "", "2"}));
  EXPECT_EQ(split_csv_fields("1,2,"), (std::vector<std::string>{"1", "2", ""}));
  EXPECT_EQ(split_csv_fields("1,2\r"), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(split_csv_fields(""), (std::vector<std::string>{""}));
}

TEST(CsvFields, AcceptsPlainDecimals) {
  EXPECT_EQ(value_of("7"), 7.0);
  EXPECT_EQ(value_of(" -0.25\t"), -0.25);
  EXPECT_EQ(value_of("+3."), 3.0);
  EXPECT_EQ(value_of(".5"), 0.5);
  EXPECT_EQ(value_of("1e-3"), 1e-3);
  EXPECT_EQ(value_of("2.5E+10"), 2.5e10);
  EXPECT_EQ(value_of("1.7976931348623157e308"), 1.7976931348623157e308);
  EXPECT_EQ(value_of("0.1"), 0.1);  // correctly rounded, as strtod
  EXPECT_EQ(value_of("4.9e-324"), 4.9e-324);
  EXPECT_TRUE(std::signbit(value_of("-0")));
}

TEST(CsvFields, RefusesEverythingElseSayingWhereAndWhat) {
  EXPECT_EQ(error_of(""), "D.csv:4: field 2: is empty (a doubled or trailing comma?)");
  EXPECT_EQ(error_of("  "), "D.csv:4: field 2: is empty (a doubled or trailing comma?)");
  EXPECT_EQ(error_of("0x1p-1"), "D.csv:4: field 2: '0x1p-1' is a hex number: write decimal digits");
  EXPECT_EQ(error_of("-0X10"), "D.csv:4: field 2: '-0X10' is a hex number: write decimal digits");
  EXPECT_EQ(error_of("0.5x"),
            "D.csv:4: field 2: '0.5x' is not a decimal number (unexpected 'x' at character 4)");
  EXPECT_EQ(error_of("inf"),
            "D.csv:4: field 2: 'inf' is not a finite number: inf and nan are not accepted");
  EXPECT_EQ(error_of("-Infinity"),
            "D.csv:4: field 2: '-Infinity' is not a finite number: inf and nan are not accepted");
  EXPECT_EQ(error_of("NaN"),
            "D.csv:4: field 2: 'NaN' is not a finite number: inf and nan are not accepted");
  EXPECT_EQ(error_of("1e309"),
            "D.csv:4: field 2: '1e309' is outside the range of a double (about 4.9e-324 to "
            "1.8e308)");
  EXPECT_EQ(error_of("1e-400"),
            "D.csv:4: field 2: '1e-400' is outside the range of a double (about 4.9e-324 to "
            "1.8e308)");
  for (const char* bad : {".", "-", "+", "e5", "1e", "1e+", "1.2.3", "1 2", "--1", "+-1", "1,5",
                          "١", "0.5 x", "1_000", "1e5.5", "0b101"}) {
    const std::string e = error_of(bad);
    EXPECT_EQ(e.rfind("D.csv:4: field 2: ", 0), 0u) << bad << ": " << e;
  }
}

TEST(CsvFields, RowsNameTheFieldThatFailed) {
  EXPECT_EQ(parse_decimal_row("1, 2.5,-3", "R.csv", 1), (std::vector<double>{1, 2.5, -3}));
  try {
    parse_decimal_row("1,2,", "R.csv", 9);
    FAIL() << "a trailing comma was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "R.csv:9: field 3: is empty (a doubled or trailing comma?)");
  }
}

}  // namespace
}  // namespace host
}  // namespace fedstat
