// The status page's HTTP/1.1 server (http_server.h).
#include "host_server/status/http_server.h"

#include <array>
#include <utility>

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

bool is_token_char(char c) {  // RFC 9110 tchar, as far as a method goes
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_' || c == '.' || c == '!' || c == '~' || c == '*' || c == '+' || c == '\'' ||
         c == '#' || c == '$' || c == '%' || c == '&' || c == '^' || c == '`' || c == '|';
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
  // The Host header (field names are case-insensitive; optional blanks around the value).
  size_t at = end + 2;
  while (at < head.size()) {
    const size_t line_end = head.find("\r\n", at);
    const std::string_view field = head.substr(
        at, line_end == std::string_view::npos ? std::string_view::npos : line_end - at);
    const size_t colon = field.find(':');
    if (colon == 4) {
      std::string name(field.substr(0, 4));
      for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      if (name == "host") {
        std::string_view value = field.substr(5);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
          value.remove_prefix(1);
        }
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
          value.remove_suffix(1);
        }
        out.host = std::string(value);
      }
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

struct StatusHttpServer::Session {
  explicit Session(asio::ip::tcp::socket s) : socket(std::move(s)), timer(socket.get_executor()) {}
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
}

void StatusHttpServer::accept() {
  acceptor_.async_accept([this](const asio::error_code& error, asio::ip::tcp::socket socket) {
    if (stopped_ || error == asio::error::operation_aborted) return;
    if (!error) {
      if (sessions_.size() >= limits_.max_connections) {
        asio::error_code ignored;
        socket.close(ignored);
      } else {
        auto session = std::make_shared<Session>(std::move(socket));
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
  sessions_.erase(session);
}

}  // namespace host
}  // namespace fedstat
