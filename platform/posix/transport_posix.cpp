// Transport on POSIX: blocking TCP sockets with poll(2) timeouts.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "platform/platform.h"

namespace fedstat {
namespace platform {
namespace {

constexpr size_t kMaxHostLength = 255;

// Splits "host:port" or "[v6]:port" into host and port strings.
Status split_endpoint(const char* endpoint, char (&host)[kMaxHostLength + 1], char (&port)[8]) {
  if (endpoint == nullptr) return invalid_argument("transport endpoint is null");
  const char* colon = strrchr(endpoint, ':');
  if (colon == nullptr || colon == endpoint || colon[1] == '\0') {
    return invalid_argument("transport endpoint must be \"host:port\" (IPv6: \"[addr]:port\")");
  }
  const char* host_begin = endpoint;
  const char* host_end = colon;
  if (*host_begin == '[') {
    if (host_end[-1] != ']') return invalid_argument("IPv6 endpoint must be \"[addr]:port\"");
    ++host_begin;
    --host_end;
  }
  const size_t host_length = static_cast<size_t>(host_end - host_begin);
  const size_t port_length = strlen(colon + 1);
  if (host_length == 0 || host_length > kMaxHostLength) {
    return invalid_argument("transport endpoint host is empty or longer than 255 characters");
  }
  if (port_length > 5) return invalid_argument("transport endpoint port is not a number 1-65535");
  for (const char* c = colon + 1; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') {
      return invalid_argument("transport endpoint port is not a number 1-65535");
    }
  }
  memcpy(host, host_begin, host_length);
  host[host_length] = '\0';
  memcpy(port, colon + 1, port_length + 1);
  return Status();
}

// Waits until `fd` is ready for `events`; kDeadlineExceeded on timeout.
Status wait_for(int fd, short events, uint32_t timeout_ms) {
  struct pollfd p = {fd, events, 0};
  for (;;) {
    const int rc = poll(&p, 1, timeout_ms > 0x7FFFFFFFu ? -1 : static_cast<int>(timeout_ms));
    if (rc > 0) return Status();
    if (rc == 0) return deadline_exceeded("transport: timed out waiting for the peer");
    if (errno != EINTR) return unavailable("transport: poll(2) failed");
  }
}

// A numeric IPv4 or IPv6 address (or "localhost") and a port as a socket address. Names are not
// resolved here: getaddrinfo allocates inside libc, and the SDK does not allocate.
Status numeric_address(const char* host, const char* port, struct sockaddr_storage& address,
                       socklen_t& length) {
  const unsigned long port_number = strtoul(port, nullptr, 10);
  if (port_number == 0 || port_number > 65535) {
    return invalid_argument("transport endpoint port is not a number 1-65535");
  }
  memset(&address, 0, sizeof(address));
  const char* literal = strcmp(host, "localhost") == 0 ? "127.0.0.1" : host;
  auto* v4 = reinterpret_cast<struct sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<struct sockaddr_in6*>(&address);
  if (inet_pton(AF_INET, literal, &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port_number));
    length = sizeof(*v4);
  } else if (inet_pton(AF_INET6, literal, &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port_number));
    length = sizeof(*v6);
  } else {
    return invalid_argument(
        "transport endpoint host must be a numeric IPv4/IPv6 address or "
        "localhost: resolve names in the application and pass the address");
  }
  return Status();
}

Result<int> connect_one(const struct sockaddr_storage& address, socklen_t length,
                        uint32_t timeout_ms) {
  const int fd = socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return unavailable("transport: socket(2) failed");
  const int flags = fcntl(fd, F_GETFL, 0);
  (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  Status status;
  if (connect(fd, reinterpret_cast<const struct sockaddr*>(&address), length) != 0) {
    if (errno != EINPROGRESS) {
      status = unavailable("transport: connection refused or unreachable");
    } else {
      status = wait_for(fd, POLLOUT, timeout_ms);
      int error = 0;
      socklen_t error_length = sizeof(error);
      if (status.ok() &&
          (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &error_length) != 0 || error != 0)) {
        status = unavailable("transport: connection refused or unreachable");
      }
    }
  }
  if (!status.ok()) {
    close(fd);
    return status;
  }
  (void)fcntl(fd, F_SETFL, flags);
  const int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

}  // namespace

Result<Connection> transport_connect(const char* endpoint, uint32_t timeout_ms) {
  char host[kMaxHostLength + 1];
  char port[8];
  FEDSTAT_RETURN_IF_ERROR(split_endpoint(endpoint, host, port));
  struct sockaddr_storage address;
  socklen_t length = 0;
  FEDSTAT_RETURN_IF_ERROR(numeric_address(host, port, address, length));
  const Result<int> fd = connect_one(address, length, timeout_ms);
  if (!fd.ok()) return fd.status();
  Connection connection;
  connection.handle = fd.value();
  return connection;
}

Status transport_send(Connection connection, ByteSpan bytes) {
  if (connection.handle < 0) return failed_precondition("transport: send on a closed connection");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        send(connection.handle, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return unavailable("transport: send failed: the peer closed the connection or it broke");
    }
    done += static_cast<size_t>(n);
  }
  return Status();
}

Result<size_t> transport_receive(Connection connection, MutableByteSpan out, uint32_t timeout_ms) {
  if (connection.handle < 0) {
    return failed_precondition("transport: receive on a closed connection");
  }
  if (out.empty()) return invalid_argument("transport: receive into an empty buffer");
  FEDSTAT_RETURN_IF_ERROR(wait_for(connection.handle, POLLIN, timeout_ms));
  for (;;) {
    const ssize_t n = recv(connection.handle, out.data(), out.size(), 0);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return unavailable("transport: the peer closed the connection");
    if (errno != EINTR) return unavailable("transport: receive failed: the connection broke");
  }
}

void transport_close(Connection connection) {
  if (connection.handle >= 0) close(connection.handle);
}

}  // namespace platform
}  // namespace fedstat
