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
void pin_psk_profile(mbedtls_ssl_config& config, mbedtls_ctr_drbg_context& drbg) {
  pin_tls12_profile(config, drbg);
  mbedtls_ssl_conf_ciphersuites(&config, kTlsPskCiphersuites);
}

namespace {
constexpr char kDrbgPersonalisation[] = "fedstat tls psk channel";
}  // namespace

TlsPskChannel::TlsPskChannel() {
  mbedtls_ssl_session_init(&session_);
}

TlsPskChannel::~TlsPskChannel() {
  close();
  forget_session();
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

Status TlsPskChannel::setup(ByteSpan identity, ByteSpan psk, uint32_t timeout_ms) {
  Status status = stream_.prepare(kDrbgPersonalisation, timeout_ms);
  if (!status.ok()) return status;
  mbedtls_ssl_conf_ciphersuites(&stream_.config(), kTlsPskCiphersuites);
  if (mbedtls_ssl_conf_psk(&stream_.config(), psk.data(), psk.size(), identity.data(),
                           identity.size()) != 0) {
    return resource_exhausted("TLS: mbedtls_ssl_conf_psk failed (out of memory)");
  }
  return Status();
}

Status TlsPskChannel::handshake_status(int mbedtls_error) const {
  if (mbedtls_error == MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) {
    const uint8_t alert = stream_.received_alert();
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
  return stream_.handshake_common_status(mbedtls_error, "TLS: the handshake failed");
}

Status TlsPskChannel::connect(const char* endpoint, ByteSpan identity, ByteSpan psk,
                              uint32_t timeout_ms) {
  if (stream_.connected()) return failed_precondition("TLS: channel already connected");
  if (identity.size() == 0) return invalid_argument("TLS: PSK identity is empty");
  if (psk.size() == 0 || psk.size() > MBEDTLS_PSK_MAX_LEN) {
    return invalid_argument("TLS: pre-shared key is empty or longer than MBEDTLS_PSK_MAX_LEN");
  }
  Status status = setup(identity, psk, timeout_ms);
  if (status.ok()) status = stream_.open(endpoint, timeout_ms);
  if (!status.ok()) {
    close();
    return status;
  }
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
      offered = mbedtls_ssl_set_session(&stream_.ssl(), &session_) == 0;
    }
  } else {
    forget_session();
  }
  resumed_ = false;
  const int rc = stream_.handshake();
  if (rc != 0) {
    status = handshake_status(rc);
    forget_session();  // the next attempt makes a full handshake
    close();
    return status;
  }
  // The server resumed the session when it kept its id (a full handshake gets a fresh random
  // one). Otherwise the new session replaces the saved one.
  const mbedtls_ssl_session* current = mbedtls_ssl_get_session_pointer(&stream_.ssl());
  resumed_ = offered && current != nullptr && current->id_len == session_.id_len &&
             current->id_len > 0 && memcmp(current->id, session_.id, current->id_len) == 0;
  if (!resumed_) {
    forget_session();
    // Kept only where its age can be told (a platform without a clock reads 0): never for ever.
    const uint64_t now_us = platform::monotonic_micros();
    if (now_us != 0 && max_session_age_seconds_ != 0 && current != nullptr && current->id_len > 0) {
      if (mbedtls_ssl_get_session(&stream_.ssl(), &session_) == 0) {
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
  return stream_.send(message);
}

Status TlsPskChannel::receive(wire::Envelope& out, uint32_t timeout_ms) {
  return stream_.receive(out, timeout_ms);
}

void TlsPskChannel::close() {
  stream_.close();
}

}  // namespace tls
}  // namespace fedstat
