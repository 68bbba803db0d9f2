// Fuzz target: the server's store recovery — a restarted server rebuilding a task's round from the
// events its Store holds, as serve() does: the Coordinator's constructor (coordinator.h), which
// declares the task (put_task), reads its stored state and either marks it over or replays its
// events through TaskRound::recover (task_round.h) — device messages decoded from their stored
// Envelope bytes and fed back through the round's handlers, transitions ("<word> <unix seconds>")
// applied where they were stored. The task is one of the rounds tests' declarations
// (tests/rounds/round_messages.h make_spec): TRUSTED, 70 words of 24 bits, 2..3 devices; DIST,
// 70 words of 32 bits, 3 devices, threshold 2; TRUSTED, 5 words of 8 bits, 1..2 devices; DIST,
// 3 words of 64 bits, 4 devices, threshold 3. No network, no TLS: the rounds have no I/O.
//
// Input: a 28-byte header — mode (byte % 4 == 3: also through a corrupted SQLite file), the task
// (byte % 4, as above), the task's stored state (byte % 4: "open", never set ("declared"),
// "completed", "aborted"), a corruption count (byte % 9) and 8 corruptions (2 bytes little-endian
// file offset, 1 byte XORed there) — then events, each: a kind byte (EventKind 1 + byte % 3:
// device message, transition, note), the client id (a byte below 0xFE; 0xFE and 8 bytes
// little-endian; 0xFF and a byte b: 2^32 + b), a 2-byte big-endian payload length and that many
// payload bytes (the last may be cut short). Seeds: the stored events of real rounds driven
// through a live Coordinator (trusted: all complete, a decline, a report cut by the time-out, too
// few, a crash and resume, a resume whose TaskReply was lost, reports during admission, the
// deadline; DIST of SDK SecAggClients: all survive, drop-outs before keys, shares, masking and
// reveals, too few), every prefix of two of them, and SQLite variants.
//
// Invariants beyond "no crash or sanitizer report":
//   - recovery either rebuilds a round or throws std::runtime_error / std::invalid_argument with
//     a message (store.h, messages.h, task_round.h), never another exception; replay appends no
//     event (a fresh task with no events appends its "open"), but for the noise seed of an
//     aggregate it estimates itself when the store holds none (the crash came before the seed
//     note: no draw was shown) — at most one, and only with a result — and for the "disputed"
//     notes of the close it finishes itself when the store holds none (the crash came between
//     the close's transition and them) — only with the round finished. A seed is random: in the
//     comparisons below a "noise_seed" note's bytes are left out (its place is compared);
//   - determinism: recovering the same events from a fresh store gives the same error or the same
//     state (stage, every client's reply and resume verdict, SecAggPhase's stage, members and
//     progress, the store's state, result and events, the log);
//   - an honest history recovers to the live state: the events are re-executed by a live
//     Coordinator (hellos on new connections, device messages on them, transitions by a tick at
//     their time); when it stores exactly the same events, the recovered round and the live one,
//     ticked at the same clock, hold the same state and store, and a resume of every device that
//     replied gets the same answers from both (Ack offset, SecAggResume and the stage's opening).
//     Two differences are by design and left out: a round the replay itself finishes appends no
//     "completed"/"aborted" event, and a task stored as "declared" stays so (the replay writes
//     no "open" state);
//   - after recovery, the members of secure aggregation are devices that accepted the task;
//   - a result published by the replay itself needs the honest stage path in the stored
//     transitions (open, admission_closed, then reports_closed or four secagg_closed); any result
//     (after recovery and live ticks to the end) has min_clients <= contributors <= max_clients,
//     no more contributors than devices that replied, words below 2^bits, and (DIST) contributors
//     >= threshold with U3 made of devices that replied;
//   - the recovered round, ticked through every time-out, throws nothing; replaying its whole
//     history again (state forced back to "open") reaches the same state and result;
//   - SQLite mode: the same store written to a file in /dev/shm, closed, bytes XORed, reopened:
//     opening, reading and recovery throw only the documented exceptions; unchanged bytes give
//     integrity_check "ok" and the memory store's outcome, and so do corrupted ones whose
//     integrity_check is "ok" and whose stored task and events read back unchanged.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "host_server/rounds/coordinator.h"
#include "host_server/rounds/messages.h"
#include "host_server/store/memory_store.h"
#include "host_server/store/sqlite_store.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/rounds/round_messages.h"

namespace {

using namespace fedstat::host;  // NOLINT: test code
using fedstat::ByteSpan;
using fedstat::host::testing::hello;
using fedstat::host::testing::kT0;
using fedstat::host::testing::make_spec;
using fedstat::host::testing::reply;
using fedstat::host::testing::report;
using Envelope = fedstat_v1_Envelope;
using Bytes = std::vector<uint8_t>;

constexpr uint32_t kTask = 1;
constexpr size_t kMaxCorruptions = 8;
constexpr size_t kHeader = 4 + 3 * kMaxCorruptions;
constexpr size_t kMaxEvents = 300;
constexpr const char* kStates[] = {"open", kDeclaredTaskState, "completed", "aborted"};

TaskSpec spec_for(uint8_t choice) {
  switch (choice % 4) {
    case 0:
      return make_spec(kTask, fedstat_v1_TrustModel_TRUSTED, 70, 24, 2, 3);
    case 1:
      return make_spec(kTask, fedstat_v1_TrustModel_DIST, 70, 32, 2, 3, 2);
    case 2:
      return make_spec(kTask, fedstat_v1_TrustModel_TRUSTED, 5, 8, 1, 2);
    default:
      return make_spec(kTask, fedstat_v1_TrustModel_DIST, 3, 64, 3, 4, 3);
  }
}

bool is_dist(const TaskSpec& spec) {
  return spec.task.trust == fedstat_v1_TrustModel_DIST;
}

// ---- The input ---------------------------------------------------------------------------------

struct Input {
  bool sqlite = false;
  uint8_t spec = 0;
  uint8_t state = 0;  // index into kStates
  std::vector<std::pair<uint16_t, uint8_t>> corruptions;
  std::vector<NewEvent> events;
  bool open_state() const { return state <= 1; }
};

std::optional<Input> decode_input(const uint8_t* data, size_t size) {
  if (size < kHeader) return std::nullopt;
  Input in;
  in.sqlite = data[0] % 4 == 3;
  in.spec = data[1] % 4;
  in.state = data[2] % 4;
  const size_t count = data[3] % (kMaxCorruptions + 1);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* c = data + 4 + 3 * i;
    in.corruptions.emplace_back(static_cast<uint16_t>(c[0] | (c[1] << 8)), c[2]);
  }
  size_t at = kHeader;
  while (at < size && in.events.size() < kMaxEvents) {
    NewEvent e;
    e.task_id = kTask;
    e.kind = static_cast<EventKind>(1 + data[at++] % 3);
    if (at >= size) break;
    const uint8_t c = data[at++];
    if (c == 0xFE) {
      if (size - at < 8) break;
      for (int i = 7; i >= 0; --i) e.client_id = (e.client_id << 8) | data[at + i];
      at += 8;
    } else if (c == 0xFF) {
      if (at >= size) break;
      e.client_id = (uint64_t{1} << 32) + data[at++];
    } else {
      e.client_id = c;
    }
    if (size - at < 2) break;
    const size_t length = (size_t{data[at]} << 8) | data[at + 1];
    at += 2;
    const size_t take = length < size - at ? length : size - at;
    e.payload.assign(data + at, data + at + take);
    at += take;
    in.events.push_back(std::move(e));
  }
  return in;
}

