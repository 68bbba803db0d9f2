// Coordinator: the server's rounds behind the net layer — every task's TaskRound, the
// connections' identities, and the check-in rules of docs/protocol.md. No I/O of its own: the net
// layer calls on_open/on_frame/on_close/on_tick on its io thread (one thread: not thread-safe)
// and the Coordinator answers through the Outbox.
//
// Check-in (ClientHello): client_id ≠ the TLS identity → REFUSED kPermissionDenied, close; more
// check-ins from this device than check_ins_per_minute allows (CheckInLimit, check_in_limit.h: a
// token bucket per device id, a burst of that many, then that many a minute; 0: no limit) →
// RETRY_LATER kResourceExhausted, close, nothing stored; an envelope older than kMinProtocolVersion
// → VERSION_TOO_OLD, close; a DIST task is not offered to an envelope older than
// kMinDistProtocolVersion (RETRY_LATER when no other task has room); resume_task_id naming an
// unknown task → REFUSED kNotFound, close; a
// task that is over → TASK_CLOSED, close; no open task with room, or the device already took part →
// RETRY_LATER, close. A member naming its task in resume_task_id is resumed (TaskRound::resume)
// unless TaskRound::can_resume refuses it (it declined; DIST: it is no longer in the current
// stage's members) → TASK_CLOSED, close; a device naming a task it has no TaskReply stored for
// (lost in a crash) is admitted by TaskRound::admit_resumed if it was offered that task (its
// ClientHello stored under it), else REFUSED kPermissionDenied, close, nothing stored: a device
// does not pick its task by naming it. Any other refused message gets its own ServerError and
// changes nothing (task_round.h lists them).
//
// A check-in that binds the connection to a round is reported to the net layer
// (Outbox::checked_in): until then a connection is held to its handshake's deadline, whatever else
// it sends (net/tls_server.h, await_check_in).
//
// Construction recovers: a task the store holds events for is rebuilt by replay; a task over in
// the store stays over.
//
// Chained tasks (TaskSpec::follow_up): when a task completes — its result published, its state
// "completed" — the Coordinator plans the follow-up from the stored result and runs it like a
// declared task (stored with put_task, then opened, recovered or left over as the store says),
// before it answers anything else: a device checking in after the outcome finds it open. A task
// that aborted has no follow-up. Construction does the same for every task already completed in
// the store, so a restarted server runs the same follow-up.
// Errors: Store exceptions propagate; an invalid TaskSpec throws std::invalid_argument (a
// follow-up's too). Memory: the TaskRounds' plus one entry per connection and one per device that
// checked in within the last minute (the rate limit's). Paper: none.
#ifndef FEDSTAT_HOST_ROUNDS_COORDINATOR_H_
#define FEDSTAT_HOST_ROUNDS_COORDINATOR_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "host_server/rounds/check_in_limit.h"
#include "host_server/rounds/outbox.h"
#include "host_server/rounds/task_round.h"
#include "host_server/rounds/task_spec.h"
#include "host_server/store/store.h"

namespace fedstat {
namespace host {

// The oldest envelope protocol_version the server serves: 2, whose Reports carry fixed64 words
// (a version-1 device would send its words in a field this server ignores).
constexpr uint32_t kMinProtocolVersion = 2;
// The oldest a device may speak to be offered a DIST task: 3, whose SecAggKeys carry the
// commitment to the self-mask seed the server checks (an older device would be excluded at the
// key round after charging its ledger; it is offered the other tasks only).
constexpr uint32_t kMinDistProtocolVersion = 3;
// The oldest a device may speak to be offered a DIST task of the sparse graph (Task.secagg_degree
// ≠ 0): 4, which knows the degree, the ring and the graph commitment (a version-3 device would
// ignore the degree and run the complete graph's rounds). Complete-graph DIST tasks are still
// offered from version 3.
constexpr uint32_t kMinSparseProtocolVersion = 4;
// The oldest a device may speak to be offered a signed sparse DIST task (a CA key and
// Task.secagg_degree ≠ 0): 6, which signs its U2 view after its masked input (rule D8; a
// version-5 device would not, and the server would leave it out of U3 after charging its ledger).
constexpr uint32_t kMinSignedSparseProtocolVersion = 6;

class Coordinator {
 public:
  Coordinator(Store& store, Outbox& outbox, std::vector<TaskSpec> tasks, uint64_t now,
              uint32_t check_ins_per_minute = kDefaultCheckInsPerMinute);

