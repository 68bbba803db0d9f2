// TlsServer: the server's listener — TCP via standalone Asio (one io_context, async I/O only),
// TLS 1.2 with pre-shared keys (and, when configured, X.509 certificates: below) from mbedTLS over
// per-connection memory buffers, carrying
// length-delimited Envelope frames (sdk/wire/envelope_codec.h) to a FrameHandler.
//
// Security: TLS 1.2 exactly and the device's pinned suite (sdk/tls/tls_channel.h:
// TLS-ECDHE-PSK-WITH-CHACHA20-POLY1305-SHA256, X25519 or P-256). The PSK identity is looked up
// with TlsServerConfig::lookup_psk; an unknown identity or a wrong key fails the handshake, on_open
// is never called and the socket is closed. Both end alike — the peer gets the same fatal alert
// (bad_record_mac) after the same work: for an identity it does not know the server goes on with
// a random key (RFC 4279 §2), so no network observer learns which identities it knows; its
// on_close reason (and so the server's log) says which it was ("TLS handshake failed: unknown PSK
// identity").
// Certificates (issue 42, mutual TLS): with TlsServerConfig::certificates and
// device_authentication kCertificate or kEither, the server also offers (kCertificate: only)
// TLS-ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256 (the device's TlsCertificateChannel,
// sdk/tls/tls_certificate_channel.h) on the same port, presents its certificate and requires the
// device's (MBEDTLS_SSL_VERIFY_REQUIRED): it must chain to client_ca_pem, allow clientAuth and be
// a device certificate, subject CN "fedstat-device <id>" (fedstat-ca issue/sign); the identity is
// that id, written as a PSK identity is (decimal), so per-identity caps, revoke() and the rounds
// treat both kinds alike (revoke() closes; what keeps a revoked device out is lookup_psk for a PSK
// device and certificate_revoked for a certificate device, checked at every handshake). A refused
// certificate fails the handshake with mbedTLS's alert (unknown_ca, access_denied for a certificate
// that is not a device's, unsupported_certificate), and on_close says why ("TLS handshake failed:
// device certificate ..."); a verified device that sent more than its certificate and the CA's is
// closed at once (the parsed peer chain stays with the connection). on_authenticated tells the
// handler how the device authenticated and, for a certificate, its public key (the rounds tie it to
// the device's SecAggKeys certificate). Certificate sessions are not cached: every certificate
// connection is a full handshake (resumption would restore a session whose certificate the cache
// cannot re-check; devices that need cheap reconnects use PSK).
//
// Threads: every FrameHandler call happens on the io_context's thread, and every TlsServer method
// must be called on that thread too (asio::post to it from elsewhere). Nothing is locked.
//
// Lifecycle of a connection: accepted (an id is assigned) → handshake (at most
// handshake_timeout_ms) → on_open(id, identity) → on_frame... → on_close(id, reason).
// on_close is called exactly once for every accepted connection the server drops — including
// those whose handshake failed or timed out, which never had on_open (a handler ignores ids it
// never saw open).
// Slots: every socket the server holds counts against max_connections and against its address's
// max_connections_per_address (peer_address.h: an IPv4 address, an IPv6 /64; loopback exempt
// unless exempt_loopback is false) until the socket is closed — a connection still flushing its
// last bytes ("closing", below) included. A connection has "checked in" once the handler said so
// (check_in(), with await_check_in; else once its handshake is done). At a cap, the newcomer
// takes the slot of the oldest connection that is closing (its last bytes cut short), else of the
// oldest one not checked in (on_close "closed for a newer connection: not checked in, at ...",
// counted in stats().evicted_per_address, evicted_full) — first among its own address's, then
// among all; a newcomer finding only checked-in connections is closed at once, gets no id and no
// call (stats().refused_per_address, refused_full). So connections that never authenticate —
// from however many addresses, no credential needed — hold no slot against a device: each lasts
// until handshake_timeout_ms or until that many newer connections came, and a device's handshake
// (milliseconds) survives unless as many connections as there are not-checked-in slots arrive
// during it; a connection that checked in is never closed to make room.
// One identity holds at most
// max_connections_per_identity open connections: a handshake that would open one more closes the
// identity's oldest first (on_close "replaced: ...", stats().replaced_per_identity) — only the
// holder of that identity's key can make it happen, and a device whose older connection is dead
// but not yet timed out (a network change, a resume) is never locked out by it.
// await_check_in: an open connection's deadline stays its handshake's (accept +
// handshake_timeout_ms), whatever it sends, until check_in(id) — the handler's word that its
// first message was valid (the collector's: a ClientHello the rounds took); one that is not
// checked in by then is closed ("no check-in ...", stats().not_checked_in). Until then keep_open
// does nothing.
// admit_peer (a per-address handshake rate limit: host_server/peer_handshake_limit.h) is asked
// for every full handshake, once its ServerHello is written and before the server makes its key
// pair; a resumption (no key pair) is not asked. A refused peer's connection is dropped, nothing
// sent ("TLS handshake refused: <address> ...", on_close, counted in stats().refused_peers).
// Resumption: a device that connects again within TlsServerConfig::sessions.lifetime_seconds
// (1 h by default; at most 24 h: each held session's master secret decrypts the connections made
// with it, so the lifetime is how long forward secrecy waits)
// offers its last session's id and, when the server still holds it (tls_session_cache.h),
// resumes it — an abbreviated handshake with no key exchange, authenticated by that session's
// master secret — and on_open gets the identity whose PSK made the session, provided that
// lookup_psk still gives the same key. Anything else is a full handshake.
// An accept that fails for want of a descriptor (the process's RLIMIT_NOFILE, below
// max_connections) or of memory is tried again after kAcceptRetryMs, not at once: the waiting
// connection stays in the listen backlog, and the io thread does not spin while the shortage
// lasts (it ends as time-outs close connections).
// Closing: a connection dropped with output still unsent lets it out before its socket closes,
// with its TLS context already freed. After a failed handshake the alert is written and the socket
// closed at once (no wait for the peer) — except a refused device certificate, which lingers as
// below so the device, still sending its flight, reads the alert instead of a reset; after close()
// or a malformed frame, its last frames are written, its half of the stream ended, and the peer's
// end awaited. Either way at most min(handshake_timeout_ms, kClosingMs), and counted in the caps
// meanwhile (see Slots). A connection is closed when: its handshake fails or takes longer than
// handshake_timeout_ms; it sends nothing for idle_timeout_ms; it sends a malformed or oversized
// frame (the reason is decode_frame's message); its unsent output exceeds max_pending_output_bytes
// (a slow reader never holds up others); it closes; close(id), revoke() or stop() is called.
// keep_open(id, ms) moves the idle deadline of an open connection to at least ms from now: the
// rounds call it for a device that is waiting on the server (for the next phase or its outcome),
// however long idle_timeout_ms is. close() and stop() also call on_close. send() and close() on an
// unknown or closed id do nothing (the peer may just have gone).
//
// Memory per connection (at most max_connections, closing ones included): a Connection (the
// mbedTLS ssl context plus ~16.7 KiB in and out record buffers that mbedTLS allocates — freed once
// it is closing —, a receive chunk of 4 KiB, a plaintext frame buffer of wire::kMaxFrameBytes)
// plus its pending output, at most max_pending_output_bytes; and the session cache,
// sessions.max_entries × about 420 bytes; with certificates, the parsed server certificate, key
// and client CA once (a few KiB) and, during a certificate handshake, the device's certificate; per
// address with a connection (capped) and per open identity, a map node (about 100 bytes each), and
// per connection not checked in or closing a set node or two (about 40 bytes each). Destroy a
// TlsServer only after its io_context has stopped running handlers that may refer to it (stop(),
// then let run() return). Paper: none (transport for all tasks).
#ifndef FEDSTAT_HOST_SERVER_NET_TLS_SERVER_H_
#define FEDSTAT_HOST_SERVER_NET_TLS_SERVER_H_

