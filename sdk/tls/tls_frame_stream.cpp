// TlsFrameStream: the device channels' shared mbedTLS client over the platform transport. See
// tls_frame_stream.h.
#include "sdk/tls/tls_frame_stream.h"

#include <string.h>

#include "mbedtls/bignum.h"
#include "mbedtls/ecp.h"
#include "mbedtls/entropy.h"
#include "mbedtls/net_sockets.h"
#include "sdk/base/crypto.h"
#include "sdk/tls/tls_channel.h"

namespace fedstat {
namespace tls {

// P-256 where this mbedTLS has it (hosts); a microcontroller's build has X25519 alone, and
// mbedTLS refuses a handshake whose list names a curve it was built without.
const mbedtls_ecp_group_id kTlsPskCurves[] = {MBEDTLS_ECP_DP_CURVE25519,
#if defined(MBEDTLS_ECP_DP_SECP256R1_ENABLED)
                                              MBEDTLS_ECP_DP_SECP256R1,
#endif
                                              MBEDTLS_ECP_DP_NONE};

void pin_tls12_profile(mbedtls_ssl_config& config, mbedtls_ctr_drbg_context& drbg) {
  mbedtls_ssl_conf_min_version(&config, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
  mbedtls_ssl_conf_max_version(&config, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
  mbedtls_ssl_conf_curves(&config, kTlsPskCurves);
  mbedtls_ssl_conf_rng(&config, mbedtls_ctr_drbg_random, &drbg);
}

TlsFrameStream::TlsFrameStream() {
  mbedtls_ssl_init(&ssl_);
  mbedtls_ssl_config_init(&config_);
  mbedtls_ctr_drbg_init(&drbg_);
}

TlsFrameStream::~TlsFrameStream() {
  close();
  mbedtls_ssl_free(&ssl_);
  mbedtls_ssl_config_free(&config_);
  mbedtls_ctr_drbg_free(&drbg_);
}

int TlsFrameStream::drbg_entropy(void* /*self*/, unsigned char* out, size_t length) {
  return platform::fill_entropy(MutableByteSpan(out, length)).ok()
             ? 0
             : MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
}

int TlsFrameStream::bio_send(void* self, const unsigned char* bytes, size_t length) {
  auto* stream = static_cast<TlsFrameStream*>(self);
  return platform::transport_send(stream->connection_, ByteSpan(bytes, length)).ok()
             ? static_cast<int>(length)
             : MBEDTLS_ERR_NET_CONN_RESET;
}

// mbedTLS's own timeout argument is unused (config read_timeout stays 0): the channel's deadline
// covers a whole connect() or receive(), however many reads it takes.
int TlsFrameStream::bio_receive_timeout(void* self, unsigned char* out, size_t length,
                                        uint32_t /*unused*/) {
  auto* stream = static_cast<TlsFrameStream*>(self);
  const uint64_t now = platform::monotonic_micros();
  if (now >= stream->deadline_us_) return MBEDTLS_ERR_SSL_TIMEOUT;
  const uint64_t remaining_ms = (stream->deadline_us_ - now + 999) / 1000;
  const uint32_t wait_ms =
      remaining_ms > 0xFFFFFFFEu ? 0xFFFFFFFEu : static_cast<uint32_t>(remaining_ms);
  Result<size_t> got =
      platform::transport_receive(stream->connection_, MutableByteSpan(out, length), wait_ms);
  if (got.ok()) return static_cast<int>(got.value());
  return got.status().code() == StatusCode::kDeadlineExceeded ? MBEDTLS_ERR_SSL_TIMEOUT
                                                              : MBEDTLS_ERR_NET_CONN_RESET;
}

void TlsFrameStream::set_deadline(uint32_t timeout_ms) {
  deadline_us_ = platform::monotonic_micros() + static_cast<uint64_t>(timeout_ms) * 1000u;
}

Status TlsFrameStream::prepare(const char* personalisation, uint32_t timeout_ms) {
  set_deadline(timeout_ms);
  crypto::ensure_mbedtls_pool();  // microcontrollers: mbedTLS allocates from the SDK's pool
  if (mbedtls_ctr_drbg_seed(&drbg_, &TlsFrameStream::drbg_entropy, this,
                            reinterpret_cast<const unsigned char*>(personalisation),
                            strlen(personalisation)) != 0) {
    return unavailable("TLS: seeding the DRBG failed (platform entropy unavailable)");
  }
  if (mbedtls_ssl_config_defaults(&config_, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                  MBEDTLS_SSL_PRESET_DEFAULT) != 0) {
    return internal_error("TLS: mbedtls_ssl_config_defaults failed");
  }
  pin_tls12_profile(config_, drbg_);
#if defined(MBEDTLS_SSL_SESSION_TICKETS)
  mbedtls_ssl_conf_session_tickets(&config_, MBEDTLS_SSL_SESSION_TICKETS_DISABLED);
#endif
#if MBEDTLS_SSL_IN_CONTENT_LEN < 16384
  // Small record buffers (microcontrollers: 1 KiB): ask the server for records that fit them.
  static_assert(MBEDTLS_SSL_IN_CONTENT_LEN >= 1024 && MBEDTLS_SSL_OUT_CONTENT_LEN >= 1024,
                "the TLS record buffers must hold a 1 KiB fragment");
  if (mbedtls_ssl_conf_max_frag_len(&config_, MBEDTLS_SSL_MAX_FRAG_LEN_1024) != 0) {
    return internal_error("TLS: mbedtls_ssl_conf_max_frag_len failed");
  }
#endif
  return Status();
}

Status TlsFrameStream::open(const char* endpoint, uint32_t timeout_ms) {
  if (mbedtls_ssl_setup(&ssl_, &config_) != 0) {
    return resource_exhausted("TLS: mbedtls_ssl_setup failed (out of memory)");
  }
  mbedtls_ssl_set_bio(&ssl_, this, &TlsFrameStream::bio_send, nullptr,
                      &TlsFrameStream::bio_receive_timeout);
  Result<platform::Connection> connection = platform::transport_connect(endpoint, timeout_ms);
  if (!connection.ok()) return connection.status();
  connection_ = connection.value();
  transport_open_ = true;
  return Status();
}

int TlsFrameStream::handshake() {
  for (;;) {
    const int rc = mbedtls_ssl_handshake(&ssl_);
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
    if (rc == 0) connected_ = true;
    return rc;
  }
}

uint8_t TlsFrameStream::received_alert() const {
  return ssl_.in_msg != nullptr ? ssl_.in_msg[1] : 0;
}

Status TlsFrameStream::io_status(int mbedtls_error, const char* otherwise) const {
  if (mbedtls_error == MBEDTLS_ERR_SSL_TIMEOUT) {
    return deadline_exceeded("TLS: timed out waiting for the server");
  }
  if (mbedtls_error == MBEDTLS_ERR_NET_CONN_RESET || mbedtls_error == MBEDTLS_ERR_SSL_CONN_EOF) {
    return unavailable("TLS: the connection to the server is gone");
  }
  return unavailable(otherwise);
}

Status TlsFrameStream::handshake_common_status(int mbedtls_error, const char* otherwise) const {
  if (mbedtls_error == MBEDTLS_ERR_SSL_ALLOC_FAILED ||
      mbedtls_error == MBEDTLS_ERR_ECP_ALLOC_FAILED ||
      mbedtls_error == MBEDTLS_ERR_MPI_ALLOC_FAILED) {
    return resource_exhausted("TLS: mbedTLS ran out of memory during the handshake (pool full)");
  }
  return io_status(mbedtls_error, otherwise);
}

Status TlsFrameStream::send(const wire::Envelope& message) {
  if (!connected_) return failed_precondition("TLS: send on a channel that is not connected");
  Result<size_t> encoded = wire::encode_frame(message, MutableByteSpan(sending_));
  if (!encoded.ok()) return encoded.status();
  size_t written = 0;
  while (written < encoded.value()) {
    const int rc = mbedtls_ssl_write(&ssl_, sending_ + written, encoded.value() - written);
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
    if (rc < 0) return io_status(rc, "TLS: sending a record failed");
    written += static_cast<size_t>(rc);
  }
  return Status();
}

Status TlsFrameStream::receive(wire::Envelope& out, uint32_t timeout_ms) {
  if (!connected_) return failed_precondition("TLS: receive on a channel that is not connected");
  if (!broken_.ok()) return broken_;
  set_deadline(timeout_ms);
  for (;;) {
    Result<bool> frame = wire::take_frame(MutableByteSpan(received_), received_bytes_, out);
    if (!frame.ok()) {
      broken_ = frame.status();
      return broken_;
    }
    if (frame.value()) return Status();
    const int rc =
        mbedtls_ssl_read(&ssl_, received_ + received_bytes_, sizeof(received_) - received_bytes_);
    if (rc > 0) {
      received_bytes_ += static_cast<size_t>(rc);
      continue;
    }
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
    if (rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
      return unavailable("TLS: the server closed the connection");
    }
    return io_status(rc, "TLS: receiving a record failed");
  }
}

void TlsFrameStream::close() {
  if (connected_) (void)mbedtls_ssl_close_notify(&ssl_);  // best effort
  if (transport_open_) platform::transport_close(connection_);
  mbedtls_ssl_free(&ssl_);
  mbedtls_ssl_config_free(&config_);
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_ssl_init(&ssl_);
  mbedtls_ssl_config_init(&config_);
  mbedtls_ctr_drbg_init(&drbg_);
  connection_ = platform::Connection();
  connected_ = false;
  transport_open_ = false;
  broken_ = Status();
  received_bytes_ = 0;
  // The last frames in and out were plaintext (reports, secret shares): not left in memory.
  crypto::wipe(sending_, sizeof(sending_));
  crypto::wipe(received_, sizeof(received_));
}

}  // namespace tls
}  // namespace fedstat
