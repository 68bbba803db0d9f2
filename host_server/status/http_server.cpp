// The status page's HTTP/1.1 server (http_server.h).
#include "host_server/status/http_server.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#ifdef __linux__
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#endif
#include <unistd.h>

namespace fedstat {
namespace host {
namespace {

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 421:
      return "Misdirected Request";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    default:
      return "Error";
  }
}

bool is_token_char(char c) {  // RFC 9110 tchar (a method, a field name)
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '!' || c == '~' || c == '*' || c == '+' || c == '\'' ||
         c == '#' || c == '$' || c == '%' || c == '&' || c == '^' || c == '`' || c == '|';
}

// The uid that owns the TCP socket on this machine whose own end is `own` and whose other end is
// `other`, asked of the kernel (Linux sock_diag: an exact lookup by the connection's four
// addresses, no scan of the socket tables); nullopt, with `problem` said, when it cannot tell
// (another system, no AF_NETLINK, no such socket any more). A socket its owner has closed (an
// orphan, or one in time-wait, which the kernel reports as uid 0) tells nothing either.
std::optional<uint32_t> socket_owner(const asio::ip::tcp::endpoint& own,
                                     const asio::ip::tcp::endpoint& other, std::string& problem) {
#ifdef __linux__
  if (own.address().is_v4() != other.address().is_v4()) {
    problem = "an IPv4 end and an IPv6 end";
    return std::nullopt;
  }
  struct {
    nlmsghdr header;
    inet_diag_req_v2 body;
  } request{};
  request.header.nlmsg_len = sizeof(request);
  request.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  request.header.nlmsg_flags = NLM_F_REQUEST;
  request.body.sdiag_family = own.address().is_v4() ? AF_INET : AF_INET6;
  request.body.sdiag_protocol = IPPROTO_TCP;
  request.body.idiag_states = ~0u;
  request.body.id.idiag_sport = htons(own.port());
  request.body.id.idiag_dport = htons(other.port());
  if (own.address().is_v4()) {
    const auto src = own.address().to_v4().to_bytes();
    const auto dst = other.address().to_v4().to_bytes();
    std::memcpy(request.body.id.idiag_src, src.data(), src.size());
    std::memcpy(request.body.id.idiag_dst, dst.data(), dst.size());
  } else {
    const auto src = own.address().to_v6().to_bytes();
    const auto dst = other.address().to_v6().to_bytes();
    std::memcpy(request.body.id.idiag_src, src.data(), src.size());
    std::memcpy(request.body.id.idiag_dst, dst.data(), dst.size());
  }
  request.body.id.idiag_cookie[0] = request.body.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
  const int fd = ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) {
    problem = std::string("socket(AF_NETLINK, NETLINK_SOCK_DIAG): ") + std::strerror(errno);
    return std::nullopt;
  }
  const timeval wait{0, 200000};  // the kernel answers at once; never hold the io thread long
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  std::optional<uint32_t> uid;
  problem = "the kernel did not name the socket's owner";
  if (sendto(fd, &request, sizeof(request), 0, reinterpret_cast<sockaddr*>(&kernel),
             sizeof(kernel)) != static_cast<ssize_t>(sizeof(request))) {
    problem = std::string("sock_diag request: ") + std::strerror(errno);
  } else {
    alignas(nlmsghdr) char answer[4096];
    ssize_t length = recv(fd, answer, sizeof(answer), 0);
    if (length < 0) problem = std::string("sock_diag answer: ") + std::strerror(errno);
    for (auto* h = reinterpret_cast<nlmsghdr*>(answer); length > 0 && NLMSG_OK(h, length);
         h = NLMSG_NEXT(h, length)) {
      if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY) break;  // NLMSG_ERROR: no such socket
      const auto* found = static_cast<const inet_diag_msg*>(NLMSG_DATA(h));
      if (found->id.idiag_sport == request.body.id.idiag_sport &&
          found->id.idiag_dport == request.body.id.idiag_dport) {
        if (found->idiag_inode != 0) uid = found->idiag_uid;  // 0: closed by its owner
        break;
      }
    }
  }
  ::close(fd);
  return uid;
#else
  (void)own;
  (void)other;
  problem = "no sock_diag on this system";
  return std::nullopt;
#endif
}

HttpResponse error_response(int status) {
  HttpResponse r;
  r.status = status;
  r.body = std::to_string(status) + " " + reason_phrase(status) + "\n";
  return r;
}

}  // namespace

