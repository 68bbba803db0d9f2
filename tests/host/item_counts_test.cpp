#include "host_server/estimate/item_counts.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace fedstat {
namespace host {
namespace {

ItemCounts parse(const std::string& text) {
  std::istringstream in(text);
  return parse_item_counts(in, "F.txt");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ItemCounts, ParsesSortsAndTotals) {
  const ItemCounts counts = parse("# comment\n7 3\n\n2\t5\r\n4294967295 1\n");
  ASSERT_EQ(counts.items.size(), 3u);
  EXPECT_EQ(counts.items[0].id, 2u);
  EXPECT_EQ(counts.items[2].id, 4294967295u);
  EXPECT_EQ(counts.total, 9u);
  EXPECT_EQ(counts.count(7), 3u);
  EXPECT_EQ(counts.count(8), 0u);
}

TEST(ItemCounts, ErrorsNameTheFileAndTheLine) {
  EXPECT_EQ(error_of("1 2\nx 3\n"),
            "F.txt:2: expected '<item_id> <count>' with item_id an integer below 2^32");
  EXPECT_EQ(error_of("4294967296 1\n"),
            "F.txt:1: expected '<item_id> <count>' with item_id an integer below 2^32");
  EXPECT_EQ(error_of("1 2\n2 0\n"), "F.txt:2: count must be positive");
  EXPECT_EQ(error_of("1\n"),
            "F.txt:1: expected a count (a positive integer below 2^63) after the item id");
  EXPECT_EQ(error_of("1 2 3\n"), "F.txt:1: unexpected text after the count");
  EXPECT_EQ(error_of("1 -2\n"),
            "F.txt:1: expected a count (a positive integer below 2^63) after the item id");
  EXPECT_EQ(error_of("5 1\n1 1\n5 2\n"), "F.txt:3: item 5 already appeared on line 1");
  EXPECT_EQ(error_of("# only a comment\n"), "F.txt: no items (the file is empty)");
}

// Only decimal digits: the number forms std::stod would take (hex, fractions, exponents, signs)
// and a trailing comma are refused with a message that says so.
TEST(ItemCounts, OnlyDecimalDigitsAreNumbers) {
  const std::string id_error =
      "item_id must be decimal digits only (no sign, hex, fraction, exponent or comma)";
  const std::string count_error =
      "count must be decimal digits only (no sign, hex, fraction, exponent or comma)";
  EXPECT_EQ(error_of("0x10 5\n"), "F.txt:1: " + id_error);
  EXPECT_EQ(error_of("1.5 3\n"), "F.txt:1: " + id_error);
  EXPECT_EQ(error_of("1e3 3\n"), "F.txt:1: " + id_error);
  EXPECT_EQ(error_of("7, 3\n"), "F.txt:1: " + id_error);
  EXPECT_EQ(error_of("5 3.0\n"), "F.txt:1: " + count_error);
  EXPECT_EQ(error_of("5 1e3\n"), "F.txt:1: " + count_error);
  EXPECT_EQ(error_of("5 0x3\n"), "F.txt:1: " + count_error);
  EXPECT_EQ(error_of("5 3,\n"), "F.txt:1: " + count_error);
  EXPECT_EQ(error_of("5 9223372036854775808\n"),  // 2^63
            "F.txt:1: expected a count (a positive integer below 2^63) after the item id");
  EXPECT_EQ(error_of("-1 5\n"),
            "F.txt:1: expected '<item_id> <count>' with item_id an integer below 2^32");
  EXPECT_EQ(parse("5 9223372036854775807\n").total, 9223372036854775807ull);
}

}  // namespace
}  // namespace host
}  // namespace fedstat
