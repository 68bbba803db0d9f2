/// @file
/// TlsPskChannel: the device's FrameChannel to the server — TLS 1.2 from mbedTLS with a
/// pre-shared key, over the platform transport (platform/platform.h), carrying length-delimited
/// Envelope frames (sdk/wire/envelope_codec.h).
///
/// Pinned: TLS 1.2 exactly (mbedTLS 2.28's TLS 1.3 is experimental) and one suite,
/// TLS-ECDHE-PSK-WITH-CHACHA20-POLY1305-SHA256 (kTlsPskCiphersuites): an AEAD, and forward secrecy
/// from the ephemeral X25519 (or P-256) exchange — a stolen device key does not decrypt recorded
/// sessions (with resumption, below: once the sessions resumed from a full handshake have aged
/// out). It is mbedTLS 2.28's only ECDHE-PSK suite with an AEAD (ECDHE-PSK has CBC, but no GCM
/// or CCM); ChaCha20 is also fast on microcontrollers without AES hardware. The server
/// (host_server/net/tls_server.h) pins the same list.
///
/// Memory: sizeof(TlsPskChannel) (its TlsFrameStream — mbedTLS's ssl, config and ctr_drbg contexts
/// plus one receive and one send buffer of wire::kMaxFrameBytes each, sdk/tls/tls_frame_stream.h,
/// shared with TlsCertificateChannel —, and the saved session below; 3288 bytes on
/// x86-64 with Debian's mbedTLS 2.28.3: ssl 736 + config 416 + ctr_drbg 392 + 2 × 738 + session
/// 160 + its owner's digest 32 + its age 8) — our code allocates nothing.
/// While connected, mbedTLS itself allocates on POSIX (calloc): its record buffers,
/// MBEDTLS_SSL_IN_BUFFER_LEN + MBEDTLS_SSL_OUT_BUFFER_LEN (2 × 16717 bytes with Debian's 16 KiB
/// MBEDTLS_SSL_*_CONTENT_LEN), a copy of the PSK and identity, the handshake state (a few KiB,
/// freed after the handshake) and the transform (~1 KiB). Those allocations are mbedTLS's, freed by
/// close(). A bare-metal build will set small content lengths and a static pool (a later issue).
///
/// Resumption: after a full handshake the channel keeps the session (mbedTLS's
/// mbedtls_ssl_session: the id the server gave it and the master secret) across close(), and the
/// next connect() with the same endpoint, identity and key offers it. A server that still holds
/// it (host_server/net/tls_session_cache.h, 1 h by default) resumes it: an abbreviated handshake
/// with no key exchange, authenticated by the master secret — no X25519 on the device, two
/// round trips fewer of work. Otherwise the server answers with a full handshake, transparently.
/// The saved master secret decrypts the connections made with it, so the channel wipes it once
/// it is set_max_session_age_seconds old (24 h by default, on platform::monotonic_micros(),
/// which on POSIX counts time suspended; checked at connect(), so an app that stops connecting
/// calls forget_session()), and forget_session() and a failed
/// connect() wipe it at once. A network observer sees the session id in the ClientHello, as it sees
/// the PSK identity (the device id) in the clear in every full handshake: nothing new is linkable.
///
/// Errors: listed with connect, send and receive.
///
/// Threads: one channel is used by one thread at a time.
///
/// @memory sizeof(TlsPskChannel), about 3 KiB with the two frame buffers (see above), plus
/// mbedTLS's own allocations while connected (2 × 16717 bytes of record buffers with Debian's
/// mbedTLS, the handshake state, the transform).
/// @paper none (transport for all tasks).
#ifndef FEDSTAT_SDK_TLS_TLS_CHANNEL_H_
#define FEDSTAT_SDK_TLS_TLS_CHANNEL_H_

#include <stddef.h>
#include <stdint.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ssl.h"
#include "platform/platform.h"
#include "sdk/base/crypto.h"
#include "sdk/base/span.h"
#include "sdk/base/status.h"
#include "sdk/client/frame_channel.h"
#include "sdk/tls/tls_frame_stream.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace tls {

/// The pinned suites, zero-terminated as mbedtls_ssl_conf_ciphersuites wants.
extern const int kTlsPskCiphersuites[];
/// The pinned key-exchange groups (X25519 first), MBEDTLS_ECP_DP_NONE-terminated.
extern const mbedtls_ecp_group_id kTlsPskCurves[];

/// Pins what both ends of a fedstat PSK connection agree on, on a config already given
/// mbedtls_ssl_config_defaults: TLS 1.2 exactly, kTlsPskCiphersuites, kTlsPskCurves, and `drbg`
/// as its random source (pin_tls12_profile, sdk/tls/tls_frame_stream.h, and the PSK suite). The
/// device (TlsPskChannel), the server (host_server/net/tls_server.h) and the tools and benchmarks
/// that speak to it call this one function.
void pin_psk_profile(mbedtls_ssl_config& config, mbedtls_ctr_drbg_context& drbg);

