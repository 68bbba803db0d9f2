// The C ABI's device credentials (c/credential.h): fedstat-ca's text parsed strictly into a
// credential::DeviceCredential, checked with credential::check_credential and handed to the
// Client (capi/client_session.h). In its own object file, so that an app that never sets a
// credential does not link the P-256 arithmetic through it.
#include <string.h>

#include "capi/client_session.h"
#include "capi/handle.h"
#include "capi/hex.h"
#include "capi/objects.h"
#include "sdk/base/crypto.h"
#include "sdk/credential/device_credential.h"

namespace fedstat {
namespace capi {
namespace {

using credential::DeviceCredential;

constexpr char kCaPublicMagic[] = "fedstat-ca public key v1";  // ca.pub's first line
constexpr char kHexDigits[] = "0123456789abcdef";

// A client id in [1, 2^31] at *p (decimal digits only), ending at a space or tab.
bool take_id(const char*& p, uint32_t& out) {
  uint64_t value = 0;
  const char* start = p;
  while (*p >= '0' && *p <= '9' && p - start < 11) {
    value = value * 10 + static_cast<uint64_t>(*p - '0');
    ++p;
  }
  if (p == start || value == 0 || value > (uint64_t{1} << 31) || (*p != ' ' && *p != '\t')) {
    return false;
  }
  out = static_cast<uint32_t>(value);
  return true;
}

// The three strings of fedstat_client_set_credential into `out`.
Status parse_credential(const char* private_key_hex, const char* certificate,
                        const char* ca_public_key_hex, DeviceCredential& out) {
  const char* p = skip_space(private_key_hex);
  if (!take_hex(p, out.private_key, sizeof(out.private_key)) || *skip_space(p) != '\0') {
    return invalid_argument("set_credential: the private key must be 64 hex digits");
  }
  p = skip_space(certificate);
  credential::DeviceCertificate& c = out.certificate;
  bool ok = take_id(p, c.client_id);
  if (ok) {
    p = skip_space(p);
    ok = take_hex(p, c.public_key, sizeof(c.public_key));
  }
  if (ok) {
    p = skip_space(p);
    ok = take_hex(p, c.ca_signature, sizeof(c.ca_signature)) && *skip_space(p) == '\0';
  }
  if (!ok) {
    return invalid_argument(
        "set_credential: the certificate must be \"<client id 1..2^31> <130 hex public key> <128 "
        "hex CA signature>\", as fedstat-ca sign prints it");
  }
  p = skip_space(ca_public_key_hex);
  const size_t magic = sizeof(kCaPublicMagic) - 1;
  if (strncmp(p, kCaPublicMagic, magic) == 0 && hex_space(p[magic])) p = skip_space(p + magic);
  if (!take_hex(p, out.ca_public_key, sizeof(out.ca_public_key)) || *skip_space(p) != '\0') {
    return invalid_argument(
        "set_credential: the CA public key must be 130 hex digits (ca.pub's second line) or "
        "ca.pub itself");
  }
  return Status();
}

void write_hex(const uint8_t* bytes, size_t size, char* out) {
  for (size_t i = 0; i < size; ++i) {
    out[2 * i] = kHexDigits[bytes[i] >> 4];
    out[2 * i + 1] = kHexDigits[bytes[i] & 15];
  }
  out[2 * size] = '\0';
}

}  // namespace
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

fedstat_status fedstat_credential_generate_key(fedstat_random* random, char* private_key_hex,
                                               char* public_key_hex, const char** message) {
  if (!valid(random, kRandomMagic) || private_key_hex == nullptr || public_key_hex == nullptr) {
    return finish_free(invalid_argument("generate_key: a NULL argument, or `random` is not a "
                                        "random source"),
                       message);
  }
  uint8_t private_key[credential::kPrivateKeyBytes];
  uint8_t public_key[credential::kPublicKeyBytes];
  const crypto::ScopedWipe wipe(private_key, sizeof(private_key));
  FEDSTAT_RETURN_IF_ERROR_C(
      credential::generate_key_pair(*random->source, MutableByteSpan(private_key),
                                    MutableByteSpan(public_key)),
      message);
  write_hex(private_key, sizeof(private_key), private_key_hex);
  write_hex(public_key, sizeof(public_key), public_key_hex);
  return FEDSTAT_OK;
}

fedstat_status fedstat_client_set_credential(fedstat_client* client, const char* private_key_hex,
                                             const char* certificate, const char* ca_public_key_hex,
                                             fedstat_random* random) {
  if (!client_live(client)) return FEDSTAT_INVALID_ARGUMENT;
  const int given =
      (private_key_hex != nullptr) + (certificate != nullptr) + (ca_public_key_hex != nullptr);
  if (given == 0) return client_set_credential(client, nullptr);
  if (given != 3) {
    return client_finish(client, invalid_argument("set_credential: give the private key, the "
                                                  "certificate and the CA public key (or none "
                                                  "of them, to remove the credential)"));
  }
  if (!valid(random, kRandomMagic)) {
    return client_finish(client, invalid_argument("set_credential: `random` is NULL or not a "
                                                  "random source"));
  }
  DeviceCredential parsed;
  const crypto::ScopedWipe wipe(parsed.private_key, sizeof(parsed.private_key));
  Status status = parse_credential(private_key_hex, certificate, ca_public_key_hex, parsed);
  if (status.ok() && parsed.certificate.client_id != client_device_id(client)) {
    status = invalid_argument(
        "set_credential: the certificate is for another client id than the Client's device id");
  }
  if (status.ok()) status = credential::check_credential(parsed, *random->source);
  if (!status.ok()) return client_finish(client, status);
  return client_set_credential(client, &parsed);
}

fedstat_status fedstat_client_has_credential(const fedstat_client* client, int* has_credential) {
  if (!client_live(client) || has_credential == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  *has_credential = client_has_credential(client) ? 1 : 0;
  return FEDSTAT_OK;
}

}  // extern "C"