// ---- Stores ------------------------------------------------------------------------------------

// A Store that forwards to another and keeps a copy of every batch appended through it.
class TapStore final : public Store {
 public:
  explicit TapStore(std::unique_ptr<Store> inner) : inner_(std::move(inner)) {}
  void put_task(uint32_t task_id, const std::string& definition) override {
    inner_->put_task(task_id, definition);
  }
  std::vector<StoredTask> tasks() override { return inner_->tasks(); }
  void set_task_state(uint32_t task_id, const std::string& state) override {
    inner_->set_task_state(task_id, state);
  }
  uint64_t append_events(const std::vector<NewEvent>& events) override {
    const uint64_t last = inner_->append_events(events);
    appended.insert(appended.end(), events.begin(), events.end());
    return last;
  }
  std::vector<StoredEvent> events(uint32_t task_id) override { return inner_->events(task_id); }
  void put_result(uint32_t task_id, const std::string& result_json) override {
    inner_->put_result(task_id, result_json);
  }
  std::optional<std::string> result(uint32_t task_id) override { return inner_->result(task_id); }
  std::string integrity_check() override { return inner_->integrity_check(); }

  std::vector<NewEvent> appended;  // what went through this tap, in order

 private:
  std::unique_ptr<Store> inner_;
};

// The store as the input describes it (task declared, state set unless "declared", the events).
void fill(Store& store, const TaskSpec& spec, const Input& in) {
  store.put_task(kTask, spec.definition_json);
  if (in.state != 1) store.set_task_state(kTask, kStates[in.state]);
  if (!in.events.empty()) store.append_events(in.events);
}

std::string stored_state(Store& store) {
  for (const StoredTask& t : store.tasks()) {
    if (t.task_id == kTask) return t.state;
  }
  return "(none)";
}

// ---- Exceptions --------------------------------------------------------------------------------

// Runs f; "" when it returns, else the documented exception's type and message. Anything else
// breaks the invariant.
template <typename F>
std::string documented(const char* what, F&& f) {
  try {
    f();
    return "";
  } catch (const std::invalid_argument& e) {
    FUZZ_CHECK(std::strlen(e.what()) > 0);
    return std::string("invalid_argument: ") + e.what();
  } catch (const std::runtime_error& e) {
    FUZZ_CHECK(std::strlen(e.what()) > 0);
    return std::string("runtime_error: ") + e.what();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s threw %s: %s\n", what, typeid(e).name(), e.what());
    FUZZ_CHECK(!"only std::runtime_error or std::invalid_argument");
  } catch (...) {
    std::fprintf(stderr, "%s threw a non-std exception\n", what);
    FUZZ_CHECK(!"only std::runtime_error or std::invalid_argument");
  }
  return "";
}

// What must not throw at all (a live server's io loop).
template <typename F>
void no_throw(const char* what, F&& f) {
  const std::string error = documented(what, std::forward<F>(f));
  if (!error.empty()) std::fprintf(stderr, "%s threw %s\n", what, error.c_str());
  FUZZ_CHECK(error.empty());
}

// ---- The outbox --------------------------------------------------------------------------------

class QueueOutbox final : public Outbox {
 public:
  void send(ConnectionId connection, const Envelope& envelope) override {
    queues_[connection].push_back(envelope);
  }
  void close(ConnectionId connection) override { closed_.insert(connection); }
  void keep_open(ConnectionId, uint32_t) override {}
  bool empty(ConnectionId c) { return queues_[c].empty(); }
  Envelope pop(ConnectionId c) {
    Envelope e = queues_[c].front();
    queues_[c].pop_front();
    return e;
  }
  std::vector<Envelope> drain(ConnectionId c) {
    std::vector<Envelope> out(queues_[c].begin(), queues_[c].end());
    queues_[c].clear();
    return out;
  }

 private:
  std::map<ConnectionId, std::deque<Envelope>> queues_;
  std::set<ConnectionId> closed_;
};

// ---- State snapshots ---------------------------------------------------------------------------

