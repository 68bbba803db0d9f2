// Outbox: where the rounds send what they answer — the net layer implements it (one TLS
// connection per ConnectionId); tests implement it with per-connection queues.
// Errors: none of its own (a send on a closed connection is the implementation's to drop).
// Memory: the implementation's. Paper: none.
#ifndef FEDSTAT_HOST_ROUNDS_OUTBOX_H_
#define FEDSTAT_HOST_ROUNDS_OUTBOX_H_

#include <cstdint>

#include "fedstat/v1/envelope.pb.h"

namespace fedstat {
namespace host {

using ConnectionId = uint64_t;

class Outbox {
 public:
  virtual ~Outbox() = default;
  virtual void send(ConnectionId connection, const fedstat_v1_Envelope& envelope) = 0;
  virtual void close(ConnectionId connection) = 0;
  // The device on `connection` is waiting on the server for up to `seconds` (the next phase, its
  // outcome): the net layer must not close it as idle before then.
  virtual void keep_open(ConnectionId connection, uint32_t seconds) = 0;
  // The device on `connection` checked in (its ClientHello was taken): until then the net layer
  // holds it to its handshake's deadline, whatever else it sends (net/tls_server.h,
  // await_check_in). Sends nothing; by default, nothing to do.
  virtual void checked_in(ConnectionId /*connection*/) {}
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ROUNDS_OUTBOX_H_
