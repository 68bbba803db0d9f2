// A device of the C ABI for the Client tests (client_test.cpp, signed_round_test.cpp,
// tls_certificate_test.cpp), and their scripted one-session server (serve): its
// ledger, random source (the seeded stream of test_seed(99), stream = id: the stream the expected
// values use) and Client in vectors of u64 (8-byte aligned), and a C ABI sparse histogram with
// OwnedHistogram(salt)'s adds. Memory: host test code. Paper: none.
#ifndef FEDSTAT_TESTS_CABI_C_DEVICE_H_
#define FEDSTAT_TESTS_CABI_C_DEVICE_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fedstat/fedstat.h"
#include "sdk/client/frame_channel.h"
#include "tests/client/client_test_support.h"

namespace fedstat {
namespace client_test {

// A device of the C ABI: ledger, random source and Client in vectors of u64 (8-byte aligned).
struct CDevice {
  std::vector<uint64_t> ledger_memory, random_memory, client_memory;
  fedstat_ledger* ledger = nullptr;
  fedstat_random* random = nullptr;
  fedstat_client* client = nullptr;
  std::string ledger_name, round_name;

  // `kinds`/`kind_count`/`secagg`: fedstat_client_create_with_kinds (kinds null: every kind,
  // fedstat_client_create).
  CDevice(uint64_t id, size_t work_bytes, double budget = 10,
          const fedstat_task_kind* const* kinds = nullptr, size_t kind_count = 0,
          const fedstat_secure_aggregation* secagg = nullptr) {
    ledger_name = "cabi-ledger-" + std::to_string(id);
    round_name = "cabi-round-" + std::to_string(id);
    size_t bytes = 0;
    EXPECT_EQ(fedstat_ledger_size(16, &bytes), FEDSTAT_OK);
    ledger_memory.resize(bytes / 8 + 1);
    const fedstat_ledger_config lc = {budget, 1e-3, 30 * 24 * 3600, ledger_name.c_str()};
    EXPECT_EQ(fedstat_ledger_create(ledger_memory.data(), bytes, &lc, 16, &ledger), FEDSTAT_OK);
    EXPECT_EQ(fedstat_ledger_load(ledger), FEDSTAT_OK);
    EXPECT_EQ(fedstat_random_size(&bytes), FEDSTAT_OK);
    random_memory.resize(bytes / 8 + 1);
    const Seed256 seed = test_seed(99);  // the seed and stream the expected values use
    EXPECT_EQ(fedstat_random_create_seeded(random_memory.data(), bytes, seed.bytes, id, &random),
              FEDSTAT_OK);
    EXPECT_EQ(fedstat_client_size(work_bytes, &bytes), FEDSTAT_OK);
    client_memory.resize(bytes / 8 + 1);
    fedstat_client_config config = {};
    config.device_id = id;
    config.receive_timeout_ms = 20000;
    config.wall_clock_seconds = &fixed_clock;
    config.round_blob_name = round_name.c_str();
    create_status =
        kinds == nullptr
            ? fedstat_client_create(client_memory.data(), bytes, &config, ledger, random, &client)
            : fedstat_client_create_with_kinds(client_memory.data(), bytes, &config, kinds,
                                               kind_count, secagg, ledger, random, &client);
    if (kinds == nullptr) {
      EXPECT_EQ(create_status, FEDSTAT_OK);
    }
  }
  fedstat_status create_status = FEDSTAT_INTERNAL;

  double spent() {
    double epsilon = -1, delta = -1;
    EXPECT_EQ(fedstat_ledger_spent(ledger, kNow, &epsilon, &delta), FEDSTAT_OK);
    return epsilon;
  }
};

// A C ABI sparse histogram with OwnedHistogram(salt)'s adds, in the caller's vector.
struct CHistogram {
  std::vector<uint64_t> memory;
  fedstat_histogram* histogram = nullptr;
  explicit CHistogram(uint32_t salt, size_t capacity = 256) {
    size_t bytes = 0;
    EXPECT_EQ(fedstat_histogram_sparse_size(capacity, &bytes), FEDSTAT_OK);
    memory.resize(bytes / 8 + 1);
    EXPECT_EQ(fedstat_histogram_create_sparse(memory.data(), bytes, capacity, &histogram),
              FEDSTAT_OK);
    for (uint32_t i = 0; i < 60; ++i) {
      const uint32_t id = (i * i + salt * 13) % 300;
      EXPECT_EQ(fedstat_histogram_add(histogram, id, 1 + (i + salt) % 7), FEDSTAT_OK);
    }
  }
};

// The scripted server of client_test.cpp and tls_certificate_test.cpp, over any frame channel.
// What it saw: Hello → Task (+ TaskData) → TaskReply → Reports, each acked →
// RoundOutcome{completed}.
struct Seen {
  bool hello = false;
  bool accepted = false;
  std::vector<uint64_t> report;
};

inline Seen serve(client::FrameChannel& server, const fedstat_v1_Task& task,
                  const std::vector<uint64_t>& data) {
  Seen seen;
  wire::Envelope in;
  if (!server.receive(in, 20000).ok()) return seen;
  seen.hello = in.which_body == fedstat_v1_Envelope_client_hello_tag;
  send_task(server, task, data);
  if (!server.receive(in, 20000).ok() || in.which_body != fedstat_v1_Envelope_task_reply_tag) {
    return seen;
  }
  seen.accepted = in.body.task_reply.accept;
  if (!seen.accepted) return seen;
  while (seen.report.size() < task.vector_length) {
    if (!server.receive(in, 20000).ok() || in.which_body != fedstat_v1_Envelope_report_tag) {
      return seen;
    }
    seen.report.insert(seen.report.end(), in.body.report.words,
                       in.body.report.words + in.body.report.words_count);
    wire::Envelope ack = envelope_of(fedstat_v1_Envelope_ack_tag);
    ack.body.ack.task_id = task.task_id;
    ack.body.ack.offset = static_cast<uint32_t>(seen.report.size());
    if (!server.send(ack).ok()) return seen;
  }
  wire::Envelope outcome = envelope_of(fedstat_v1_Envelope_round_outcome_tag);
  outcome.body.round_outcome.task_id = task.task_id;
  outcome.body.round_outcome.completed = true;
  server.send(outcome).ignore();
  return seen;
}

}  // namespace client_test
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_CABI_C_DEVICE_H_