#include <array>
#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "host_server/net/peer_address.h"
#include "host_server/net/tls_session_cache.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/entropy.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace net {

using ConnectionId = uint64_t;

// How a device proved its identity (issue 42): a pre-shared key in a full handshake, a resumed
// PSK session, or an X.509 certificate from the client CA (mutual TLS).
enum class AuthenticationMethod { kPsk, kPskResumed, kCertificate };

struct PeerAuthentication {
  AuthenticationMethod method = AuthenticationMethod::kPsk;
  // kCertificate: the certificate's P-256 public key (SEC1 uncompressed), which the rounds
  // compare with the key of the compact certificate in the device's SecAggKeys.
  std::optional<std::array<uint8_t, 65>> certificate_key;
};

class FrameHandler {
 public:
  virtual ~FrameHandler() = default;
  // How the connection's device authenticated: called once, just before on_open.
  virtual void on_authenticated(ConnectionId, const PeerAuthentication&) {}
  virtual void on_open(ConnectionId, const std::string& identity) = 0;  // after a handshake
  virtual void on_frame(ConnectionId, const wire::Envelope&) = 0;
  virtual void on_close(ConnectionId, const std::string& reason) = 0;
};

// Which devices' credentials the listener takes (TlsServerConfig::device_authentication).
enum class DeviceAuthentication {
  kPsk,          // TLS-ECDHE-PSK only (no certificates configured)
  kCertificate,  // mutual TLS only: the PSK suite is not offered
  kEither,       // both suites on the same port
};

