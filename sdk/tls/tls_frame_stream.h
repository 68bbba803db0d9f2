/// @file
/// TlsFrameStream: what the device's TLS channels share (TlsPskChannel, sdk/tls/tls_channel.h;
/// TlsCertificateChannel, sdk/tls/tls_certificate_channel.h): mbedTLS's client contexts over the
/// platform transport (platform/platform.h), one deadline per connect() or receive(), and
/// length-delimited Envelope frames (sdk/wire/envelope_codec.h) in and out. Each channel adds its
/// own authentication (a pre-shared key, or certificates) between prepare() and handshake().
///
/// Memory: sizeof(TlsFrameStream): mbedTLS's ssl, config and ctr_drbg contexts plus one receive
/// and one send buffer of wire::kMaxFrameBytes each (3064 bytes on x86-64 with Debian's mbedTLS
/// 2.28.3) — it allocates nothing. mbedTLS's own allocations while connected are listed in
/// tls_channel.h.
///
/// Errors: listed with each function. Threads: one stream is used by one thread at a time.
/// @memory sizeof(TlsFrameStream), about 3 KiB (see above).
/// @paper none (transport for all tasks).
#ifndef FEDSTAT_SDK_TLS_TLS_FRAME_STREAM_H_
#define FEDSTAT_SDK_TLS_TLS_FRAME_STREAM_H_

#include <stddef.h>
#include <stdint.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ssl.h"
#include "platform/platform.h"
#include "sdk/base/span.h"
#include "sdk/base/status.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace tls {

/// Pins TLS 1.2 exactly, the curves (kTlsPskCurves: X25519 first, then P-256 where mbedTLS has
/// it) and `drbg` as the random source of `config` (already given mbedtls_ssl_config_defaults).
/// The suites are the caller's (pin_psk_profile, the certificate channel, the server).
void pin_tls12_profile(mbedtls_ssl_config& config, mbedtls_ctr_drbg_context& drbg);

/// The connection a device channel runs over (see the file description). One thread at a time.
class TlsFrameStream {
 public:
  /// Closed; mbedTLS contexts initialised, nothing allocated.
  TlsFrameStream();
  /// Closes and frees mbedTLS's state.
  ~TlsFrameStream();
  TlsFrameStream(const TlsFrameStream&) = delete;             ///< Not copyable.
  TlsFrameStream& operator=(const TlsFrameStream&) = delete;  ///< Not copyable.

  /// Starts the deadline of a connect() (timeout_ms from now), seeds the DRBG with
  /// `personalisation` and sets the config up as a TLS 1.2 client (pin_tls12_profile, no session
  /// tickets, 1 KiB fragments where mbedTLS's records are small). The caller then pins its suites
  /// and credentials on config() and calls handshake().
  /// @errors kUnavailable: the platform entropy failed. kInternal: mbedTLS refused the defaults.
  Status prepare(const char* personalisation, uint32_t timeout_ms);
  /// mbedtls_ssl_setup on config(), the transport's callbacks, the connection to `endpoint`
  /// (within what is left of the deadline).
  /// @errors kResourceExhausted: mbedtls_ssl_setup ran out of memory. The transport's status
  /// (kInvalidArgument for an endpoint it refuses, kUnavailable, kDeadlineExceeded).
  Status open(const char* endpoint, uint32_t timeout_ms);
  /// Runs mbedtls_ssl_handshake until it ends; returns its code (0: connected, and connected()
  /// is true from now on). The channel maps a failure to a status (handshake_common_status and
  /// its own cases) and closes.
  int handshake();
  /// The status every channel gives a failed handshake the same way (it maps `mbedtls_error`,
  /// it does not fail itself).
  /// @errors kResourceExhausted: mbedTLS ran out of memory. kDeadlineExceeded: the deadline
  /// passed. kUnavailable: the peer is gone, or anything else (with `otherwise`).
  Status handshake_common_status(int mbedtls_error, const char* otherwise) const;
  /// The fatal alert the server sent (0 when none was received).
  uint8_t received_alert() const;

  /// See TlsPskChannel::send.
  /// @errors kFailedPrecondition: not connected. kInvalidArgument / kInternal: encode_frame's.
  /// kUnavailable: the connection is gone or a record could not be sent.
  Status send(const wire::Envelope& message);
  /// See TlsPskChannel::receive.
  /// @errors kFailedPrecondition: not connected. kDeadlineExceeded: no frame within timeout_ms.
  /// kUnavailable: the server closed the connection. A malformed frame: take_frame's status,
  /// returned by every later receive until close().
  Status receive(wire::Envelope& out, uint32_t timeout_ms);
  /// close_notify (best effort), transport closed, mbedTLS state freed, frame buffers wiped.
  void close();

  /// True between a successful handshake() and close().
  bool connected() const { return connected_; }
  /// The contexts, for the channel's own settings between prepare() and handshake().
  mbedtls_ssl_config& config() { return config_; }
  /// The ssl context (after open()).
  mbedtls_ssl_context& ssl() { return ssl_; }
  /// The ssl context (after open()).
  const mbedtls_ssl_context& ssl() const { return ssl_; }
  /// The seeded DRBG (after prepare()).
  mbedtls_ctr_drbg_context& drbg() { return drbg_; }

 private:
  static int bio_send(void* self, const unsigned char* bytes, size_t length);
  static int bio_receive_timeout(void* self, unsigned char* out, size_t length, uint32_t unused);
  static int drbg_entropy(void* self, unsigned char* out, size_t length);
  Status io_status(int mbedtls_error, const char* otherwise) const;
  void set_deadline(uint32_t timeout_ms);

  mbedtls_ssl_context ssl_;
  mbedtls_ssl_config config_;
  mbedtls_ctr_drbg_context drbg_;
  platform::Connection connection_;
  bool connected_ = false;
  bool transport_open_ = false;
  Status broken_;             // a malformed frame was received: the stream is unusable
  uint64_t deadline_us_ = 0;  // for bio_receive_timeout; platform::monotonic_micros() time
  size_t received_bytes_ = 0;
  uint8_t received_[wire::kMaxFrameBytes];
  uint8_t sending_[wire::kMaxFrameBytes];
};

}  // namespace tls
}  // namespace fedstat

#endif  // FEDSTAT_SDK_TLS_TLS_FRAME_STREAM_H_
