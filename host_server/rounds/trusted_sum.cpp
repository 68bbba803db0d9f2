#include "host_server/rounds/trusted_sum.h"

#include <stdexcept>
#include <string>

#include "sdk/quantise/quantise.h"

namespace fedstat {
namespace host {

TrustedSum::TrustedSum(uint32_t vector_length, uint32_t bits)
    : length_(vector_length),
      bits_(bits),
      mask_(bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1),
      sum_(vector_length, 0) {
  if (vector_length == 0 || bits == 0 || bits > 64) {
    throw std::invalid_argument("trusted sum: vector_length >= 1 and bits in 1..64");
  }
}

uint32_t TrustedSum::words_from(uint64_t client) const {
  auto it = received_.find(client);
  return it == received_.end() ? 0 : it->second;
}

std::optional<Refusal> TrustedSum::check(uint64_t client, const fedstat_v1_Report& report) const {
  const uint32_t have = words_from(client);
  if (have == length_) {
    return refused(StatusCode::kAlreadyExists, "report: already complete");
  }
  if (report.offset < have) {
    return refused(StatusCode::kAlreadyExists,
                   "report: chunk at offset " + std::to_string(report.offset) + " already stored");
  }
  if (report.offset > have) {
    return refused(StatusCode::kFailedPrecondition, "report: expected offset " +
                                                        std::to_string(have) + ", got " +
                                                        std::to_string(report.offset));
  }
  if (report.words_count == 0 || uint64_t{have} + report.words_count > length_) {
    return refused(StatusCode::kOutOfRange, "report: chunk runs past vector_length or is empty");
  }
  for (pb_size_t i = 0; i < report.words_count; ++i) {
    if ((report.words[i] & ~mask_) != 0) {
      return refused(StatusCode::kOutOfRange,
                     "report: word " + std::to_string(have + i) + " is not below 2^bits");
    }
  }
  return std::nullopt;
}

std::optional<std::vector<uint64_t>> TrustedSum::completed_report(
    uint64_t client, const fedstat_v1_Report& report) const {
  if (uint64_t{words_from(client)} + report.words_count != length_) return std::nullopt;
  std::vector<uint64_t> words;
  words.reserve(length_);
  const auto held = partial_.find(client);
  if (held != partial_.end()) words = held->second;
  words.insert(words.end(), report.words, report.words + report.words_count);
  return words;
}

uint32_t TrustedSum::add(uint64_t client, const fedstat_v1_Report& report) {
  std::vector<uint64_t>& words = partial_[client];
  words.insert(words.end(), report.words, report.words + report.words_count);
  uint32_t& have = received_[client];
  have = static_cast<uint32_t>(words.size());
  if (have == length_) {
    const Status added = quantise::add_mod(Span<uint64_t>(sum_.data(), sum_.size()),
                                           Span<const uint64_t>(words.data(), words.size()), bits_);
    if (!added.ok()) throw std::logic_error(std::string("trusted sum: ") + added.message());
    ++contributors_;
    partial_.erase(client);
  }
  return have;
}

}  // namespace host
}  // namespace fedstat
