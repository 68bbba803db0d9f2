/* The decryption half of mbedTLS's AES, for the device build: refused.
 *
 * platform/baremetal/fedstat_mbedtls_config.h sets MBEDTLS_AES_SETKEY_DEC_ALT and
 * MBEDTLS_AES_DECRYPT_ALT, so aes.c leaves out its decryption key schedule and round function
 * and these take their place. Every mode the device uses (CTR keystreams, GCM, CTR_DRBG) runs AES
 * forwards only; a decryption (ECB decrypt, or a cipher set up to decrypt) fails with
 * MBEDTLS_ERR_PLATFORM_FEATURE_UNSUPPORTED and writes nothing but zeros. No cryptography here.
 * Memory: none. Paper: none (footprint, docs/footprint.md). */
#include <string.h>

#include "mbedtls/aes.h"
#include "mbedtls/platform.h"

int mbedtls_aes_setkey_dec(mbedtls_aes_context* ctx, const unsigned char* key,
                           unsigned int keybits) {
  (void)key;
  (void)keybits;
  if (ctx != NULL) mbedtls_aes_init(ctx); /* no decryption key is ever left in it */
  return MBEDTLS_ERR_PLATFORM_FEATURE_UNSUPPORTED;
}

int mbedtls_internal_aes_decrypt(mbedtls_aes_context* ctx, const unsigned char input[16],
                                 unsigned char output[16]) {
  (void)ctx;
  (void)input;
  memset(output, 0, 16);
  return MBEDTLS_ERR_PLATFORM_FEATURE_UNSUPPORTED;
}
