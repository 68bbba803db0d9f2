// The server's side of the envelope: builders for the messages the rounds send (ServerError, Ack,
// Task, TaskData chunks, RoundOutcome) and the Refusal a handler returns instead of changing
// anything. Errors: encode_bytes/decode_bytes throw std::runtime_error on a codec failure.
// Memory: one Envelope per message built. Paper: none.
#ifndef FEDSTAT_HOST_ROUNDS_MESSAGES_H_
#define FEDSTAT_HOST_ROUNDS_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/status.h"

namespace fedstat {
namespace host {

// Why a device message was not accepted: the ServerError it gets, and whether the connection
// is closed after it.
struct Refusal {
  StatusCode code = StatusCode::kInvalidArgument;
  fedstat_v1_ErrorAction action = fedstat_v1_ErrorAction_REFUSED;
  std::string detail;
  bool close = false;
};

Refusal refused(StatusCode code, const std::string& detail);
Refusal refused(const Status& status);  // REFUSED with the status's code and message
Refusal task_closed();                  // TASK_CLOSED, kFailedPrecondition: "the task is over"
Refusal retry_later(StatusCode code, const std::string& detail);  // RETRY_LATER, and close

fedstat_v1_Envelope server_error(const Refusal& refusal);
fedstat_v1_Envelope ack(uint32_t task_id, uint32_t offset);
fedstat_v1_Envelope secagg_resume(uint32_t task_id, uint32_t round, uint32_t held);
fedstat_v1_Envelope round_outcome(uint32_t task_id, bool completed, const std::string& detail);
// Task, then TaskData × ⌈data/64⌉ with ascending offsets.
std::vector<fedstat_v1_Envelope> task_offer(const fedstat_v1_Task& task,
                                            const std::vector<uint64_t>& data);

std::vector<uint8_t> encode_bytes(const fedstat_v1_Envelope& envelope);
fedstat_v1_Envelope decode_bytes(const std::vector<uint8_t>& bytes);

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ROUNDS_MESSAGES_H_
