// TlsServer: Asio sockets + mbedTLS over per-connection memory buffers. See tls_server.h.
//
// Each connection has exactly one wait for readability outstanding from admission until it is
// finished, at most one write, and one timer whose deadline moves (the handler re-arms until the
// current deadline has really passed). mbedTLS never touches the socket: bio_receive hands it the
// bytes the last reads brought (WANT_READ when they are used up), bio_send appends to the
// connection's output, which flush() writes asynchronously — once per io turn (send() posts it), so
// the messages of one flight leave in one write.
#include "host_server/net/tls_server.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "host_server/credential/x509_certificates.h"
#include "mbedtls/error.h"
#include "mbedtls/oid.h"
#include "sdk/base/crypto.h"
#include "sdk/tls/tls_certificate_channel.h"
#include "sdk/tls/tls_channel.h"

namespace fedstat {
namespace net {
namespace {

using Clock = std::chrono::steady_clock;

// The oldest of `ids` (ids grow: the smallest), if any.
std::optional<ConnectionId> oldest(const std::set<ConnectionId>& ids) {
  if (ids.empty()) return std::nullopt;
  return *ids.begin();
}

std::string mbedtls_text(int rc) {
  char text[160];
  mbedtls_strerror(rc, text, sizeof(text));
  return text;
}

// The most certificates a device's chain may hold: its own and the fleet CA's.
constexpr size_t kMaxDeviceChain = 2;

// The suites each DeviceAuthentication offers (zero-terminated; the device channels pin one each).
const int kCertificateSuites[] = {MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, 0};
const int kEitherSuites[] = {MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
                             MBEDTLS_TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256, 0};

// Why a device's certificate was refused, from mbedTLS's verification flags.
std::string certificate_refusal(uint32_t flags) {
  if ((flags & MBEDTLS_X509_BADCERT_REVOKED) != 0) {
    return "device certificate revoked (tls_revoked_devices lists its id)";
  }
  if ((flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED) != 0) {
    return "device certificate not issued by the client CA (tls_client_ca)";
  }
  if ((flags & MBEDTLS_X509_BADCERT_OTHER) != 0) {
    return "not a device certificate (subject CN must be \"fedstat-device <id>\", a P-256 key)";
  }
  if ((flags & (MBEDTLS_X509_BADCERT_EXT_KEY_USAGE | MBEDTLS_X509_BADCERT_KEY_USAGE)) != 0) {
    return "device certificate not for clientAuth";
  }
  if ((flags & (MBEDTLS_X509_BADCERT_EXPIRED | MBEDTLS_X509_BADCERT_FUTURE)) != 0) {
    return "device certificate expired or not yet valid";
  }
  return "device certificate refused (verification flags " + std::to_string(flags) + ")";
}

// mbedtls_x509_crt_parse of PEM text (with its NUL) or DER.
int parse_certificates(mbedtls_x509_crt& out, const std::string& text) {
  return mbedtls_x509_crt_parse(&out, reinterpret_cast<const unsigned char*>(text.c_str()),
                                text.size() + 1);
}

}  // namespace

struct TlsServer::Connection {
  enum class State { kHandshake, kOpen, kClosing, kClosed };

  Connection(asio::io_context& io, asio::ip::tcp::socket s, ConnectionId connection_id)
      : id(connection_id), socket(std::move(s)), timer(io) {
    mbedtls_ssl_init(&ssl);
  }
  ~Connection() {
    mbedtls_ssl_free(&ssl);
    // A handshake that never finished (time-out, peer gone, stop) still holds the PSK's copy.
    if (handshake_key) crypto::wipe(handshake_key->data(), handshake_key->size());
  }
  size_t pending_output() const { return outbox.size() + writing.size(); }

