// The collector ↔ TAgg messages: chunks and their reassembly, the stored bytes, and the TAgg's
// intake answering one aggregate per connection.
#include "host_server/tagg/tagg_wire.h"
#include "sdk/base/bytes.h"

#include <gtest/gtest.h>

#include <cmath>

#include "host_server/store/memory_store.h"
#include "host_server/tagg/tagg_intake.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/tagg/tagg_fixture.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

ExactAggregate counting(uint32_t length) {
  ExactAggregate a;
  a.task_id = 3;
  a.contributors = 9;
  for (uint32_t i = 0; i < length; ++i) a.words.push_back(~uint64_t{0} - i);
  a.task_fingerprint.fill(0xab);
  return a;
}

TEST(TaggWire, ChunksReassembleIntoTheAggregate) {
  for (uint32_t length : {1u, 55u, 56u, 57u, 130u}) {
    const ExactAggregate a = counting(length);
    const auto chunks = aggregate_chunks(a);
    EXPECT_EQ(chunks.size(), (length + 55) / 56) << length;
    AggregateAssembly assembly;
    for (const auto& chunk : chunks) {
      EXPECT_FALSE(assembly.complete());
      uint8_t frame[wire::kMaxEnvelopeBytes];  // every chunk fits the Envelope's bound
      EXPECT_TRUE(wire::encode_envelope(chunk, MutableByteSpan(frame, sizeof(frame))).ok());
      ASSERT_FALSE(assembly.add(chunk.body.tagg_aggregate).has_value()) << length;
    }
    ASSERT_TRUE(assembly.complete());
    EXPECT_EQ(assembly.aggregate().words, a.words);
    EXPECT_EQ(assembly.aggregate().contributors, 9u);
    EXPECT_EQ(assembly.aggregate().task_fingerprint, a.task_fingerprint);
    // The stored form: task, contributors, length (LE32 each), then the words (LE64 each).
    const std::vector<uint8_t> bytes = aggregate_bytes(a);
    ASSERT_EQ(bytes.size(), 12 + 8 * size_t{length});
    EXPECT_EQ(load_le32(bytes.data() + 4), 9u);
    EXPECT_EQ(load_le32(bytes.data() + 8), length);
    for (uint32_t i = 0; i < length; ++i)
      EXPECT_EQ(load_le64(bytes.data() + 12 + 8 * i), a.words[i]);
  }
}

TEST(TaggWire, RefusesChunksOutOfOrderOrInconsistent) {
  const auto chunks = aggregate_chunks(counting(130));
  AggregateAssembly skipped;
  EXPECT_TRUE(skipped.add(chunks[1].body.tagg_aggregate).has_value());  // not at 0
  AggregateAssembly a;
  ASSERT_FALSE(a.add(chunks[0].body.tagg_aggregate).has_value());
  EXPECT_TRUE(a.add(chunks[0].body.tagg_aggregate).has_value());  // again
  EXPECT_TRUE(a.add(chunks[2].body.tagg_aggregate).has_value());  // a gap
  fedstat_v1_TaggAggregate other = chunks[1].body.tagg_aggregate;
  other.contributors = 10;
  EXPECT_TRUE(a.add(other).has_value());
  other = chunks[1].body.tagg_aggregate;
  other.vector_length = 200;
  EXPECT_TRUE(a.add(other).has_value());
  other = chunks[1].body.tagg_aggregate;
  other.task_fingerprint.bytes[31] ^= 1;
  EXPECT_TRUE(a.add(other).has_value());
  AggregateAssembly unprinted;
  other = chunks[0].body.tagg_aggregate;
  other.task_fingerprint.size = 0;
  EXPECT_TRUE(unprinted.add(other).has_value());
  EXPECT_FALSE(unprinted.started());
  ASSERT_FALSE(a.add(chunks[1].body.tagg_aggregate).has_value());
  ASSERT_FALSE(a.add(chunks[2].body.tagg_aggregate).has_value());
  EXPECT_TRUE(a.complete());
  EXPECT_TRUE(a.add(chunks[2].body.tagg_aggregate).has_value());  // past the end
}