HttpRequest parse_http_request(std::string_view head) {
  HttpRequest out;
  const size_t end = head.find("\r\n");
  const std::string_view line = head.substr(0, end);
  const size_t first = line.find(' ');
  const size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (end == std::string_view::npos || first == std::string_view::npos || first == 0 ||
      second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos) {
    out.status = 400;
    return out;
  }
  const std::string_view method = line.substr(0, first);
  const std::string_view target = line.substr(first + 1, second - first - 1);
  const std::string_view version = line.substr(second + 1);
  for (char c : method) {
    if (!is_token_char(c)) {
      out.status = 400;
      return out;
    }
  }
  if ((version != "HTTP/1.1" && version != "HTTP/1.0") || target.empty() || target[0] != '/') {
    out.status = 400;
    return out;
  }
  for (char c : target) {
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      out.status = 400;
      return out;
    }
  }
  out.method = std::string(method);
  out.path = std::string(target.substr(0, target.find_first_of("?#")));
  // The header fields, up to the blank line: each "name: value" with a token for its name (no
  // blank before the colon, no folded line: RFC 9112 §5.1, §5.2), and one Host at most (RFC 9112
  // §3.2: two are a 400 — which would the DNS-rebinding check believe?). Names are
  // case-insensitive; optional blanks around the value.
  size_t hosts = 0;
  for (size_t at = end + 2; at < head.size();) {
    const size_t line_end = head.find("\r\n", at);
    const std::string_view field = head.substr(
        at, line_end == std::string_view::npos ? std::string_view::npos : line_end - at);
    if (field.empty()) break;  // the blank line that ends the head
    const size_t colon = field.find(':');
    bool token = colon != std::string_view::npos && colon != 0;
    for (size_t i = 0; token && i < colon; ++i) token = is_token_char(field[i]);
    if (!token) {
      out.status = 400;
      return out;
    }
    std::string name(field.substr(0, colon));
    for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (name == "host") {
      if (++hosts > 1) {
        out.status = 400;
        return out;
      }
      std::string_view value = field.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
        value.remove_prefix(1);
      }
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
        value.remove_suffix(1);
      }
      out.host = std::string(value);
    }
    if (line_end == std::string_view::npos) break;
    at = line_end + 2;
  }
  if (out.method != "GET" && out.method != "HEAD") out.status = 405;
  return out;
}

std::string format_http_response(const HttpResponse& r, bool head_only) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason_phrase(r.status) +
                    "\r\nContent-Type: " + r.content_type +
                    "\r\nContent-Length: " + std::to_string(r.body.size()) +
                    "\r\nConnection: close\r\nCache-Control: no-store"
                    "\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY"
                    "\r\nReferrer-Policy: no-referrer"
                    "\r\nContent-Security-Policy: default-src 'none'; style-src 'unsafe-inline'";
  if (r.status == 405) out += "\r\nAllow: GET, HEAD";
  out += "\r\n\r\n";
  if (!head_only) out += r.body;
  return out;
}

// The default PeerOf: the local user at the other end (see HttpPeer).
HttpPeer local_peer(const asio::ip::tcp::socket& socket) {
  asio::error_code local_error, remote_error;
  const asio::ip::tcp::endpoint local = socket.local_endpoint(local_error);
  const asio::ip::tcp::endpoint remote = socket.remote_endpoint(remote_error);
  if (local_error || remote_error) return HttpPeer{};
  std::string problem;
  const std::optional<uint32_t> uid = socket_owner(remote, local, problem);  // the peer's socket
  if (!uid) return HttpPeer{};
  const bool operator_user = *uid == 0 || *uid == static_cast<uint32_t>(geteuid());
  return HttpPeer{operator_user ? HttpPeer::Kind::kOperator : HttpPeer::Kind::kOther,
                  "uid " + std::to_string(*uid)};
}

std::optional<std::string> peer_lookup_problem() {
  try {
    asio::io_context io;
    asio::ip::tcp::acceptor listener(io, {asio::ip::make_address("127.0.0.1"), 0});
    asio::ip::tcp::socket client(io);
    client.connect(listener.local_endpoint());  // the kernel completes it from the backlog
    std::string problem;
    const std::optional<uint32_t> uid =
        socket_owner(client.local_endpoint(), client.remote_endpoint(), problem);
    if (!uid) return problem;
    if (*uid != static_cast<uint32_t>(geteuid())) {
      return "the kernel named uid " + std::to_string(*uid) + " for this process's own socket";
    }
    return std::nullopt;
  } catch (const std::exception& e) {
    return std::string("a loopback connection to look up could not be made: ") + e.what();
  }
}

struct StatusHttpServer::Session {
  explicit Session(asio::ip::tcp::socket s) : socket(std::move(s)), timer(socket.get_executor()) {}
  HttpPeer peer;  // what it counts against (StatusHttpServer::PeerOf)
  asio::ip::tcp::socket socket;
  asio::steady_timer timer;
  std::array<char, 2048> chunk{};
  std::string head;
  std::string response;
  bool done = false;
};

StatusHttpServer::StatusHttpServer(asio::io_context& io, std::string address, uint16_t port,
                                   Route route, HttpLimits limits)
    : address_(std::move(address)),
      requested_port_(port),
      route_(std::move(route)),
      limits_(limits),
      peer_of_(local_peer),
      acceptor_(io),
      accept_retry_(io) {}

StatusHttpServer::~StatusHttpServer() {
  asio::error_code ignored;
  acceptor_.close(ignored);
}

void StatusHttpServer::start() {
  const std::string host = address_ == "localhost" ? "127.0.0.1" : address_;
  const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(host), requested_port_);
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen();
  port_ = acceptor_.local_endpoint().port();
  accept();
}