std::string hex(const std::vector<uint8_t>& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// A round's noise seed note ("noise_seed <hex>", task_round.h): drawn from the CSPRNG.
bool noise_seed_note(EventKind kind, const std::vector<uint8_t>& payload) {
  static const std::string kWord = "noise_seed ";
  return kind == EventKind::kServerNote && payload.size() > kWord.size() &&
         std::equal(kWord.begin(), kWord.end(), payload.begin());
}

// A share the holder revealed off the owner's verified polynomial ("disputed …", task_round.cpp).
bool disputed_note(EventKind kind, const std::vector<uint8_t>& payload) {
  static const std::string kWord = "disputed ";
  return kind == EventKind::kServerNote && payload.size() > kWord.size() &&
         std::equal(kWord.begin(), kWord.end(), payload.begin());
}

std::string event_line(uint64_t client, EventKind kind, const std::vector<uint8_t>& payload) {
  return std::to_string(static_cast<uint32_t>(kind)) + " " + std::to_string(client) + " " +
         (noise_seed_note(kind, payload) ? std::string("noise_seed (random)") : hex(payload));
}

// What can be seen of a round and its store from outside.
struct Snapshot {
  std::string round;  // stage, clients, secure aggregation
  std::string store;  // state, result, events
  std::string log;    // the Coordinator's log lines
  std::string error;  // recovery's exception ("" when it rebuilt the round)
  std::string all() const { return error + "\n" + round + store + log; }
};

// A round finished by the replay itself stores its outcome as the task's state and result but
// appends no "completed" / "aborted" event (TaskRound::complete/abort while replaying):
// `outcome_events` false leaves those events out, for comparing with a live round.
bool outcome_event(const StoredEvent& e) {
  if (e.kind != EventKind::kTransition) return false;
  const std::string text(e.payload.begin(), e.payload.end());
  return text.rfind("completed ", 0) == 0 || text.rfind("aborted ", 0) == 0;
}

Snapshot snapshot(Coordinator& c, Store& store, const std::set<uint64_t>& clients,
                  bool outcome_events = true) {
  Snapshot s;
  std::ostringstream r;
  r << "task_state " << c.task_state(kTask) << "\n";
  const TaskRound* round = c.round(kTask);
  FUZZ_CHECK(round != nullptr);
  r << "stage " << static_cast<int>(round->stage()) << "\n";
  for (uint64_t id : clients) {
    const auto resume = round->can_resume(id);
    r << "client " << id << " replied " << round->replied(id) << " resume "
      << (resume ? resume->detail : "yes") << "\n";
  }
  if (const SecAggPhase* phase = round->secagg()) {
    r << "secagg " << static_cast<int>(phase->stage()) << " round " << phase->round_number()
      << " survivors " << phase->survivors() << " all_done " << phase->all_done({}) << " reason "
      << phase->abort_reason() << " members";
    for (uint32_t m : phase->members()) {
      r << " " << m << ":" << phase->held_from(m) << (phase->member_done(m) ? "+" : "-");
    }
    r << "\n";
  }
  s.round = r.str();
  std::ostringstream t;
  t << "stored_state " << stored_state(store) << "\nresult " << store.result(kTask).value_or("-")
    << "\n";
  for (const StoredEvent& e : store.events(kTask)) {
    if (!outcome_events && outcome_event(e)) continue;
    t << "event " << event_line(e.client_id, e.kind, e.payload) << "\n";
  }
  s.store = t.str();
  for (const std::string& line : c.take_log()) s.log += line + "\n";
  return s;
}

// A crash between appending "open" and setting the state leaves it "declared"; the replay does
// not write "open" (only a finished round's state), so the recovered task stays "declared".
std::string declared_as_open(std::string store) {
  static const std::string kDeclared = std::string("stored_state ") + kDeclaredTaskState + "\n";
  if (store.rfind(kDeclared, 0) == 0) store.replace(0, kDeclared.size(), "stored_state open\n");
  return store;
}

void expect_same(const std::string& a, const std::string& b, const char* what) {
  if (a == b) return;
  std::fprintf(stderr, "%s differ:\n--- first\n%s\n--- second\n%s\n", what, a.c_str(), b.c_str());
  FUZZ_CHECK(!"the same state");
}

// ---- Recovery ----------------------------------------------------------------------------------

struct Recovered {
  std::string error;
  std::unique_ptr<Coordinator> coordinator;
  Snapshot state;
};

// The server's restart: a Coordinator over the store, which recovers the declared task.
Recovered recover(Store& store, Outbox& out, const TaskSpec& spec, uint64_t now,
                  const std::set<uint64_t>& clients) {
  Recovered r;
  r.error = documented("recovery", [&] {
    r.coordinator = std::make_unique<Coordinator>(store, out, std::vector<TaskSpec>{spec}, now);
  });
  if (r.coordinator) {
    const std::string read = documented(
        "reading the recovered store", [&] { r.state = snapshot(*r.coordinator, store, clients); });
    if (!read.empty()) {  // a corrupted SQLite file may fail later reads
      r.state = Snapshot();
      r.state.error = "after recovery: " + read;
    }
  } else {
    r.state.error = r.error;
  }
  return r;
}

// "<word> <at>[ <rest>]" as the rounds write it (rest only after "aborted"); false otherwise.
bool parse_transition(const std::vector<uint8_t>& payload, std::string& word, uint64_t& at) {
  const std::string text(payload.begin(), payload.end());
  std::istringstream in(text);
  if (!(in >> word >> at)) return false;
  std::string canonical = word + " " + std::to_string(at);
  if (word == "aborted") return text.compare(0, canonical.size() + 1, canonical + " ") == 0;
  return text == canonical;
}

// ---- The live oracle ---------------------------------------------------------------------------

// A live Coordinator re-executing the stored history: true when it stores exactly these events
// (plus, after them, the transitions a crash may have kept from the store).
class Live {
 public:
  explicit Live(const TaskSpec& spec)
      : spec_(spec), store_(std::make_shared<TapStore>(make_memory_store())) {}

  bool run(const std::vector<NewEvent>& events) {
    if (events.empty() || events[0].kind != EventKind::kTransition || events[0].client_id != 0) {
      return false;
    }
    std::string word;
    uint64_t t0 = 0;
    if (!parse_transition(events[0].payload, word, t0) || word != "open") return false;
    clock_ = t0;
    no_throw("the live coordinator", [&] {
      coordinator_ =
          std::make_unique<Coordinator>(*store_, out_, std::vector<TaskSpec>{spec_}, clock_);
    });
    for (size_t i = 0; i < events.size(); ++i) {
      if (store_->appended.size() <= i && !act(events[i])) return false;
      if (store_->appended.size() <= i || !same(store_->appended[i], events[i])) return false;
    }
    return true;
  }

  Coordinator& coordinator() { return *coordinator_; }
  TapStore& store() { return *store_; }
  QueueOutbox& outbox() { return out_; }
  uint64_t clock() const { return clock_; }

 private:
  static bool same(const NewEvent& a, const NewEvent& b) {
    if (noise_seed_note(a.kind, a.payload) && noise_seed_note(b.kind, b.payload)) {
      return a.client_id == b.client_id;  // each run draws its own
    }
    return a.kind == b.kind && a.client_id == b.client_id && a.payload == b.payload;
  }

  bool act(const NewEvent& event) {
    if (event.kind == EventKind::kDeviceMessage) {
      Envelope e = fedstat_v1_Envelope_init_zero;
      if (!fedstat::wire::decode_envelope(ByteSpan(event.payload.data(), event.payload.size()), e)
               .ok()) {
        return false;
      }
      ConnectionId connection;
      if (e.which_body == fedstat_v1_Envelope_client_hello_tag) {
        connection = next_connection_++;
        connections_[event.client_id] = connection;
        no_throw("live on_open",
                 [&] { coordinator_->on_open(connection, std::to_string(event.client_id)); });
      } else {
        auto it = connections_.find(event.client_id);
        if (it == connections_.end()) return false;
        connection = it->second;
      }
      no_throw("live on_frame", [&] { coordinator_->on_frame(connection, e); });
      return true;
    }
    // A note is the round's own (a noise seed, written with the close that estimates): one the
    // live round did not write first is not an honest history's.
    if (event.kind != EventKind::kTransition) return false;
    std::string word;
    uint64_t at = 0;
    if (!parse_transition(event.payload, word, at)) return false;
    if (word == "aborted") {  // the deadline's (the other aborts follow their transition)
      const uint64_t deadline = spec_.task.deadline_unix_seconds;
      if (deadline == 0 || clock_ >= deadline) return false;
      at = deadline;
    } else if (word == "open" || word == "completed" || at < clock_) {
      return false;
    }
    clock_ = at;
    no_throw("live on_tick", [&] { coordinator_->on_tick(clock_); });
    return true;
  }

  TaskSpec spec_;
  std::shared_ptr<TapStore> store_;
  QueueOutbox out_;
  std::unique_ptr<Coordinator> coordinator_;
  std::map<uint64_t, ConnectionId> connections_;
  ConnectionId next_connection_ = 1;
  uint64_t clock_ = 0;
};

// A resume of `client` on a fresh connection: everything the Coordinator answers, encoded.
std::vector<Bytes> resume_answers(Coordinator& c, QueueOutbox& out, ConnectionId connection,
                                  uint64_t client) {
  no_throw("resume", [&] {
    c.on_open(connection, std::to_string(client));
    c.on_frame(connection, hello(client, kTask));
  });
  std::vector<Bytes> answers;
  for (const Envelope& e : out.drain(connection)) answers.push_back(encode_bytes(e));
  return answers;
}

// ---- Plausibility of a published result --------------------------------------------------------

void check_result(const TaskSpec& spec, const std::string& json, Coordinator& c,
                  const std::set<uint64_t>& clients) {
  const char* p = json.c_str();
  static const char kHead[] = "{\"contributors\":";
  static const char kSum[] = ",\"sum\":[";
  FUZZ_CHECK(std::strncmp(p, kHead, sizeof kHead - 1) == 0);
  p += sizeof kHead - 1;
  char* end = nullptr;
  const uint64_t contributors = std::strtoull(p, &end, 10);
  FUZZ_CHECK(end != p);
  p = end;
  FUZZ_CHECK(std::strncmp(p, kSum, sizeof kSum - 1) == 0);
  p += sizeof kSum - 1;
  std::vector<uint64_t> sum;
  while (*p != ']') {
    sum.push_back(std::strtoull(p, &end, 10));
    FUZZ_CHECK(end != p);
    p = *end == ',' ? end + 1 : end;
  }
  const fedstat_v1_Task& task = spec.task;
  const uint64_t limit = task.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << task.bits) - 1;
  FUZZ_CHECK(sum.size() == task.vector_length);
  for (uint64_t word : sum) FUZZ_CHECK(word <= limit);
  FUZZ_CHECK(contributors >= task.min_clients);
  FUZZ_CHECK(contributors <= task.max_clients);
  const TaskRound* round = c.round(kTask);
  size_t replied = 0;
  for (uint64_t id : clients) replied += round->replied(id);
  FUZZ_CHECK(contributors <= replied);
  if (is_dist(spec)) {
    FUZZ_CHECK(contributors >= task.threshold);
    FUZZ_CHECK(round->secagg() != nullptr);
    FUZZ_CHECK(round->secagg()->members().size() == contributors);
    for (uint32_t m : round->secagg()->members()) FUZZ_CHECK(round->replied(m));
  }
}

