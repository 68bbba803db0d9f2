// TaggIntake: the TAgg's connections — the TLS listener's frames (net/tls_server.h; only
// collectors' PSK identities pass its handshake) to TaggService, one aggregate per connection.
// A chunk for a task that is not the connection's collector's is refused first (TaskCollectors
// below). Each connection's TaggAggregate chunks are assembled (tagg_wire.h: the header is checked
// by TaggService::check_header at the first chunk: no more than one chunk is kept for a task it
// refuses); the last chunk is
// answered with a TaggResult or a ServerError. Anything else — another message kind, a
// malformed chunk, a refusal — gets a ServerError (REFUSED) at once; every frame after a
// connection's answer is ignored (the collector reads the answer after its last chunk and
// closes; the listener's idle time-out closes a connection left open). The log gets one line per
// answer: the collector, the task, and "released" or the refusal's detail (public: see
// tagg_service.h), never a word. Threads: the io thread only. Errors: Store exceptions propagate
// from TaggService. Memory: one assembling aggregate per open connection. Paper: none.
#ifndef FEDSTAT_HOST_TAGG_TAGG_INTAKE_H_
#define FEDSTAT_HOST_TAGG_TAGG_INTAKE_H_

#include <functional>
#include <map>
#include <string>

#include "host_server/rounds/outbox.h"
#include "host_server/tagg/tagg_service.h"
#include "host_server/tagg/tagg_wire.h"

namespace fedstat {
namespace host {

// Each TAGG task's one collector (its PSK identity): a chunk for a task from any other identity —
// or for a task with no entry — is refused (kPermissionDenied) before TaggService sees it, so
// another collector can neither test a guess against the stored aggregate (a resend of the same
// bytes gets the stored result: an equality oracle) nor claim the task first.
using TaskCollectors = std::map<uint32_t, std::string>;

class TaggIntake {
 public:
  TaggIntake(TaggService& service, Outbox& outbox, TaskCollectors owners,
             std::function<void(const std::string&)> log);

  void on_open(ConnectionId connection, const std::string& identity);
  void on_frame(ConnectionId connection, const fedstat_v1_Envelope& envelope);
  void on_close(ConnectionId connection, const std::string& reason);  // reason: unused

 private:
  struct Connection {
    std::string identity;
    AggregateAssembly assembly;
    bool answered = false;
  };
  void refuse(ConnectionId connection, Connection& c, const Refusal& refusal);

  TaggService& service_;
  Outbox& outbox_;
  TaskCollectors owners_;
  std::function<void(const std::string&)> log_;
  std::map<ConnectionId, Connection> connections_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TAGG_TAGG_INTAKE_H_