/// A FrameChannel over TLS 1.2 with a pre-shared key (see the file description). One thread at
/// a time.
class TlsPskChannel final : public client::FrameChannel {
 public:
  /// A closed channel (mbedTLS contexts initialised, nothing allocated).
  TlsPskChannel();
  /// Closes the channel and frees mbedTLS's state.
  ~TlsPskChannel();
  TlsPskChannel(const TlsPskChannel&) = delete;             ///< Not copyable.
  TlsPskChannel& operator=(const TlsPskChannel&) = delete;  ///< Not copyable.

  /// Connects to `endpoint` (platform::transport_connect's "host:port") and completes the TLS
  /// handshake with `identity` (the decimal device id) and `psk`, all within timeout_ms. On any
  /// error the channel is closed again.
  /// @errors kInvalidArgument: empty identity, PSK empty or longer than MBEDTLS_PSK_MAX_LEN, or
  /// an endpoint the transport refuses. kFailedPrecondition: already connected.
  /// kPermissionDenied: the server refused the identity or the key (a fatal alert during the
  /// handshake, or its Finished did not verify). kUnavailable: no route, peer gone, another
  /// fatal alert, or the platform entropy that seeds the DRBG failed. kDeadlineExceeded: no
  /// connection or handshake within timeout_ms. kResourceExhausted: mbedTLS ran out of memory
  /// (microcontrollers: the SDK's static pool, crypto::kMbedtlsPoolBytes). kInternal: another
  /// mbedTLS setup failure.
  Status connect(const char* endpoint, ByteSpan identity, ByteSpan psk, uint32_t timeout_ms);

  /// Encodes `message` as one frame and writes it to the TLS stream.
  /// @errors kFailedPrecondition: not connected. kInvalidArgument: encode_frame refuses the
  /// message (no protocol version or body, or a field beyond its nanopb limit). kInternal: nanopb
  /// failed to encode a message it had sized. kUnavailable: the connection is gone or a record
  /// could not be sent.
  Status send(const wire::Envelope& message) override;
  /// Reads TLS records until one whole frame is buffered and decodes it into `out`.
  /// @errors kFailedPrecondition: not connected. kDeadlineExceeded: no frame within
  /// `timeout_ms`. kUnavailable: the server closed the connection or a record could not be
  /// read. A malformed frame: take_frame's status (kDataLoss, kOutOfRange, kInvalidArgument,
  /// kUnimplemented), returned again by every later receive until close().
  Status receive(wire::Envelope& out, uint32_t timeout_ms) override;
  /// Sends close_notify (best effort), closes the transport and frees mbedTLS's state; the
  /// channel can connect again.
  void close() override;

  /// True between a successful connect() and close().
  bool connected() const { return stream_.connected(); }
  /// True when the last successful connect() resumed the channel's saved session (an
  /// abbreviated handshake, no key exchange) rather than making a new one.
  bool resumed() const { return resumed_; }
  /// Drops the saved session (wiping its master secret): the next connect() makes a full
  /// handshake. A failed connect() does this itself.
  void forget_session();
  /// The default of set_max_session_age_seconds: 24 h, the most any server resumes.
  static constexpr uint64_t kMaxSessionAgeSeconds = 24 * 3600;
  /// A saved session this old (from its full handshake) is wiped at the next connect(), not
  /// offered. An app that knows its server's lifetime (tls_session_lifetime_seconds, 1 h by
  /// default) sets it to that; 0 keeps no session at all (one held is wiped at once).
  void set_max_session_age_seconds(uint64_t seconds);

 private:
  Status setup(ByteSpan identity, ByteSpan psk, uint32_t timeout_ms);
  static Status owner_digest(const char* endpoint, ByteSpan identity, ByteSpan psk,
                             Span<uint8_t> digest_out);
  Status handshake_status(int mbedtls_error) const;

  TlsFrameStream stream_;  // mbedTLS's contexts, the transport and the frame buffers
  // The last full handshake's session, kept across close() for the next connect() to resume
  // when its endpoint, identity and key hash to session_owner_.
  mbedtls_ssl_session session_;
  uint8_t session_owner_[crypto::kSha256DigestBytes];
  uint64_t session_made_us_ = 0;  // platform::monotonic_micros() at its full handshake
  uint64_t max_session_age_seconds_ = kMaxSessionAgeSeconds;
  bool has_session_ = false;
  bool resumed_ = false;
};

}  // namespace tls
}  // namespace fedstat

#endif  // FEDSTAT_SDK_TLS_TLS_CHANNEL_H_
