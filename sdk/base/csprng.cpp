#include "sdk/base/csprng.h"

#include "platform/platform.h"

namespace fedstat {
namespace {
Status platform_entropy(void* /*context*/, MutableByteSpan out) {
  return platform::fill_entropy(out);
}
}  // namespace

Status Csprng::init(ByteSpan personalization) {
  return drbg_.seed(platform_entropy, nullptr, personalization);
}

Status Csprng::init_with_entropy(crypto::EntropyCallback entropy, void* context,
                                 ByteSpan personalization) {
  return drbg_.seed(entropy, context, personalization);
}

Status Csprng::fill(MutableByteSpan out) {
  return drbg_.generate(out);
}

}  // namespace fedstat
