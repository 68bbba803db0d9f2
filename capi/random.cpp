// The C ABI's random sources (c/random.h): a SeededStream or a Csprng built in the handle, with
// one RandomBits over it that every noise draw through the ABI reads.
#include <new>

#include "capi/handle.h"
#include "capi/objects.h"
#include "sdk/noise/add_noise.h"
#include "sdk/noise/rational.h"

namespace fedstat {
namespace capi {
namespace {

constexpr size_t kHandle = handle_bytes<fedstat_random>();

bool live(const fedstat_random* r) {
  return valid(r, kRandomMagic);
}

fedstat_random* place(void* memory) {
  return new (handle_address<fedstat_random>(memory)) fedstat_random();
}

void attach_bits(fedstat_random* r) {
  r->bits = new (r->bits_storage) RandomBits(*r->source);
}

}  // namespace
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

fedstat_status fedstat_random_size(size_t* bytes) {
  return size_status(kHandle, bytes);
}

fedstat_status fedstat_random_create_seeded(void* memory, size_t memory_bytes,
                                            const uint8_t seed[32], uint64_t stream,
                                            fedstat_random** out) {
  if (seed == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  const fedstat_status checked = check_memory(memory, memory_bytes, kHandle, out);
  if (checked != FEDSTAT_OK) return checked;
  Seed256 s;
  for (size_t i = 0; i < sizeof(s.bytes); ++i) s.bytes[i] = seed[i];
  fedstat_random* r = place(memory);
  r->source = new (r->source_storage) SeededStream(s, stream);
  attach_bits(r);
  *out = r;
  return FEDSTAT_OK;
}

fedstat_status fedstat_random_create_csprng(void* memory, size_t memory_bytes,
                                            const uint8_t* personalization,
                                            size_t personalization_bytes, fedstat_random** out) {
  if (personalization == nullptr && personalization_bytes != 0) return FEDSTAT_INVALID_ARGUMENT;
  const fedstat_status checked = check_memory(memory, memory_bytes, kHandle, out);
  if (checked != FEDSTAT_OK) return checked;
  fedstat_random* r = place(memory);
  Csprng* csprng = new (r->source_storage) Csprng();
  const Status seeded = csprng->init(ByteSpan(personalization, personalization_bytes));
  if (!seeded.ok()) {
    csprng->~Csprng();
    r->magic = 0;
    return code_of(seeded);
  }
  r->csprng = true;
  r->source = csprng;
  attach_bits(r);
  *out = r;
  return FEDSTAT_OK;
}

fedstat_status fedstat_random_destroy(fedstat_random* random) {
  if (!live(random)) return FEDSTAT_INVALID_ARGUMENT;
  random->bits->~RandomBits();
  if (random->csprng) {
    static_cast<Csprng*>(random->source)->~Csprng();
  } else {
    static_cast<SeededStream*>(random->source)->~SeededStream();
  }
  // The buffered bits and any key bytes the destructors leave: volatile, so the wipe stays.
  volatile unsigned char* bytes = reinterpret_cast<volatile unsigned char*>(random);
  for (size_t i = 0; i < sizeof(fedstat_random); ++i) bytes[i] = 0;
  return FEDSTAT_OK;
}

fedstat_status fedstat_random_fill(fedstat_random* random, uint8_t* out, size_t size) {
  if (!live(random)) return FEDSTAT_INVALID_ARGUMENT;
  if (out == nullptr && size != 0) return finish(random, invalid_argument("fill: out is NULL"));
  return finish(random, random->source->fill(MutableByteSpan(out, size)));
}

fedstat_status fedstat_random_add_skellam(fedstat_random* random, int64_t* values, size_t n,
                                          double lambda) {
  if (!live(random)) return FEDSTAT_INVALID_ARGUMENT;
  if (values == nullptr && n != 0) {
    return finish(random, invalid_argument("add_skellam: values is NULL"));
  }
  if (!(lambda > 0)) return finish(random, invalid_argument("add_skellam: lambda must be > 0"));
  const Result<noise::Rational> rational = noise::rational_at_least(lambda);
  if (!rational.ok()) return finish(random, rational.status());
  noise::NoiseSampler share;
  const Status ready =
      share.init(noise::NoiseSpec{noise::NoiseKind::kSkellam, rational.value(), 1});
  if (!ready.ok()) return finish(random, ready);
  const Span<int64_t> v(values, n);
  return finish(random, noise::add_noise(Span<const int64_t>(v), v, share, *random->bits));
}

const char* fedstat_random_last_error(const fedstat_random* random) {
  return live(random) ? random->last_error : kNotAHandle;
}

}  // extern "C"
