// CheckInLimit: the per-credential rate limit on check-ins (ClientHello) — a token bucket per
// device id. Each device may check in `per_minute` times at once (the bucket starts full), then
// once every 60 / per_minute seconds on average: the bucket refills at per_minute tokens a
// minute, up to per_minute. A check-in beyond it is refused (the Coordinator answers RETRY_LATER,
// kResourceExhausted, and closes); a refused check-in costs no token, so a device that keeps
// knocking is let in again as soon as a token is back.
//
// Why: a check-in costs the server more than the TLS handshake before it — an accepted ClientHello
// is stored (an event in the store, for good) and the task's data is sent; and a device that was
// offered a task and never replied holds a place in the round until its connection goes. One
// credential checking in as fast as it can (a flood, or a device that drops in every round)
// would grow the store and keep the round's last place taken without bound. Honest devices check
// in every few minutes (the emulated fleets' polling, once a second while waiting for a chained
// task's second stage, stays below the default).
//
// Time is the Coordinator's clock, whole unix seconds. A time earlier than the last one seen for a
// device refills nothing then, and the refill counts from that earlier time on (a clock stepped
// back does not lock a device out until it catches up). Memory: one entry (16 bytes of state plus
// the map's node) per device that checked in within the last minute; prune() drops the full
// buckets, which are the same as none. Not thread-safe (the Coordinator's io thread). Paper: none.
#ifndef FEDSTAT_HOST_ROUNDS_CHECK_IN_LIMIT_H_
#define FEDSTAT_HOST_ROUNDS_CHECK_IN_LIMIT_H_

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace fedstat {
namespace host {

// The default: 60 check-ins per device per minute (a burst of 60, then one a second).
inline constexpr uint32_t kDefaultCheckInsPerMinute = 60;

class CheckInLimit {
 public:
  // per_minute == 0: no limit (every check-in is admitted, nothing is kept).
  explicit CheckInLimit(uint32_t per_minute = kDefaultCheckInsPerMinute)
      : per_minute_(per_minute) {}

  enum class Verdict {
    kAdmitted,      // a token was taken
    kFirstRefusal,  // over the limit (nothing taken), the first refusal since the last admission
    kRefused,       // over the limit again
  };
  // Takes a token for `client` at `now` (unix seconds) if it has one.
  Verdict admit(uint64_t client, uint64_t now);
  // Forgets the devices whose bucket is full again at `now`.
  void prune(uint64_t now);

  uint32_t per_minute() const { return per_minute_; }
  size_t tracked() const { return buckets_.size(); }
  bool tracks(uint64_t client) const { return buckets_.count(client) != 0; }

 private:
  // Tokens are counted in sixtieths: a check-in costs 60, a second refills per_minute_, the
  // bucket holds at most 60 · per_minute_.
  struct Bucket {
    uint64_t level = 0;
    uint64_t at = 0;        // when `level` was last brought up to date
    bool refusing = false;  // the last check-in was refused
  };
  uint64_t capacity() const { return uint64_t{60} * per_minute_; }
  void refill(Bucket& bucket, uint64_t now) const;

  uint32_t per_minute_;
  std::unordered_map<uint64_t, Bucket> buckets_;
};

}  // namespace host
}  // namespace fedstat

#endif  // FEDSTAT_HOST_ROUNDS_CHECK_IN_LIMIT_H_
