// A Client built with some task kinds only (sdk/client/task_kinds.h): it computes those exactly as
// a Client with every kind does, and declines the others — and DIST tasks without secure
// aggregation — before anything is charged, drawn or sent.
#include <gtest/gtest.h>

#include <vector>

#include "sdk/client/contribution.h"
#include "sdk/client/task_kinds.h"
#include "tests/client/client_test_support.h"
#include "tests/client/scripted_server.h"

namespace fedstat {
namespace client_test {
namespace {

using client::SessionResult;

const client::TaskKindSupport* const kDataShiftOnly[] = {&client::kDataShiftKind};
const client::TaskKindSupport* const kHistogramKinds[] = {&client::kDataShiftKind,
                                                          &client::kKlAnswersKind};

class TaskKindsTest : public StorageTest {};

// A refusal for want of a kind: REFUSED, kUnimplemented naming TaskKinds, nothing charged, no
// randomness drawn, no report.
void expect_refused_unbuilt(const Session& s, const Device& device, const char* what) {
  ASSERT_FALSE(s.outcome.ok()) << what;
  EXPECT_EQ(s.outcome.status().code(), StatusCode::kUnimplemented) << what;
  ASSERT_TRUE(s.seen.replied) << what;
  EXPECT_FALSE(s.seen.reply.accept) << what;
  EXPECT_EQ(s.seen.reply.reason, fedstat_v1_ErrorAction_REFUSED) << what;
  EXPECT_TRUE(s.seen.report.empty()) << what;
  EXPECT_EQ(s.seen.extra_messages, 0u) << what;
  EXPECT_EQ(device.spent(), 0) << what;
  EXPECT_EQ(device.ledger.size(), 0u) << what;
  EXPECT_EQ(device.random->drawn, 0u) << what;
}

TEST(TaskKinds, AllTaskKindsHoldsEachKindOnceWithSecureAggregation) {
  const client::TaskKinds all = client::all_task_kinds();
  EXPECT_EQ(all.kinds.size(), 4u);
  EXPECT_EQ(all.secure_aggregation, &client::kSecureAggregation);
  const fedstat_v1_TaskKind kinds[] = {
      fedstat_v1_TaskKind_DATA_SHIFT, fedstat_v1_TaskKind_KL_ANSWERS,
      fedstat_v1_TaskKind_MODEL_UPDATE, fedstat_v1_TaskKind_HETEROGENEITY};
  for (fedstat_v1_TaskKind kind : kinds) {
    ASSERT_NE(all.find(kind), nullptr) << kind;
    EXPECT_EQ(all.find(kind)->kind, kind);
  }
  EXPECT_EQ(all.find(0), nullptr);
  EXPECT_EQ(all.find(99), nullptr);
  const client::TaskKinds some{kDataShiftOnly, nullptr};
  EXPECT_EQ(some.find(fedstat_v1_TaskKind_DATA_SHIFT), &client::kDataShiftKind);
  EXPECT_EQ(some.find(fedstat_v1_TaskKind_KL_ANSWERS), nullptr);
}

TEST(TaskKinds, TheChecksWithKindsRefuseWhatTheyLackAndAgreeOnTheRest) {
  std::vector<uint64_t> points;
  const fedstat_v1_Task kl = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  const fedstat_v1_Task shift = data_shift_task(fedstat_v1_TrustModel_TRUSTED);
  const client::TaskKinds only_shift{kDataShiftOnly, nullptr};
  EXPECT_EQ(client::validate_task(kl, only_shift).code(), StatusCode::kUnimplemented);
  EXPECT_EQ(client::scratch_bytes(kl, 0, only_shift).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(client::device_spend(kl, only_shift).status().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(client::Client::memory_bytes(kl, 0, only_shift).status().code(),
            StatusCode::kUnimplemented);
  // The kinds it has: the same answers as with every kind.
  EXPECT_TRUE(client::validate_task(shift, only_shift).ok());
  EXPECT_EQ(client::Client::memory_bytes(shift, 256, only_shift).value(),
            client::Client::memory_bytes(shift, 256).value());
  // An unknown kind is still "unknown", whatever the Client was built with.
  fedstat_v1_Task unknown = shift;
  unknown.kind = static_cast<fedstat_v1_TaskKind>(9);
  EXPECT_EQ(client::validate_task(unknown, only_shift).code(), StatusCode::kUnimplemented);
  // DIST needs secure aggregation.
  fedstat_v1_Task dist = kl_task(fedstat_v1_TrustModel_DIST, points);
  make_dist(dist, 4, 3);
  ASSERT_TRUE(client::validate_task(dist).ok());
  EXPECT_EQ(client::validate_task(dist, client::TaskKinds{kHistogramKinds, nullptr}).code(),
            StatusCode::kUnimplemented);
  EXPECT_TRUE(
      client::validate_task(dist, client::TaskKinds{kHistogramKinds, &client::kSecureAggregation})
          .ok());
}

TEST_F(TaskKindsTest, AKindTheClientWasNotBuiltWithIsDeclinedBeforeAnythingIsCharged) {
  OwnedHistogram h(4);
  HistogramData data(&h.histogram);
  const client::TaskKinds only_shift{kDataShiftOnly, nullptr};
  Device device(31, 1 << 16, data, /*budget=*/10, &only_shift);
  ASSERT_TRUE(device.init_status.ok());
  std::vector<uint64_t> points;
  const Session kl = run(device, kl_task(fedstat_v1_TrustModel_TRUSTED, points), points);
  expect_refused_unbuilt(kl, device, "KL on a data-shift-only Client");
  // The kind it was built with: the report a Client with every kind sends, charged as usual.
  const fedstat_v1_Task shift = data_shift_task(fedstat_v1_TrustModel_TRUSTED);
  const Session s = run(device, shift, {});
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);
  CountingSource same(test_seed(99), 31);
  EXPECT_EQ(s.seen.report, expected_sketch(shift, h.histogram, same));
  EXPECT_DOUBLE_EQ(device.spent(), shift.epsilon);
}

TEST_F(TaskKindsTest, ADistTaskWithoutSecureAggregationIsDeclinedBeforeAnythingIsCharged) {
  OwnedHistogram h(5);
  HistogramData data(&h.histogram);
  const client::TaskKinds no_secagg{kHistogramKinds, nullptr};
  Device device(32, 1 << 16, data, /*budget=*/10, &no_secagg);
  ASSERT_TRUE(device.init_status.ok());
  std::vector<uint64_t> points;
  fedstat_v1_Task dist = kl_task(fedstat_v1_TrustModel_DIST, points);
  make_dist(dist, 4, 3);
  const Session refused = run(device, dist, points);
  expect_refused_unbuilt(refused, device, "DIST KL without secure aggregation");
  // The same task in the clear is computed: the counts at the points, then the total.
  const fedstat_v1_Task trusted = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  const Session s = run(device, trusted, points);
  ASSERT_TRUE(s.outcome.ok()) << s.outcome.status().message();
  EXPECT_EQ(s.outcome.value().result, SessionResult::kCompleted);
  CountingSource unused(test_seed(99), 32);
  EXPECT_EQ(s.seen.report, expected_kl(trusted, points, h.histogram, unused));
}

TEST_F(TaskKindsTest, InitCopiesTheKindsAndRefusesABadTable) {
  OwnedHistogram h(6);
  HistogramData data(&h.histogram);
  // The app's array may be a local: init copies the pointers. Overwritten after init, it changes
  // nothing.
  const client::TaskKindSupport* local[] = {&client::kKlAnswersKind};
  const client::TaskKinds kinds{local, nullptr};
  Device device(33, 1 << 16, data, /*budget=*/10, &kinds);
  ASSERT_TRUE(device.init_status.ok());
  local[0] = &client::kDataShiftKind;
  std::vector<uint64_t> points;
  const Session kl = run(device, kl_task(fedstat_v1_TrustModel_TRUSTED, points), points);
  ASSERT_TRUE(kl.outcome.ok()) << kl.outcome.status().message();
  EXPECT_EQ(kl.outcome.value().result, SessionResult::kCompleted);
  const Session shift = run(device, data_shift_task(fedstat_v1_TrustModel_TRUSTED), {});
  EXPECT_EQ(shift.outcome.status().code(), StatusCode::kUnimplemented);

  // A table with a null entry, one kind twice or more entries than kinds: kInvalidArgument, and
  // the Client keeps what it had.
  const client::TaskKindSupport* const with_null[] = {&client::kDataShiftKind, nullptr};
  const client::TaskKindSupport* const twice[] = {&client::kDataShiftKind, &client::kDataShiftKind};
  const client::TaskKindSupport* const five[] = {
      &client::kDataShiftKind, &client::kKlAnswersKind, &client::kModelUpdateKind,
      &client::kHeterogeneityKind, &client::kDataShiftKind};
  client::ClientConfig config;
  config.device_id = 33;
  config.wall_clock_seconds = fixed_clock;
  config.round_blob_name = device.round_name.c_str();
  const MutableByteSpan memory(reinterpret_cast<uint8_t*>(device.memory.data()),
                               8 * device.memory.size());
  for (const client::TaskKinds& bad :
       {client::TaskKinds{with_null, nullptr}, client::TaskKinds{twice, nullptr},
        client::TaskKinds{five, nullptr}}) {
    EXPECT_EQ(device.client.init(config, bad, memory, data, device.ledger, *device.random).code(),
              StatusCode::kInvalidArgument);
  }
  // Another KL task (the one above was charged: offered again it is declined, client.h check 3).
  fedstat_v1_Task next = kl_task(fedstat_v1_TrustModel_TRUSTED, points);
  next.task_id += 1;
  const Session still = run(device, next, points);
  ASSERT_TRUE(still.outcome.ok()) << still.outcome.status().message();
  EXPECT_EQ(still.outcome.value().result, SessionResult::kCompleted);
}

}  // namespace
}  // namespace client_test
}  // namespace fedstat
