/// @file
/// TlsCertificateChannel: the device's FrameChannel to the server with mutual TLS — X.509
/// certificates from the fleet CA (fedstat-ca, issue 42), instead of TlsPskChannel's pre-shared
/// key: the server holds no secret that lets it act as a device, and the device authenticates the
/// server by its certificate and name. Framing, transport and deadlines are TlsPskChannel's
/// (sdk/tls/tls_frame_stream.h).
///
/// Pinned: TLS 1.2 exactly, one suite, TLS-ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256
/// (kTlsCertificateCiphersuites: an AEAD, forward secrecy from the ephemeral exchange, ChaCha20 as
/// on the PSK path), key exchange X25519 then P-256, certificates P-256/ECDSA-SHA256. The server's
/// certificate must chain to the CA certificate given, carry the expected server name (a dNSName
/// subjectAltName; MBEDTLS_SSL_VERIFY_REQUIRED) and allow serverAuth. The device presents its
/// certificate ("CN=fedstat-device <id>", clientAuth) and proves its key. The key is the device's
/// compact-credential key (sdk/credential/device_credential.h): the X.509 certificate that
/// `fedstat-ca issue`/`sign` writes is for the same key pair, so the server ties the TLS peer to
/// the device's secure-aggregation identity.
///
/// Compiled only where mbedTLS parses X.509 (MBEDTLS_X509_CRT_PARSE_C: hosts, phones). The
/// bare-metal config (platform/baremetal/fedstat_mbedtls_config.h) has no X.509: microcontrollers
/// keep TlsPskChannel (docs/protocol.md, "Device credentials", says what that gives up).
///
/// No resumption: every connect() is a full handshake (the server does not cache certificate
/// sessions either, host_server/net/tls_server.h), so a device pays one ECDSA signature, one
/// certificate-chain check and one key exchange per connection.
///
/// Memory: sizeof(TlsCertificateChannel) = sizeof(TlsFrameStream) (about 3 KiB: mbedTLS's ssl,
/// config and ctr_drbg contexts and two wire::kMaxFrameBytes frame buffers) + 2 ×
/// sizeof(mbedtls_x509_crt) + sizeof(mbedtls_pk_context) + the server name (kMaxServerNameBytes
/// + 1) — 4,576 bytes on x86-64 with Debian's mbedTLS 2.28.3; our code allocates nothing. mbedTLS
/// allocates (calloc, freed by close()): the parsed CA and device certificates (their DER plus
/// about 0.6 KiB of structure each), the device key (an ecp_keypair, ~0.3 KiB), the server's
/// certificate during the handshake, and what TlsPskChannel's header lists (2 × 16717 bytes of
/// record buffers with Debian's mbedTLS, the handshake state, the transform).
///
/// Errors: listed with connect, send and receive. Threads: one thread at a time.
/// @memory sizeof(TlsCertificateChannel), about 4.5 KiB (see above), plus mbedTLS's allocations
/// while connected.
/// @paper Bonawitz et al. 2017 §4 (the PKI of the actively secure variant); transport otherwise.
#ifndef FEDSTAT_SDK_TLS_TLS_CERTIFICATE_CHANNEL_H_
#define FEDSTAT_SDK_TLS_TLS_CERTIFICATE_CHANNEL_H_

#include <stddef.h>
#include <stdint.h>

#include "mbedtls/ssl.h"
#include "sdk/base/span.h"
#include "sdk/base/status.h"
#include "sdk/client/frame_channel.h"
#include "sdk/tls/tls_frame_stream.h"

#if defined(MBEDTLS_X509_CRT_PARSE_C) && defined(MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED)
#include "mbedtls/pk.h"
#include "mbedtls/x509_crt.h"

#if !defined(MBEDTLS_X509_CHECK_KEY_USAGE) || !defined(MBEDTLS_X509_CHECK_EXTENDED_KEY_USAGE)
// Without them mbedTLS skips the (extended) key usage checks: a device would take another device's
// clientAuth certificate as the server's wherever the names match, and the server a serverAuth one
// as a device's.
#error \
    "TlsCertificateChannel needs MBEDTLS_X509_CHECK_KEY_USAGE and MBEDTLS_X509_CHECK_EXTENDED_KEY_USAGE"
#endif

