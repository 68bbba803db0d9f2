#include "host_server/estimate/noise_bits.h"

namespace fedstat {
namespace host {

NoiseBits NoiseBits::csprng() {
  NoiseBits bits(0);
  bits.csprng_ = std::make_unique<Csprng>();
  check(bits.csprng_->init(), "the noise's CSPRNG");
  bits.csprng_bits_ = std::make_unique<RandomBits>(*bits.csprng_);
  return bits;
}

NoiseBits NoiseBits::seeded(uint64_t seed) {
  return NoiseBits(seed);
}

RandomBits& NoiseBits::stream(uint64_t id) {
  if (csprng_ != nullptr) return *csprng_bits_;
  auto& slot = seeded_[id];
  if (slot == nullptr) slot = std::make_unique<SeededBits>(seed_, id);
  return slot->bits();
}

uint64_t NoiseBits::session_seed() {
  constexpr uint64_t kSessionStream = uint64_t{1} << 40;
  return value_or_throw(stream(kSessionStream).bits(64), "secure aggregation keys");
}

}  // namespace host
}  // namespace fedstat
