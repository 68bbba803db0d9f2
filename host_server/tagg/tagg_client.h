// The collector's side of one exchange with the TAgg: connect over TLS-PSK (the SDK's channel,
// sdk/tls/tls_channel.h, with the collector's own identity and key), send the aggregate's chunks,
// wait for one answer, close. Blocking: run it off the io thread (tagg_forwarder.h).
//
// The answer is kReleased (a TaggResult for this task whose text is a JSON object), kRefused
// (the TAgg said no — a ServerError — or refused our identity or key at the handshake, or
// answered something else: retrying the same bytes cannot change that) or kUnreachable (no
// connection, a time-out, a lost connection: worth retrying). `detail` says which and why.
// Memory: one TlsPskChannel (~3 KiB plus mbedTLS's record buffers while connected). Paper: none.
#ifndef FEDSTAT_HOST_TAGG_TAGG_CLIENT_H_
#define FEDSTAT_HOST_TAGG_TAGG_CLIENT_H_

#include <string>

#include "host_server/server_config.h"
#include "host_server/tagg/tagg_wire.h"

namespace fedstat {
namespace host {

struct TaggAnswer {
  enum class Kind { kReleased, kRefused, kUnreachable };
  Kind kind = Kind::kUnreachable;
  std::string result_json;  // kReleased
  std::string detail;       // otherwise
};

TaggAnswer exchange_with_tagg(const TaggEndpoint& endpoint, const ExactAggregate& aggregate);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_TAGG_TAGG_CLIENT_H_
