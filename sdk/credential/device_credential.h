/// @file
/// Device credentials: an ECDSA P-256 key pair per device and a compact certificate binding the
/// device's client id to its public key, signed by a fleet CA whose private key the server does
/// not hold (issued offline by `fedstat-ca`). Secure aggregation uses them so that a server can
/// neither field devices of its own (Sybils) nor stand between two devices (issue 42; Bonawitz et
/// al., CCS 2017, §4: the actively secure variant's PKI and signed keys).
///
/// Why ECDSA P-256 and this certificate rather than Ed25519 or X.509 (docs/protocol.md, "Device
/// credentials"): mbedTLS 2.28 has no Ed25519, and P-256 ECDSA is what it has and what phones'
/// keystores hold. An X.509 certificate costs a device an ASN.1/X.509 parser (~15 KiB of flash) and
/// ~400 bytes per roster entry; this one is 133 bytes of payload — id, SEC1 point, r ‖ s — and its
/// verification is one ECDSA check. Signatures are deterministic (RFC 6979), so a device signs the
/// same bytes for the same statement: no randomness needed, reproducible given a seed.
///
/// Signed statements are SHA-256 digests with a domain tag (the certificate's below; secure
/// aggregation's in sdk/secagg/signed_keys.h), never protobuf bytes.
///
/// @memory sizeof(DeviceCertificate) = 136 bytes; sizeof(DeviceCredential) = 236 bytes; the calls
/// use no memory of their own beyond a few hundred bytes of stack and mbedTLS's pool for the curve
/// arithmetic (the microcontroller's pool, sdk/base/crypto.h kMbedtlsPoolBytes).
/// @paper Bonawitz et al. 2017 §4 (PKI, signatures on the advertised keys).
#ifndef FEDSTAT_SDK_CREDENTIAL_DEVICE_CREDENTIAL_H_
#define FEDSTAT_SDK_CREDENTIAL_DEVICE_CREDENTIAL_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/random_source.h"
#include "sdk/base/span.h"
#include "sdk/base/status.h"

namespace fedstat {
namespace credential {

/// Bytes of a P-256 private key (a big-endian scalar in [1, n − 1]).
constexpr size_t kPrivateKeyBytes = 32;
/// Bytes of a P-256 public key: SEC1 uncompressed, 0x04 ‖ X ‖ Y.
constexpr size_t kPublicKeyBytes = 65;
/// Bytes of a signature: r ‖ s, each 32 bytes big-endian.
constexpr size_t kSignatureBytes = 64;
/// Bytes of a signed digest (SHA-256).
constexpr size_t kDigestBytes = 32;

/// A device's certificate: the CA's signature over certificate_digest(client_id, public_key).
struct DeviceCertificate {
  uint32_t client_id = 0;                      ///< the device's client id (1..2^31)
  uint8_t public_key[kPublicKeyBytes] = {};    ///< the device's signing key
  uint8_t ca_signature[kSignatureBytes] = {};  ///< the fleet CA's signature
};

/// What a device holds: its certificate, the private key matching the certificate's public key,
/// and the fleet CA's public key it checks its peers' certificates against.
struct DeviceCredential {
  DeviceCertificate certificate;                ///< this device's certificate
  uint8_t private_key[kPrivateKeyBytes] = {};   ///< this device's signing key (secret)
  uint8_t ca_public_key[kPublicKeyBytes] = {};  ///< the fleet CA's public key
};

/// Draws a key pair from `random` (the platform Csprng on a device; a SeededStream for emulated
/// fleets): a uniform scalar in [1, n − 1] and its public point.
/// @errors kInvalidArgument: `private_key` is not 32 bytes or `public_key` not 65.
/// kResourceExhausted: mbedTLS's pool is full. The random source's error (e.g. kUnavailable).
/// kInternal: mbedTLS failed otherwise.
Status generate_key_pair(RandomSource& random, MutableByteSpan private_key,
                         MutableByteSpan public_key);

/// The public key of `private_key` (65 bytes to `public_key`); `random` only blinds the scalar
/// multiplication (the result does not depend on it).
/// @errors kInvalidArgument: wrong sizes, or a scalar outside [1, n − 1]. kResourceExhausted,
/// the random source's error, kInternal as generate_key_pair().
Status public_key_of(ByteSpan private_key, RandomSource& random, MutableByteSpan public_key);

/// OK when `public_key` is a 65-byte SEC1 uncompressed point on P-256 (not the point at infinity).
/// @errors kInvalidArgument: any other length or encoding, or a point not on the curve.
/// kResourceExhausted: mbedTLS's pool is full.
Status check_public_key(ByteSpan public_key);

/// Signs a 32-byte digest deterministically (RFC 6979 with SHA-256): 64 bytes r ‖ s to
/// `signature`. The same key and digest always give the same signature.
/// @errors kInvalidArgument: wrong sizes, or a private key outside [1, n − 1].
/// kResourceExhausted: mbedTLS's pool is full. kInternal: mbedTLS failed otherwise.
Status sign_digest(ByteSpan private_key, ByteSpan digest, MutableByteSpan signature);

/// OK when `signature` (r ‖ s) is a valid signature of `digest` under `public_key`.
/// @errors kPermissionDenied: the signature does not verify (wrong key, statement or bytes; r or
/// s out of range). kInvalidArgument: wrong sizes or a public key check_public_key() refuses.
/// kResourceExhausted: mbedTLS's pool is full.
Status verify_digest(ByteSpan public_key, ByteSpan digest, ByteSpan signature);

/// SHA-256("fedstat device certificate v1" ‖ LE32 client_id ‖ public_key) to `digest` (32
/// bytes): what the CA signs.
/// @errors kInvalidArgument: `public_key` not 65 bytes or `digest` not 32. kInternal: SHA-256
/// failed inside mbedTLS.
Status certificate_digest(uint32_t client_id, ByteSpan public_key, MutableByteSpan digest);

/// The CA's side (fedstat-ca, tests): a certificate for `client_id` and `public_key`.
/// @errors kInvalidArgument: client_id 0 or above 2^31, a public key check_public_key()
/// refuses, a CA key of the wrong size or out of range. sign_digest()'s other errors.
Status issue_certificate(ByteSpan ca_private_key, uint32_t client_id, ByteSpan public_key,
                         DeviceCertificate& out);

/// OK when `certificate` was issued by the CA whose public key is `ca_public_key`, for a client
/// id in [1, 2^31] and a valid public key.
/// @errors kPermissionDenied: the CA's signature does not verify. kInvalidArgument: client id 0
/// or above 2^31, or a public key (the certificate's or the CA's) check_public_key() refuses.
/// kResourceExhausted: mbedTLS's pool is full. kInternal: SHA-256 failed.
Status verify_certificate(ByteSpan ca_public_key, const DeviceCertificate& certificate);

/// OK when a device may use `credential`: its certificate verifies under its CA key and its
/// private key is the certificate's public key's (`random` blinds that multiplication).
/// @errors kPermissionDenied: the certificate does not verify, or the private key does not match
/// it. kInvalidArgument: a malformed key. kResourceExhausted, the random source's error,
/// kInternal as above.
Status check_credential(const DeviceCredential& credential, RandomSource& random);

}  // namespace credential
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CREDENTIAL_DEVICE_CREDENTIAL_H_