  ConnectionId id;
  State state = State::kHandshake;
  asio::ip::tcp::socket socket;
  asio::steady_timer timer;
  Clock::time_point deadline;
  mbedtls_ssl_context ssl;
  std::string identity;          // the PSK identity of a full handshake
  std::string resumed_identity;  // the identity of the session the handshake resumes
  std::optional<TlsSessionCache::Key> handshake_key;  // a full handshake's PSK, until it ends
  std::optional<asio::ip::address> peer;              // the peer's address, when known
  std::optional<PeerAddress> counted_address;         // counted in per_address_ (until released)
  bool counted_identity = false;                      // counted in per_identity_ (until released)
  // A certificate handshake: the device id from its certificate's CN and its public key, set by
  // verify_callback (the handshake fails if the chain does not verify).
  std::optional<std::string> certificate_identity;
  std::optional<std::array<uint8_t, 65>> certificate_key;
  bool unknown_identity = false;    // the PSK callback found no key: a decoy key stands in
  bool checked_in = false;          // await_check_in: the handler took its first message
  bool charged = false;             // admit_peer was asked for this connection's full handshake
  bool await_peer_end = false;      // kClosing: after our last byte, wait for the peer's end
  std::array<uint8_t, 4096> chunk;  // target of the outstanding socket read
  std::vector<uint8_t> inbox;       // ciphertext received, not yet taken by mbedTLS
  size_t inbox_taken = 0;
  std::vector<uint8_t> outbox;   // ciphertext from mbedTLS, not yet handed to a write
  std::vector<uint8_t> writing;  // ciphertext of the write in flight
  bool write_in_flight = false;
  bool flush_posted = false;   // a flush() is posted: the messages sent meanwhile go out together
  bool flush_at_once = false;  // the handshake's last flight is unsent: the next send() flushes
  std::array<uint8_t, wire::kMaxFrameBytes> plain;  // plaintext of incomplete frames
  size_t plain_bytes = 0;
};

TlsServer::TlsServer(asio::io_context& io, TlsServerConfig config, FrameHandler& handler)
    : io_(io),
      config_(std::move(config)),
      handler_(handler),
      acceptor_(io),
      accept_retry_(io),
      purge_timer_(io),
      sessions_(config_.sessions, config_.session_clock) {
  mbedtls_entropy_init(&entropy_);
  mbedtls_ctr_drbg_init(&drbg_);
  mbedtls_ssl_config_init(&ssl_config_);
  mbedtls_x509_crt_init(&own_certificate_);
  mbedtls_pk_init(&own_key_);
  mbedtls_x509_crt_init(&client_ca_);
  static constexpr char kPersonalisation[] = "fedstat tls server";
  const bool psk = config_.device_authentication != DeviceAuthentication::kCertificate;
  const bool certificates = config_.device_authentication != DeviceAuthentication::kPsk;
  auto free_all = [this] {
    mbedtls_x509_crt_free(&client_ca_);
    mbedtls_pk_free(&own_key_);
    mbedtls_x509_crt_free(&own_certificate_);
    mbedtls_ssl_config_free(&ssl_config_);
    mbedtls_ctr_drbg_free(&drbg_);
    mbedtls_entropy_free(&entropy_);
  };
  if (psk && !config_.lookup_psk) {
    free_all();
    throw std::invalid_argument("TlsServer: lookup_psk is empty");
  }
  if (certificates) {
    if (!config_.certificates) {
      free_all();
      throw std::invalid_argument(
          "TlsServer: device_authentication takes certificates, but no server certificate, key "
          "and client CA are given");
    }
    std::string problem;
    if (parse_certificates(own_certificate_, config_.certificates->certificate_pem) != 0) {
      problem = "the server certificate (tls_certificate) is not a PEM or DER X.509 certificate";
    } else if (mbedtls_pk_parse_key(&own_key_,
                                    reinterpret_cast<const unsigned char*>(
                                        config_.certificates->private_key_pem.c_str()),
                                    config_.certificates->private_key_pem.size() + 1, nullptr,
                                    0) != 0) {
      problem = "the server key (tls_private_key) is not a PEM or DER private key";
    } else if (mbedtls_pk_check_pair(&own_certificate_.pk, &own_key_) != 0) {
      problem = "the server key (tls_private_key) is not the server certificate's key";
    } else if (!mbedtls_pk_can_do(&own_key_, MBEDTLS_PK_ECDSA)) {
      problem = "the server key must be an ECDSA P-256 key (fedstat-ca server-cert)";
    } else if (own_certificate_.ca_istrue != 0) {
      // ca.crt with the CA's private key (a converted ca.key): the server would hold the key that
      // mints device certificates.
      problem =
          "the server certificate (tls_certificate) is a CA certificate: give the certificate and "
          "key fedstat-ca server-cert wrote, and keep the CA's key offline";
    } else if (mbedtls_x509_crt_check_extended_key_usage(
                   &own_certificate_, MBEDTLS_OID_SERVER_AUTH,
                   MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH)) != 0) {
      problem =
          "the server certificate (tls_certificate) is not for serverAuth (a device "
          "certificate?): give the one fedstat-ca server-cert wrote";
    } else if (parse_certificates(client_ca_, config_.certificates->client_ca_pem) != 0) {
      problem = "the client CA (tls_client_ca) is not a PEM or DER X.509 certificate";
    } else {
      for (const mbedtls_x509_crt* ca = &client_ca_; ca != nullptr; ca = ca->next) {
        if (mbedtls_pk_check_pair(&ca->pk, &own_key_) == 0) {
          problem =
              "the server key (tls_private_key) is the client CA's private key: give the key "
              "fedstat-ca server-cert wrote, and keep the CA's key offline";
        }
      }
    }
    if (!problem.empty()) {
      free_all();
      throw std::invalid_argument("TlsServer: " + problem);
    }
  }
  int rc = mbedtls_ctr_drbg_seed(&drbg_, mbedtls_entropy_func, &entropy_,
                                 reinterpret_cast<const unsigned char*>(kPersonalisation),
                                 sizeof(kPersonalisation) - 1);
  if (rc == 0) {
    rc = mbedtls_ssl_config_defaults(&ssl_config_, MBEDTLS_SSL_IS_SERVER,
                                     MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
  }
  if (rc == 0 && certificates) {
    rc = mbedtls_ssl_conf_own_cert(&ssl_config_, &own_certificate_, &own_key_);
  }
  if (rc != 0) {
    free_all();
    throw std::runtime_error("TlsServer: mbedTLS setup failed: " + mbedtls_text(rc));
  }
  tls::pin_psk_profile(ssl_config_, drbg_);
  if (certificates) {
    mbedtls_ssl_conf_ciphersuites(&ssl_config_, psk ? kEitherSuites : kCertificateSuites);
    mbedtls_ssl_conf_ca_chain(&ssl_config_, &client_ca_, nullptr);
    // Required for the certificate suite; the PSK suite asks for no certificate whatever this
    // says (mbedTLS sends a CertificateRequest only for suites that use certificates).
    mbedtls_ssl_conf_authmode(&ssl_config_, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_verify(&ssl_config_, &TlsServer::verify_callback, this);
  }
  if (psk) mbedtls_ssl_conf_psk_cb(&ssl_config_, &TlsServer::psk_callback, this);
  if (psk && sessions_.enabled()) {  // PSK sessions only: see "Certificates" in the header
    mbedtls_ssl_conf_session_cache(&ssl_config_, this, &TlsServer::get_session_callback,
                                   &TlsServer::set_session_callback);
  }
}

TlsServer::~TlsServer() {
  stopped_ = true;
  asio::error_code ignored;
  acceptor_.close(ignored);
  accept_retry_.cancel();
  purge_timer_.cancel();
  std::vector<ConnectionPtr> all;
  for (auto& entry : connections_) all.push_back(entry.second);
  for (auto& entry : lingering_) all.push_back(entry.second);
  for (auto& connection : all) finish(connection);  // no callbacks from a destructor
  mbedtls_ssl_config_free(&ssl_config_);
  mbedtls_x509_crt_free(&client_ca_);
  mbedtls_pk_free(&own_key_);
  mbedtls_x509_crt_free(&own_certificate_);
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_entropy_free(&entropy_);
}

int TlsServer::bio_send(void* connection, const unsigned char* bytes, size_t length) {
  auto* c = static_cast<Connection*>(connection);
  c->outbox.insert(c->outbox.end(), bytes, bytes + length);
  return static_cast<int>(length);
}

int TlsServer::bio_receive(void* connection, unsigned char* out, size_t length) {
  auto* c = static_cast<Connection*>(connection);
  const size_t available = c->inbox.size() - c->inbox_taken;
  if (available == 0) return MBEDTLS_ERR_SSL_WANT_READ;
  const size_t n = std::min(available, length);
  std::memcpy(out, c->inbox.data() + c->inbox_taken, n);
  c->inbox_taken += n;
  if (c->inbox_taken == c->inbox.size()) {
    c->inbox.clear();
    c->inbox_taken = 0;
  }
  return static_cast<int>(n);
}

int TlsServer::psk_callback(void* server, mbedtls_ssl_context* ssl, const unsigned char* identity,
                            size_t identity_length) {
  auto* self = static_cast<TlsServer*>(server);
  const std::string name(reinterpret_cast<const char*>(identity), identity_length);
  std::optional<std::array<uint8_t, 32>> key;
  try {
    key = self->config_.lookup_psk(name);
  } catch (...) {
    return -1;  // never let an exception cross mbedTLS's C frames
  }
  if (!key) {
    // RFC 4279 §2's alternative to the unknown_psk_identity alert: go on as if the identity
    // existed, with a random key the client cannot hold. The handshake then fails where a wrong
    // key's fails — the client's Finished does not decrypt — with the same alert (bad_record_mac)
    // after the same work: no observer learns which identities the server knows.
    std::array<uint8_t, 32> decoy{};
    int rc = mbedtls_ctr_drbg_random(&self->drbg_, decoy.data(), decoy.size());
    if (rc == 0) rc = mbedtls_ssl_set_hs_psk(ssl, decoy.data(), decoy.size());
    crypto::wipe(decoy.data(), decoy.size());
    if (self->handshaking_ != nullptr) self->handshaking_->unknown_identity = true;
    return rc;
  }
  if (self->handshaking_ != nullptr) {
    self->handshaking_->identity = name;
    self->handshaking_->handshake_key = *key;
  }
  const int rc = mbedtls_ssl_set_hs_psk(ssl, key->data(), key->size());
  crypto::wipe(key->data(), key->size());
  return rc;
}

// mbedTLS's f_vrfy for a device certificate chain, once per certificate (the device's at depth 0,
// after mbedTLS's own checks set `flags`): the device's must name a device id and carry a P-256
// key; the identity and key are kept for on_open.
int TlsServer::verify_callback(void* server, mbedtls_x509_crt* certificate, int depth,
                               uint32_t* flags) {
  auto* self = static_cast<TlsServer*>(server);
  if (depth != 0 || self->handshaking_ == nullptr) return 0;
  Connection& c = *self->handshaking_;
  c.certificate_identity.reset();
  c.certificate_key.reset();
  std::optional<uint32_t> id;
  for (const mbedtls_x509_name* name = &certificate->subject; name != nullptr; name = name->next) {
    if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &name->oid) == 0) {
      id = host::device_id_of_common_name(
          std::string(reinterpret_cast<const char*>(name->val.p), name->val.len));
      break;
    }
  }
  std::array<uint8_t, 65> key{};
  size_t key_length = 0;
  const bool p256 = mbedtls_pk_can_do(&certificate->pk, MBEDTLS_PK_ECKEY) &&
                    mbedtls_pk_ec(certificate->pk)->grp.id == MBEDTLS_ECP_DP_SECP256R1 &&
                    mbedtls_ecp_point_write_binary(
                        &mbedtls_pk_ec(certificate->pk)->grp, &mbedtls_pk_ec(certificate->pk)->Q,
                        MBEDTLS_ECP_PF_UNCOMPRESSED, &key_length, key.data(), key.size()) == 0 &&
                    key_length == key.size();
  if (!id || !p256) {
    *flags |= MBEDTLS_X509_BADCERT_OTHER;  // mbedTLS answers access_denied
    return 0;
  }
  if (self->config_.certificate_revoked && self->config_.certificate_revoked(*id)) {
    *flags |= MBEDTLS_X509_BADCERT_REVOKED;  // mbedTLS answers certificate_revoked
    return 0;
  }
  c.certificate_identity = std::to_string(*id);
  c.certificate_key = key;
  return 0;
}

// mbedTLS's f_get_cache: the client offered session->id. 0 (and the session loaded) resumes it.
int TlsServer::get_session_callback(void* server, mbedtls_ssl_session* session) {
  auto* self = static_cast<TlsServer*>(server);
  if (self->handshaking_ == nullptr || session == nullptr) return -1;
  std::optional<std::string> identity;
  try {
    identity = self->sessions_.restore(*session, self->config_.lookup_psk);
  } catch (...) {
    return -1;  // never let an exception cross mbedTLS's C frames
  }
  if (!identity) return -1;
  self->handshaking_->resumed_identity = *identity;
  return 0;
}

// mbedTLS's f_set_cache, at the end of a full handshake: remember it for its identity.
int TlsServer::set_session_callback(void* server, const mbedtls_ssl_session* session) {
  auto* self = static_cast<TlsServer*>(server);
  Connection* c = self->handshaking_;
  if (c == nullptr || session == nullptr || !c->handshake_key) return -1;
  try {
    return self->sessions_.store(*session, c->identity, *c->handshake_key) ? 0 : -1;
  } catch (...) {
    return -1;
  }
}

TlsServerStats TlsServer::stats() const {
  TlsServerStats stats;
  stats.full_handshakes = full_handshakes_;
  stats.resumed_handshakes = resumed_handshakes_;
  stats.certificate_handshakes = certificate_handshakes_;
  stats.cached_sessions = sessions_.size();
  stats.refused_peers = refused_peers_;
  stats.refused_full = refused_full_;
  stats.refused_per_address = refused_per_address_;
  stats.replaced_per_identity = replaced_per_identity_;
  stats.evicted_full = evicted_full_;
  stats.evicted_per_address = evicted_per_address_;
  stats.not_checked_in = timed_out_unchecked_;
  stats.revoked = revoked_;
  return stats;
}

void TlsServer::start() {
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(config_.address), config_.port);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen();
  port_ = acceptor_.local_endpoint().port();
  accept();
  if (sessions_.enabled()) purge_sessions();
}

