// TlsPskChannel: mbedTLS client over the platform transport. See tls_channel.h.
#include "sdk/tls/tls_channel.h"

#include <string.h>

#include "mbedtls/bignum.h"
#include "mbedtls/ecp.h"
#include "mbedtls/entropy.h"
#include "mbedtls/net_sockets.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"

namespace fedstat {
namespace tls {

const int kTlsPskCiphersuites[] = {MBEDTLS_TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256, 0};
// P-256 where this mbedTLS has it (hosts); a microcontroller's build has X25519 alone, and
// mbedTLS refuses a handshake whose list names a curve it was built without.
const mbedtls_ecp_group_id kTlsPskCurves[] = {MBEDTLS_ECP_DP_CURVE25519,
#if defined(MBEDTLS_ECP_DP_SECP256R1_ENABLED)
                                              MBEDTLS_ECP_DP_SECP256R1,
#endif
                                              MBEDTLS_ECP_DP_NONE};

void pin_psk_profile(mbedtls_ssl_config& config, mbedtls_ctr_drbg_context& drbg) {
  mbedtls_ssl_conf_min_version(&config, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
  mbedtls_ssl_conf_max_version(&config, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
  mbedtls_ssl_conf_ciphersuites(&config, kTlsPskCiphersuites);
  mbedtls_ssl_conf_curves(&config, kTlsPskCurves);
  mbedtls_ssl_conf_rng(&config, mbedtls_ctr_drbg_random, &drbg);
}

namespace {
constexpr char kDrbgPersonalisation[] = "fedstat tls psk channel";
}  // namespace

TlsPskChannel::TlsPskChannel() {
  mbedtls_ssl_init(&ssl_);
  mbedtls_ssl_config_init(&config_);
  mbedtls_ctr_drbg_init(&drbg_);
  mbedtls_ssl_session_init(&session_);
}

TlsPskChannel::~TlsPskChannel() {
  close();
  forget_session();
  mbedtls_ssl_free(&ssl_);
  mbedtls_ssl_config_free(&config_);
  mbedtls_ctr_drbg_free(&drbg_);
}

void TlsPskChannel::forget_session() {
  mbedtls_ssl_session_free(&session_);  // zeroises the master secret
  mbedtls_ssl_session_init(&session_);
  crypto::wipe(session_owner_, sizeof(session_owner_));
  has_session_ = false;
}

void TlsPskChannel::set_max_session_age_seconds(uint64_t seconds) {
  max_session_age_seconds_ = seconds;
  if (seconds == 0) forget_session();
}

// SHA-256 of (endpoint, identity, psk), each length-prefixed: the saved session is offered only
// to the connect() that would make it again.
Status TlsPskChannel::owner_digest(const char* endpoint, ByteSpan identity, ByteSpan psk,
                                   Span<uint8_t> digest_out) {
  crypto::Sha256 hash;
  const ByteSpan parts[3] = {ByteSpan(reinterpret_cast<const uint8_t*>(endpoint), strlen(endpoint)),
                             identity, psk};
  for (const ByteSpan& part : parts) {
    uint8_t length[4];
    store_le32(length, static_cast<uint32_t>(part.size()));
    Status status = hash.update(ByteSpan(length, sizeof(length)));
    if (status.ok()) status = hash.update(part);
    if (!status.ok()) return status;
  }
  return hash.finish(digest_out);
}

int TlsPskChannel::drbg_entropy(void* /*self*/, unsigned char* out, size_t length) {
  return platform::fill_entropy(MutableByteSpan(out, length)).ok()
             ? 0
             : MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
}

int TlsPskChannel::bio_send(void* self, const unsigned char* bytes, size_t length) {
  auto* channel = static_cast<TlsPskChannel*>(self);
  return platform::transport_send(channel->connection_, ByteSpan(bytes, length)).ok()
             ? static_cast<int>(length)
             : MBEDTLS_ERR_NET_CONN_RESET;
}

// mbedTLS's own timeout argument is unused (config read_timeout stays 0): the channel's deadline
// covers a whole connect() or receive(), however many reads it takes.
int TlsPskChannel::bio_receive_timeout(void* self, unsigned char* out, size_t length,
                                       uint32_t /*unused*/) {
  auto* channel = static_cast<TlsPskChannel*>(self);
  const uint64_t now = platform::monotonic_micros();
  if (now >= channel->deadline_us_) return MBEDTLS_ERR_SSL_TIMEOUT;
  const uint64_t remaining_ms = (channel->deadline_us_ - now + 999) / 1000;
  const uint32_t wait_ms =
      remaining_ms > 0xFFFFFFFEu ? 0xFFFFFFFEu : static_cast<uint32_t>(remaining_ms);
  Result<size_t> got =
      platform::transport_receive(channel->connection_, MutableByteSpan(out, length), wait_ms);
  if (got.ok()) return static_cast<int>(got.value());
  return got.status().code() == StatusCode::kDeadlineExceeded ? MBEDTLS_ERR_SSL_TIMEOUT
                                                              : MBEDTLS_ERR_NET_CONN_RESET;
}

void TlsPskChannel::set_deadline(uint32_t timeout_ms) {
  deadline_us_ = platform::monotonic_micros() + static_cast<uint64_t>(timeout_ms) * 1000u;
}

Status TlsPskChannel::setup(ByteSpan identity, ByteSpan psk) {
  crypto::ensure_mbedtls_pool();  // microcontrollers: mbedTLS allocates from the SDK's pool
  if (mbedtls_ctr_drbg_seed(&drbg_, &TlsPskChannel::drbg_entropy, this,
                            reinterpret_cast<const unsigned char*>(kDrbgPersonalisation),
                            sizeof(kDrbgPersonalisation) - 1) != 0) {
    return unavailable("TLS: seeding the DRBG failed (platform entropy unavailable)");
  }
  if (mbedtls_ssl_config_defaults(&config_, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                  MBEDTLS_SSL_PRESET_DEFAULT) != 0) {
    return internal_error("TLS: mbedtls_ssl_config_defaults failed");
  }
  pin_psk_profile(config_, drbg_);
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
  if (mbedtls_ssl_conf_psk(&config_, psk.data(), psk.size(), identity.data(), identity.size()) !=
      0) {
    return resource_exhausted("TLS: mbedtls_ssl_conf_psk failed (out of memory)");
  }
  if (mbedtls_ssl_setup(&ssl_, &config_) != 0) {
    return resource_exhausted("TLS: mbedtls_ssl_setup failed (out of memory)");
  }
  mbedtls_ssl_set_bio(&ssl_, this, &TlsPskChannel::bio_send, nullptr,
                      &TlsPskChannel::bio_receive_timeout);
  return Status();
}

Status TlsPskChannel::io_status(int mbedtls_error, const char* otherwise) const {
  if (mbedtls_error == MBEDTLS_ERR_SSL_TIMEOUT) {
    return deadline_exceeded("TLS: timed out waiting for the server");
  }
  if (mbedtls_error == MBEDTLS_ERR_NET_CONN_RESET || mbedtls_error == MBEDTLS_ERR_SSL_CONN_EOF) {
    return unavailable("TLS: the connection to the server is gone");
  }
  return unavailable(otherwise);
}

Status TlsPskChannel::handshake_status(int mbedtls_error) const {
  if (mbedtls_error == MBEDTLS_ERR_SSL_ALLOC_FAILED ||
      mbedtls_error == MBEDTLS_ERR_ECP_ALLOC_FAILED ||
      mbedtls_error == MBEDTLS_ERR_MPI_ALLOC_FAILED) {
    return resource_exhausted("TLS: mbedTLS ran out of memory during the handshake (pool full)");
  }
  if (mbedtls_error == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) {
    const uint8_t alert = ssl_.in_msg != nullptr ? ssl_.in_msg[1] : 0;
    if (alert == MBEDTLS_SSL_ALERT_MSG_UNKNOWN_PSK_IDENTITY) {
      return permission_denied("TLS: the server does not know this PSK identity (device id)");
    }
    if (alert == MBEDTLS_SSL_ALERT_MSG_BAD_RECORD_MAC ||
        alert == MBEDTLS_SSL_ALERT_MSG_DECRYPT_ERROR) {
      // fedstat's server answers an identity it does not know as it answers a wrong key.
      return permission_denied(
          "TLS: the server refused the pre-shared key (wrong key, or a device id it does not "
          "know)");
    }
    return unavailable("TLS: the server ended the handshake with a fatal alert");
  }
  if (mbedtls_error == MBEDTLS_ERR_SSL_BAD_HS_FINISHED ||
      mbedtls_error == MBEDTLS_ERR_SSL_INVALID_MAC) {
    return permission_denied("TLS: the server's Finished did not verify (wrong pre-shared key)");
  }
  return io_status(mbedtls_error, "TLS: the handshake failed");
}

Status TlsPskChannel::connect(const char* endpoint, ByteSpan identity, ByteSpan psk,
                              uint32_t timeout_ms) {
  if (connected_ || transport_open_) return failed_precondition("TLS: channel already connected");
  if (identity.size() == 0) return invalid_argument("TLS: PSK identity is empty");
  if (psk.size() == 0 || psk.size() > MBEDTLS_PSK_MAX_LEN) {
    return invalid_argument("TLS: pre-shared key is empty or longer than MBEDTLS_PSK_MAX_LEN");
  }
  set_deadline(timeout_ms);
  Status status = setup(identity, psk);
  if (!status.ok()) {
    close();
    return status;
  }
  Result<platform::Connection> connection = platform::transport_connect(endpoint, timeout_ms);
  if (!connection.ok()) {
    close();
    return connection.status();
  }
  connection_ = connection.value();
  transport_open_ = true;
  // Resumption: the last session with this server, identity and key is offered; a server that
  // no longer holds it answers with a full handshake.
  uint8_t owner[crypto::kSha256DigestBytes];
  crypto::ScopedWipe wipe_owner(owner, sizeof(owner));
  bool offered = false;
  const uint64_t max_age_us = max_session_age_seconds_ > UINT64_MAX / 1000000u
                                  ? UINT64_MAX
                                  : max_session_age_seconds_ * 1000000u;
  if (has_session_ && platform::monotonic_micros() - session_made_us_ >= max_age_us) {
    forget_session();  // aged out: no server would resume it, and it should not be kept
  }
  if (owner_digest(endpoint, identity, psk, Span<uint8_t>(owner, sizeof(owner))).ok()) {
    if (has_session_ && memcmp(owner, session_owner_, sizeof(owner)) == 0) {
      offered = mbedtls_ssl_set_session(&ssl_, &session_) == 0;
    }
  } else {
    forget_session();
  }
  resumed_ = false;
  for (;;) {
    const int rc = mbedtls_ssl_handshake(&ssl_);
    if (rc == 0) break;
    if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
    status = handshake_status(rc);
    forget_session();  // the next attempt makes a full handshake
    close();
    return status;
  }
  connected_ = true;
  // The server resumed the session when it kept its id (a full handshake gets a fresh random
  // one). Otherwise the new session replaces the saved one.
  const mbedtls_ssl_session* current = mbedtls_ssl_get_session_pointer(&ssl_);
  resumed_ = offered && current != nullptr && current->id_len == session_.id_len &&
             current->id_len > 0 && memcmp(current->id, session_.id, current->id_len) == 0;
  if (!resumed_) {
    forget_session();
    // Kept only where its age can be told (a platform without a clock reads 0): never for ever.
    const uint64_t now_us = platform::monotonic_micros();
    if (now_us != 0 && max_session_age_seconds_ != 0 && current != nullptr && current->id_len > 0) {
      if (mbedtls_ssl_get_session(&ssl_, &session_) == 0) {
        memcpy(session_owner_, owner, sizeof(owner));
        session_made_us_ = now_us;
        has_session_ = true;
      } else {
        forget_session();  // a copy that failed part-way may hold the master secret
      }
    }
  }
  return Status();
}

Status TlsPskChannel::send(const wire::Envelope& message) {
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

Status TlsPskChannel::receive(wire::Envelope& out, uint32_t timeout_ms) {
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

void TlsPskChannel::close() {
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
