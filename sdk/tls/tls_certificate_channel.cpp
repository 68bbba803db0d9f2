// TlsCertificateChannel: mutual TLS with X.509 certificates over TlsFrameStream. See
// tls_certificate_channel.h.
#include "sdk/tls/tls_certificate_channel.h"

#if defined(FEDSTAT_TLS_CERTIFICATES)

#include <string.h>

#include "mbedtls/ecp.h"
#include "mbedtls/x509.h"

namespace fedstat {
namespace tls {

const int kTlsCertificateCiphersuites[] = {MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
                                           0};

namespace {
constexpr char kDrbgPersonalisation[] = "fedstat tls certificate channel";

// mbedTLS parses PEM only with its terminating NUL inside the buffer.
bool pem_without_nul(ByteSpan bytes) {
  static constexpr char kBegin[] = "-----BEGIN";
  return bytes.size() >= sizeof(kBegin) - 1 &&
         memcmp(bytes.data(), kBegin, sizeof(kBegin) - 1) == 0 && bytes[bytes.size() - 1] != 0;
}
}  // namespace

TlsCertificateChannel::TlsCertificateChannel() {
  mbedtls_x509_crt_init(&ca_);
  mbedtls_x509_crt_init(&own_);
  mbedtls_pk_init(&key_);
}

TlsCertificateChannel::~TlsCertificateChannel() {
  close();
}

void TlsCertificateChannel::free_credentials() {
  mbedtls_x509_crt_free(&ca_);
  mbedtls_x509_crt_free(&own_);
  mbedtls_pk_free(&key_);  // mbedtls_ecp_keypair_free zeroises the scalar
  mbedtls_x509_crt_init(&ca_);
  mbedtls_x509_crt_init(&own_);
  mbedtls_pk_init(&key_);
}

Status TlsCertificateChannel::load(const char* server_name, ByteSpan ca_certificate,
                                   ByteSpan device_certificate, ByteSpan device_private_key) {
  const size_t name_length = strlen(server_name);
  memcpy(server_name_, server_name, name_length + 1);
  if (pem_without_nul(ca_certificate)) {
    return invalid_argument(
        "TLS: bad certificate: the CA certificate is PEM without its terminating NUL (pass "
        "strlen + 1 bytes)");
  }
  if (pem_without_nul(device_certificate)) {
    return invalid_argument(
        "TLS: bad certificate: the device certificate is PEM without its terminating NUL (pass "
        "strlen + 1 bytes)");
  }
  int rc = mbedtls_x509_crt_parse(&ca_, ca_certificate.data(), ca_certificate.size());
  if (rc == MBEDTLS_ERR_X509_ALLOC_FAILED) {
    return resource_exhausted("TLS: out of memory parsing the CA certificate");
  }
  if (rc != 0) return invalid_argument("TLS: bad certificate: the CA certificate does not parse");
  rc = mbedtls_x509_crt_parse(&own_, device_certificate.data(), device_certificate.size());
  if (rc == MBEDTLS_ERR_X509_ALLOC_FAILED) {
    return resource_exhausted("TLS: out of memory parsing the device certificate");
  }
  if (rc != 0) {
    return invalid_argument("TLS: bad certificate: the device certificate does not parse");
  }
  if (own_.next != nullptr || !mbedtls_pk_can_do(&own_.pk, MBEDTLS_PK_ECKEY) ||
      mbedtls_pk_ec(own_.pk)->grp.id != MBEDTLS_ECP_DP_SECP256R1) {
    return invalid_argument(
        "TLS: bad certificate: the device certificate must be one P-256 certificate "
        "(fedstat-ca issue/sign)");
  }
  // The key: its scalar, and its public point computed from it (blinded by the DRBG).
  rc = mbedtls_pk_setup(&key_, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY));
  if (rc != 0) return resource_exhausted("TLS: out of memory for the device key");
  mbedtls_ecp_keypair* key = mbedtls_pk_ec(key_);
  rc = mbedtls_ecp_group_load(&key->grp, MBEDTLS_ECP_DP_SECP256R1);
  if (rc == 0) rc = mbedtls_mpi_read_binary(&key->d, device_private_key.data(), kPrivateKeyBytes);
  if (rc != 0) return resource_exhausted("TLS: out of memory for the device key");
  if (mbedtls_ecp_check_privkey(&key->grp, &key->d) != 0) {
    return invalid_argument("TLS: the device private key is not a valid P-256 scalar");
  }
  rc = mbedtls_ecp_mul(&key->grp, &key->Q, &key->d, &key->grp.G, mbedtls_ctr_drbg_random,
                       &stream_.drbg());
  if (rc != 0) return internal_error("TLS: computing the device public key failed");
  if (mbedtls_ecp_point_cmp(&key->Q, &mbedtls_pk_ec(own_.pk)->Q) != 0) {
    return invalid_argument(
        "TLS: wrong key: the device private key is not the device certificate's (give the key "
        "of the credential the certificate was issued for)");
  }
  mbedtls_ssl_config& config = stream_.config();
  mbedtls_ssl_conf_ciphersuites(&config, kTlsCertificateCiphersuites);
  mbedtls_ssl_conf_authmode(&config, MBEDTLS_SSL_VERIFY_REQUIRED);
  mbedtls_ssl_conf_ca_chain(&config, &ca_, nullptr);
  rc = mbedtls_ssl_conf_own_cert(&config, &own_, &key_);
  if (rc != 0) return resource_exhausted("TLS: mbedtls_ssl_conf_own_cert failed (out of memory)");
  return Status();
}

Status TlsCertificateChannel::handshake_status(int mbedtls_error) const {
  if (mbedtls_error == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
    const uint32_t flags = mbedtls_ssl_get_verify_result(&stream_.ssl());
    if ((flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED) != 0) {
      return permission_denied(
          "TLS: untrusted server: its certificate does not chain to the fleet CA certificate");
    }
    if ((flags & MBEDTLS_X509_BADCERT_CN_MISMATCH) != 0) {
      return permission_denied(
          "TLS: server name mismatch: the server's certificate does not name the expected "
          "server");
    }
    if ((flags & (MBEDTLS_X509_BADCERT_EXT_KEY_USAGE | MBEDTLS_X509_BADCERT_KEY_USAGE)) != 0) {
      return permission_denied("TLS: the server's certificate is not for serverAuth");
    }
    if ((flags & (MBEDTLS_X509_BADCERT_EXPIRED | MBEDTLS_X509_BADCERT_FUTURE)) != 0) {
      return permission_denied("TLS: the server's certificate is expired or not yet valid");
    }
    return permission_denied("TLS: the server's certificate did not verify");
  }
  if (mbedtls_error == MBEDTLS_ERR_SSL_BAD_HS_CERTIFICATE &&
      (mbedtls_ssl_get_verify_result(&stream_.ssl()) &
       (MBEDTLS_X509_BADCERT_EXT_KEY_USAGE | MBEDTLS_X509_BADCERT_KEY_USAGE)) != 0) {
    // mbedTLS reports a certificate for another use (a device's clientAuth certificate: another
    // device playing the server) as a bad certificate, with these flags.
    return permission_denied(
        "TLS: the server's certificate is not for serverAuth (a device certificate?)");
  }
  if (mbedtls_error == MBEDTLS_ERR_SSL_BAD_HS_CERTIFICATE ||
      mbedtls_error == MBEDTLS_ERR_SSL_PK_TYPE_MISMATCH) {
    return permission_denied(
        "TLS: bad certificate from the server (not a P-256 ECDSA certificate fedstat accepts)");
  }
  if (mbedtls_error == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) {
    switch (stream_.received_alert()) {
      case MBEDTLS_SSL_ALERT_MSG_CERT_REVOKED:
        return permission_denied(
            "TLS: the server revoked this device's certificate (its operator listed the device "
            "in tls_revoked_devices)");
      case MBEDTLS_SSL_ALERT_MSG_BAD_CERT:
      case MBEDTLS_SSL_ALERT_MSG_UNSUPPORTED_CERT:
      case MBEDTLS_SSL_ALERT_MSG_CERT_UNKNOWN:
      case MBEDTLS_SSL_ALERT_MSG_UNKNOWN_CA:
      case MBEDTLS_SSL_ALERT_MSG_ACCESS_DENIED:
      case MBEDTLS_SSL_ALERT_MSG_CERT_EXPIRED:
      case MBEDTLS_SSL_ALERT_MSG_DECRYPT_ERROR:
        return permission_denied(
            "TLS: the server refused this device's certificate (issued by another CA, not a "
            "fedstat device certificate, or a key that does not match)");
      case MBEDTLS_SSL_ALERT_MSG_HANDSHAKE_FAILURE:
        return unavailable(
            "TLS: no common cipher suite: the server does not accept certificates (it is "
            "configured for pre-shared keys only)");
      default:
        return unavailable("TLS: the server ended the handshake with a fatal alert");
    }
  }
  return stream_.handshake_common_status(mbedtls_error, "TLS: the handshake failed");
}

Status TlsCertificateChannel::connect(const char* endpoint, const char* server_name,
                                      ByteSpan ca_certificate, ByteSpan device_certificate,
                                      ByteSpan device_private_key, uint32_t timeout_ms) {
  if (stream_.connected()) return failed_precondition("TLS: channel already connected");
  if (server_name == nullptr || server_name[0] == '\0' ||
      strlen(server_name) > kMaxServerNameBytes) {
    return invalid_argument(
        "TLS: the expected server name is empty or longer than 253 characters (give the name "
        "in the server's certificate)");
  }
  if (device_private_key.size() != kPrivateKeyBytes) {
    return invalid_argument("TLS: the device private key must be 32 bytes (a P-256 scalar)");
  }
  close();  // a previous connect's parsed credentials, if any
  Status status = stream_.prepare(kDrbgPersonalisation, timeout_ms);
  if (status.ok())
    status = load(server_name, ca_certificate, device_certificate, device_private_key);
  if (status.ok()) status = stream_.open(endpoint, timeout_ms);
  if (status.ok() && mbedtls_ssl_set_hostname(&stream_.ssl(), server_name_) != 0) {
    status = resource_exhausted("TLS: mbedtls_ssl_set_hostname failed (out of memory)");
  }
  if (!status.ok()) {
    close();
    return status;
  }
  const int rc = stream_.handshake();
  if (rc != 0) {
    status = handshake_status(rc);
    close();
    return status;
  }
  return Status();
}

Status TlsCertificateChannel::send(const wire::Envelope& message) {
  return stream_.send(message);
}

Status TlsCertificateChannel::receive(wire::Envelope& out, uint32_t timeout_ms) {
  return stream_.receive(out, timeout_ms);
}

void TlsCertificateChannel::close() {
  stream_.close();  // before the certificates and key its config refers to
  free_credentials();
}

}  // namespace tls
}  // namespace fedstat

#endif  // FEDSTAT_TLS_CERTIFICATES