// Every config_.session_purge_ms, expired sessions' master secrets are wiped, whether or not anyone
// connects.
void TlsServer::purge_sessions() {
  purge_timer_.expires_after(
      std::chrono::milliseconds(std::max<uint32_t>(1, config_.session_purge_ms)));
  purge_timer_.async_wait([this](const asio::error_code& error) {
    if (error || stopped_) return;
    sessions_.purge_expired();
    purge_sessions();
  });
}

void TlsServer::accept() {
  // The peer's address comes with the accept (no getpeername a connection).
  acceptor_.async_accept(
      accepted_peer_, [this](const asio::error_code& error, asio::ip::tcp::socket socket) {
        if (stopped_ || error == asio::error::operation_aborted) return;
        if (!error || error == asio::error::connection_aborted) {  // (the peer left the backlog)
          if (!error) admit(std::move(socket), accepted_peer_);
          accept();
          return;
        }
        // Out of descriptors (EMFILE, ENFILE) or memory: the connection stays in the listen backlog
        // and an accept at once would fail again, and again — a busy loop on the io thread for as
        // long as the shortage lasts. Try again after kAcceptRetryMs instead.
        accept_retry_.expires_after(std::chrono::milliseconds(kAcceptRetryMs));
        accept_retry_.async_wait([this](const asio::error_code& waited) {
          if (!waited && !stopped_) accept();
        });
      });
}