// The stored transitions begin with the path an honest round takes to its result.
bool honest_path(const TaskSpec& spec, const std::vector<NewEvent>& events) {
  std::vector<std::string> path = {"open", "admission_closed"};
  if (is_dist(spec)) {
    path.insert(path.end(), 4, "secagg_closed");
  } else {
    path.push_back("reports_closed");
  }
  size_t next = 0;
  for (const NewEvent& e : events) {
    if (next == path.size()) break;
    if (e.kind != EventKind::kTransition) continue;
    std::string text(e.payload.begin(), e.payload.end());
    std::istringstream in(text);
    std::string word;
    in >> word;
    if (word == "completed") continue;  // the replay passes over it
    if (word != path[next]) return false;
    ++next;
  }
  return next == path.size();
}

// ---- SQLite ------------------------------------------------------------------------------------

void remove_sqlite_files(const std::string& path);

// The SQLite store's file, in a directory this process owns and removes when it exits.
std::string& sqlite_path_storage() {
  static std::string path;
  return path;
}

void remove_sqlite_directory() {
  const std::string& path = sqlite_path_storage();
  remove_sqlite_files(path);
  rmdir(path.substr(0, path.rfind('/')).c_str());
}

const std::string& sqlite_path() {
  std::string& path = sqlite_path_storage();
  if (path.empty()) {
    char pattern[] = "/dev/shm/fedstat-fuzz-store-XXXXXX";
    char fallback[] = "/tmp/fedstat-fuzz-store-XXXXXX";
    const char* made = mkdtemp(pattern);
    if (made == nullptr) made = mkdtemp(fallback);
    FUZZ_CHECK(made != nullptr);
    path = std::string(made) + "/store.db";
    std::atexit(remove_sqlite_directory);
  }
  return path;
}

