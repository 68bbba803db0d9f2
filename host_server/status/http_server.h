// StatusHttpServer: a minimal, read-only HTTP/1.1 server for the operator's status page — GET and
// HEAD only, one request per connection (Connection: close), on the server's own io_context
// (standalone Asio; every handler and the route run on its thread, like the rounds').
//
// Limits: a request head (request line + headers) of at most max_request_bytes (else 431 and
// close); the whole exchange within timeout_ms from accept (else the socket is closed); at most
// max_connections at once (others are closed at accept, counted in refused()). A peer is the
// local user that owns the other end of the connection — the listener is on loopback: the kernel
// names the uid (Linux sock_diag, one exact lookup per accept). When it does, a user holds at most
// max_connections_per_peer, and users other than the server's own and root share
// max_connections − operator_slots: so other users' idle sockets (any number of users, from any
// loopback address) cannot take the operator's last operator_slots, nor one user another's share.
// When the kernel does not say (no AF_NETLINK: a hardened systemd unit, a container without
// sock_diag; another system), the connection counts against max_connections only — every local
// user's sockets share them, and 16 idle sockets of anyone hold the listener for timeout_ms:
// peer_lookup_problem() tells at start whether the lookup works (the server logs a warning when it
// does not). A request line that is not "METHOD /target HTTP/1.x",
// a header field line that is not "token: value" (a blank before the colon, a folded line) and
// a request with two Host fields get 400; another method 405 (Allow: GET, HEAD); the route's
// nullopt 404. A request body is never read. Responses carry Content-Length, Cache-Control:
// no-store, nosniff and a Content-Security-Policy that allows no script.
// DNS rebinding: a request whose Host header is not this listener's own loopback name
// (127.0.0.1:P, localhost:P, [::1]:P or the configured address with port P) gets 421 and nothing
// else, so a web page that points its own name at 127.0.0.1 cannot read the page through a
// browser on this machine. An accept that fails for want of descriptors is retried after
// kAcceptRetryMs, never in a busy loop (as TlsServer's).
// Errors: start() throws std::system_error if it cannot bind. Memory: per connection its
// request head (≤ max_request_bytes) and response. Paper: none.
#ifndef FEDSTAT_HOST_STATUS_HTTP_SERVER_H_
#define FEDSTAT_HOST_STATUS_HTTP_SERVER_H_

#include <asio.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace fedstat {
namespace host {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// The request head's verdict: status 0 and the method and path (the target without its query),
// or the status to answer (400, 405).
struct HttpRequest {
  int status = 0;
  std::string method, path;
  std::string host;  // the Host header's value, trimmed ("" when absent)
};
// `head`: the bytes up to and including the blank line.
HttpRequest parse_http_request(std::string_view head);
// The full response text (headers and, unless `head_only`, the body).
std::string format_http_response(const HttpResponse& response, bool head_only);

struct HttpLimits {
  size_t max_request_bytes = 8192;
  uint32_t timeout_ms = 5000;
  size_t max_connections = 16;
  size_t max_connections_per_peer = 4;  // 0: no cap per peer (a peer the kernel named)
  size_t operator_slots = 4;  // of max_connections, never taken by users other than these two
};

// Who is at the other end of an accepted socket, as the limits see it.
struct HttpPeer {
  enum class Kind {
    kOperator,  // the server's own user or root
    kOther,     // another local user
    kUnknown,   // the kernel did not say: counted against max_connections only
  };
  Kind kind = Kind::kUnknown;
  std::string name;  // what max_connections_per_peer counts ("uid 1000"); "" when unknown
};

// Whether the kernel names the local user at the other end of a loopback connection here: nullopt
// when it does (a loopback connection of this process's own is looked up and found to be its
// effective uid), else what went wrong ("socket(AF_NETLINK): Address family not supported by
// protocol"). Makes one loopback listener and connection, closed before it returns.
std::optional<std::string> peer_lookup_problem();

class StatusHttpServer {
 public:
  // GET path → the response, or nullopt for 404.
  using Route = std::function<std::optional<HttpResponse>(const std::string& path)>;
  // The peer an accepted socket counts against (see HttpPeer).
  using PeerOf = std::function<HttpPeer(const asio::ip::tcp::socket&)>;

  StatusHttpServer(asio::io_context& io, std::string address, uint16_t port, Route route,
                   HttpLimits limits = {});
  ~StatusHttpServer();
  StatusHttpServer(const StatusHttpServer&) = delete;
  StatusHttpServer& operator=(const StatusHttpServer&) = delete;

  // After an accept that failed (no descriptor or memory left), the next one waits this long.
  static constexpr uint32_t kAcceptRetryMs = 100;

  void start();  // binds, listens and accepts
  uint16_t port() const { return port_; }
  void stop();  // stops accepting and closes every connection
  // Sockets closed at accept since start (max_connections or max_connections_per_peer).
  uint64_t refused() const { return refused_; }
  // Replaces how peers are told apart (by default: the local uid, asked of the kernel; tests
  // give their own). Call before start().
  void set_peer_of(PeerOf peer_of) { peer_of_ = std::move(peer_of); }

 private:
  struct Session;
  void accept();
  void read(const std::shared_ptr<Session>& session);
  void respond(const std::shared_ptr<Session>& session, const HttpResponse& response,
               bool head_only);
  void finish(const std::shared_ptr<Session>& session);
  bool is_own_host(const std::string& host) const;  // the DNS-rebinding check (see above)

  std::string address_;
  uint16_t requested_port_ = 0, port_ = 0;
  Route route_;
  HttpLimits limits_;
  PeerOf peer_of_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer accept_retry_;
  bool stopped_ = false;
  std::set<std::shared_ptr<Session>> sessions_;
  std::map<std::string, size_t> per_peer_;  // sessions open per named peer
  size_t others_ = 0;                       // sessions open of HttpPeer::Kind::kOther
  uint64_t refused_ = 0;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STATUS_HTTP_SERVER_H_
