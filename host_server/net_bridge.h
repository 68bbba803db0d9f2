// NetBridge: a serving mode's glue between the TLS listener (net/tls_server.h) and what answers
// its frames — the device rounds (rounds/coordinator.h) or the TAgg's intake
// (tagg/tagg_intake.h). The listener's callbacks go to the handler; the handler's answers
// (rounds/outbox.h) go back to the listener. Refusals before a peer is known (a failed or
// timed-out handshake: an unknown identity or a wrong key fails there too) are logged as
// "refused" when a log is given; the handler logs the peers it knows. Threads: the io thread
// only. Memory: three pointers. Paper: none.
#ifndef FEDSTAT_HOST_NET_BRIDGE_H_
#define FEDSTAT_HOST_NET_BRIDGE_H_

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <string>

#include "host_server/net/tls_server.h"
#include "host_server/rounds/outbox.h"
#include "host_server/server_app.h"

namespace fedstat {
namespace host {

// Handler: on_open(id, identity), on_frame(id, envelope), on_close(id, reason).
template <typename Handler>
class NetBridge final : public net::FrameHandler, public Outbox {
 public:
  // `log` may be null (nothing logged).
  void attach(net::TlsServer* server, Handler* handler, std::ostream* log) {
    server_ = server;
    handler_ = handler;
    log_ = log;
  }
  void on_open(net::ConnectionId id, const std::string& identity) override {
    handler_->on_open(id, identity);
  }
  void on_frame(net::ConnectionId id, const wire::Envelope& message) override {
    handler_->on_frame(id, message);
  }
  void on_close(net::ConnectionId id, const std::string& reason) override {
    handler_->on_close(id, reason);
    if (log_ != nullptr && reason.rfind("TLS handshake", 0) == 0) {
      log_line(*log_, {{"event", "refused"}, {"connection", id}, {"reason", reason}});
    }
  }
  void send(ConnectionId id, const fedstat_v1_Envelope& message) override {
    server_->send(id, message);
  }
  void close(ConnectionId id) override { server_->close(id); }
  void keep_open(ConnectionId id, uint32_t seconds) override {
    server_->keep_open(id,
                       static_cast<uint32_t>(std::min<uint64_t>(UINT32_MAX, 1000ull * seconds)));
  }

 private:
  net::TlsServer* server_ = nullptr;
  Handler* handler_ = nullptr;
  std::ostream* log_ = nullptr;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_NET_BRIDGE_H_