void remove_sqlite_files(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::remove((path + suffix).c_str());
  }
}

// Applies the corruptions to the file; true when a byte changed.
bool corrupt(const std::string& path, const Input& in) {
  std::ifstream read(path, std::ios::binary);
  Bytes bytes((std::istreambuf_iterator<char>(read)), std::istreambuf_iterator<char>());
  read.close();
  FUZZ_CHECK(!bytes.empty());
  bool changed = false;
  for (const auto& [offset, mask] : in.corruptions) {
    if (mask == 0) continue;
    bytes[offset % bytes.size()] ^= mask;
    changed = true;
  }
  std::ofstream write(path, std::ios::binary | std::ios::trunc);
  write.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
  write.close();
  FUZZ_CHECK(write.good());
  return changed;
}

void check_sqlite(const TaskSpec& spec, const Input& in, const Recovered& memory, uint64_t now,
                  const std::set<uint64_t>& clients) {
  const std::string& path = sqlite_path();
  remove_sqlite_files(path);
  no_throw("writing the SQLite store", [&] {
    std::unique_ptr<Store> store = open_sqlite_store(path);
    fill(*store, spec, in);
  });
  const bool changed = corrupt(path, in);
  std::unique_ptr<Store> store;
  const std::string open_error =
      documented("open_sqlite_store", [&] { store = open_sqlite_store(path); });
  if (!changed) FUZZ_CHECK(open_error.empty());
  if (store) {
    std::string integrity;
    const std::string integrity_error =
        documented("integrity_check", [&] { integrity = store->integrity_check(); });
    bool unchanged = false;  // the task and its events read back as written
    documented("reading the store", [&] {
      bool task_ok = false;
      for (const StoredTask& t : store->tasks()) {
        if (t.task_id == kTask) {
          task_ok = t.definition == spec.definition_json && t.state == kStates[in.state];
        }
      }
      const std::vector<StoredEvent> events = store->events(kTask);
      bool events_ok = task_ok && events.size() == in.events.size();
      for (size_t i = 0; events_ok && i < events.size(); ++i) {
        events_ok = events[i].kind == in.events[i].kind &&
                    events[i].client_id == in.events[i].client_id &&
                    events[i].payload == in.events[i].payload;
      }
      unchanged = events_ok && !store->result(kTask).has_value();
    });
    if (!changed) FUZZ_CHECK(integrity_error.empty() && integrity == "ok" && unchanged);
    QueueOutbox out;
    Recovered recovered = recover(*store, out, spec, now, clients);
    if (integrity == "ok" && unchanged) {
      expect_same(memory.state.all(), recovered.state.all(), "SQLite and memory recoveries");
    }
  }
  store.reset();
  remove_sqlite_files(path);
}

// ---- One input ---------------------------------------------------------------------------------

void run(const Input& in) {
  const TaskSpec spec = spec_for(in.spec);
  std::set<uint64_t> clients = {0};
  for (const NewEvent& e : in.events) clients.insert(e.client_id);

  // The honest re-execution decides the clock the server restarts at.
  Live live(spec);
  const bool honest = in.open_state() && live.run(in.events);
  const uint64_t now = live.clock() != 0 ? live.clock() : kT0;

  TapStore store(make_memory_store());
  no_throw("filling the memory store", [&] { fill(store, spec, in); });
  store.appended.clear();
  QueueOutbox out;
  Recovered first = recover(store, out, spec, now, clients);
  const bool fresh = in.open_state() && in.events.empty();
  size_t seeds = 0, disputes = 0;
  for (const NewEvent& e : store.appended) {
    seeds += noise_seed_note(e.kind, e.payload);
    disputes += disputed_note(e.kind, e.payload);
  }
  FUZZ_CHECK(store.appended.size() - seeds - disputes == (fresh && first.error.empty() ? 1u : 0u));
  FUZZ_CHECK(seeds == 0 || (seeds == 1 && store.result(kTask).has_value()));
  FUZZ_CHECK(disputes == 0 || stored_state(store) == "completed" ||
             stored_state(store) == "aborted");

  // Determinism: the same events in a fresh store.
  {
    TapStore again(make_memory_store());
    fill(again, spec, in);
    QueueOutbox out2;
    Recovered second = recover(again, out2, spec, now, clients);
    expect_same(first.state.all(), second.state.all(), "two recoveries of the same events");
  }
  if (in.sqlite) check_sqlite(spec, in, first, now, clients);
  if (!first.coordinator) return;
  Coordinator& recovered = *first.coordinator;

  // Secure aggregation runs among devices that accepted the task (and only those).
  if (const SecAggPhase* phase = recovered.round(kTask)->secagg()) {
    for (uint32_t m : phase->members()) FUZZ_CHECK(recovered.round(kTask)->replied(m));
  }
  const std::optional<std::string> published = store.result(kTask);
  if (published && in.open_state() && !in.events.empty()) {
    FUZZ_CHECK(honest_path(spec, in.events));  // the replay itself published it
  }

  if (honest) {
    // The live round and the recovered one, at the same clock, are the same round.
    no_throw("tick", [&] { live.coordinator().on_tick(now); });
    no_throw("tick", [&] { recovered.on_tick(now); });
    Snapshot a = snapshot(live.coordinator(), live.store(), clients, false);
    Snapshot b = snapshot(recovered, store, clients, false);
    expect_same(a.round + a.store, b.round + declared_as_open(b.store),
                "the live and the recovered rounds");
    ConnectionId probe = 1000000;
    for (uint64_t id : clients) {
      if (!live.coordinator().round(kTask)->replied(id)) continue;
      const auto x = resume_answers(live.coordinator(), live.outbox(), probe, id);
      const auto y = resume_answers(recovered, out, probe, id);
      FUZZ_CHECK(x == y);
      ++probe;
    }
    a = snapshot(live.coordinator(), live.store(), clients, false);
    b = snapshot(recovered, store, clients, false);
    expect_same(a.round + a.store, b.round + declared_as_open(b.store),
                "the live and the recovered rounds, resumed");
  }

  // The recovered round runs on through every time-out.
  uint64_t clock = now;
  for (int i = 0; i < 8 && !recovered.round(kTask)->finished(); ++i) {
    clock += 35;
    no_throw("tick after recovery", [&] { recovered.on_tick(clock); });
  }
  if (const auto result = store.result(kTask)) check_result(spec, *result, recovered, clients);

  // Its whole history, replayed again, ends where it did.
  if (in.open_state()) {
    const Snapshot end = snapshot(recovered, store, clients);
    TapStore replay(make_memory_store());
    replay.put_task(kTask, spec.definition_json);
    replay.set_task_state(kTask, "open");
    const std::vector<StoredEvent> history = store.events(kTask);
    std::vector<NewEvent> events;
    for (const StoredEvent& e : history) events.push_back({kTask, e.client_id, e.kind, e.payload});
    if (!events.empty()) replay.append_events(events);
    if (const auto result = store.result(kTask)) replay.put_result(kTask, *result);
    replay.appended.clear();
    QueueOutbox out3;
    Recovered third = recover(replay, out3, spec, clock, clients);
    FUZZ_CHECK(replay.appended.empty());
    expect_same(end.round + "result " + store.result(kTask).value_or("-"),
                third.error + third.state.round + "result " + replay.result(kTask).value_or("-"),
                "a round and the replay of its whole history");
  }
}