// The server's certificate and key, and the CA that issues device certificates (PEM text).
struct TlsCertificates {
  std::string certificate_pem;  // the server's certificate (fedstat-ca server-cert)
  std::string private_key_pem;  // its private key
  std::string client_ca_pem;    // the fleet CA certificate (fedstat-ca init: ca.crt)
};

struct TlsServerConfig {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: an ephemeral port, see TlsServer::port()
  // kPsk and kEither need lookup_psk; kCertificate and kEither need certificates.
  DeviceAuthentication device_authentication = DeviceAuthentication::kPsk;
  std::optional<TlsCertificates> certificates;
  // The 32-byte PSK of a PSK identity (a decimal device id), or nullopt to refuse it.
  std::function<std::optional<std::array<uint8_t, 32>>(const std::string& identity)> lookup_psk;
  // Whether a certificate device's id is revoked (the server's tls_revoked_devices); absent: none
  // is. Asked at every certificate handshake, after the chain verified: a revoked device's
  // certificate fails it ("device certificate revoked").
  std::function<bool(uint64_t device_id)> certificate_revoked;
  uint32_t handshake_timeout_ms = 10000;
  uint32_t idle_timeout_ms = 60000;
  size_t max_connections = 4096;
  size_t max_pending_output_bytes = 1 << 20;
  TlsSessionCacheConfig sessions;  // resumption (max_entries 0: every handshake is full)
  // How often expired sessions are forgotten (wiped) when no handshake does it (0 is taken as
  // 1 ms).
  uint32_t session_purge_ms = 60000;
  // The clock sessions age by; empty: std::chrono::steady_clock (tests pass their own).
  std::function<std::chrono::steady_clock::time_point()> session_clock;
  // Asked once per full handshake, before the server's key pair (a resumption is not asked):
  // false drops the connection, nothing sent (TlsServerStats::refused_peers). Empty: every peer
  // is taken.
  std::function<bool(const asio::ip::address& peer)> admit_peer;
  // Open connections one identity may hold (0: no cap); the oldest makes room (see above).
  size_t max_connections_per_identity = 4;
  // Connections (handshaking, open or closing) from one address at once (0: no cap); one more
  // takes the slot of the address's oldest not checked in, or is closed at accept when all have
  // checked in (see Slots). Loopback peers are not counted while exempt_loopback.
  size_t max_connections_per_address = 256;
  bool exempt_loopback = true;
  // An open connection must be check_in()ed within handshake_timeout_ms of its accept (see above).
  bool await_check_in = false;
};

