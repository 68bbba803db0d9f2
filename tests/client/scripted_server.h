// A scripted one-connection server for Client tests: Hello → Task + TaskData → TaskReply →
// Reports/Acks → RoundOutcome, recording what the device sent (run() drives one session).
#ifndef FEDSTAT_TESTS_CLIENT_SCRIPTED_SERVER_H_
#define FEDSTAT_TESTS_CLIENT_SCRIPTED_SERVER_H_

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "tests/client/client_test_support.h"
#include "tests/client/in_memory_channel.h"

namespace fedstat {
namespace client_test {

// kAckAfterAll: the server reads every Report chunk before it sends the first Ack (a device that
// waits for each Ack before the next chunk never finishes).
// kTwoHeldOneAck: the server holds the first two chunks, acknowledges only the first and the
// connection is lost (the second Ack never reaches the device).
enum class Mode {
  kNormal,
  kWrongAckOffset,
  kCloseAfterReply,
  kCloseAfterFirstAck,
  kAckAfterAll,
  kTwoHeldOneAck
};

// What the scripted server saw.
struct Seen {
  fedstat_v1_ClientHello hello = fedstat_v1_ClientHello_init_zero;
  bool replied = false;
  fedstat_v1_TaskReply reply = fedstat_v1_TaskReply_init_zero;
  std::vector<uint64_t> report;
  size_t extra_messages = 0;  // anything the device sent after the script's last expected one
};

// Hello → Task + TaskData → TaskReply → Reports/Acks → RoundOutcome, then counts what else the
// device sends before it closes.
inline Seen serve(InMemoryChannel& server, const fedstat_v1_Task& task,
                  const std::vector<uint64_t>& data, Mode mode = Mode::kNormal) {
  Seen seen;
  wire::Envelope in;
  if (!server.receive(in, 20000).ok()) return seen;
  seen.hello = in.body.client_hello;
  send_task(server, task, data);
  if (!server.receive(in, 20000).ok() || in.which_body != fedstat_v1_Envelope_task_reply_tag) {
    return seen;
  }
  seen.replied = true;
  seen.reply = in.body.task_reply;
  if (mode == Mode::kCloseAfterReply) {
    server.close();
    return seen;
  }
  if (seen.reply.accept && mode == Mode::kAckAfterAll) {
    std::vector<uint32_t> ends;  // each chunk's end: its Ack's offset
    while (seen.report.size() < task.vector_length) {
      if (!server.receive(in, 20000).ok() || in.which_body != fedstat_v1_Envelope_report_tag) break;
      EXPECT_EQ(in.body.report.offset, seen.report.size());
      seen.report.insert(seen.report.end(), in.body.report.words,
                         in.body.report.words + in.body.report.words_count);
      ends.push_back(static_cast<uint32_t>(seen.report.size()));
    }
    for (uint32_t end : ends) {
      wire::Envelope ack = envelope_of(fedstat_v1_Envelope_ack_tag);
      ack.body.ack.task_id = task.task_id;
      ack.body.ack.offset = end;
      server.send(ack).ignore();
    }
    wire::Envelope outcome = envelope_of(fedstat_v1_Envelope_round_outcome_tag);
    outcome.body.round_outcome.task_id = task.task_id;
    outcome.body.round_outcome.completed = true;
    server.send(outcome).ignore();
  } else if (seen.reply.accept) {
    while (seen.report.size() < task.vector_length) {
      if (!server.receive(in, 20000).ok() || in.which_body != fedstat_v1_Envelope_report_tag) break;
      EXPECT_EQ(in.body.report.offset, seen.report.size());
      seen.report.insert(seen.report.end(), in.body.report.words,
                         in.body.report.words + in.body.report.words_count);
      wire::Envelope ack = envelope_of(fedstat_v1_Envelope_ack_tag);
      ack.body.ack.task_id = task.task_id;
      ack.body.ack.offset = static_cast<uint32_t>(seen.report.size());
      if (mode == Mode::kWrongAckOffset) ack.body.ack.offset += 1;
      server.send(ack).ignore();
      if (mode == Mode::kWrongAckOffset) break;
      if (mode == Mode::kTwoHeldOneAck) {
        if (!server.receive(in, 20000).ok() || in.which_body != fedstat_v1_Envelope_report_tag) {
          break;
        }
        seen.report.insert(seen.report.end(), in.body.report.words,
                           in.body.report.words + in.body.report.words_count);
        server.close();
        return seen;
      }
      if (mode == Mode::kCloseAfterFirstAck) {
        server.close();  // the connection is lost with the rest of the report unsent
        return seen;
      }
    }
    if (mode == Mode::kNormal) {
      wire::Envelope outcome = envelope_of(fedstat_v1_Envelope_round_outcome_tag);
      outcome.body.round_outcome.task_id = task.task_id;
      outcome.body.round_outcome.completed = true;
      server.send(outcome).ignore();  // the device may have stopped already
    }
  }
  while (server.receive(in, 20000).ok()) ++seen.extra_messages;
  return seen;
}

struct Session {
  Result<client::SessionOutcome> outcome = failed_precondition("not run");
  Seen seen;
};

inline Session run(Device& device, const fedstat_v1_Task& task, const std::vector<uint64_t>& data,
                   Mode mode = Mode::kNormal) {
  auto ends = make_channel_pair();
  Session s;
  std::thread server([&] { s.seen = serve(*ends.second, task, data, mode); });
  s.outcome = device.client.run_session(*ends.first);
  server.join();
  return s;
}

}  // namespace client_test
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_CLIENT_SCRIPTED_SERVER_H_