// ---- Seeds: real rounds through a live Coordinator ---------------------------------------------

enum DropAt { kBeforeKeys, kBeforeShares, kBeforeMasking, kBeforeReveals, kNever };

struct Device {
  Device(uint64_t device_id, const TaskSpec& spec, bool accepts = true, int drop = kNever)
      : id(device_id), accept(accepts), drop_at(drop), peers(spec.task.max_clients) {
    const uint64_t limit =
        spec.task.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << spec.task.bits) - 1;
    uint64_t x = 0x9E3779B97F4A7C15ULL * (id + 1);
    for (uint32_t i = 0; i < spec.task.vector_length; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      words.push_back(x & limit);
    }
    if (is_dist(spec)) {
      fedstat::Seed256 seed;
      seed.bytes[0] = static_cast<uint8_t>(id);
      seed.bytes[1] = 0x5A;
      random = std::make_unique<fedstat::SeededStream>(seed, id);
      FUZZ_CHECK(client
                     .init(static_cast<uint32_t>(id),
                           fedstat::Span<fedstat::secagg::SecAggPeer>(peers.data(), peers.size()),
                           *random)
                     .ok());
    }
  }
  uint64_t id;
  bool accept;
  int drop_at;
  ConnectionId conn = 0;
  std::vector<uint64_t> words, masked;
  uint32_t acked = 0;  // report words the server acknowledged
  bool replied = false, gone = false;
  std::unique_ptr<fedstat::SeededStream> random;
  std::vector<fedstat::secagg::SecAggPeer> peers;
  fedstat::secagg::SecAggClient client;
};

// A server with a clock that moves only when a tick closes something (the live oracle's rule).
struct World {
  explicit World(uint8_t spec_index) : spec(spec_for(spec_index)), store(make_memory_store()) {
    restart();
  }
  void restart() {  // kill -9 and start again at the same clock
    coordinator.reset();
    coordinator = std::make_unique<Coordinator>(*store, out, std::vector<TaskSpec>{spec}, clock);
  }
  void tick(uint64_t t) {
    clock = t;
    coordinator->on_tick(t);
  }
  void frame(Device& d, const Envelope& e) { coordinator->on_frame(d.conn, e); }
  // Hello on a new connection; takes the Task and TaskData (and an Ack when resuming).
  void check_in(Device& d, uint32_t resume = 0) {
    d.conn = next_conn++;
    coordinator->on_open(d.conn, std::to_string(d.id));
    coordinator->on_frame(d.conn, hello(d.id, resume));
    while (!out.empty(d.conn)) {
      const Envelope e = out.pop(d.conn);
      if (e.which_body == fedstat_v1_Envelope_ack_tag) {
        FUZZ_CHECK(e.body.ack.offset == d.acked);  // the words stored before the crash
      }
    }
  }
  void answer(Device& d) {
    d.replied = true;
    frame(d, reply(kTask, d.accept));
  }
  // Report chunks (up to 64 words) until `upto` words are acknowledged.
  void send_reports(Device& d, uint32_t upto) {
    while (d.acked < upto) {
      const uint32_t n = std::min<uint32_t>(64, upto - d.acked);
      frame(d, report(kTask, d.words, d.acked, n));
      FUZZ_CHECK(!out.empty(d.conn));
      const Envelope a = out.pop(d.conn);
      FUZZ_CHECK(a.which_body == fedstat_v1_Envelope_ack_tag);
      d.acked = a.body.ack.offset;
    }
  }
  bool finished() { return coordinator->round(kTask)->finished(); }
  // Time-outs until the round is over.
  void run_out() {
    for (int i = 0; i < 8 && !finished(); ++i) tick(clock + 35);
  }
  std::vector<StoredEvent> events() { return store->events(kTask); }

  TaskSpec spec;
  std::unique_ptr<Store> store;
  QueueOutbox out;
  std::unique_ptr<Coordinator> coordinator;
  uint64_t clock = kT0;
  ConnectionId next_conn = 1;
};