// Handshakes completed since start, and the sessions held for resumption.
struct TlsServerStats {
  uint64_t full_handshakes = 0;         // PSK and certificate
  uint64_t resumed_handshakes = 0;      // PSK sessions resumed
  uint64_t certificate_handshakes = 0;  // of full_handshakes: mutual TLS with certificates
  size_t cached_sessions = 0;
  uint64_t refused_peers = 0;  // connections dropped before their handshake: admit_peer refused
  uint64_t refused_full = 0;   // closed at accept: max_connections held, every one checked in
  uint64_t refused_per_address = 0;    // likewise for max_connections_per_address
  uint64_t evicted_full = 0;           // not checked in, closed for a newcomer at max_connections
  uint64_t evicted_per_address = 0;    // likewise at max_connections_per_address
  uint64_t replaced_per_identity = 0;  // closed: max_connections_per_identity, a newer one came
  uint64_t not_checked_in = 0;  // closed: no check_in within handshake_timeout_ms (await_check_in)
  uint64_t revoked = 0;         // closed by revoke()
};

class TlsServer {
 public:
  // After an accept that failed (no descriptor or memory left), the next one waits this long.
  static constexpr uint32_t kAcceptRetryMs = 100;
  // A closing connection's socket is closed after at most min(handshake_timeout_ms, this).
  static constexpr uint32_t kClosingMs = 1000;

  // Throws std::invalid_argument if lookup_psk is empty where device_authentication needs it,
  // or certificates are missing or do not parse (the message says which, and that the key is
  // not the certificate's); std::runtime_error if mbedTLS cannot be set up.
  TlsServer(asio::io_context& io, TlsServerConfig config, FrameHandler& handler);
  ~TlsServer();
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  // Binds and listens on config.address:config.port (throws std::system_error if it cannot),
  // then accepts asynchronously.
  void start();
  uint16_t port() const { return port_; }
  // Encodes `message` as one frame and queues it for `id`. Throws std::invalid_argument if the
  // message cannot be encoded (a caller's bug: nanopb's limits are static).
  void send(ConnectionId id, const wire::Envelope& message);
  void close(ConnectionId id);
  // An open connection is not closed as idle before `ms` from now (a later deadline stays).
  // Unknown, closed, handshaking or (await_check_in) not yet checked-in ids: nothing.
  void keep_open(ConnectionId id, uint32_t ms);
  // await_check_in: the peer on `id` sent a valid first message; from now on what it sends moves
  // its idle deadline. Unknown, closed, handshaking or already checked-in ids: nothing.
  void check_in(ConnectionId id);
  // The identities whose credential was withdrawn (a credentials reload; lookup_psk must already
  // answer for them as it will from now on): their held TLS sessions are forgotten (wiped) and
  // their connections, open or in their handshake, closed (on_close "credential revoked ...").
  // Returns how many connections it closed.
  size_t revoke(const std::set<std::string>& identities);
  // Stops accepting and closes every connection (on_close "server stopping").
  void stop();
  TlsServerStats stats() const;

 private:
  struct Connection;
  using ConnectionPtr = std::shared_ptr<Connection>;

  static int bio_send(void* connection, const unsigned char* bytes, size_t length);
  static int bio_receive(void* connection, unsigned char* out, size_t length);
  static int psk_callback(void* server, mbedtls_ssl_context* ssl, const unsigned char* identity,
                          size_t identity_length);
  static int verify_callback(void* server, mbedtls_x509_crt* certificate, int depth,
                             uint32_t* flags);
  static int get_session_callback(void* server, mbedtls_ssl_session* session);
  static int set_session_callback(void* server, const mbedtls_ssl_session* session);