void TlsServer::admit(asio::ip::tcp::socket socket, const asio::ip::tcp::endpoint& peer) {
  asio::error_code ignored;
  const bool no_address = peer.address().is_unspecified();  // accept gave no address
  std::optional<PeerAddress> counted;  // the address this connection counts against, if capped
  if (!no_address && config_.max_connections_per_address != 0) {
    const PeerAddress address = peer_address(peer.address());
    if (!(address.loopback && config_.exempt_loopback)) counted = address;
  }
  // At its address's cap, the address's oldest closing or not-checked-in connection makes room;
  // when all of them have checked in, the newcomer is refused (before any TLS work: nothing
  // sent, no id, no call).
  if (counted) {
    const auto held = per_address_.find(*counted);
    if (held != per_address_.end() && held->second.held >= config_.max_connections_per_address &&
        !make_room(oldest(held->second.closing), oldest(held->second.not_checked_in),
                   "max_connections_per_address " +
                       std::to_string(config_.max_connections_per_address) + " from " +
                       peer.address().to_string(),
                   evicted_per_address_)) {
      ++refused_per_address_;
      socket.close(ignored);
      return;
    }
  }
  // Likewise for max_connections: every socket the server holds counts, closing ones too.
  if (connections_.size() + lingering_.size() >= config_.max_connections) {
    const std::optional<ConnectionId> closing =
        lingering_.empty() ? std::nullopt : std::optional<ConnectionId>(lingering_.begin()->first);
    if (!make_room(closing, oldest(not_checked_in_),
                   "max_connections " + std::to_string(config_.max_connections), evicted_full_)) {
      ++refused_full_;
      socket.close(ignored);
      return;
    }
  }
  socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  socket.non_blocking(true, ignored);  // read_some returns would_block (on_readable)
  auto connection = std::make_shared<Connection>(io_, std::move(socket), next_id_);
  if (!no_address) connection->peer = peer.address();
  if (mbedtls_ssl_setup(&connection->ssl, &ssl_config_) != 0) {
    connection->socket.close(ignored);
    return;
  }
  ++next_id_;
  not_checked_in_.insert(connection->id);
  if (counted) {
    Slots& slots = per_address_[*counted];
    ++slots.held;
    slots.not_checked_in.insert(connection->id);
    connection->counted_address = counted;
  }
  mbedtls_ssl_set_bio(&connection->ssl, connection.get(), &TlsServer::bio_send,
                      &TlsServer::bio_receive, nullptr);
  connection->deadline = Clock::now() + std::chrono::milliseconds(config_.handshake_timeout_ms);
  connections_.emplace(connection->id, connection);
  arm_timer(connection);
  read(connection);
}

