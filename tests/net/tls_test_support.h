// Shared by the TLS tests on loopback (tests/net's TlsServerTest and TlsCertificateTest,
// tests/cabi's CabiTlsCertificateTest): a seeded fleet CA with its devices and server
// certificates, as fedstat-ca's code writes them (host_server/credential/), and a ClientHello.
#ifndef FEDSTAT_TESTS_NET_TLS_TEST_SUPPORT_H_
#define FEDSTAT_TESTS_NET_TLS_TEST_SUPPORT_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "host_server/credential/fleet_credentials.h"
#include "host_server/credential/x509_certificates.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace tls_test {

// One fleet CA (seeded), its certificate, devices and server certificates.
struct Fleet {
  explicit Fleet(uint64_t seed) : seed_(seed), ca(host::make_ca_key(&seed)) {
    ca_pem = host::ca_certificate_pem(ca);
  }
  credential::DeviceCredential device(uint32_t id) const {
    return host::issue_device_credential(ca, id, &seed_);
  }
  std::string certificate_of(const credential::DeviceCredential& device) const {
    host::CaPublicKey key{};
    std::memcpy(key.data(), device.certificate.public_key, key.size());
    return host::device_certificate_pem(ca, device.certificate.client_id, key);
  }
  host::ServerCertificate server(const std::string& name) const {
    return host::make_server_certificate(ca, name, &seed_);
  }
  uint64_t seed_;
  host::CaKey ca;
  std::string ca_pem;
};

// A ClientHello from `client_id` (64-bit words).
inline wire::Envelope hello(uint64_t client_id) {
  wire::Envelope envelope = wire::make_envelope();
  envelope.which_body = fedstat_v1_Envelope_client_hello_tag;
  envelope.body.client_hello.client_id = client_id;
  envelope.body.client_hello.word_bits = 64;
  return envelope;
}

}  // namespace tls_test
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_NET_TLS_TEST_SUPPORT_H_