  void accept();
  void purge_sessions();
  void admit(asio::ip::tcp::socket socket, const asio::ip::tcp::endpoint& peer);
  void read(const ConnectionPtr& connection);
  // The socket is readable: takes what it holds, then waits again.
  void on_readable(const ConnectionPtr& connection);
  void end_of_reads(const ConnectionPtr& connection, const asio::error_code& error);
  void on_read(const ConnectionPtr& connection, size_t bytes);
  // Asks admit_peer for a full handshake's key pair: true to go on; false when the connection
  // was dropped.
  bool admit_full_handshake(const ConnectionPtr& connection);
  void advance_handshake(const ConnectionPtr& connection);
  void read_frames(const ConnectionPtr& connection);
  void flush(const ConnectionPtr& connection);
  void arm_timer(const ConnectionPtr& connection);
  // How a dropped connection's socket ends: at once (unsent output discarded); once its output
  // is written (a failed handshake's alert); or once written and the peer has ended its stream
  // (or kClosingMs). See Closing above.
  enum class Ending { kNow, kAfterFlush, kLinger };
  void drop(const ConnectionPtr& connection, const std::string& reason, Ending ending);
  void finish(const ConnectionPtr& connection);
  // Closes `identity`'s oldest open connections until it holds fewer than
  // max_connections_per_identity.
  void make_room_for(const std::string& identity);
  // A newcomer at `cap` (its text for the log): closes the `closing` connection, else the
  // `not_checked_in` one (counting it in `evicted`); false when neither is given.
  bool make_room(std::optional<ConnectionId> closing, std::optional<ConnectionId> not_checked_in,
                 const std::string& cap, uint64_t& evicted);
  void mark_checked_in(Connection& connection);
  // Out of the not-checked-in sets (the server's and its address's): checked in or closing.
  void leave_not_checked_in(Connection& connection);
  // Takes the connection out of its identity's open connections (once).
  void release_identity(Connection& connection);
  // Gives its slot back: out of its address's count and of the not-checked-in set (once).
  void release_slot(Connection& connection);

  asio::io_context& io_;
  TlsServerConfig config_;
  FrameHandler& handler_;
  asio::ip::tcp::acceptor acceptor_;
  asio::ip::tcp::endpoint accepted_peer_;  // the peer of the accept in progress
  asio::steady_timer accept_retry_;        // after an accept that failed for want of descriptors
  asio::steady_timer purge_timer_;         // forgets expired sessions
  mbedtls_entropy_context entropy_;
  mbedtls_ctr_drbg_context drbg_;
  mbedtls_ssl_config ssl_config_;
  mbedtls_x509_crt own_certificate_;
  mbedtls_pk_context own_key_;
  mbedtls_x509_crt client_ca_;
  uint16_t port_ = 0;
  bool stopped_ = false;
  ConnectionId next_id_ = 1;
  Connection* handshaking_ = nullptr;  // the connection whose handshake step is running
  TlsSessionCache sessions_;
  uint64_t full_handshakes_ = 0;
  uint64_t resumed_handshakes_ = 0;
  uint64_t certificate_handshakes_ = 0;
  uint64_t refused_peers_ = 0;
  uint64_t refused_full_ = 0, refused_per_address_ = 0, replaced_per_identity_ = 0;
  uint64_t evicted_full_ = 0, evicted_per_address_ = 0;
  uint64_t timed_out_unchecked_ = 0, revoked_ = 0;
  // One address's sockets (handshaking, open or closing), and which of them may make room.
  struct Slots {
    size_t held = 0;
    std::set<ConnectionId> not_checked_in, closing;
  };
  std::unordered_map<PeerAddress, Slots, PeerAddressHash> per_address_;
  std::unordered_map<std::string, std::set<ConnectionId>> per_identity_;  // open, by identity
  std::unordered_map<ConnectionId, ConnectionPtr> connections_;           // handshaking or open
  std::set<ConnectionId> not_checked_in_;  // of connections_: handshaking, or not checked in
  std::map<ConnectionId, ConnectionPtr> lingering_;  // closing: last bytes going out (by age)
};

}  // namespace net
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_NET_TLS_SERVER_H_
