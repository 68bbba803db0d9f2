// Strict decimal-number fields for the host's comma-separated data files: the one parser behind
// fedstat-heterogeneity's client vectors (heterogeneity.h read_client_vectors) and
// federated_logreg's data set, so neither reads "0.5x" as 0.5, "0x1p-1" as a hex float, or
// "1,2," as two numbers.
//
// split_csv_fields: the line (one trailing '\r' dropped) cut at every comma, empty fields kept —
// "1,,2" and "1,2," both have three fields, the last two with an empty one.
// parse_decimal_field: optional blanks (space, tab), an optional sign, digits with an optional
// fraction ("7", "7.", ".5", "-0.25"), an optional exponent ("e-3", "E+10"), optional blanks —
// nothing else: no hex, no inf/nan, no trailing text, no empty field, no blank inside. The value
// must be a finite double: "1e309" (overflow) and "1e-400" (underflow to zero) are refused, not
// turned into inf or 0. Conversion is std::from_chars (locale-independent, correctly rounded).
// Errors are std::runtime_error naming the file, line and field (1-based) and what is wrong:
//   "data.csv:3: field 2: '0x1p-1' is a hex number: write decimal digits".
//
// Memory: the fields of one line. Paper: none (input validation for 002 §5 and 004 §5's data).
#ifndef FEDSTAT_HOST_ESTIMATE_CSV_FIELDS_H_
#define FEDSTAT_HOST_ESTIMATE_CSV_FIELDS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace fedstat {
namespace host {

// Where a field came from, for error messages.
struct CsvPlace {
  std::string file;
  size_t line = 0;   // 1-based
  size_t field = 0;  // 1-based
};

// "<file>:<line>: field <k>: <what>".
std::string csv_error(const CsvPlace& place, const std::string& what);

std::vector<std::string> split_csv_fields(const std::string& line);

// The field's value; throws std::runtime_error (csv_error) when it is not a finite decimal.
double parse_decimal_field(const std::string& field, const CsvPlace& place);

// Every field of `line` as a finite decimal (split_csv_fields, then parse_decimal_field).
std::vector<double> parse_decimal_row(const std::string& line, const std::string& file,
                                      size_t line_number);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_CSV_FIELDS_H_
