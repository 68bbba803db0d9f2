#include "host_server/estimate/csv_fields.h"

#include <charconv>
#include <cmath>
#include <stdexcept>
#include <system_error>

namespace fedstat {
namespace host {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Skips a run of digits at `pos`; returns how many there were.
size_t skip_digits(const std::string& s, size_t& pos, size_t end) {
  const size_t start = pos;
  while (pos < end && is_digit(s[pos])) ++pos;
  return pos - start;
}

bool starts_with_letters(const std::string& s, size_t pos, const char* word) {
  for (size_t i = 0; word[i] != '\0'; ++i, ++pos) {
    if (pos >= s.size() || (s[pos] | 0x20) != word[i]) return false;
  }
  return true;
}

}  // namespace

std::string csv_error(const CsvPlace& place, const std::string& what) {
  return place.file + ":" + std::to_string(place.line) + ": field " + std::to_string(place.field) +
         ": " + what;
}

std::vector<std::string> split_csv_fields(const std::string& line) {
  std::string text = line;
  if (!text.empty() && text.back() == '\r') text.pop_back();
  std::vector<std::string> fields;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    if (comma == std::string::npos) {
      fields.push_back(text.substr(start));
      return fields;
    }
    fields.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
}

double parse_decimal_field(const std::string& field, const CsvPlace& place) {
  size_t begin = 0, end = field.size();
  while (begin < end && is_blank(field[begin])) ++begin;
  while (end > begin && is_blank(field[end - 1])) --end;
  if (begin == end) {
    throw std::runtime_error(csv_error(place, "is empty (a doubled or trailing comma?)"));
  }
  const std::string quoted = "'" + field.substr(begin, end - begin) + "'";
  size_t pos = begin;
  if (field[pos] == '+' || field[pos] == '-') ++pos;
  if (pos + 1 < end && field[pos] == '0' && (field[pos + 1] | 0x20) == 'x') {
    throw std::runtime_error(csv_error(place, quoted + " is a hex number: write decimal digits"));
  }
  if (starts_with_letters(field, pos, "inf") || starts_with_letters(field, pos, "nan")) {
    throw std::runtime_error(
        csv_error(place, quoted + " is not a finite number: inf and nan are not accepted"));
  }
  const size_t mantissa_start = pos;
  size_t digits = skip_digits(field, pos, end);
  if (pos < end && field[pos] == '.') {
    ++pos;
    digits += skip_digits(field, pos, end);
  }
  bool well_formed = digits > 0;
  if (well_formed && pos < end && (field[pos] | 0x20) == 'e') {
    ++pos;
    if (pos < end && (field[pos] == '+' || field[pos] == '-')) ++pos;
    well_formed = skip_digits(field, pos, end) > 0;
  }
  if (!well_formed || pos != end) {
    const size_t bad = well_formed ? pos : mantissa_start;
    throw std::runtime_error(csv_error(
        place, quoted + " is not a decimal number (unexpected " +
                   (bad < end ? "'" + std::string(1, field[bad]) + "'" : std::string("end")) +
                   " at character " + std::to_string(bad - begin + 1) + ")"));
  }
  // from_chars takes no '+'; the grammar above is a subset of what it accepts.
  const size_t number_start = field[begin] == '+' ? begin + 1 : begin;
  double value = 0;
  const auto parsed = std::from_chars(field.data() + number_start, field.data() + end, value);
  if (parsed.ec == std::errc::result_out_of_range || !std::isfinite(value)) {
    throw std::runtime_error(
        csv_error(place, quoted + " is outside the range of a double (about 4.9e-324 to 1.8e308)"));
  }
  if (parsed.ec != std::errc() || parsed.ptr != field.data() + end) {
    throw std::runtime_error(csv_error(place, quoted + " is not a decimal number"));
  }
  return value;
}

std::vector<double> parse_decimal_row(const std::string& line, const std::string& file,
                                      size_t line_number) {
  const std::vector<std::string> fields = split_csv_fields(line);
  std::vector<double> values;
  values.reserve(fields.size());
  for (size_t k = 0; k < fields.size(); ++k) {
    values.push_back(parse_decimal_field(fields[k], CsvPlace{file, line_number, k + 1}));
  }
  return values;
}

}  // namespace host
}  // namespace fedstat