// What a DIST device (the SDK's SecAggClient) does with a message; a device that drops goes
// silent (its stage then closes at the time-out).
void handle(World& w, Device& d, const Envelope& e) {
  namespace sa = fedstat::secagg;
  Envelope m = fedstat::wire::make_envelope();
  switch (e.which_body) {
    case fedstat_v1_Envelope_task_tag:
      if (!d.replied) w.answer(d);
      break;
    case fedstat_v1_Envelope_secagg_start_tag:
      if (d.drop_at == kBeforeKeys) {
        d.gone = true;
        return;
      }
      m.which_body = fedstat_v1_Envelope_secagg_keys_tag;
      FUZZ_CHECK(d.client.on_start(e.body.secagg_start, m.body.secagg_keys).ok());
      w.frame(d, m);
      break;
    case fedstat_v1_Envelope_secagg_peer_keys_tag:
      FUZZ_CHECK(d.client.on_peer_keys(e.body.secagg_peer_keys).ok());
      if (e.body.secagg_peer_keys.index + 1 < e.body.secagg_peer_keys.count) break;
      if (d.drop_at == kBeforeShares) {
        d.gone = true;
        return;
      }
      m.which_body = fedstat_v1_Envelope_secagg_share_tag;
      while (true) {
        auto more = d.client.next_share(m.body.secagg_share);
        FUZZ_CHECK(more.ok());
        if (!more.value()) break;
        w.frame(d, m);
      }
      break;
    case fedstat_v1_Envelope_secagg_share_tag:
      FUZZ_CHECK(d.client.on_share(e.body.secagg_share).ok());
      break;
    case fedstat_v1_Envelope_secagg_roster_tag:
      FUZZ_CHECK(d.client.on_roster(e.body.secagg_roster).ok());
      if (e.body.secagg_roster.round == 2) {
        if (d.drop_at == kBeforeMasking) {
          d.gone = true;
          return;
        }
        if (d.client.stage() == sa::SecAggStage::kReadyToMask) {
          d.masked = d.words;
          FUZZ_CHECK(d.client.mask(fedstat::Span<uint64_t>(d.masked.data(), d.masked.size())).ok());
        }
        m.which_body = fedstat_v1_Envelope_secagg_masked_chunk_tag;
        while (true) {
          auto more =
              d.client.next_chunk(fedstat::Span<const uint64_t>(d.masked.data(), d.masked.size()),
                                  m.body.secagg_masked_chunk);
          FUZZ_CHECK(more.ok());
          if (!more.value()) break;
          w.frame(d, m);
        }
      } else {
        if (d.drop_at == kBeforeReveals) {
          d.gone = true;
          return;
        }
        m.which_body = fedstat_v1_Envelope_secagg_reveal_tag;
        while (true) {
          auto more = d.client.next_reveal(m.body.secagg_reveal);
          FUZZ_CHECK(more.ok());
          if (!more.value()) break;
          w.frame(d, m);
        }
      }
      break;
    default:
      break;
  }
}

// Delivers queued messages until no device has any left; then time-outs until the round ends.
void run_dist(World& w, std::vector<std::unique_ptr<Device>>& devices) {
  for (auto& d : devices) w.check_in(*d);  // Task + TaskData taken: reply now
  for (auto& d : devices) w.answer(*d);
  for (int rounds = 0; rounds < 8 && !w.finished(); ++rounds) {
    for (bool progress = true; progress;) {
      progress = false;
      for (auto& d : devices) {
        while (!d->gone && !w.out.empty(d->conn)) {
          handle(w, *d, w.out.pop(d->conn));
          progress = true;
        }
      }
    }
    if (!w.finished()) w.tick(w.clock + w.spec.phase_timeout_seconds);
  }
  FUZZ_CHECK(w.finished());
}

std::vector<std::unique_ptr<Device>> dist_devices(const World& w, uint64_t first,
                                                  const std::vector<int>& drops) {
  std::vector<std::unique_ptr<Device>> devices;
  for (size_t i = 0; i < drops.size(); ++i) {
    devices.push_back(std::make_unique<Device>(first + i, w.spec, true, drops[i]));
  }
  return devices;
}

std::vector<std::unique_ptr<Device>> trusted_devices(const World& w, uint64_t first,
                                                     const std::vector<bool>& accepts) {
  std::vector<std::unique_ptr<Device>> devices;
  for (size_t i = 0; i < accepts.size(); ++i) {
    devices.push_back(std::make_unique<Device>(first + i, w.spec, accepts[i]));
  }
  return devices;
}

Bytes header(uint8_t mode, uint8_t spec, uint8_t state,
             const std::vector<std::pair<uint16_t, uint8_t>>& corruptions = {}) {
  Bytes out(kHeader, 0);
  out[0] = mode;
  out[1] = spec;
  out[2] = state;
  out[3] = static_cast<uint8_t>(corruptions.size());
  for (size_t i = 0; i < corruptions.size() && i < kMaxCorruptions; ++i) {
    out[4 + 3 * i] = static_cast<uint8_t>(corruptions[i].first);
    out[5 + 3 * i] = static_cast<uint8_t>(corruptions[i].first >> 8);
    out[6 + 3 * i] = corruptions[i].second;
  }
  return out;
}

void put_event(Bytes& out, const StoredEvent& e) {
  out.push_back(static_cast<uint8_t>(static_cast<uint32_t>(e.kind) - 1));
  if (e.client_id < 0xFE) {
    out.push_back(static_cast<uint8_t>(e.client_id));
  } else if (e.client_id >= (uint64_t{1} << 32) && e.client_id - (uint64_t{1} << 32) < 256) {
    out.push_back(0xFF);
    out.push_back(static_cast<uint8_t>(e.client_id));
  } else {
    out.push_back(0xFE);
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(e.client_id >> (8 * i)));
  }
  out.push_back(static_cast<uint8_t>(e.payload.size() >> 8));
  out.push_back(static_cast<uint8_t>(e.payload.size()));
  out.insert(out.end(), e.payload.begin(), e.payload.end());
}

