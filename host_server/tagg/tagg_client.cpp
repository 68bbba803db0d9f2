// The collector's exchange with the TAgg (tagg_client.h).
#include "host_server/tagg/tagg_client.h"

#include "nlohmann/json.hpp"
#include "sdk/tls/tls_channel.h"

namespace fedstat {
namespace host {
namespace {

TaggAnswer answer(TaggAnswer::Kind kind, const std::string& detail) {
  TaggAnswer a;
  a.kind = kind;
  a.detail = detail;
  return a;
}

// A transport failure is worth retrying; a refused handshake is not.
TaggAnswer failed(const char* what, const Status& status) {
  const bool refused = status.code() == StatusCode::kPermissionDenied;
  return answer(
      refused ? TaggAnswer::Kind::kRefused : TaggAnswer::Kind::kUnreachable,
      std::string(what) + ": " + status_code_name(status.code()) + ": " + status.message());
}

}  // namespace

TaggAnswer exchange_with_tagg(const TaggEndpoint& endpoint, const ExactAggregate& aggregate) {
  tls::TlsPskChannel channel;
  const std::string& identity = endpoint.identity;
  Status s =
      channel.connect(endpoint.endpoint.c_str(),
                      ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
                      ByteSpan(endpoint.psk.data(), endpoint.psk.size()), endpoint.timeout_ms);
  if (!s.ok()) return failed("connect to the TAgg", s);
  for (const fedstat_v1_Envelope& chunk : aggregate_chunks(aggregate)) {
    s = channel.send(chunk);
    if (!s.ok()) {
      channel.close();
      return failed("send to the TAgg", s);
    }
  }
  fedstat_v1_Envelope reply = fedstat_v1_Envelope_init_zero;
  s = channel.receive(reply, endpoint.timeout_ms);
  channel.close();
  if (!s.ok()) return failed("the TAgg's answer", s);
  if (reply.which_body == fedstat_v1_Envelope_server_error_tag) {
    const fedstat_v1_ServerError& e = reply.body.server_error;
    return answer(TaggAnswer::Kind::kRefused,
                  std::string("the TAgg refused the aggregate: ") +
                      status_code_name(static_cast<StatusCode>(e.status_code)) + ": " + e.detail);
  }
  if (reply.which_body != fedstat_v1_Envelope_tagg_result_tag ||
      reply.body.tagg_result.task_id != aggregate.task_id) {
    return answer(TaggAnswer::Kind::kRefused, "the TAgg answered something else than its result");
  }
  const std::string text = reply.body.tagg_result.result_json;
  const nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    return answer(TaggAnswer::Kind::kRefused, "the TAgg's result is not a JSON object");
  }
  TaggAnswer released;
  released.kind = TaggAnswer::Kind::kReleased;
  released.result_json = text;
  return released;
}

}  // namespace host
}  // namespace fedstat