bool TlsServer::make_room(std::optional<ConnectionId> closing,
                          std::optional<ConnectionId> not_checked_in, const std::string& cap,
                          uint64_t& evicted) {
  if (closing) {  // its last bytes cut short: it was closed already
    const auto found = lingering_.find(*closing);
    if (found != lingering_.end()) {
      const ConnectionPtr victim = found->second;
      finish(victim);
      return true;
    }
  }
  if (not_checked_in) {
    const auto found = connections_.find(*not_checked_in);
    if (found != connections_.end()) {
      const ConnectionPtr victim = found->second;
      ++evicted;
      drop(victim, "closed for a newer connection: not checked in, at " + cap, Ending::kNow);
      return true;
    }
  }
  return false;
}

void TlsServer::arm_timer(const ConnectionPtr& connection) {
  connection->timer.expires_at(connection->deadline);
  connection->timer.async_wait([this, connection](const asio::error_code& error) {
    if (error || connection->state == Connection::State::kClosed) return;
    if (Clock::now() < connection->deadline) {
      arm_timer(connection);
      return;
    }
    switch (connection->state) {
      case Connection::State::kHandshake:
        drop(connection, "TLS handshake not finished within handshake_timeout_ms", Ending::kNow);
        break;
      case Connection::State::kOpen:
        if (connection->checked_in) {
          drop(connection, "idle for longer than idle_timeout_ms", Ending::kNow);
        } else {
          ++timed_out_unchecked_;
          drop(connection, "no check-in (a valid ClientHello) within handshake_timeout_ms",
               Ending::kNow);
        }
        break;
      default:
        finish(connection);
    }
  });
}

// Reads on readiness: once the socket is readable, what it holds is taken in chunks until a read
// comes back short (the socket is then empty; epoll, edge-triggered under Asio, reports the next
// bytes as they come), then the wait is armed again. An async_read_some would try a recv at once
// each time it is started — one that fails with EAGAIN after every flight the peer sent.
void TlsServer::read(const ConnectionPtr& connection) {
  connection->socket.async_wait(asio::ip::tcp::socket::wait_read,
                                [this, connection](const asio::error_code& error) {
                                  if (connection->state == Connection::State::kClosed) return;
                                  if (error) {
                                    end_of_reads(connection, error);
                                    return;
                                  }
                                  on_readable(connection);
                                });
}

void TlsServer::on_readable(const ConnectionPtr& connection) {
  // A peer that keeps its socket full is read 64 KiB a turn: the rest is taken in a later turn
  // (posted — the socket may hold it without another edge), other connections' turns between.
  constexpr int kChunksPerTurn = 16;
  for (int chunks = 0;; ++chunks) {
    if (chunks == kChunksPerTurn) {
      flush(connection);
      asio::post(io_, [this, connection] {
        if (connection->state != Connection::State::kClosed) on_readable(connection);
      });
      return;
    }
    asio::error_code error;
    const size_t bytes = connection->socket.read_some(asio::buffer(connection->chunk), error);
    if (error == asio::error::would_block || error == asio::error::try_again) break;
    if (error) {
      end_of_reads(connection, error);
      return;
    }
    on_read(connection, bytes);
    if (connection->state == Connection::State::kClosed) return;
    if (bytes < connection->chunk.size()) break;  // the socket held no more
  }
  flush(connection);
  read(connection);
}

void TlsServer::end_of_reads(const ConnectionPtr& connection, const asio::error_code& error) {
  if (connection->state == Connection::State::kClosing) {
    finish(connection);
  } else {
    drop(connection,
         error == asio::error::eof ? "peer closed the connection"
                                   : "socket read failed: " + error.message(),
         Ending::kNow);
  }
}

