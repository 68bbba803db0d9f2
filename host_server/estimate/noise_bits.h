// Where a simulation's noise comes from: the platform CSPRNG (what a release must use: anyone who
// knows a seed recomputes the noise and subtracts it), or seeded streams for reproducible
// measurements (the tools' --noise-seed, which they allow only with --evaluate).
//
// stream(id) gives the bits one party draws from: with a seed, an independent SeededStream per
// id (client c uses 1 + c, the host 0), so runs repeat bit for bit; with the CSPRNG, one CTR_DRBG
// seeded from platform entropy serves every id. Host code: errors are exceptions.
// Memory: one CSPRNG, or one seeded stream per id used. Paper: 002 §2.2, 000 Algorithm 3.
#ifndef FEDSTAT_HOST_ESTIMATE_NOISE_BITS_H_
#define FEDSTAT_HOST_ESTIMATE_NOISE_BITS_H_

#include <cstdint>
#include <map>
#include <memory>

#include "host_server/estimate/host_common.h"
#include "sdk/base/csprng.h"

namespace fedstat {
namespace host {

class NoiseBits {
 public:
  // Throws std::runtime_error when the platform has no working entropy source.
  static NoiseBits csprng();
  static NoiseBits seeded(uint64_t seed);

  RandomBits& stream(uint64_t id);
  // 64 bits for a secure-aggregation session's keys, from a stream of their own (so seeded runs
  // repeat): never a public value, or anyone holding the transcript could unmask every client.
  uint64_t session_seed();
  bool is_seeded() const { return csprng_ == nullptr; }

 private:
  explicit NoiseBits(uint64_t seed) : seed_(seed) {}
  uint64_t seed_ = 0;
  std::unique_ptr<Csprng> csprng_;
  std::unique_ptr<RandomBits> csprng_bits_;
  std::map<uint64_t, std::unique_ptr<SeededBits>> seeded_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ESTIMATE_NOISE_BITS_H_
