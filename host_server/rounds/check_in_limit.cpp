// The per-credential check-in rate limit (check_in_limit.h).
#include "host_server/rounds/check_in_limit.h"

#include <algorithm>

namespace fedstat {
namespace host {

void CheckInLimit::refill(Bucket& bucket, uint64_t now) const {
  if (now < bucket.at) bucket.at = now;  // the clock went back: refill from here, not from then
  if (now == bucket.at) return;          // the same second: nothing added
  const uint64_t elapsed = now - bucket.at;
  // Past a minute the bucket is full whatever it held (and the product cannot overflow).
  bucket.level =
      elapsed >= 60 ? capacity() : std::min(capacity(), bucket.level + elapsed * per_minute_);
  bucket.at = now;
}

CheckInLimit::Verdict CheckInLimit::admit(uint64_t client, uint64_t now) {
  if (per_minute_ == 0) return Verdict::kAdmitted;
  auto [it, fresh] = buckets_.try_emplace(client, Bucket{capacity(), now, false});
  Bucket& bucket = it->second;
  if (!fresh) refill(bucket, now);
  if (bucket.level < 60) {
    const bool first = !bucket.refusing;
    bucket.refusing = true;
    return first ? Verdict::kFirstRefusal : Verdict::kRefused;
  }
  bucket.level -= 60;
  bucket.refusing = false;
  return Verdict::kAdmitted;
}

void CheckInLimit::prune(uint64_t now) {
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    Bucket& bucket = it->second;
    refill(bucket, now);
    if (bucket.level >= capacity()) {
      it = buckets_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace host
}  // namespace fedstat
