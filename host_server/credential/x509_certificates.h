// X.509 certificates for mutual TLS (issue 42 item 1), written by fedstat-ca with mbedTLS's
// x509write under the SAME CA key as the compact device certificates (fleet_credentials.h): one
// CA, two encodings. Everything is P-256 / ECDSA-SHA256, PEM.
//
//   CA certificate (ca.crt): self-signed, subject and issuer "CN=fedstat fleet CA,O=fedstat",
//     basicConstraints CA:TRUE (path length 0), keyUsage keyCertSign, serial 1.
//   Server certificate: subject CN=<name>, subjectAltName <name> (a dNSName; an IP address is
//     written both as an iPAddress and as a dNSName, because mbedTLS 2.28 matches the expected
//     name against dNSName entries only), extendedKeyUsage serverAuth, keyUsage
//     digitalSignature, a fresh key pair and a random 64-bit serial.
//   Device certificate: subject "CN=fedstat-device <id>,O=fedstat", extendedKeyUsage
//     clientAuth, keyUsage digitalSignature, serial = id, for the device's compact-credential
//     public key (so the server ties the TLS peer to the secure-aggregation identity).
//   Validity: 2024-01-01 to 2099-12-31 for all (devices often have no calendar clock; a device
//     is withdrawn by listing its id in the server's tls_revoked_devices).
//
// Errors: FleetCredentialError naming what failed. Memory: the returned strings (< 1 KiB each).
// Paper: none (transport).
#ifndef FEDSTAT_HOST_CREDENTIAL_X509_CERTIFICATES_H_
#define FEDSTAT_HOST_CREDENTIAL_X509_CERTIFICATES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host_server/credential/fleet_credentials.h"

namespace fedstat {
namespace host {

// The CA certificate's subject (and every issued certificate's issuer).
inline constexpr char kCaSubject[] = "CN=fedstat fleet CA,O=fedstat";
// A device certificate's common name is this prefix followed by the decimal id.
inline constexpr char kDeviceCommonNamePrefix[] = "fedstat-device ";

// The self-signed CA certificate of `ca` (PEM).
std::string ca_certificate_pem(const CaKey& ca);

// A server certificate for `name` (a DNS name or an IPv4/IPv6 address) and its new private key
// (PEM, SEC1 "EC PRIVATE KEY"). The key comes from the platform CSPRNG, or from stream
// 2^32 + 1 of `seed` when given (tests and emulation only). Throws FleetCredentialError for an
// empty name, one longer than 253 characters or with characters other than letters, digits,
// '.', '-', ':' (IPv6), or when mbedTLS fails.
struct ServerCertificate {
  std::string certificate_pem;
  std::string private_key_pem;
};
ServerCertificate make_server_certificate(const CaKey& ca, const std::string& name,
                                          const uint64_t* seed);

// Device `client_id`'s certificate for `public_key` (65 bytes, SEC1 uncompressed P-256), PEM.
// Throws FleetCredentialError for an id outside [1, 2^31] or a key not on P-256.
std::string device_certificate_pem(const CaKey& ca, uint32_t client_id,
                                   const CaPublicKey& public_key);

// The id in a device certificate's common name ("fedstat-device <id>", id in [1, 2^31] written
// without leading zeros), or nullopt for anything else.
std::optional<uint32_t> device_id_of_common_name(const std::string& common_name);

// The X.509 counterpart of a fleet credentials file (what `fedstat-ca issue --out F` writes next
// to F: device_certificates_path(F)): for each device, a line "fedstat-device <id>" and its PEM
// certificate (PEM readers skip the text between blocks).
std::string device_certificates_path(const std::string& fleet_credentials_path);
std::string device_certificates_text(const CaKey& ca,
                                     const std::vector<credential::DeviceCredential>& fleet);
// Reads such a file: id → PEM text. Throws FleetCredentialError naming the file and line for a
// missing or malformed "fedstat-device <id>" line, an id repeated, or a block not closed.
std::map<uint32_t, std::string> read_device_certificates(const std::string& path);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_CREDENTIAL_X509_CERTIFICATES_H_
