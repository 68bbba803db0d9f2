// Issue 39 item 10 (resume): a device cannot pick its task by naming it in resume_task_id. The
// server offers a checking-in device the first open task with room; a resume naming a task the
// device holds no TaskReply for is its acceptance (TaskRound::admit_resumed: the reply was lost
// in a crash) — but before the fix that held for any task at all, one the device was never
// offered included. Now only a device whose ClientHello the server stored under that task (it
// was offered it) is admitted so; any other is refused, closed, and nothing is stored. The
// legitimate case still works: offered, its TaskReply lost, its resume admits it.
#include <gtest/gtest.h>

#include <vector>

#include "host_server/rounds/coordinator.h"
#include "tests/rounds/fake_outbox.h"
#include "tests/rounds/fake_store.h"
#include "tests/rounds/trusted_device.h"

namespace fedstat {
namespace host {
namespace testing {
namespace {

constexpr uint32_t kLength = 70;
constexpr uint32_t kBits = 20;

std::vector<TaskSpec> two_tasks() {
  return {make_spec(1, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 2, 5),
          make_spec(2, fedstat_v1_TrustModel_TRUSTED, kLength, kBits, 2, 5)};
}

TEST(AuditResume, AResumeNamingATaskNeverOfferedIsRefusedAndStoresNothing) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, two_tasks(), kT0);
  const size_t events = store.event_count();
  c.on_open(1, "9");
  c.on_frame(1, hello(9, /*resume=*/2));  // task 1 is the one a check-in would be offered
  ASSERT_FALSE(out.empty(1)) << "no answer";
  const fedstat_v1_Envelope answer = out.pop(1);
  ASSERT_EQ(answer.which_body, fedstat_v1_Envelope_server_error_tag)
      << "the device was served task 2, which it picked itself";
  EXPECT_TRUE(answer.body.server_error.action == fedstat_v1_ErrorAction_REFUSED ||
              answer.body.server_error.action == fedstat_v1_ErrorAction_TASK_CLOSED)
      << answer.body.server_error.action;
  EXPECT_TRUE(out.empty(1)) << "no Task, no Ack";
  EXPECT_TRUE(out.closed(1));
  EXPECT_EQ(store.event_count(), events) << "the refused resume stored something";
  // The refusal holds nothing against the device: checking in normally, it is offered task 1.
  TrustedDevice d;
  d.id = 9;
  EXPECT_EQ(check_in(c, out, d, 2), 1u);
}

TEST(AuditResume, AnOfferedDeviceWhoseReplyWasLostIsStillAdmittedByItsResume) {
  FakeStore store;
  FakeOutbox out(store);
  Coordinator c(store, out, two_tasks(), kT0);
  TrustedDevice d;
  d.id = 9;
  d.words = device_words(d.id, kLength, kBits);
  ASSERT_EQ(check_in(c, out, d, 1), 1u);  // offered task 1; its TaskReply is lost
  c.on_close(1, "link lost");
  ASSERT_EQ(check_in(c, out, d, 2, /*resume=*/1), 1u);
  ASSERT_FALSE(out.empty(2));
  const fedstat_v1_Envelope ack = out.pop(2);
  ASSERT_EQ(ack.which_body, fedstat_v1_Envelope_ack_tag);
  EXPECT_EQ(ack.body.ack.offset, 0u);
  send_reports(c, out, d, 1, kLength);  // admitted: its report is taken
}

}  // namespace
}  // namespace testing
}  // namespace host
}  // namespace fedstat
