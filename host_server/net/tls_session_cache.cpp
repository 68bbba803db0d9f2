// TlsSessionCache: see tls_session_cache.h.
#include "host_server/net/tls_session_cache.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "sdk/base/crypto.h"

namespace fedstat {
namespace net {

TlsSessionCache::TlsSessionCache(TlsSessionCacheConfig config,
                                 std::function<Clock::time_point()> now)
    : config_(config), now_(now ? std::move(now) : [] { return Clock::now(); }) {
  config_.lifetime_seconds = std::min<uint32_t>(config_.lifetime_seconds, 86400);
}

void TlsSessionCache::wipe(Entry& entry) {
  crypto::wipe(entry.session.data(), entry.session.size());
  crypto::wipe(entry.key.data(), entry.key.size());
}

std::optional<std::string> TlsSessionCache::key_of(const mbedtls_ssl_session& session) const {
  if (config_.max_entries == 0 || session.id_len == 0 || session.id_len > sizeof(session.id)) {
    return std::nullopt;
  }
  return std::string(reinterpret_cast<const char*>(session.id), session.id_len);
}

TlsSessionCache::~TlsSessionCache() {
  for (auto& [id, entry] : entries_) wipe(entry);
}

void TlsSessionCache::forget(const std::string& id) {
  const auto found = entries_.find(id);
  if (found == entries_.end()) return;
  wipe(found->second);
  const auto owner = id_of_identity_.find(found->second.identity);
  if (owner != id_of_identity_.end() && owner->second == id) id_of_identity_.erase(owner);
  entries_.erase(found);
}

void TlsSessionCache::forget_identity(const std::string& identity) {
  const auto held = id_of_identity_.find(identity);
  if (held == id_of_identity_.end()) return;
  forget(std::string(held->second));  // a copy: forget() erases the map's entry
}

void TlsSessionCache::forget_expired(Clock::time_point now) {
  const auto lifetime = std::chrono::seconds(config_.lifetime_seconds);
  while (!order_.empty()) {
    const auto found = entries_.find(order_.front());
    if (found != entries_.end() && now - found->second.made < lifetime) break;
    forget(order_.front());  // expired, or already forgotten by restore()
    order_.pop_front();
  }
}

bool TlsSessionCache::store(const mbedtls_ssl_session& session, const std::string& identity,
                            const Key& key) {
  const std::optional<std::string> key_or_none = key_of(session);
  if (!key_or_none) return false;
  const std::string& id = *key_or_none;
  const Clock::time_point now = now_();
  forget_expired(now);
  if (entries_.count(id) != 0) return false;
  Entry entry;
  entry.identity = identity;  // before the secret is in it: nothing to wipe if this throws
  size_t length = 0;
  // The first call sizes the session (BUFFER_TOO_SMALL), the second writes it.
  if (mbedtls_ssl_session_save(&session, nullptr, 0, &length) != MBEDTLS_ERR_SSL_BUFFER_TOO_SMALL ||
      length == 0) {
    return false;
  }
  entry.session.resize(length);
  if (mbedtls_ssl_session_save(&session, entry.session.data(), entry.session.size(), &length) !=
      0) {
    wipe(entry);
    return false;
  }
  entry.key = key;
  entry.made = now;
  try {
    const auto previous = id_of_identity_.find(identity);
    if (previous != id_of_identity_.end()) forget(std::string(previous->second));
    while (entries_.size() >= config_.max_entries && !order_.empty()) {
      forget(order_.front());  // the oldest (or an id already forgotten)
      order_.pop_front();
    }
    entries_.emplace(id, std::move(entry));
    id_of_identity_[identity] = id;
    order_.push_back(id);
  } catch (...) {
    wipe(entry);
    forget(id);
    throw;
  }
  wipe(entry);  // the moved-from copy: its key (the session bytes moved out)
  if (order_.size() > 2 * config_.max_entries) {
    // Ids restore() forgot stay in order_ until they reach its front; drop them now and then so
    // that order_ stays within twice the cache.
    order_.erase(
        std::remove_if(order_.begin(), order_.end(),
                       [this](const std::string& kept) { return entries_.count(kept) == 0; }),
        order_.end());  // allocates nothing: no live id can be lost on the way
  }
  return true;
}

std::optional<std::string> TlsSessionCache::restore(mbedtls_ssl_session& session,
                                                    const CurrentKey& current_key) {
  const std::optional<std::string> key_or_none = key_of(session);
  if (!key_or_none) return std::nullopt;
  const std::string& id = *key_or_none;
  const Clock::time_point now = now_();
  forget_expired(now);
  const auto found = entries_.find(id);
  if (found == entries_.end()) return std::nullopt;
  Entry& entry = found->second;
  if (now - entry.made >= std::chrono::seconds(config_.lifetime_seconds)) {
    forget(id);  // a backstop: forget_expired() has already taken every expired entry
    return std::nullopt;
  }
  std::optional<Key> key;
  try {
    key = current_key(entry.identity);
  } catch (...) {
    key.reset();  // a lookup that fails is no key: never resume on it
  }
  const bool same_key = key.has_value() && *key == entry.key;
  if (key) crypto::wipe(key->data(), key->size());
  if (!same_key) {
    forget(id);  // revoked or rotated: that identity must make a full handshake
    return std::nullopt;
  }
  mbedtls_ssl_session loaded;
  mbedtls_ssl_session_init(&loaded);
  if (mbedtls_ssl_session_load(&loaded, entry.session.data(), entry.session.size()) != 0 ||
      loaded.id_len != session.id_len || std::memcmp(loaded.id, session.id, session.id_len) != 0) {
    mbedtls_ssl_session_free(&loaded);
    forget(id);
    return std::nullopt;
  }
  mbedtls_ssl_session_free(&session);  // mbedTLS's own cache does the same before the move
  session = loaded;                    // the struct owns no memory for a PSK session
  crypto::wipe(&loaded, sizeof(loaded));
  return entry.identity;
}

}  // namespace net
}  // namespace fedstat