TEST(TaggWire, TheTaskFingerprintCoversWhatTheDevicesWereChargedFor) {
  const TaskPlan plan = plan_task(kl_declaration(kTaggTask, "tagg"), "", 0);
  const TaskFingerprint base = task_fingerprint(plan.task, plan.data);
  fedstat_v1_Task t = plan.task;
  t.deadline_unix_seconds += 99;  // each server's own clock: not covered
  EXPECT_EQ(task_fingerprint(t, plan.data), base);
  t = plan.task;
  t.epsilon = std::nextafter(t.epsilon, 10.0);
  EXPECT_NE(task_fingerprint(t, plan.data), base);
  t = plan.task;
  t.delta *= 2;
  EXPECT_NE(task_fingerprint(t, plan.data), base);
  t = plan.task;
  t.max_clients += 1;
  EXPECT_NE(task_fingerprint(t, plan.data), base);
  t = plan.task;
  t.seed.bytes[0] ^= 1;
  EXPECT_NE(task_fingerprint(t, plan.data), base);
  std::vector<uint64_t> data = plan.data;
  data.back() += 1;
  EXPECT_NE(task_fingerprint(plan.task, data), base);
}

TEST(TaggWire, AResultLongerThanItsFieldIsRefused) {
  EXPECT_EQ(tagg_result(4, "{}").body.tagg_result.task_id, 4u);
  EXPECT_THROW(tagg_result(4, std::string(600, ' ')), std::invalid_argument);
}

struct Recorder : Outbox {
  std::vector<std::pair<ConnectionId, fedstat_v1_Envelope>> sent;
  std::vector<ConnectionId> closed;
  void send(ConnectionId c, const fedstat_v1_Envelope& e) override { sent.emplace_back(c, e); }
  void close(ConnectionId c) override { closed.push_back(c); }
  void keep_open(ConnectionId, uint32_t) override {}
};

// A TAgg holding the kl task as tagg (noise seed 3), owned by collector-1, and its intake
// answering into a Recorder; `log` collects the intake's lines.
struct IntakeHarness {
  IntakeHarness()
      : store(make_memory_store()),
        plan(plan_task(kl_declaration(kTaggTask, "tagg"), "", 0, 3)),
        service(*store, {{kTaggTask, plan}}, {}),
        intake(service, out, {{kTaggTask, "collector-1"}},
               [this](const std::string& line) { log.push_back(line); }) {}
  std::unique_ptr<Store> store;
  TaskPlan plan;
  TaggService service;
  Recorder out;
  std::vector<std::string> log;
  TaggIntake intake;
};