void TlsServer::on_read(const ConnectionPtr& connection, size_t bytes) {
  if (connection->state == Connection::State::kHandshake ||
      connection->state == Connection::State::kOpen) {
    connection->inbox.insert(connection->inbox.end(), connection->chunk.begin(),
                             connection->chunk.begin() + static_cast<std::ptrdiff_t>(bytes));
    if (connection->state == Connection::State::kHandshake) {
      advance_handshake(connection);
    } else {
      // Before its check-in, what a peer sends moves nothing: its deadline stays the
      // handshake's (await_check_in).
      if (connection->checked_in) {
        connection->deadline = Clock::now() + std::chrono::milliseconds(config_.idle_timeout_ms);
      }
      read_frames(connection);
    }
  }  // kClosing: bytes after our last word are discarded until the peer's end of stream
}

bool TlsServer::admit_full_handshake(const ConnectionPtr& connection) {
  connection->charged = true;
  if (!config_.admit_peer) return true;
  if (connection->peer && config_.admit_peer(*connection->peer)) return true;
  ++refused_peers_;
  drop(connection,
       "TLS handshake refused: " +
           (connection->peer ? connection->peer->to_string() : std::string("an unknown address")) +
           " is over its full handshakes a minute",
       Ending::kNow);  // the ServerHello written so far is discarded
  return false;
}

void TlsServer::advance_handshake(const ConnectionPtr& connection) {
  // mbedtls_ssl_handshake's loop, step by step: once the ServerHello of a full handshake is
  // written (not a resumption, whatever the ClientHello offered: a session can be gone by the
  // time the hello is whole) and before the step that makes the server's key pair, admit_peer
  // is asked.
  handshaking_ = connection.get();
  mbedtls_ssl_context& ssl = connection->ssl;
  int rc = 0;
  while (ssl.state != MBEDTLS_SSL_HANDSHAKE_OVER) {
    rc = mbedtls_ssl_handshake_step(&ssl);
    if (rc != 0) break;
    if (ssl.state == MBEDTLS_SSL_SERVER_CERTIFICATE && !connection->charged &&
        !admit_full_handshake(connection)) {
      handshaking_ = nullptr;
      return;
    }
  }
  handshaking_ = nullptr;
  if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) return;
  // A full handshake ran the PSK callback (whatever session the client offered); one that did
  // not resumed the session get_session_callback restored, and is that session's identity.
  const bool full = connection->handshake_key.has_value();
  if (full) {  // the key's copy was for set_session_callback, which has run by now
    crypto::wipe(connection->handshake_key->data(), connection->handshake_key->size());
    connection->handshake_key.reset();
  }
  if (rc != 0) {
    // The alert (sent) is a wrong key's either way; the log says which it was. The socket is
    // closed as soon as the alert is written: no wait for the peer's end of stream.
    std::string why = mbedtls_text(rc);
    Ending ending = Ending::kAfterFlush;
    if (connection->unknown_identity) {
      why = "unknown PSK identity";
    } else if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
      why = certificate_refusal(mbedtls_ssl_get_verify_result(&ssl));
      // Refused at the device's Certificate, with the rest of its flight still arriving: a
      // close now would reset the connection and the device would never read why. Linger
      // (bounded by kClosingMs) so it reads the alert.
      ending = Ending::kLinger;
    }
    drop(connection, "TLS handshake failed: " + why, ending);
    return;
  }
#if defined(MBEDTLS_SSL_KEEP_PEER_CERTIFICATE)
  if (connection->certificate_identity) {
    // The chain is kept with the connection for its life: a device sends its certificate (and at
    // most the CA's), not a chain of unrelated ones mbedTLS would parse, ignore and keep.
    size_t certificates = 0;
    for (const mbedtls_x509_crt* c = mbedtls_ssl_get_peer_cert(&ssl); c != nullptr; c = c->next) {
      ++certificates;
    }
    if (certificates > kMaxDeviceChain) {
      drop(connection,
           "TLS handshake refused: the device sent " + std::to_string(certificates) +
               " certificates (a device sends its own and at most the CA's)",
           Ending::kNow);
      return;
    }
  }
#endif
  PeerAuthentication authentication;
  if (connection->certificate_identity && connection->certificate_key) {
    connection->identity = *connection->certificate_identity;
    authentication.method = AuthenticationMethod::kCertificate;
    authentication.certificate_key = connection->certificate_key;
    ++full_handshakes_;
    ++certificate_handshakes_;
  } else if (full) {
    ++full_handshakes_;
  } else if (!connection->resumed_identity.empty()) {
    connection->identity = connection->resumed_identity;
    authentication.method = AuthenticationMethod::kPskResumed;
    ++resumed_handshakes_;
  } else {
    drop(connection, "TLS handshake ended without an identity", Ending::kNow);
    return;
  }
  make_room_for(connection->identity);
  per_identity_[connection->identity].insert(connection->id);
  connection->counted_identity = true;
  connection->state = Connection::State::kOpen;
  if (!config_.await_check_in) {
    mark_checked_in(*connection);
    connection->deadline = Clock::now() + std::chrono::milliseconds(config_.idle_timeout_ms);
    arm_timer(connection);  // the idle deadline may come before the handshake's
  }  // else its deadline stays the handshake's: accept + handshake_timeout_ms
  // The handshake's last flight leaves with the first message the handler sends, at once (not at
  // the end of the turn: a drop(kNow) meanwhile would discard it), or at the end of this read.
  connection->flush_at_once = !connection->outbox.empty();  // a resumption's went out before
  handler_.on_authenticated(connection->id, authentication);
  if (connection->state != Connection::State::kOpen) return;  // the handler closed it
  handler_.on_open(connection->id, connection->identity);
  read_frames(connection);  // application data may have come with the client's Finished
}