  // Called before on_open for a device that authenticated with an X.509 certificate (mutual
  // TLS, net/tls_server.h): its certificate's P-256 key (SEC1 uncompressed). That device's
  // SecAggKeys must then carry a compact certificate for the same key: one whose key differs
  // is refused (kPermissionDenied, the connection closed), so the TLS peer and the
  // secure-aggregation identity are one key pair.
  void on_certificate(ConnectionId connection, const std::array<uint8_t, 65>& key);
  void on_open(ConnectionId connection, const std::string& identity);
  void on_frame(ConnectionId connection, const fedstat_v1_Envelope& envelope);
  void on_close(ConnectionId connection, const std::string& reason);
  void on_tick(uint64_t now_unix_seconds);
  // The server is stopping: the connections it now closes itself are not departures. Without
  // this, a graceful stop (SIGTERM) closing every member's connection made every member of a
  // secure aggregation a dropout, and the round aborted on disk; now, as after kill -9, the
  // restarted server waits reconnect_grace_seconds for them. The serving process calls it just
  // before it closes every connection (no frame or tick is handled after that).
  void begin_shutdown() { shutting_down_ = true; }

  // "open", "completed", "aborted" (or "unknown").
  std::string task_state(uint32_t task_id) const;
  const TaskRound* round(uint32_t task_id) const;
  // The log lines since the last call (round transitions, departures), moved out: a serving
  // process drains them so they do not accumulate.
  std::vector<std::string> take_log() { return std::exchange(log_, {}); }

 private:
  struct Connection {
    uint64_t client = 0;                                     // 0: the identity was not a device id
    uint32_t task = 0;                                       // 0: no hello accepted yet
    std::optional<std::array<uint8_t, 65>> certificate_key;  // mutual TLS: see on_certificate
  };
  // on_certificate's keys for connections not yet open.
  std::map<ConnectionId, std::array<uint8_t, 65>> certified_;
  void on_hello(ConnectionId connection, Connection& c, const fedstat_v1_Envelope& e);
  void refuse(ConnectionId connection, const Refusal& refusal);
  // A device bound to an unfinished round waits on the server between its messages: its
  // connection is kept open for the round's longest wait (Outbox::keep_open).
  void keep_member_open(ConnectionId connection);
  // `connection` becomes the device's one link for `task`: an older one is closed (a device
  // holds one live connection per task; a resume or a repeated check-in replaces it).
  void bind(uint32_t task, uint64_t client, ConnectionId connection);
  void send_to_client(uint32_t task, uint64_t client, const fedstat_v1_Envelope& e);
  void close_client(uint32_t task, uint64_t client);
  // Stores the task, builds its round and opens, recovers or finishes it as the store says.
  void add_task(TaskSpec spec, const std::string& stored_state, uint64_t now);
  // Runs the follow-up of every completed task that has one and has not run it yet.
  void chain(uint64_t now);
  // Drops from open_rounds_ the rounds that have finished.
  void forget_finished_rounds();

  Store& store_;
  Outbox& outbox_;
  uint64_t now_;
  bool shutting_down_ = false;
  std::map<uint32_t, std::unique_ptr<TaskRound>> rounds_;
  // The rounds not yet finished, in id order as in rounds_: what a check-in and a tick look at,
  // so their cost does not grow with the tasks a long-running server has finished. A round
  // leaves at the first check-in or tick that finds it finished (a finished round stays so).
  std::map<uint32_t, TaskRound*> open_rounds_;
  // Tasks whose follow-up has not run yet.
  std::map<uint32_t, std::function<TaskSpec(const std::string&, uint64_t)>> follow_ups_;
  // The DIST tasks of a sparse graph (Task.secagg_degree ≠ 0): offered from protocol version 4.
  std::set<uint32_t> sparse_tasks_;
  std::set<uint32_t> signed_sparse_tasks_;  // also signed: protocol 6 (D8)
  std::map<ConnectionId, Connection> connections_;
  std::map<std::pair<uint32_t, uint64_t>, ConnectionId> bound_;  // (task, client) → connection
  CheckInLimit check_ins_;
  uint64_t check_ins_pruned_ = 0;  // when check_ins_ last forgot the full buckets
  std::vector<std::string> log_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ROUNDS_COORDINATOR_H_
