// Item-count files: the input format of fedstat-kl and fedstat-tv.
//
// One `<item_id> <count>` pair per line, item_id an unsigned integer below 2^32, count a positive
// integer below 2^63, both decimal digits only (no sign, hex, fraction, exponent or comma: read
// digit by digit with an overflow check, never through std::stod); blank lines and lines starting
// with '#' are skipped; an id may appear once.
// Anything else is an error naming the file and the line ("P.txt:12: count must be positive").
// Memory: 16 bytes per distinct item. Paper: 000 §5 and 001 §5 (the empirical distributions).
#ifndef FEDSTAT_HOST_ESTIMATE_ITEM_COUNTS_H_
#define FEDSTAT_HOST_ESTIMATE_ITEM_COUNTS_H_

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace fedstat {
namespace host {

struct ItemCount {
  uint32_t id = 0;
  uint64_t count = 0;
};

struct ItemCounts {
  std::vector<ItemCount> items;  // sorted by id
  uint64_t total = 0;

  // The count of `id` (0 when absent); binary search.
  uint64_t count(uint32_t id) const;
};

// Throws std::runtime_error naming `name` and the line on malformed input.
ItemCounts parse_item_counts(std::istream& in, const std::string& name);
ItemCounts read_item_counts(const std::string& path);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_ITEM_COUNTS_H_
