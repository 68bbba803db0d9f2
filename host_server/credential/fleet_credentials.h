// The files of fedstat-ca (the fleet's offline certificate authority, issue 42) and the device
// credentials it issues, for the host side: fedstat-ca itself, the secure-aggregation simulation
// and fedstat-sim read and write them through here. The crypto is the SDK's
// (sdk/credential/device_credential.h); this file only adds text formats and the seeded fleet.
//
// Formats (text, one record a line, hex lowercase when written and either case when read; lines
// starting with '#' after the first, and blank lines, are ignored):
//   CA key (ca.key, secret: written mode 0600, keep it offline):
//     fedstat-ca private key v1
//     <64 hex: P-256 private scalar> <130 hex: its SEC1 uncompressed public key>
//   CA public key (ca.pub: what the server and the devices hold):
//     fedstat-ca public key v1
//     <130 hex>
//   Fleet credentials (fleet.creds: emulated fleets; every device's secret key, so mode 0600):
//     fedstat-ca fleet credentials v1
//     <client id> <64 hex private key> <130 hex certificate public key> <128 hex CA signature r||s>
//   A certificate (what `fedstat-ca sign` prints for a device that made its own key):
//     <client id> <130 hex public key> <128 hex CA signature>
//
// Seeded keys (reproducible test and emulation fleets): the seed S, an unsigned 64-bit integer,
// keys a SeededStream as in every fedstat tool (seed bytes 0..7 = S little-endian, 8..31 = 0);
// the CA's key pair is credential::generate_key_pair on stream 0, device `id`'s on stream `id`.
// A device's key therefore depends only on (S, id): issuing ids 1..100 and then 51..150 under
// one seed gives ids 51..100 the same keys both times.
//
// Errors: FleetCredentialError (a std::runtime_error) whose message names the file, the line and
// what is wrong, and says what to do. Memory: the returned values (236 bytes a device).
// Paper: Bonawitz et al. 2017 §4 (the PKI of the actively secure variant).
#ifndef FEDSTAT_HOST_CREDENTIAL_FLEET_CREDENTIALS_H_
#define FEDSTAT_HOST_CREDENTIAL_FLEET_CREDENTIALS_H_

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sdk/credential/device_credential.h"

namespace fedstat {
namespace host {

// A bad file, line or value: the message says which and why.
class FleetCredentialError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The first line of each file kind.
inline constexpr char kCaKeyMagic[] = "fedstat-ca private key v1";
inline constexpr char kCaPublicMagic[] = "fedstat-ca public key v1";
inline constexpr char kFleetCredentialsMagic[] = "fedstat-ca fleet credentials v1";
// The largest number of devices one `issue` (and one fleet file) may hold: bounded work.
inline constexpr uint32_t kMaxFleetDevices = 1u << 20;
// The largest client id (credential's range: 1..2^31).
inline constexpr uint64_t kMaxCertificateId = 1ull << 31;

using CaPublicKey = std::array<uint8_t, credential::kPublicKeyBytes>;

// The CA's key pair.
struct CaKey {
  std::array<uint8_t, credential::kPrivateKeyBytes> private_key{};
  CaPublicKey public_key{};
};

// A new CA key pair: from the seeded stream of `seed` (stream 0) when `seed` is given, otherwise
// from the platform's CSPRNG (sdk/base/csprng.h: the OS's entropy through CTR_DRBG).
// Throws FleetCredentialError when the randomness or the SDK fails.
CaKey make_ca_key(const uint64_t* seed);

// Device `client_id`'s emulated credential: a key pair from stream `client_id` of `seed` (or the
// CSPRNG when `seed` is null) and its certificate under `ca`. Throws FleetCredentialError for an
// id outside [1, 2^31] or when the SDK fails.
credential::DeviceCredential issue_device_credential(const CaKey& ca, uint32_t client_id,
                                                     const uint64_t* seed);

// Reads and checks a CA key file: the magic line, the private scalar in range and the stored
// public key equal to its own. Throws FleetCredentialError otherwise (another file kind is named).
CaKey read_ca_key(const std::string& path);
// Reads a CA public key file (a CA key file is accepted too: its public half). Throws
// FleetCredentialError for another kind of file or a key not on P-256.
CaPublicKey read_ca_public_key(const std::string& path);

// Writes `ca` (mode 0600) / its public key. Refuses (FleetCredentialError) to replace an existing
// file unless `overwrite`, or when the file cannot be written.
void write_ca_key(const std::string& path, const CaKey& ca, bool overwrite);
void write_ca_public_key(const std::string& path, const CaPublicKey& key, bool overwrite);

// Writes `text` to `path` with `mode` (0600 for secrets), refusing to replace an existing file
// unless `overwrite`; fsynced. Throws FleetCredentialError naming the file (exists, cannot create,
// write failed). The other writers here (and x509_certificates.h's) go through it.
void write_credential_file(const std::string& path, const std::string& text, unsigned mode,
                           bool overwrite);

// One fleet-file line / one certificate line for `credential` / `certificate`.
std::string fleet_credential_line(const credential::DeviceCredential& credential);
std::string certificate_line(const credential::DeviceCertificate& certificate);

// Writes a fleet file (mode 0600: it holds every device's private key) with the magic line and
// one line per credential; the same refusals as write_ca_key.
void write_fleet_credentials(const std::string& path,
                             const std::vector<credential::DeviceCredential>& credentials,
                             bool overwrite);

// Reads a fleet file and returns one DeviceCredential per line (ca_public_key set to `ca`), in
// the file's order. Every line is checked with credential::check_credential: its certificate
// verifies under `ca` and its private key is the certificate's key. Throws FleetCredentialError
// naming the file and line for: another file kind, a line without four fields, bad hex or a
// wrong length, an id 0 or above 2^31 or repeated, a key not on P-256, a signature that does not
// verify under `ca` (another CA, a changed id or key), a mismatched private key, more than
// kMaxFleetDevices lines, or no line at all.
std::vector<credential::DeviceCredential> read_fleet_credentials(const std::string& path,
                                                                 const CaPublicKey& ca);

// Parses one certificate line (certificate_line's format) and checks it under `ca`. Throws
// FleetCredentialError as read_fleet_credentials.
credential::DeviceCertificate parse_certificate_line(const std::string& line,
                                                     const CaPublicKey& ca);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_CREDENTIAL_FLEET_CREDENTIALS_H_