void TlsServer::read_frames(const ConnectionPtr& connection) {
  wire::Envelope envelope{};
  Connection& c = *connection;
  while (c.state == Connection::State::kOpen) {
    Result<bool> frame =
        wire::take_frame(MutableByteSpan(c.plain.data(), c.plain.size()), c.plain_bytes, envelope);
    if (!frame.ok()) {
      drop(connection, frame.status().message(), Ending::kLinger);
      return;
    }
    if (frame.value()) {
      handler_.on_frame(c.id, envelope);
      continue;
    }
    const int rc =
        mbedtls_ssl_read(&c.ssl, c.plain.data() + c.plain_bytes, c.plain.size() - c.plain_bytes);
    if (rc > 0) {
      c.plain_bytes += static_cast<size_t>(rc);
    } else if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE) {
      return;
    } else if (rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
      drop(connection, "peer closed the connection", Ending::kNow);
    } else {
      drop(connection, "TLS record error: " + mbedtls_text(rc), Ending::kLinger);
    }
  }
}

void TlsServer::send(ConnectionId id, const wire::Envelope& message) {
  const auto found = connections_.find(id);
  if (found == connections_.end() || found->second->state != Connection::State::kOpen) return;
  const ConnectionPtr connection = found->second;
  std::array<uint8_t, wire::kMaxFrameBytes> frame;
  const Result<size_t> encoded =
      wire::encode_frame(message, MutableByteSpan(frame.data(), frame.size()));
  if (!encoded.ok()) {
    throw std::invalid_argument(std::string("TlsServer::send: ") + encoded.status().message());
  }
  size_t written = 0;
  while (written < encoded.value()) {
    const int rc =
        mbedtls_ssl_write(&connection->ssl, frame.data() + written, encoded.value() - written);
    if (rc < 0) {
      drop(connection, "TLS write failed: " + mbedtls_text(rc), Ending::kNow);
      return;
    }
    written += static_cast<size_t>(rc);
  }
  if (connection->pending_output() > config_.max_pending_output_bytes) {
    drop(connection, "unsent output exceeds max_pending_output_bytes (peer not reading)",
         Ending::kNow);
    return;
  }
  // One write for every message this io turn sends the connection (Task and TaskData, a commit
  // group's answers): the flush runs once the current handler is done. A post from the io
  // thread costs no system call; each loopback send costs the receiver's TCP path.
  if (connection->flush_at_once) {
    flush(connection);
    return;
  }
  if (connection->flush_posted) return;
  connection->flush_posted = true;
  asio::post(io_, [this, connection] {
    connection->flush_posted = false;
    if (connection->state == Connection::State::kOpen) flush(connection);
  });
}

void TlsServer::flush(const ConnectionPtr& connection) {
  if (connection->write_in_flight || connection->outbox.empty()) return;
  connection->flush_at_once = false;
  connection->writing.swap(connection->outbox);
  connection->write_in_flight = true;
  asio::async_write(
      connection->socket, asio::buffer(connection->writing),
      [this, connection](const asio::error_code& error, size_t /*bytes*/) {
        connection->write_in_flight = false;
        connection->writing.clear();
        if (connection->state == Connection::State::kClosed) return;
        if (error) {
          if (connection->state == Connection::State::kClosing) {
            finish(connection);
          } else {
            drop(connection, "socket write failed: " + error.message(), Ending::kNow);
          }
          return;
        }
        if (!connection->outbox.empty()) {
          flush(connection);
        } else if (connection->state == Connection::State::kClosing) {
          if (!connection->await_peer_end) {
            finish(connection);  // a failed handshake's alert is out: closed at once
            return;
          }
          asio::error_code ignored;  // our last word is out: end our half, wait for the peer's
          connection->socket.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
        }
      });
}

void TlsServer::close(ConnectionId id) {
  const auto found = connections_.find(id);
  if (found == connections_.end()) return;
  const ConnectionPtr connection = found->second;  // drop() erases the map's copy
  drop(connection, "closed by the server", Ending::kLinger);
}

void TlsServer::keep_open(ConnectionId id, uint32_t ms) {
  const auto found = connections_.find(id);
  if (found == connections_.end() || found->second->state != Connection::State::kOpen ||
      !found->second->checked_in) {
    return;
  }
  const Clock::time_point until = Clock::now() + std::chrono::milliseconds(ms);
  // The armed timer re-arms itself until the current deadline (arm_timer).
  if (until > found->second->deadline) found->second->deadline = until;
}

void TlsServer::check_in(ConnectionId id) {
  const auto found = connections_.find(id);
  if (found == connections_.end() || found->second->state != Connection::State::kOpen ||
      found->second->checked_in) {
    return;
  }
  Connection& c = *found->second;
  mark_checked_in(c);
  const Clock::time_point idle = Clock::now() + std::chrono::milliseconds(config_.idle_timeout_ms);
  if (idle > c.deadline) c.deadline = idle;  // the armed timer re-arms itself until then
}