void StatusHttpServer::stop() {
  stopped_ = true;
  asio::error_code ignored;
  acceptor_.close(ignored);
  accept_retry_.cancel();
  for (const auto& session : sessions_) {
    session->done = true;
    session->timer.cancel();
    session->socket.close(ignored);
  }
  sessions_.clear();
  per_peer_.clear();
  others_ = 0;
}

void StatusHttpServer::accept() {
  acceptor_.async_accept([this](const asio::error_code& error, asio::ip::tcp::socket socket) {
    if (stopped_ || error == asio::error::operation_aborted) return;
    if (!error) {
      bool room = sessions_.size() < limits_.max_connections;
      const HttpPeer peer = room ? peer_of_(socket) : HttpPeer{};
      if (room && peer.kind != HttpPeer::Kind::kUnknown && limits_.max_connections_per_peer != 0) {
        const auto held = per_peer_.find(peer.name);
        room = held == per_peer_.end() || held->second < limits_.max_connections_per_peer;
      }
      if (room && peer.kind == HttpPeer::Kind::kOther) {
        const size_t reserved = std::min(limits_.operator_slots, limits_.max_connections);
        room = others_ < limits_.max_connections - reserved;
      }
      if (!room) {
        ++refused_;
        asio::error_code ignored;
        socket.close(ignored);
      } else {
        auto session = std::make_shared<Session>(std::move(socket));
        session->peer = peer;
        if (peer.kind != HttpPeer::Kind::kUnknown) ++per_peer_[peer.name];
        if (peer.kind == HttpPeer::Kind::kOther) ++others_;
        sessions_.insert(session);
        session->timer.expires_after(std::chrono::milliseconds(limits_.timeout_ms));
        session->timer.async_wait([this, session](const asio::error_code& e) {
          if (!e) finish(session);  // too slow: closed without an answer
        });
        read(session);
      }
    }
    if (!error || error == asio::error::connection_aborted) {
      accept();
      return;
    }
    // Out of descriptors or memory: the connection waits in the backlog; try again later.
    accept_retry_.expires_after(std::chrono::milliseconds(kAcceptRetryMs));
    accept_retry_.async_wait([this](const asio::error_code& waited) {
      if (!waited && !stopped_) accept();
    });
  });
}

bool StatusHttpServer::is_own_host(const std::string& host) const {
  const std::string port = ":" + std::to_string(port_);
  const bool ipv6 = address_.find(':') != std::string::npos;
  const std::string configured = ipv6 ? "[" + address_ + "]" + port : address_ + port;
  return host == configured || host == "127.0.0.1" + port || host == "localhost" + port ||
         host == "[::1]" + port;
}

void StatusHttpServer::read(const std::shared_ptr<Session>& session) {
  session->socket.async_read_some(
      asio::buffer(session->chunk), [this, session](const asio::error_code& error, size_t bytes) {
        if (session->done) return;
        if (error) {
          finish(session);
          return;
        }
        // Only the head is kept; a byte past the limit without its end is one too many.
        const size_t scan_from = session->head.size() < 3 ? 0 : session->head.size() - 3;
        session->head.append(session->chunk.data(), bytes);
        const size_t end = session->head.find("\r\n\r\n", scan_from);
        if (end == std::string::npos) {
          if (session->head.size() > limits_.max_request_bytes) {
            respond(session, error_response(431), false);
          } else {
            read(session);
          }
          return;
        }
        if (end + 4 > limits_.max_request_bytes) {
          respond(session, error_response(431), false);
          return;
        }
        const HttpRequest request =
            parse_http_request(std::string_view(session->head).substr(0, end + 4));
        if (request.status != 0) {
          respond(session, error_response(request.status), false);
          return;
        }
        if (!is_own_host(request.host)) {  // DNS rebinding, or no Host at all
          respond(session, error_response(421), false);
          return;
        }
        std::optional<HttpResponse> response;
        try {
          response = route_(request.path);
        } catch (const std::exception&) {
          HttpResponse failed;
          failed.status = 500;
          failed.body = "500 the status could not be read\n";
          response = failed;
        }
        respond(session, response ? *response : error_response(404), request.method == "HEAD");
      });
}

void StatusHttpServer::respond(const std::shared_ptr<Session>& session,
                               const HttpResponse& response, bool head_only) {
  session->response = format_http_response(response, head_only);
  asio::async_write(session->socket, asio::buffer(session->response),
                    [this, session](const asio::error_code&, size_t) {
                      if (session->done) return;
                      asio::error_code ignored;
                      session->socket.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
                      finish(session);
                    });
}

void StatusHttpServer::finish(const std::shared_ptr<Session>& session) {
  if (session->done) return;
  session->done = true;
  asio::error_code ignored;
  session->timer.cancel();
  session->socket.close(ignored);
  if (session->peer.kind != HttpPeer::Kind::kUnknown) {
    const auto held = per_peer_.find(session->peer.name);
    if (held != per_peer_.end() && --held->second == 0) per_peer_.erase(held);
  }
  if (session->peer.kind == HttpPeer::Kind::kOther) --others_;
  sessions_.erase(session);
}

}  // namespace host
}  // namespace fedstat
