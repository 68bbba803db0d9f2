/* mbedTLS 2.28 configuration for fedstat on microcontrollers: only what sdk/base/crypto.cpp and
 * the device's TLS channel (sdk/tls/tls_channel.h) use.
 * Selected with -DMBEDTLS_CONFIG_FILE="fedstat_mbedtls_config.h" when mbedTLS is built from
 * Debian's source package for a bare-metal target (cmake/FedstatThirdParty.cmake).
 * AES, CTR mode, SHA-256 and CTR_DRBG keep their state in the caller's context. Secure
 * aggregation adds X25519 (bignum + ECP on Curve25519), HKDF (MD) and AES-GCM (cipher layer);
 * those allocate, so mbedTLS gets no calloc at all (PLATFORM_NO_STD_FUNCTIONS) and allocates
 * from a static pool the SDK hands it (MEMORY_BUFFER_ALLOC_C; sdk/base/crypto_exchange.cpp). */
#ifndef FEDSTAT_MBEDTLS_CONFIG_H
#define FEDSTAT_MBEDTLS_CONFIG_H

/* No OS: entropy comes from the application's hook (platform/baremetal/hooks.h). */
#define MBEDTLS_NO_PLATFORM_ENTROPY

/* AES-256 for CTR keystreams and CTR_DRBG; tables in flash, not RAM. */
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES
#define MBEDTLS_AES_FEWER_TABLES
#define MBEDTLS_CIPHER_MODE_CTR
/* Encryption only: CTR, GCM and CTR_DRBG never run AES backwards, so the decryption half (its
 * key schedule, its round function and their 1.3 KiB of tables) is replaced by stubs that refuse
 * (platform/baremetal/mbedtls_aes_encrypt_only.c): 1.5 KiB less flash, and no code path left that
 * could decrypt with a device key. Without the deprecated API, whose mbedtls_aes_decrypt() would
 * drop the stub's error and hand back zeros as if it had decrypted. */
#define MBEDTLS_AES_SETKEY_DEC_ALT
#define MBEDTLS_AES_DECRYPT_ALT
#define MBEDTLS_DEPRECATED_REMOVED

/* SHA-256, the smaller (slower) implementation. */
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA256_SMALLER

/* NIST SP 800-90A CTR_DRBG. The entropy length is pinned to the value hosts use (48 bytes, the
 * default when SHA-512 is available) so the DRBG behaves identically on every target. */
#define MBEDTLS_CTR_DRBG_C
#define MBEDTLS_CTR_DRBG_ENTROPY_LEN 48

/* Memory: a static pool, never the C library's heap. */
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_PLATFORM_NO_STD_FUNCTIONS
#define MBEDTLS_MEMORY_BUFFER_ALLOC_C

/* X25519 (RFC 7748) for secure aggregation's key agreement: small window, no precomputed
 * fixed-point tables (RAM). */
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECP_WINDOW_SIZE 2
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0

/* Device credentials (sdk/credential/device_credential.h): ECDSA P-256 with RFC 6979
 * deterministic signatures (HMAC_DRBG over SHA-256). check_config.h requires the ASN.1 modules
 * for ECDSA; the SDK never calls them (raw r || s), so the linker drops them. NIST_OPTIM: P-256's
 * fast reduction, 5x fewer instructions per signature and check (tests/cross/m4_cost.cpp: verify
 * 164 M -> 33 M) for about 800 B of flash. Enabling the curve also puts P-256 in the TLS
 * client's offered groups (sdk/tls/tls_channel.cpp); the server still picks X25519. */
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ECDSA_DETERMINISTIC
#define MBEDTLS_HMAC_DRBG_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C

/* HKDF-SHA256 and AES-256-GCM for deriving keys and encrypting secret shares. */
#define MBEDTLS_MD_C
#define MBEDTLS_HKDF_C
#define MBEDTLS_CIPHER_C
#define MBEDTLS_GCM_C

/* The device's TLS 1.2 client (sdk/tls/tls_channel.h): the one suite both ends pin,
 * TLS-ECDHE-PSK-WITH-CHACHA20-POLY1305-SHA256, over X25519 (ECDH on the curve above). */
#define MBEDTLS_ECDH_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_KEY_EXCHANGE_ECDHE_PSK_ENABLED
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_PSK_MAX_LEN 32
/* Small records: the client asks the server for 1 KiB fragments (RFC 6066 max_fragment_length;
 * sdk/tls/tls_channel.cpp) — every fedstat frame (wire::kMaxFrameBytes, 738 bytes) fits one —
 * so each record buffer is 1 KiB plus the record overhead instead of 16 KiB. */
#define MBEDTLS_SSL_MAX_FRAGMENT_LENGTH
#define MBEDTLS_SSL_IN_CONTENT_LEN 1024
#define MBEDTLS_SSL_OUT_CONTENT_LEN 1024

#include "mbedtls/check_config.h"

#endif /* FEDSTAT_MBEDTLS_CONFIG_H */