void TlsServer::make_room_for(const std::string& identity) {
  const size_t cap = config_.max_connections_per_identity;
  if (cap == 0) return;
  for (;;) {
    const auto held = per_identity_.find(identity);
    if (held == per_identity_.end() || held->second.size() < cap) return;
    const ConnectionId oldest = *held->second.begin();  // ids grow: the smallest is the oldest
    const auto found = connections_.find(oldest);
    if (found ==
        connections_.end()) {  // not open any more (cannot happen: release_identity() erases)
      held->second.erase(held->second.begin());
      if (held->second.empty()) per_identity_.erase(held);
      continue;
    }
    ++replaced_per_identity_;
    const ConnectionPtr victim = found->second;
    drop(victim,
         "replaced: identity " + identity +
             " opened a newer connection (max_connections_per_identity " + std::to_string(cap) +
             ")",
         Ending::kNow);
  }
}

size_t TlsServer::revoke(const std::set<std::string>& identities) {
  for (const std::string& identity : identities) sessions_.forget_identity(identity);
  std::vector<ConnectionPtr> revoked;
  for (const auto& entry : connections_) {
    const Connection& c = *entry.second;
    // Open ones by their identity; a handshake under way by the identity it is being made for.
    const std::string& of = c.identity.empty() ? c.resumed_identity : c.identity;
    if (!of.empty() && identities.count(of) != 0) revoked.push_back(entry.second);
  }
  for (const ConnectionPtr& c : revoked) {
    ++revoked_;
    drop(c,
         "credential revoked (identity " +
             (c->identity.empty() ? c->resumed_identity : c->identity) + ")",
         Ending::kNow);
  }
  return revoked.size();
}

void TlsServer::mark_checked_in(Connection& c) {
  c.checked_in = true;
  leave_not_checked_in(c);
}

void TlsServer::leave_not_checked_in(Connection& c) {
  not_checked_in_.erase(c.id);
  if (c.counted_address) {
    const auto slots = per_address_.find(*c.counted_address);
    if (slots != per_address_.end()) slots->second.not_checked_in.erase(c.id);
  }
}

void TlsServer::release_identity(Connection& c) {
  if (!c.counted_identity) return;
  const auto held = per_identity_.find(c.identity);
  if (held != per_identity_.end()) {
    held->second.erase(c.id);
    if (held->second.empty()) per_identity_.erase(held);
  }
  c.counted_identity = false;
}

void TlsServer::release_slot(Connection& c) {
  leave_not_checked_in(c);
  if (!c.counted_address) return;
  const auto slots = per_address_.find(*c.counted_address);
  if (slots != per_address_.end()) {
    slots->second.closing.erase(c.id);
    if (--slots->second.held == 0) per_address_.erase(slots);
  }
  c.counted_address.reset();
}

void TlsServer::stop() {
  stopped_ = true;
  asio::error_code ignored;
  acceptor_.close(ignored);
  accept_retry_.cancel();
  purge_timer_.cancel();
  std::vector<ConnectionPtr> all;
  for (auto& entry : connections_) all.push_back(entry.second);
  for (auto& connection : all) drop(connection, "server stopping", Ending::kNow);
  all.clear();
  for (auto& entry : lingering_) all.push_back(entry.second);
  for (auto& connection : all) finish(connection);
}

void TlsServer::drop(const ConnectionPtr& held, const std::string& reason, Ending ending) {
  const ConnectionPtr connection = held;  // `held` may be the map's entry, erased below
  if (connection->state == Connection::State::kClosing ||
      connection->state == Connection::State::kClosed) {
    return;
  }
  connections_.erase(connection->id);
  release_identity(*connection);  // closed for its identity; its socket still holds a slot
  if (ending != Ending::kNow && connection->pending_output() > 0) {
    // Let the final alert or frames out, bounded: a peer that never reads is cut off. Until its
    // socket is closed it counts against max_connections and its address's cap (the first to
    // make room for a newcomer). Its ciphertext is all in its output: the TLS context goes now.
    connection->state = Connection::State::kClosing;
    connection->await_peer_end = ending == Ending::kLinger;
    mbedtls_ssl_free(&connection->ssl);
    mbedtls_ssl_init(&connection->ssl);
    leave_not_checked_in(*connection);
    if (connection->counted_address) {
      const auto slots = per_address_.find(*connection->counted_address);
      if (slots != per_address_.end()) slots->second.closing.insert(connection->id);
    }
    lingering_.emplace(connection->id, connection);
    connection->deadline = Clock::now() + std::chrono::milliseconds(std::min<uint32_t>(
                                              config_.handshake_timeout_ms, kClosingMs));
    arm_timer(connection);
    flush(connection);
  } else {
    finish(connection);
  }
  handler_.on_close(connection->id, reason);
}

void TlsServer::finish(const ConnectionPtr& connection) {
  connection->state = Connection::State::kClosed;
  asio::error_code ignored;
  connection->timer.cancel();
  connection->socket.close(ignored);
  mbedtls_ssl_free(&connection->ssl);  // it refers to ssl_config_: never outlive the server
  mbedtls_ssl_init(&connection->ssl);
  connections_.erase(connection->id);
  lingering_.erase(connection->id);
  release_identity(*connection);
  release_slot(*connection);
}

}  // namespace net
}  // namespace fedstat
