// The only translation unit of the SDK that includes mbedTLS (see crypto.h).
#include "sdk/base/crypto.h"

#include <string.h>

#include "mbedtls/aes.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/platform_util.h"
#include "mbedtls/sha256.h"

namespace fedstat {
namespace crypto {
namespace {

static_assert(sizeof(mbedtls_sha256_context) <= kSha256StateBytes, "raise kSha256StateBytes");
static_assert(sizeof(mbedtls_aes_context) <= kAesStateBytes, "raise kAesStateBytes");
static_assert(sizeof(mbedtls_ctr_drbg_context) <= kDrbgStateBytes, "raise kDrbgStateBytes");
static_assert(alignof(mbedtls_aes_context) <= 16 && alignof(mbedtls_ctr_drbg_context) <= 16 &&
                  alignof(mbedtls_sha256_context) <= 16,
              "contexts need more alignment than the storage has");

mbedtls_sha256_context* sha(unsigned char* storage) {
  return reinterpret_cast<mbedtls_sha256_context*>(storage);
}
mbedtls_aes_context* aes(unsigned char* storage) {
  return reinterpret_cast<mbedtls_aes_context*>(storage);
}
mbedtls_ctr_drbg_context* drbg(unsigned char* storage) {
  return reinterpret_cast<mbedtls_ctr_drbg_context*>(storage);
}

}  // namespace

// ---- SHA-256 ---------------------------------------------------------------------------------

Sha256::Sha256() {
  mbedtls_sha256_init(sha(state_));
  (void)mbedtls_sha256_starts_ret(sha(state_), /*is224=*/0);
}

Sha256::~Sha256() {
  mbedtls_sha256_free(sha(state_));
}

Status Sha256::update(ByteSpan data) {
  if (mbedtls_sha256_update_ret(sha(state_), data.data(), data.size()) != 0) {
    return internal_error("SHA-256 update failed inside mbedTLS");
  }
  return Status();
}

Status Sha256::reset() {
  if (mbedtls_sha256_starts_ret(sha(state_), /*is224=*/0) != 0) {
    return internal_error("SHA-256 start failed inside mbedTLS");
  }
  return Status();
}

Status Sha256::finish(Span<uint8_t> digest_out) {
  if (digest_out.size() != kSha256DigestBytes) {
    return invalid_argument("SHA-256 digest buffer must be exactly 32 bytes");
  }
  const int rc = mbedtls_sha256_finish_ret(sha(state_), digest_out.data());
  (void)mbedtls_sha256_starts_ret(sha(state_), 0);
  if (rc != 0) return internal_error("SHA-256 finish failed inside mbedTLS");
  return Status();
}

Status sha256(ByteSpan data, Span<uint8_t> digest_out) {
  Sha256 hasher;
  FEDSTAT_RETURN_IF_ERROR(hasher.update(data));
  return hasher.finish(digest_out);
}

// ---- AES-256-CTR -----------------------------------------------------------------------------

void wipe(void* data, size_t size) {
  if (data != nullptr && size > 0) mbedtls_platform_zeroize(data, size);
}

Aes256Ctr::Aes256Ctr() {
  mbedtls_aes_init(aes(aes_));
  memset(counter_, 0, sizeof(counter_));
  memset(stream_block_, 0, sizeof(stream_block_));
}

Aes256Ctr::~Aes256Ctr() {
  mbedtls_aes_free(aes(aes_));
  wipe(stream_block_, sizeof(stream_block_));
  wipe(counter_, sizeof(counter_));
}

Status Aes256Ctr::start(ByteSpan key, ByteSpan initial_counter_block) {
  if (key.size() != kAes256KeyBytes) return invalid_argument("AES-256 key must be 32 bytes");
  if (initial_counter_block.size() != kAesBlockBytes) {
    return invalid_argument("AES-CTR initial counter block must be 16 bytes");
  }
  keyed_ = false;
  if (mbedtls_aes_setkey_enc(aes(aes_), key.data(), 256) != 0) {
    return internal_error("AES-256 key schedule failed inside mbedTLS");
  }
  memcpy(counter_, initial_counter_block.data(), kAesBlockBytes);
  memset(stream_block_, 0, sizeof(stream_block_));
  offset_in_block_ = 0;
  keyed_ = true;
  return Status();
}

Status Aes256Ctr::apply(MutableByteSpan data) {
  if (!keyed_) return failed_precondition("AES-CTR used before start() gave it a key");
  if (data.empty()) return Status();
  if (mbedtls_aes_crypt_ctr(aes(aes_), data.size(), &offset_in_block_, counter_, stream_block_,
                            data.data(), data.data()) != 0) {
    return internal_error("AES-CTR failed inside mbedTLS");
  }
  return Status();
}

Status Aes256Ctr::keystream(MutableByteSpan out) {
  if (!out.empty()) memset(out.data(), 0, out.size());
  return apply(out);
}

// ---- CTR_DRBG --------------------------------------------------------------------------------

namespace {
// mbedTLS wants `int f(void*, unsigned char*, size_t)`; the context is the CtrDrbg's bridge.
int mbedtls_entropy_bridge(void* context, unsigned char* out, size_t length) {
  CtrDrbg::EntropySource* source = static_cast<CtrDrbg::EntropySource*>(context);
  source->last_status = source->callback(source->context, MutableByteSpan(out, length));
  return source->last_status.ok() ? 0 : MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
}

// The entropy source's own error says best what is wrong (e.g. "no entropy hook: install ...").
Status drbg_status(int rc, const CtrDrbg::EntropySource& source, const char* what_failed) {
  if (rc == 0) return Status();
  if (rc == MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED) {
    return source.last_status.ok()
               ? unavailable("CTR_DRBG could not get entropy: the entropy source failed")
               : source.last_status;
  }
  return internal_error(what_failed);
}
}  // namespace

CtrDrbg::CtrDrbg() {
  mbedtls_ctr_drbg_init(drbg(drbg_));
}

CtrDrbg::~CtrDrbg() {
  mbedtls_ctr_drbg_free(drbg(drbg_));
}

Status CtrDrbg::seed(EntropyCallback entropy, void* context, ByteSpan personalization) {
  if (entropy == nullptr) return invalid_argument("CTR_DRBG needs an entropy callback");
  // 256 bytes, as documented: mbedTLS's own limit is its seed input less the entropy and the
  // nonce (384 − 48 − 24 = 312), and a longer string would fail inside mbedTLS (kInternal).
  constexpr size_t kMaxPersonalizationBytes = 256;
  static_assert(kMaxPersonalizationBytes + MBEDTLS_CTR_DRBG_ENTROPY_LEN * 3 / 2 <=
                    MBEDTLS_CTR_DRBG_MAX_SEED_INPUT,
                "mbedTLS's CTR_DRBG takes less personalization than documented");
  if (personalization.size() > kMaxPersonalizationBytes) {
    return invalid_argument("CTR_DRBG personalization string is too long (max 256 bytes)");
  }
  mbedtls_ctr_drbg_free(drbg(drbg_));
  mbedtls_ctr_drbg_init(drbg(drbg_));
  seeded_ = false;
  source_ = EntropySource{entropy, context, Status()};
  FEDSTAT_RETURN_IF_ERROR(
      drbg_status(mbedtls_ctr_drbg_seed(drbg(drbg_), mbedtls_entropy_bridge, &source_,
                                        personalization.data(), personalization.size()),
                  source_, "CTR_DRBG seeding failed inside mbedTLS"));
  seeded_ = true;
  return Status();
}

Status CtrDrbg::generate(MutableByteSpan out) {
  if (!seeded_) return failed_precondition("CTR_DRBG used before seed()");
  size_t done = 0;
  while (done < out.size()) {
    size_t chunk = out.size() - done;
    if (chunk > MBEDTLS_CTR_DRBG_MAX_REQUEST) chunk = MBEDTLS_CTR_DRBG_MAX_REQUEST;
    FEDSTAT_RETURN_IF_ERROR(
        drbg_status(mbedtls_ctr_drbg_random(drbg(drbg_), out.data() + done, chunk), source_,
                    "CTR_DRBG generate failed inside mbedTLS"));
    done += chunk;
  }
  return Status();
}

Status CtrDrbg::reseed() {
  if (!seeded_) return failed_precondition("CTR_DRBG reseed() before seed()");
  return drbg_status(mbedtls_ctr_drbg_reseed(drbg(drbg_), nullptr, 0), source_,
                     "CTR_DRBG reseed failed inside mbedTLS");
}

}  // namespace crypto
}  // namespace fedstat
