/** @file
 * fedstat C ABI: device credentials, for signed DIST rounds (protocol 5, issue 42; the C form of
 * ClientConfig::credential, sdk/client/client.h, and sdk/credential/device_credential.h).
 *
 * A credential is the device's ECDSA P-256 signing key, its certificate from the fleet's offline
 * CA (`fedstat-ca`) binding its client id to the key's public half, and the CA's public key. A
 * Client given one takes part in signed secure-aggregation sessions only: it signs its keys and
 * its view of the round, agrees keys only with certified peers, and reveals only after enough
 * members' signatures verified — so a server that does not hold the CA's key can neither field
 * devices of its own nor stand between two devices (docs/protocol.md, "Device credentials").
 * Without one, a signed session ends with FEDSTAT_FAILED_PRECONDITION; with one, an unsigned DIST
 * session ends with FEDSTAT_PERMISSION_DENIED (fedstat_client_run_session; the device has
 * accepted the task and been charged by then: the Task does not say whether its session is
 * signed). TRUSTED, TAGG and NONE tasks do not use it.
 *
 * Text, as fedstat-ca writes it (host_server/credential/fleet_credentials.h), hex in either case:
 *   private key      64 hex digits (a fleet file's second field, or the device's own key:
 *                    fedstat_credential_generate_key)
 *   certificate      "<client id> <130 hex public key> <128 hex CA signature>", what
 *                    `fedstat-ca sign --id ID --public-key HEX` prints (a fleet file's line
 *                    without its private key)
 *   CA public key    130 hex digits (ca.pub's second line), or the whole of ca.pub
 * Leading and trailing whitespace is ignored; fields are separated by spaces or tabs.
 *
 * Production flow: the device draws its key pair (fedstat_credential_generate_key, from a CSPRNG),
 * keeps the private key in its secure storage and hands the public key to the CA's operator, who
 * runs `fedstat-ca sign` and returns the certificate line; the device then calls
 * fedstat_client_set_credential at every start.
 *
 * @memory none of its own: the Client's handle holds the parsed credential (236 bytes, in
 * fedstat_client_size's K); the calls use a few hundred bytes of stack and mbedTLS's curve
 * arithmetic (heap on hosted builds, its pool on bare metal).
 * @paper Bonawitz et al. 2017 §4 (the PKI and signed keys of the actively secure variant).
 */
#ifndef FEDSTAT_C_CREDENTIAL_H_
#define FEDSTAT_C_CREDENTIAL_H_

#include "base.h"
#include "client.h"
#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Hex digits of a private key (32 bytes); a buffer for one needs one more, for the NUL. */
#define FEDSTAT_CREDENTIAL_PRIVATE_KEY_HEX 64
/** Hex digits of a public key (65 bytes, SEC1 uncompressed: 04 || X || Y); add 1 for the NUL. */
#define FEDSTAT_CREDENTIAL_PUBLIC_KEY_HEX 130

/** Draws a new P-256 key pair from `random` (a CSPRNG on a device: fedstat_random_create_csprng)
 * and writes it as lower-case hex, NUL-terminated: the private key (keep it secret) to
 * `private_key_hex` (FEDSTAT_CREDENTIAL_PRIVATE_KEY_HEX + 1 chars) and the public key, for
 * `fedstat-ca sign --public-key`, to `public_key_hex` (FEDSTAT_CREDENTIAL_PUBLIC_KEY_HEX + 1).
 * @errors FEDSTAT_INVALID_ARGUMENT: `random` is NULL or not a random source, or an output is NULL
 * (nothing written). The random source's error (FEDSTAT_UNAVAILABLE: no entropy).
 * FEDSTAT_RESOURCE_EXHAUSTED: mbedTLS's memory is full. FEDSTAT_INTERNAL: mbedTLS failed. `message`
 * (may be NULL) gets the failure's message. */
fedstat_status fedstat_credential_generate_key(fedstat_random* random, char* private_key_hex,
                                               char* public_key_hex, const char** message);

/** Gives `client` its credential for the rounds started from the next session on, after checking
 * it: the certificate must be for the Client's device id and verify under the CA's public key,
 * and the private key must be the certificate's (credential::check_credential). The strings are
 * parsed and copied (the private key into the handle, wiped when replaced); `random` only blinds
 * the check's scalar multiplication (the result does not depend on it, but it draws from it: use
 * a CSPRNG, not the Client's own seeded stream where a host must reproduce that stream). All
 * three strings NULL (and `random` then unused) removes the credential.
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client; some but not all three
 * strings NULL; `random` NULL or not a random source; a string that is not of its form above
 * (fedstat_client_last_error names which); the certificate's id is not the Client's device id; a
 * public key that is not a P-256 point. FEDSTAT_PERMISSION_DENIED: the certificate does not
 * verify under this CA key (another CA, or a changed id or key), or the private key does not match
 * the certificate's public key (the message says which). FEDSTAT_FAILED_PRECONDITION: a round is
 * pending (fedstat_client_get_state: pending_report_task): the next session resumes it with the
 * credential it started with. The random source's error, FEDSTAT_RESOURCE_EXHAUSTED or
 * FEDSTAT_INTERNAL from the curve arithmetic. On any error the Client's credential is unchanged. */
fedstat_status fedstat_client_set_credential(fedstat_client* client, const char* private_key_hex,
                                             const char* certificate, const char* ca_public_key_hex,
                                             fedstat_random* random);

/** Whether `client` holds a credential (fedstat_client_set_credential), in `*has_credential`
 * (1 or 0).
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client, or `has_credential` is
 * NULL. */
fedstat_status fedstat_client_has_credential(const fedstat_client* client, int* has_credential);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_CREDENTIAL_H_ */
