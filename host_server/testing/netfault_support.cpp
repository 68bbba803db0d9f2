// fedstat-netfault's shared pieces (netfault_support.h).
#include "host_server/testing/netfault_support.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "mbedtls/error.h"

namespace fedstat {
namespace netfault {

double ms_since(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

json spread(std::vector<double> values) {
  if (values.empty()) return json{{"min", nullptr}, {"median", nullptr}, {"max", nullptr}};
  std::sort(values.begin(), values.end());
  return json{
      {"min", values.front()}, {"median", values[values.size() / 2]}, {"max", values.back()}};
}

Endpoint split_endpoint(const std::string& server) {
  const size_t colon = server.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == server.size()) {
    throw std::invalid_argument("--server must be HOST:PORT, not '" + server + "'");
  }
  return {server.substr(0, colon), server.substr(colon + 1)};
}

int tcp_connect(const Endpoint& endpoint, const std::string& source) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(endpoint.host.c_str(), endpoint.port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    bool bound = true;
    if (!source.empty()) {  // the local address, any port
      addrinfo local_hints{};
      local_hints.ai_family = a->ai_family;
      local_hints.ai_socktype = SOCK_STREAM;
      local_hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
      addrinfo* local = nullptr;
      bound = getaddrinfo(source.c_str(), "0", &local_hints, &local) == 0 &&
              bind(fd, local->ai_addr, local->ai_addrlen) == 0;
      if (local != nullptr) freeaddrinfo(local);
    }
    if (!bound || connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd >= 0) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

bool going_on(Clock::time_point start, double seconds, const std::string& stop_file) {
  const double elapsed = ms_since(start) / 1000;
  if (elapsed < seconds) return true;
  if (stop_file.empty() || elapsed >= kLongestRunSeconds) return false;
  return access(stop_file.c_str(), F_OK) != 0;
}

void write_ready(const std::string& path) {
  if (path.empty()) return;
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary);
    out << "ready\n";
  }
  std::rename(temporary.c_str(), path.c_str());
}

std::string mbedtls_text(int rc) {
  char text[160];
  mbedtls_strerror(rc, text, sizeof(text));
  return text;
}

std::vector<uint8_t> captured_client_hello(const PskClientConfig& config) {
  struct Capture {
    std::vector<uint8_t> bytes;
  } capture;
  mbedtls_ssl_context ssl;
  mbedtls_ssl_init(&ssl);
  int rc = mbedtls_ssl_setup(&ssl, config.get());
  if (rc == 0) {
    mbedtls_ssl_set_bio(
        &ssl, &capture,
        [](void* c, const unsigned char* bytes, size_t n) -> int {
          auto* out = static_cast<Capture*>(c);
          out->bytes.insert(out->bytes.end(), bytes, bytes + n);
          return static_cast<int>(n);
        },
        [](void*, unsigned char*, size_t) -> int { return MBEDTLS_ERR_SSL_WANT_READ; }, nullptr);
    rc = mbedtls_ssl_handshake(&ssl);  // writes the ClientHello, then wants the server's answer
  }
  mbedtls_ssl_free(&ssl);
  if (rc != MBEDTLS_ERR_SSL_WANT_READ || capture.bytes.empty()) {
    throw std::runtime_error("could not build a TLS ClientHello: " + mbedtls_text(rc));
  }
  return capture.bytes;
}

}  // namespace netfault
}  // namespace fedstat