/// Defined where TlsCertificateChannel is built (mbedTLS with X.509 and ECDHE-ECDSA).
#define FEDSTAT_TLS_CERTIFICATES 1

namespace fedstat {
namespace tls {

/// The pinned suite, zero-terminated as mbedtls_ssl_conf_ciphersuites wants.
extern const int kTlsCertificateCiphersuites[];

/// A FrameChannel over TLS 1.2 with X.509 certificates both ways (see the file description).
class TlsCertificateChannel final : public client::FrameChannel {
 public:
  /// The longest expected server name (a DNS name is at most 253 characters).
  static constexpr size_t kMaxServerNameBytes = 253;
  /// A device private key: the P-256 scalar of its compact credential, big-endian.
  static constexpr size_t kPrivateKeyBytes = 32;

  /// A closed channel.
  TlsCertificateChannel();
  /// Closes the channel and frees mbedTLS's state.
  ~TlsCertificateChannel();
  TlsCertificateChannel(const TlsCertificateChannel&) = delete;             ///< Not copyable.
  TlsCertificateChannel& operator=(const TlsCertificateChannel&) = delete;  ///< Not copyable.

  /// Connects to `endpoint` ("host:port") and completes a mutually authenticated handshake
  /// within timeout_ms: the server's certificate must chain to `ca_certificate` and name
  /// `server_name`; the device presents `device_certificate` and proves `device_private_key`.
  /// Certificates are PEM (the span includes the text's terminating NUL, as mbedTLS wants) or
  /// DER. On any error the channel is closed again.
  /// @errors kInvalidArgument: an empty or too long server name; a CA or device certificate that
  /// does not parse ("bad certificate", naming which; PEM without its NUL is named); a private
  /// key that is not 32 bytes or not a valid P-256 scalar; "wrong key": the private key is not
  /// the device certificate's; an endpoint the transport refuses. kFailedPrecondition: already
  /// connected. kPermissionDenied: "untrusted server" (its certificate does not chain to the
  /// CA), "server name mismatch" (it does not name server_name), a server certificate not for
  /// serverAuth, or the server refused the device's certificate (a fatal alert: another CA, an
  /// unknown device, a key that does not match). kUnavailable: no route, peer gone, no common
  /// suite (a server not configured for certificates), another fatal alert, entropy failure.
  /// kDeadlineExceeded: no connection or handshake within timeout_ms. kResourceExhausted:
  /// mbedTLS ran out of memory. kInternal: another mbedTLS setup failure.
  Status connect(const char* endpoint, const char* server_name, ByteSpan ca_certificate,
                 ByteSpan device_certificate, ByteSpan device_private_key, uint32_t timeout_ms);

  /// Encodes `message` as one frame and writes it (TlsPskChannel::send's errors).
  /// @errors kFailedPrecondition: not connected. kInvalidArgument / kInternal: the frame could
  /// not be encoded. kUnavailable: the connection is gone.
  Status send(const wire::Envelope& message) override;
  /// Reads until one whole frame is buffered (TlsPskChannel::receive's errors).
  /// @errors kFailedPrecondition: not connected. kDeadlineExceeded: no frame in timeout_ms.
  /// kUnavailable: the server closed the connection. A malformed frame: take_frame's status.
  Status receive(wire::Envelope& out, uint32_t timeout_ms) override;
  /// Sends close_notify (best effort), closes the transport, frees mbedTLS's state (the parsed
  /// certificates and the key, wiped); the channel can connect again.
  void close() override;
  /// True between a successful connect() and close().
  bool connected() const { return stream_.connected(); }

 private:
  Status load(const char* server_name, ByteSpan ca_certificate, ByteSpan device_certificate,
              ByteSpan device_private_key);
  Status handshake_status(int mbedtls_error) const;
  void free_credentials();

  TlsFrameStream stream_;
  mbedtls_x509_crt ca_;
  mbedtls_x509_crt own_;
  mbedtls_pk_context key_;
  char server_name_[kMaxServerNameBytes + 1] = {};
};

}  // namespace tls
}  // namespace fedstat

#endif  // MBEDTLS_X509_CRT_PARSE_C && MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#endif  // FEDSTAT_SDK_TLS_TLS_CERTIFICATE_CHANNEL_H_
