// StatusHttpServer: a minimal, read-only HTTP/1.1 server for the operator's status page — GET and
// HEAD only, one request per connection (Connection: close), on the server's own io_context
// (standalone Asio; every handler and the route run on its thread, like the rounds').
//
// Limits: a request head (request line + headers) of at most max_request_bytes (else 431 and
// close); the whole exchange within timeout_ms from accept (else the socket is closed); at most
// max_connections at once, and at most max_connections_per_peer of them from one peer (others
// are closed at accept, counted in refused()). A peer is the local user that owns the other end
// (the listener is on loopback: the kernel names the uid, Linux sock_diag), else its address — so
// one local user's idle sockets cannot starve the operator's (another user's) requests, however
// many loopback addresses it connects from. A request line that is not "METHOD /target HTTP/1.x",
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
  size_t max_connections_per_peer = 4;  // 0: no cap per peer
};

class StatusHttpServer {
 public:
  // GET path → the response, or nullopt for 404.
  using Route = std::function<std::optional<HttpResponse>(const std::string& path)>;
  // The peer an accepted socket counts against (max_connections_per_peer).
  using PeerOf = std::function<std::string(const asio::ip::tcp::socket&)>;

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
  // Replaces how peers are told apart (by default: the local uid, else the address; tests give
  // their own). Call before start().
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
  std::map<std::string, size_t> per_peer_;  // sessions open per peer
  uint64_t refused_ = 0;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_STATUS_HTTP_SERVER_H_
