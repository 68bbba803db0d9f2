#include "host_server/estimate/item_counts.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fedstat {
namespace host {
namespace {

[[noreturn]] void fail(const std::string& name, size_t line, const std::string& what) {
  throw std::runtime_error(name + ":" + std::to_string(line) + ": " + what);
}

// Parses a run of decimal digits at `pos`; false when there is none or it exceeds `limit`.
bool parse_unsigned(const std::string& text, size_t& pos, uint64_t limit, uint64_t& value) {
  const size_t start = pos;
  value = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
    const uint64_t digit = static_cast<uint64_t>(text[pos] - '0');
    if (value > (limit - digit) / 10) return false;
    value = value * 10 + digit;
    ++pos;
  }
  return pos > start;
}

void skip_blanks(const std::string& text, size_t& pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\r')) ++pos;
}

}  // namespace

uint64_t ItemCounts::count(uint32_t id) const {
  auto it = std::lower_bound(items.begin(), items.end(), id,
                             [](const ItemCount& item, uint32_t key) { return item.id < key; });
  return it != items.end() && it->id == id ? it->count : 0;
}

ItemCounts parse_item_counts(std::istream& in, const std::string& name) {
  ItemCounts result;
  std::vector<size_t> line_of;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    size_t pos = 0;
    skip_blanks(text, pos);
    if (pos == text.size() || text[pos] == '#') continue;
    uint64_t id = 0, count = 0;
    if (!parse_unsigned(text, pos, 0xFFFFFFFFull, id)) {
      fail(name, line, "expected '<item_id> <count>' with item_id an integer below 2^32");
    }
    const size_t after_id = pos;
    skip_blanks(text, pos);
    if (pos == after_id && pos < text.size()) {  // "0x10", "1.5", "1e3", "7,": not decimal digits
      fail(name, line,
           "item_id must be decimal digits only (no sign, hex, fraction, exponent or comma)");
    }
    if (pos == after_id || !parse_unsigned(text, pos, 0x7FFFFFFFFFFFFFFFull, count)) {
      fail(name, line, "expected a count (a positive integer below 2^63) after the item id");
    }
    const size_t after_count = pos;
    skip_blanks(text, pos);
    if (pos == after_count && pos < text.size()) {
      fail(name, line,
           "count must be decimal digits only (no sign, hex, fraction, exponent or comma)");
    }
    if (pos != text.size()) fail(name, line, "unexpected text after the count");
    if (count == 0) fail(name, line, "count must be positive");
    if (result.total > 0x7FFFFFFFFFFFFFFFull - count) fail(name, line, "total count overflows");
    result.items.push_back(ItemCount{static_cast<uint32_t>(id), count});
    line_of.push_back(line);
    result.total += count;
  }
  if (in.bad()) throw std::runtime_error(name + ": read error");
  std::vector<size_t> order(result.items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return result.items[a].id < result.items[b].id; });
  std::vector<ItemCount> sorted;
  sorted.reserve(order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && result.items[order[k]].id == result.items[order[k - 1]].id) {
      fail(name, line_of[order[k]],
           "item " + std::to_string(result.items[order[k]].id) + " already appeared on line " +
               std::to_string(line_of[order[k - 1]]));
    }
    sorted.push_back(result.items[order[k]]);
  }
  result.items = std::move(sorted);
  if (result.items.empty()) throw std::runtime_error(name + ": no items (the file is empty)");
  return result;
}

ItemCounts read_item_counts(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the file");
  return parse_item_counts(in, path);
}

}  // namespace host
}  // namespace fedstat
