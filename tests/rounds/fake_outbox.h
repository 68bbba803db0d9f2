// FakeOutbox: queues what the Coordinator sends per connection, records closes, and notes at
// each send how many events the store held (the persist-then-answer oracle). Paper: none.
#ifndef FEDSTAT_TESTS_ROUNDS_FAKE_OUTBOX_H_
#define FEDSTAT_TESTS_ROUNDS_FAKE_OUTBOX_H_

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "host_server/rounds/outbox.h"
#include "tests/rounds/fake_store.h"

namespace fedstat {
namespace host {

struct Sent {
  ConnectionId connection = 0;
  fedstat_v1_Envelope envelope = fedstat_v1_Envelope_init_zero;
  size_t events_stored = 0;  // the store's event count when this was sent
};

class FakeOutbox : public Outbox {
 public:
  explicit FakeOutbox(const FakeStore& store) : store_(store) {}
  void send(ConnectionId connection, const fedstat_v1_Envelope& envelope) override {
    Sent s{connection, envelope, store_.event_count()};
    queues_[connection].push_back(s);
    log_.push_back(s);
  }
  // With a hook set, close() calls it at once, as a net layer reporting the close synchronously
  // would (the Coordinator must bear being called back from inside its own sends).
  void close(ConnectionId connection) override {
    if (!closed_.insert(connection).second) return;
    if (on_close_hook) on_close_hook(connection);
  }
  std::function<void(ConnectionId)> on_close_hook;
  void keep_open(ConnectionId connection, uint32_t seconds) override {
    kept_open_[connection] = seconds;
  }
  // The last keep_open for `c` (0: none).
  uint32_t kept_open(ConnectionId c) const {
    auto it = kept_open_.find(c);
    return it == kept_open_.end() ? 0 : it->second;
  }

  // Called before every read below (a test whose answers wait behind a store's writer delivers
  // them here: rounds/gated_outbox.h).
  std::function<void()> before_read;

  bool empty(ConnectionId c) {
    if (before_read) before_read();
    return queues_[c].empty();
  }
  fedstat_v1_Envelope pop(ConnectionId c) {
    if (before_read) before_read();
    fedstat_v1_Envelope e = queues_[c].front().envelope;
    queues_[c].pop_front();
    return e;
  }
  std::vector<fedstat_v1_Envelope> drain(ConnectionId c) {
    std::vector<fedstat_v1_Envelope> out;
    while (!empty(c)) out.push_back(pop(c));
    return out;
  }
  bool closed(ConnectionId c) const {
    if (before_read) before_read();
    return closed_.count(c) != 0;
  }
  const std::vector<Sent>& log() const {
    if (before_read) before_read();
    return log_;
  }

 private:
  const FakeStore& store_;
  std::map<ConnectionId, std::deque<Sent>> queues_;
  std::set<ConnectionId> closed_;
  std::vector<Sent> log_;
  std::map<ConnectionId, uint32_t> kept_open_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_TESTS_ROUNDS_FAKE_OUTBOX_H_
