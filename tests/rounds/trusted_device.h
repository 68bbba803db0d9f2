// A device of the clear (TRUSTED / TAGG / NONE) path for the rounds' tests: checks in, accepts,
// sends its Report in chunks of up to 64 words and checks each Ack. Paper: none.
#ifndef FEDSTAT_TESTS_ROUNDS_TRUSTED_DEVICE_H_
#define FEDSTAT_TESTS_ROUNDS_TRUSTED_DEVICE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/round_messages.h"

namespace fedstat {
namespace host {
namespace testing {

struct TrustedDevice {
  uint64_t id = 0;
  ConnectionId conn = 0;
  std::vector<uint64_t> words;
  uint32_t sent = 0;  // words the server acknowledged
};

// Opens a connection and says hello; expects Task and its TaskData. Returns the Task's id.
inline uint32_t check_in(Coordinator& c, FakeOutbox& out, TrustedDevice& d, ConnectionId conn,
                         uint32_t resume = 0) {
  d.conn = conn;
  c.on_open(conn, std::to_string(d.id));
  c.on_frame(conn, hello(d.id, resume));
  if (out.empty(conn)) {
    ADD_FAILURE() << "no answer to hello";
    return 0;
  }
  fedstat_v1_Envelope task = out.pop(conn);
  EXPECT_EQ(task.which_body, fedstat_v1_Envelope_task_tag);
  uint32_t words = 0;
  while (!out.empty(conn) && words < task.body.task.data_words) {
    fedstat_v1_Envelope data = out.pop(conn);
    EXPECT_EQ(data.which_body, fedstat_v1_Envelope_task_data_tag);
    EXPECT_EQ(data.body.task_data.offset, words);
    words += data.body.task_data.words_count;
  }
  EXPECT_EQ(words, task.body.task.data_words);
  return task.body.task.task_id;
}

inline void accept(Coordinator& c, FakeOutbox& out, TrustedDevice& d, uint32_t task) {
  c.on_frame(d.conn, reply(task, true));
  (void)out;
}

// Sends chunks until `upto` words are acknowledged, checking each Ack's offset.
inline void send_reports(Coordinator& c, FakeOutbox& out, TrustedDevice& d, uint32_t task,
                         uint32_t upto) {
  while (d.sent < upto) {
    const uint32_t n = std::min<uint32_t>(64, upto - d.sent);
    c.on_frame(d.conn, report(task, d.words, d.sent, n));
    ASSERT_FALSE(out.empty(d.conn));
    fedstat_v1_Envelope a = out.pop(d.conn);
    ASSERT_EQ(a.which_body, fedstat_v1_Envelope_ack_tag);
    ASSERT_EQ(a.body.ack.offset, d.sent + n);
    d.sent += n;
  }
}

// Each device's next message is the RoundOutcome, with `completed` as given.
inline void expect_outcomes(FakeOutbox& out, const std::vector<TrustedDevice>& devices,
                            bool completed) {
  for (const TrustedDevice& d : devices) {
    ASSERT_FALSE(out.empty(d.conn)) << "device " << d.id << ": no outcome";
    const fedstat_v1_Envelope o = out.pop(d.conn);
    ASSERT_EQ(o.which_body, fedstat_v1_Envelope_round_outcome_tag) << "device " << d.id;
    EXPECT_EQ(o.body.round_outcome.completed, completed) << "device " << d.id;
  }
}

// Checks every Ack `out` sent against `store`: the event storing the Report chunk it
// acknowledges (from `client_of(its connection)`, ending at its offset) was there when it was
// sent. Returns how many Acks there were.
inline size_t check_acks_follow_stored_reports(
    const FakeOutbox& out, const FakeStore& store,
    const std::function<uint64_t(ConnectionId)>& client_of) {
  size_t acks = 0;
  for (const Sent& s : out.log()) {
    if (s.envelope.which_body != fedstat_v1_Envelope_ack_tag) continue;
    ++acks;
    size_t stored_at = 0;  // 1 + the index of the event storing the acknowledged chunk
    for (size_t i = 0; i < store.all_events().size(); ++i) {
      const StoredEvent& ev = store.all_events()[i];
      if (ev.kind != EventKind::kDeviceMessage || ev.client_id != client_of(s.connection)) {
        continue;
      }
      fedstat_v1_Envelope e = fedstat_v1_Envelope_init_zero;
      if (!wire::decode_envelope(ByteSpan(ev.payload.data(), ev.payload.size()), e).ok()) {
        ADD_FAILURE() << "a stored device message does not decode";
        continue;
      }
      if (e.which_body == fedstat_v1_Envelope_report_tag &&
          e.body.report.offset + e.body.report.words_count == s.envelope.body.ack.offset) {
        stored_at = i + 1;
      }
    }
    EXPECT_GT(stored_at, 0u) << "an Ack with no stored Report";
    EXPECT_LE(stored_at, s.events_stored) << "Ack sent before its Report was stored";
  }
  return acks;
}

// Deterministic device vectors below 2^bits.
inline std::vector<uint64_t> device_words(uint64_t id, uint32_t length, uint32_t bits) {
  std::vector<uint64_t> w(length);
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint64_t x = 0x9E3779B97F4A7C15ULL * (id + 1);
  for (auto& v : w) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v = x & mask;
  }
  return w;
}

// `count` devices with ids first_id + i and their own words (device_words), each checked in on
// connection first_conn + i — offered `task` — and accepting it.
inline std::vector<TrustedDevice> admit_devices(Coordinator& c, FakeOutbox& out, size_t count,
                                                uint64_t first_id, ConnectionId first_conn,
                                                uint32_t length, uint32_t bits, uint32_t task = 1) {
  std::vector<TrustedDevice> devices(count);
  for (size_t i = 0; i < count; ++i) {
    devices[i].id = first_id + i;
    devices[i].words = device_words(devices[i].id, length, bits);
    EXPECT_EQ(check_in(c, out, devices[i], first_conn + i), task) << "device " << devices[i].id;
    accept(c, out, devices[i], task);
  }
  return devices;
}

inline std::vector<uint64_t> sum_of(const std::vector<std::vector<uint64_t>>& vs, uint32_t bits) {
  const uint64_t mask = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  std::vector<uint64_t> s(vs.at(0).size(), 0);
  for (const auto& v : vs) {
    for (size_t i = 0; i < s.size(); ++i) s[i] = (s[i] + v[i]) & mask;
  }
  return s;
}

}  // namespace testing
}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_ROUNDS_TRUSTED_DEVICE_H_