Bytes serialise(const Bytes& head, const std::vector<StoredEvent>& events, size_t count) {
  Bytes out = head;
  for (size_t i = 0; i < count && i < events.size(); ++i) put_event(out, events[i]);
  return out;
}

// Trusted scenarios on task 0 (3 devices, 2 chunks each) unless said otherwise.
std::vector<StoredEvent> trusted_all_complete(uint8_t spec = 0) {
  World w(spec);
  auto devices = trusted_devices(w, 11, std::vector<bool>(w.spec.task.max_clients, true));
  for (auto& d : devices) {
    w.check_in(*d);
    w.answer(*d);  // the last fills the round: admission closes
  }
  for (uint32_t upto = 64;; upto += 64) {  // chunk by chunk, in turn
    for (auto& d : devices) w.send_reports(*d, std::min(upto, w.spec.task.vector_length));
    if (upto >= w.spec.task.vector_length) break;
  }
  FUZZ_CHECK(w.finished());
  return w.events();
}

std::vector<StoredEvent> trusted_scenario(int which) {
  World w(0);
  const uint32_t length = w.spec.task.vector_length;
  std::vector<bool> accepts = {true, true, which == 0 ? false : true};
  if (which == 2) accepts = {true, false, false};
  auto devices = trusted_devices(w, 11, accepts);
  switch (which) {
    case 0:  // a decline: admission ends at its time-out
    case 2:  // two declines: too few, aborted
      for (auto& d : devices) {
        w.check_in(*d);
        w.answer(*d);
      }
      w.tick(w.clock + w.spec.admission_seconds);
      for (auto& d : devices) {
        if (d->accept && !w.finished()) w.send_reports(*d, length);
      }
      break;
    case 1:  // a report cut short by the time-out
      for (auto& d : devices) {
        w.check_in(*d);
        w.answer(*d);
      }
      w.send_reports(*devices[0], length);
      w.send_reports(*devices[1], length);
      w.send_reports(*devices[2], 64);
      w.tick(w.clock + w.spec.phase_timeout_seconds);
      break;
    case 3:  // a crash half-way; every device resumes
      for (auto& d : devices) {
        w.check_in(*d);
        w.answer(*d);
      }
      w.send_reports(*devices[0], length);
      w.send_reports(*devices[1], 64);
      w.restart();
      for (auto& d : devices) {
        w.check_in(*d, kTask);
        w.send_reports(*d, length);
      }
      break;
    case 4:  // a crash after a hello: its TaskReply was never stored, its resume admits it
      w.check_in(*devices[0]);
      w.answer(*devices[0]);
      w.check_in(*devices[1]);
      w.answer(*devices[1]);
      w.check_in(*devices[2]);
      w.restart();
      for (auto& d : devices) w.check_in(*d, kTask);
      for (auto& d : devices) w.send_reports(*d, length);
      break;
    case 5:  // reports while admission is open, which then ends at its time-out
      for (size_t i = 0; i < 2; ++i) {
        w.check_in(*devices[i]);
        w.answer(*devices[i]);
        w.send_reports(*devices[i], length);
      }
      w.tick(w.clock + w.spec.admission_seconds);
      break;
    default:  // the deadline passes while reports are awaited
      for (auto& d : devices) {
        w.check_in(*d);
        w.answer(*d);
      }
      w.send_reports(*devices[0], 64);
      w.tick(w.spec.task.deadline_unix_seconds);
      break;
  }
  w.run_out();
  return w.events();
}

std::vector<StoredEvent> dist_scenario(uint8_t spec, const std::vector<int>& drops) {
  World w(spec);
  auto devices = dist_devices(w, 21, drops);
  run_dist(w, devices);
  return w.events();
}

void write_seeds(fedstat::fuzz::SeedWriter& out) {
  const Bytes open0 = header(0, 0, 0), open1 = header(0, 1, 0);
  // Trusted, all complete: whole, every prefix, other stored states, SQLite.
  const auto all = trusted_all_complete();
  for (size_t n = 1; n <= all.size(); ++n) out.add(serialise(open0, all, n));
  out.add(serialise(header(0, 0, 1), all, all.size()));
  out.add(serialise(header(0, 0, 2), all, all.size()));
  out.add(serialise(header(0, 0, 3), all, all.size() / 2));
  out.add(serialise(header(3, 0, 0), all, all.size()));
  out.add(serialise(header(3, 0, 0, {{100, 0x40}}), all, all.size()));
  out.add(serialise(header(3, 0, 0, {{5000, 0x01}, {9000, 0x80}}), all, all.size()));
  out.add(serialise(header(0, 2, 0), trusted_all_complete(2), 100));
  for (int which = 0; which <= 6; ++which) {
    const auto events = trusted_scenario(which);
    out.add(serialise(open0, events, events.size()));
  }
  // DIST of 3 (threshold 2): all survive (whole and every prefix), drop-outs, too few.
  const auto dist = dist_scenario(1, {kNever, kNever, kNever});
  for (size_t n = 1; n <= dist.size(); ++n) out.add(serialise(open1, dist, n));
  out.add(serialise(header(3, 1, 0), dist, dist.size()));
  out.add(serialise(open1, dist_scenario(1, {kNever, kNever, kBeforeMasking}), 1000));
  out.add(serialise(open1, dist_scenario(1, {kBeforeKeys, kNever, kNever}), 1000));
  out.add(serialise(open1, dist_scenario(1, {kNever, kBeforeShares, kBeforeShares}), 1000));
  // DIST of 4 (threshold 3, one chunk of 64-bit words).
  const Bytes open3 = header(0, 3, 0);
  out.add(serialise(open3, dist_scenario(3, {kNever, kNever, kNever, kBeforeReveals}), 1000));
  out.add(serialise(open3, dist_scenario(3, {kNever, kBeforeShares, kNever, kNever}), 1000));
  out.add(serialise(open3, dist_scenario(3, {kNever, kNever, kNever, kNever}), 1000));
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::optional<Input> in = decode_input(data, size);
  if (in) run(*in);
  return 0;
}
