// NetBridge: a serving mode's glue between the TLS listener (net/tls_server.h) and what answers
// its frames — the device rounds (rounds/coordinator.h) or the TAgg's intake
// (tagg/tagg_intake.h). The listener's callbacks go to the handler; the handler's answers
// (rounds/outbox.h) go back to the listener. Refusals before a peer is known (a failed or
// timed-out handshake: an unknown identity or a wrong key fails there too) are logged as
// "refused" when a log is given, at most kRefusedLinesPerMinute a minute: a peer needs no
// credential to fail handshakes as fast as the server runs them, and a line for each would grow
// the log without bound. Past that burst (then one a second) a "refused_not_logged" line says
// so, at most once a minute, the rest are counted — /metrics counts every one
// (fedstat_handshake_failures_total) — and the next "refused" line carries "not_logged_before": how
// many were left out. The handler logs the peers it knows. Threads: the io thread only. Memory:
// three pointers, a clock and one token bucket. Paper: none.
#ifndef FEDSTAT_HOST_NET_BRIDGE_H_
#define FEDSTAT_HOST_NET_BRIDGE_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>

#include "host_server/net/tls_server.h"
#include "host_server/rounds/check_in_limit.h"
#include "host_server/rounds/outbox.h"
#include "host_server/server_app.h"

namespace fedstat {
namespace host {

// Handler: on_open(id, identity), on_frame(id, envelope), on_close(id, reason).
// Refused-handshake lines logged a minute, at most (a burst of this many, then one a second).
inline constexpr uint32_t kRefusedLinesPerMinute = 60;

template <typename Handler, typename = void>
struct HasOnCertificate : std::false_type {};
template <typename Handler>
struct HasOnCertificate<Handler, std::void_t<decltype(std::declval<Handler&>().on_certificate(
                                     net::ConnectionId{}, std::array<uint8_t, 65>{}))>>
    : std::true_type {};

template <typename Handler>
class NetBridge final : public net::FrameHandler, public Outbox {
 public:
  // `log` may be null (nothing logged).
  void attach(net::TlsServer* server, Handler* handler, std::ostream* log) {
    server_ = server;
    handler_ = handler;
    log_ = log;
  }
  // A handler with on_certificate (the rounds) gets a certificate device's key.
  void on_authenticated(net::ConnectionId id, const net::PeerAuthentication& how) override {
    if constexpr (HasOnCertificate<Handler>::value) {
      if (how.certificate_key) handler_->on_certificate(id, *how.certificate_key);
    }
  }
  void on_open(net::ConnectionId id, const std::string& identity) override {
    handler_->on_open(id, identity);
  }
  void on_frame(net::ConnectionId id, const wire::Envelope& message) override {
    handler_->on_frame(id, message);
  }
  void on_close(net::ConnectionId id, const std::string& reason) override {
    handler_->on_close(id, reason);
    if (log_ == nullptr || reason.rfind("TLS handshake", 0) != 0) return;
    const uint64_t now = clock_();
    switch (refused_lines_.admit(0, now)) {
      case CheckInLimit::Verdict::kAdmitted: {
        nlohmann::json line{{"event", "refused"}, {"connection", id}, {"reason", reason}};
        if (not_logged_ > 0) line["not_logged_before"] = std::exchange(not_logged_, 0);
        log_line(*log_, std::move(line));
        break;
      }
      case CheckInLimit::Verdict::kFirstRefusal:
      case CheckInLimit::Verdict::kRefused: {
        ++not_logged_;
        if (noticed_ && now >= *noticed_ && now - *noticed_ < 60) break;  // once a minute
        noticed_ = now;
        log_line(*log_, {{"event", "refused_not_logged"},
                         {"reason", "more than " + std::to_string(kRefusedLinesPerMinute) +
                                        " refused handshakes a minute: the next are counted "
                                        "(fedstat_handshake_failures_total), not logged"}});
        break;
      }
    }
  }
  // The clock the log limit refills by (unix seconds; tests pass their own).
  void set_clock(std::function<uint64_t()> clock) { clock_ = std::move(clock); }
  void send(ConnectionId id, const fedstat_v1_Envelope& message) override {
    server_->send(id, message);
  }
  void close(ConnectionId id) override { server_->close(id); }
  void checked_in(ConnectionId id) override { server_->check_in(id); }
  void keep_open(ConnectionId id, uint32_t seconds) override {
    server_->keep_open(id,
                       static_cast<uint32_t>(std::min<uint64_t>(UINT32_MAX, 1000ull * seconds)));
  }

 private:
  net::TlsServer* server_ = nullptr;
  Handler* handler_ = nullptr;
  std::ostream* log_ = nullptr;
  // One token bucket (CheckInLimit's, under key 0): a burst of kRefusedLinesPerMinute lines,
  // then that many a minute.
  CheckInLimit refused_lines_{kRefusedLinesPerMinute};
  uint64_t not_logged_ = 0;          // refused handshakes not logged since the last "refused" line
  std::optional<uint64_t> noticed_;  // when the last "refused_not_logged" line was written
  std::function<uint64_t()> clock_ = unix_seconds;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_NET_BRIDGE_H_