TEST(TaggIntake, AnswersTheLastChunkAndRefusesAnythingElseOnce) {
  IntakeHarness tagg;
  const auto& store = tagg.store;
  const TaskPlan& plan = tagg.plan;
  Recorder& out = tagg.out;
  const std::vector<std::string>& log = tagg.log;
  TaggIntake& intake = tagg.intake;

  const auto chunks = aggregate_chunks(fleet_aggregate(plan, 6));
  intake.on_open(1, "collector-1");
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_TRUE(out.sent.empty()) << "answered before the last chunk";
    intake.on_frame(1, chunks[i]);
  }
  ASSERT_EQ(out.sent.size(), 1u);
  ASSERT_EQ(out.sent[0].second.which_body, fedstat_v1_Envelope_tagg_result_tag);
  EXPECT_EQ(std::string(out.sent[0].second.body.tagg_result.result_json),
            *store->result(kTaggTask));
  EXPECT_TRUE(out.closed.empty());
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0], "collector collector-1: task 7 released");

  // Another message kind: refused; what follows on that connection is not looked at.
  intake.on_open(2, "collector-1");
  fedstat_v1_Envelope hello = wire::make_envelope();
  hello.which_body = fedstat_v1_Envelope_client_hello_tag;
  intake.on_frame(2, hello);
  ASSERT_EQ(out.sent.size(), 2u);
  EXPECT_EQ(out.sent[1].second.which_body, fedstat_v1_Envelope_server_error_tag);
  for (const auto& chunk : chunks) intake.on_frame(2, chunk);
  EXPECT_EQ(out.sent.size(), 2u);
  // A task that is not this collector's (42: no owner): refused at the first chunk, before any
  // word is kept; the rest ignored.
  intake.on_open(3, "collector-1");
  fedstat_v1_Envelope unknown = chunks[0];
  unknown.body.tagg_aggregate.task_id = 42;
  intake.on_frame(3, unknown);
  for (size_t i = 1; i < chunks.size(); ++i) intake.on_frame(3, chunks[i]);
  ASSERT_EQ(out.sent.size(), 3u);
  EXPECT_EQ(out.sent[2].second.body.server_error.status_code,
            static_cast<uint32_t>(StatusCode::kPermissionDenied));
  // A byte-identical resend on a new connection: the same stored result.
  intake.on_open(4, "collector-1");
  for (const auto& chunk : chunks) intake.on_frame(4, chunk);
  ASSERT_EQ(out.sent.size(), 4u);
  EXPECT_EQ(std::string(out.sent[3].second.body.tagg_result.result_json),
            *store->result(kTaggTask));
  EXPECT_TRUE(out.closed.empty());
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[2], "collector collector-1: refused: tagg: task 42 is not this collector's");
}

// Another listed collector cannot use the stored aggregate as an equality oracle (the same bytes
// would get the stored result, any other kAlreadyExists: with the published N and the public
// fingerprint, points + 1 guesses find the last record), nor claim a task first: every chunk it
// sends for a task that is not its own is refused kPermissionDenied, whatever the words.
TEST(TaggIntake, AnotherCollectorIsRefusedBeforeItsAggregateIsCompared) {
  IntakeHarness tagg;
  const auto& store = tagg.store;
  Recorder& out = tagg.out;
  TaggIntake& intake = tagg.intake;
  const TaskPlan& plan = tagg.plan;
  const ExactAggregate honest = fleet_aggregate(plan, 6);
  ExactAggregate guess = honest;
  guess.words[0] += 1;

  // Before the owner: collector-2 cannot claim the task with made-up sums.
  intake.on_open(1, "collector-2");
  for (const auto& chunk : aggregate_chunks(guess)) intake.on_frame(1, chunk);
  ASSERT_EQ(out.sent.size(), 1u);
  EXPECT_EQ(out.sent[0].second.body.server_error.status_code,
            static_cast<uint32_t>(StatusCode::kPermissionDenied));
  EXPECT_FALSE(store->result(kTaggTask).has_value());

  intake.on_open(2, "collector-1");
  for (const auto& chunk : aggregate_chunks(honest)) intake.on_frame(2, chunk);
  ASSERT_EQ(out.sent.size(), 2u);
  ASSERT_EQ(out.sent[1].second.which_body, fedstat_v1_Envelope_tagg_result_tag);

  // After it: the right guess and a wrong one get the same refusal.
  uint32_t connection = 3;
  for (const ExactAggregate& candidate : {honest, guess}) {
    intake.on_open(connection, "collector-2");
    for (const auto& chunk : aggregate_chunks(candidate)) intake.on_frame(connection, chunk);
    ++connection;
  }
  ASSERT_EQ(out.sent.size(), 4u);
  for (size_t i = 2; i < 4; ++i) {
    ASSERT_EQ(out.sent[i].second.which_body, fedstat_v1_Envelope_server_error_tag);
    EXPECT_EQ(out.sent[i].second.body.server_error.status_code,
              static_cast<uint32_t>(StatusCode::kPermissionDenied));
    EXPECT_STREQ(out.sent[i].second.body.server_error.detail,
                 "tagg: task 7 is not this collector's");
  }
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
