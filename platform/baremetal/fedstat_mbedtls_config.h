/* mbedTLS 2.28 configuration for fedstat on microcontrollers: only what sdk/base/crypto.cpp uses.
 * Selected with -DMBEDTLS_CONFIG_FILE="fedstat_mbedtls_config.h" when mbedTLS is built from
 * Debian's source package for a bare-metal target (cmake/FedstatThirdParty.cmake).
 * Nothing here allocates: AES, CTR mode, SHA-256 and CTR_DRBG keep their state in the caller's
 * context. Later features (X25519, HKDF, GCM for secure aggregation) add their modules here. */
#ifndef FEDSTAT_MBEDTLS_CONFIG_H
#define FEDSTAT_MBEDTLS_CONFIG_H

/* No OS: entropy comes from the application's hook (platform/baremetal/hooks.h). */
#define MBEDTLS_NO_PLATFORM_ENTROPY

/* AES-256 for CTR keystreams and CTR_DRBG; tables in flash, not RAM. */
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES
#define MBEDTLS_AES_FEWER_TABLES
#define MBEDTLS_CIPHER_MODE_CTR

/* SHA-256, the smaller (slower) implementation. */
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA256_SMALLER

/* NIST SP 800-90A CTR_DRBG. The entropy length is pinned to the value hosts use (48 bytes, the
 * default when SHA-512 is available) so the DRBG behaves identically on every target. */
#define MBEDTLS_CTR_DRBG_C
#define MBEDTLS_CTR_DRBG_ENTROPY_LEN 48

#include "mbedtls/check_config.h"

#endif /* FEDSTAT_MBEDTLS_CONFIG_H */
