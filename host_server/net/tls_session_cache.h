// TlsSessionCache: the server's memory of recent TLS sessions, so that a device that connects
// again resumes its session (RFC 5246 §7.3, session-ID resumption) instead of paying a new
// ECDHE-PSK handshake — no X25519 on either side, about a tenth of the server's handshake CPU.
//
// Each entry binds a session id to the device identity and PSK that authenticated the full
// handshake which made it. A resumption proves knowledge of that session's master secret (both
// Finished messages are keyed with it), so only the device that made the session can resume it
// as that identity. restore() refuses (the device then makes a full handshake) when the id is
// unknown, the entry is older than lifetime_seconds (counted from its full handshake: a
// resumption never extends it), or `current_key` says the identity's PSK is no longer the one it
// was made with (a revoked or rotated credential).
//
// Bounded: at most max_entries sessions and one per identity (a device's new full handshake
// replaces its previous session, so one credential cannot flush the others' sessions beyond its
// own one); a full cache forgets its oldest first (entries expire in insertion order, since
// resumptions do not renew them). max_entries 0 turns resumption off. lifetime_seconds is at
// most 86,400 (larger values are taken as 86,400).
// Forward secrecy: an entry holds its session's master secret, which decrypts the full
// handshake's connection and every one resumed from it; a server memory read within the
// lifetime exposes them. Entries are wiped (mbedtls_platform_zeroize) when forgotten, when
// purge_expired() finds them expired (the TlsServer calls it every session_purge_ms, a minute by
// default) and at destruction.
// Memory: max_entries × about 420 bytes measured (the serialised session, 114 bytes with Debian's
// mbedTLS 2.28, the identity, the 32-byte PSK, the maps' nodes; 6.9 MB at 16,384), up to twice
// the id list under revocation churn.
// Threads: none of its own; the TlsServer's io thread calls it. Paper: none (transport).
#ifndef FEDSTAT_HOST_SERVER_NET_TLS_SESSION_CACHE_H_
#define FEDSTAT_HOST_SERVER_NET_TLS_SESSION_CACHE_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "mbedtls/ssl.h"

namespace fedstat {
namespace net {

struct TlsSessionCacheConfig {
  size_t max_entries = 16384;        // 0: no resumption
  uint32_t lifetime_seconds = 3600;  // at most 86,400 (RFC 5246 §F.1.4: 24 hours)
};

class TlsSessionCache {
 public:
  using Clock = std::chrono::steady_clock;
  using Key = std::array<uint8_t, 32>;
  // The PSK an identity has now, or nullopt when it has none (TlsServerConfig::lookup_psk).
  using CurrentKey = std::function<std::optional<Key>(const std::string& identity)>;

  // `now` is the clock entries age by (tests pass their own); empty: Clock::now.
  explicit TlsSessionCache(TlsSessionCacheConfig config,
                           std::function<Clock::time_point()> now = {});
  ~TlsSessionCache();
  TlsSessionCache(const TlsSessionCache&) = delete;
  TlsSessionCache& operator=(const TlsSessionCache&) = delete;

  // Remembers a full handshake's `session` (its id set by mbedTLS) as made by `identity` with
  // `key`. False, and nothing kept, when the cache is off, the id is empty or already known, or
  // mbedTLS cannot serialise the session.
  bool store(const mbedtls_ssl_session& session, const std::string& identity, const Key& key);
  // For the session id in session.id: loads the remembered session into `session` (mbedTLS's
  // f_get_cache contract) and returns the identity it was made by. nullopt, `session` untouched,
  // when there is no such entry, it has expired (it is forgotten), or current_key(identity) is
  // not the key it was made with (forgotten too).
  std::optional<std::string> restore(mbedtls_ssl_session& session, const CurrentKey& current_key);

  // Forgets (and wipes) every entry past its lifetime.
  void purge_expired() { forget_expired(now_()); }
  // Forgets (and wipes) `identity`'s session, if one is held (a revoked credential: restore()
  // would refuse it too, but its master secret need not wait in memory until then).
  void forget_identity(const std::string& identity);

  size_t size() const { return entries_.size(); }
  bool enabled() const { return config_.max_entries > 0; }

 private:
  struct Entry {
    std::vector<uint8_t> session;  // mbedtls_ssl_session_save's bytes
    std::string identity;
    Key key;
    Clock::time_point made;
  };
  static void wipe(Entry& entry);
  // The session's id as a map key, or nullopt when the cache is off or the id is empty.
  std::optional<std::string> key_of(const mbedtls_ssl_session& session) const;
  void forget(const std::string& id);
  void forget_expired(Clock::time_point now);

  TlsSessionCacheConfig config_;
  std::function<Clock::time_point()> now_;
  std::unordered_map<std::string, Entry> entries_;               // by session id
  std::unordered_map<std::string, std::string> id_of_identity_;  // each identity's one session
  std::deque<std::string> order_;  // ids, oldest first (may name forgotten ones)
};

}  // namespace net
}  // namespace fedstat

#endif  // FEDSTAT_HOST_SERVER_NET_TLS_SESSION_CACHE_H_
