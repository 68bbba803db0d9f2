// Fuzz target: the host's SecAggServer (host_server/secagg/secagg_server.h) driven through one
// session by a SEQUENCE of operations from the fuzzer, as the host's round loop drives it: the
// clients' messages (each decoded as a wire Envelope, decode_envelope, whose SecAgg body goes to
// on_keys, on_share, on_chunk or on_reveal with the sender id its connection authenticated), the
// ends of the rounds (close_advertising, close_sharing, close_masking, finish) and shares_for.
//
// Input: 4 bytes of configuration — threshold (byte % 8), max_clients (byte % 9, or 1022..1027
// for bytes 250..255), vector_length (byte % 131), bits (byte % 66); the session id is fixed —
// then operations: an op byte (% 6: message, close_advertising, close_sharing, close_masking,
// finish, shares_for); a message is a sender byte, a 2-byte big-endian length and that many bytes
// of encoded Envelope (the last may be cut short); shares_for takes an id byte. Seeds: the
// operations of real sessions of SecAggClients (4 clients, threshold 3, 70 words of 20 bits; 3
// clients of 64-bit words, threshold 2), with dropouts before sharing, masking and unmasking, every
// message twice, forbidden reveals, aborts in every round, other sessions' and malformed messages.
//
// Invariants beyond "no crash or sanitizer report":
//   - the constructor throws std::invalid_argument exactly outside the documented limits;
//   - never both kinds of reveal about one client are accepted (a self-mask share and a
//     secret-key share), whoever sends them; an accepted reveal is of the kind the protocol
//     allows (b for a member of U3, s^SK for one of U2 \ U3);
//   - a rejected message changes nothing but, when it is malformed, its sender's exclusion: a
//     twin server fed only the accepted operations (and told the same exclusions) gives every
//     message the same verdict (tried on a copy of the twin when the message is rejected), and
//     the same close_* and finish results, aborted(), abort_reason(), u3(), excluded() and
//     shares_for(); an excluded client is in no later roster;
//   - once aborted, every later call is refused; a message for another session is refused with
//     kInvalidArgument;
//   - what the server accepts and announces follows the accepted messages: U1 (ascending ids, the
//     advertised keys), U2 (the clients that shared with every peer), U3 (the members of U2 whose
//     whole vector arrived, in order, below 2^bits), shares_for (the shares accepted for that
//     client, after round 1 only those from U2);
//   - when finish succeeds on a session of real SecAggClients (the keys of U1 are those the SDK
//     client of that id draws from the fixed seed, and every accepted masked word and reveal is
//     the one that client makes for this U1, U2, U3), the sum is Σ_{u∈U3} x_u mod 2^bits; those
//     clients also take the rosters the server made.
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "host_server/secagg/secagg_server.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::Result;
using fedstat::SeededStream;
using fedstat::Span;
using fedstat::Status;
using fedstat::StatusCode;
using fedstat::host::kMaxSecAggClients;
using fedstat::host::SecAggServer;
using fedstat::host::SecAggServerConfig;
using fedstat::secagg::SecAggClient;
using fedstat::secagg::SecAggPeer;
using fedstat::wire::Envelope;

constexpr uint64_t kSession = 0x5EC0A6617ull;
constexpr size_t kStorage = 8;    // the real clients' roster storage
constexpr uint32_t kRealIds = 8;  // real clients: ids 1..kRealIds
constexpr size_t kMaxOps = 160;   // operations per input
constexpr size_t kMaxOracles = 256;

enum Op : uint8_t {
  kMessage,
  kCloseAdvertising,
  kCloseSharing,
  kCloseMasking,
  kFinish,
  kSharesFor,
  kOpCount
};

fedstat::Seed256 fuzz_seed() {
  fedstat::Seed256 seed;
  for (size_t i = 0; i < sizeof seed.bytes; ++i) seed.bytes[i] = static_cast<uint8_t>(0xA5 ^ i);
  return seed;
}

uint64_t limit_of(uint32_t bits) {
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

// Word i of client `id`'s input x_id (what the real clients mask).
uint64_t input_word(uint32_t id, size_t i, uint32_t bits) {
  uint64_t z = ((uint64_t{id} << 32) | i) * 0x9E3779B97F4A7C15ull;
  z ^= z >> 29;
  return (z * 0xBF58476D1CE4E5B9ull) & limit_of(bits);
}

bool same_bytes(const uint8_t* a, size_t a_size, const uint8_t* b, size_t b_size) {
  return a_size == b_size && std::memcmp(a, b, a_size) == 0;
}

bool same_share(const fedstat_v1_SecAggShare& a, const fedstat_v1_SecAggShare& b) {
  return a.session == b.session && a.from_id == b.from_id && a.to_id == b.to_id &&
         same_bytes(a.ciphertext.bytes, a.ciphertext.size, b.ciphertext.bytes, b.ciphertext.size);
}

bool same_shares(const std::vector<fedstat_v1_SecAggShare>& a,
                 const std::vector<fedstat_v1_SecAggShare>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same_share(a[i], b[i])) return false;
  }
  return true;
}

bool same_reveal(const fedstat_v1_SecAggReveal& a, const fedstat_v1_SecAggReveal& b) {
  return a.session == b.session && a.from_id == b.from_id && a.about_id == b.about_id &&
         a.self_mask == b.self_mask &&
         same_bytes(a.share.bytes, a.share.size, b.share.bytes, b.share.size);
}

bool same_roster(const fedstat_v1_SecAggRoster& a, const fedstat_v1_SecAggRoster& b) {
  return a.session == b.session && a.round == b.round &&
         same_bytes(a.members.bytes, a.members.size, b.members.bytes, b.members.size);
}

// Everything of a client's keys that the roster entry (and so the session hash) holds.
bool same_keys(const fedstat_v1_SecAggKeys& a, const fedstat_v1_SecAggKeys& b) {
  return same_bytes(a.encryption_key.bytes, a.encryption_key.size, b.encryption_key.bytes,
                    b.encryption_key.size) &&
         same_bytes(a.masking_key.bytes, a.masking_key.size, b.masking_key.bytes,
                    b.masking_key.size) &&
         same_bytes(a.commitment.bytes, a.commitment.size, b.commitment.bytes, b.commitment.size);
}

// The roster bitmap of `members` over U1 (`u1`: ids in roster order).
fedstat_v1_SecAggRoster bitmap(const std::vector<uint32_t>& u1, const std::set<uint32_t>& members,
                               uint32_t round) {
  fedstat_v1_SecAggRoster r = fedstat_v1_SecAggRoster_init_zero;
  r.session = kSession;
  r.round = round;
  r.members.size = static_cast<pb_size_t>((u1.size() + 7) / 8);
  for (size_t i = 0; i < u1.size(); ++i) {
    if (members.count(u1[i])) r.members.bytes[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  return r;
}

// ---- Real clients: what SecAggClients of ids 1..kRealIds send in one session ----------------

struct Party {
  explicit Party(uint32_t id) : stream(fuzz_seed(), id) {
    FUZZ_CHECK(client.init(id, Span<SecAggPeer>(peers, kStorage), stream).ok());
  }
  SeededStream stream;
  SecAggPeer peers[kStorage];
  SecAggClient client;
};

struct RealSession {
  bool ok = false;                                   // every step below succeeded
  std::vector<fedstat_v1_SecAggKeys> keys;           // by roster index
  std::vector<fedstat_v1_SecAggShare> shares;        // every member's share for every peer
  std::map<uint32_t, std::vector<uint64_t>> masked;  // the masked inputs of U3
  std::map<uint32_t, std::vector<fedstat_v1_SecAggMaskedChunk>> chunks;
  std::vector<fedstat_v1_SecAggReveal> reveals;  // what the members of U3 reveal
};

// Real clients of ids `u1` (ascending) through a session whose rosters are U1, U2 and U3; stops
// at the first step that fails (ok false), keeping what was made before it.
RealSession run_real(const fedstat_v1_SecAggStart& start, const std::vector<uint32_t>& u1,
                     const std::set<uint32_t>& u2, const std::set<uint32_t>& u3) {
  RealSession out;
  if (u1.size() > kStorage || start.threshold > kStorage) return out;
  fedstat_v1_SecAggStart s = start;
  // Not part of the session hash: the masks do not depend on it. |U1|: the largest session the
  // clients accept (2·t > max_clients, |U1| ≤ max_clients).
  s.max_clients = static_cast<uint32_t>(u1.size());
  std::vector<std::unique_ptr<Party>> parties;
  for (uint32_t id : u1) {
    parties.push_back(std::make_unique<Party>(id));
    fedstat_v1_SecAggKeys keys;
    if (!parties.back()->client.on_start(s, keys).ok()) return out;
    out.keys.push_back(keys);
  }
  std::vector<fedstat_v1_SecAggPeerKeys> roster;
  for (size_t i = 0; i < u1.size(); ++i) {
    fedstat_v1_SecAggPeerKeys entry = fedstat_v1_SecAggPeerKeys_init_zero;
    entry.index = static_cast<uint32_t>(i);
    entry.count = static_cast<uint32_t>(u1.size());
    entry.has_keys = true;
    entry.keys = out.keys[i];
    roster.push_back(entry);
  }
  for (auto& p : parties) {
    for (const auto& entry : roster) {
      if (!p->client.on_peer_keys(entry).ok()) return out;
    }
    fedstat_v1_SecAggShare share;
    for (size_t k = 0; k < kStorage; ++k) {
      const Result<bool> more = p->client.next_share(share);
      if (!more.ok()) return out;
      if (!more.value()) break;
      out.shares.push_back(share);
    }
  }
  const fedstat_v1_SecAggRoster u2_roster = bitmap(u1, u2, 2);
  const fedstat_v1_SecAggRoster u3_roster = bitmap(u1, u3, 3);
  for (auto& p : parties) {
    if (!u2.count(p->client.id())) continue;
    for (const auto& share : out.shares) {
      if (share.to_id != p->client.id() || !u2.count(share.from_id)) continue;
      if (!p->client.on_share(share).ok()) return out;
    }
    if (!p->client.on_roster(u2_roster).ok()) return out;
  }
  for (auto& p : parties) {
    const uint32_t id = p->client.id();
    if (!u3.count(id)) continue;
    std::vector<uint64_t> words(s.vector_length);
    for (size_t i = 0; i < words.size(); ++i) words[i] = input_word(id, i, s.bits);
    if (!p->client.mask(Span<uint64_t>(words.data(), words.size())).ok()) return out;
    for (size_t k = 0; k <= words.size(); ++k) {
      fedstat_v1_SecAggMaskedChunk chunk;
      const Result<bool> more =
          p->client.next_chunk(Span<const uint64_t>(words.data(), words.size()), chunk);
      if (!more.ok()) return out;
      if (!more.value()) break;
      out.chunks[id].push_back(chunk);
    }
    out.masked[id] = words;
  }
  for (auto& p : parties) {
    if (!u3.count(p->client.id())) continue;
    if (!p->client.on_roster(u3_roster).ok()) return out;
    for (size_t k = 0; k <= kStorage; ++k) {
      fedstat_v1_SecAggReveal reveal;
      const Result<bool> more = p->client.next_reveal(reveal);
      if (!more.ok()) return out;
      if (!more.value()) break;
      out.reveals.push_back(reveal);
    }
  }
  out.ok = true;
  return out;
}

// The keys the real client `id` (1..kRealIds) advertises in any session kSession (the public
// keys do not depend on the start; the commitment to its self-mask seed depends on the session).
const fedstat_v1_SecAggKeys& real_keys(uint32_t id) {
  static std::map<uint32_t, fedstat_v1_SecAggKeys> cache;
  auto it = cache.find(id);
  if (it != cache.end()) return it->second;
  fedstat_v1_SecAggStart start = fedstat_v1_SecAggStart_init_zero;
  start.session = kSession;
  start.threshold = 2;
  start.vector_length = 1;
  start.bits = 32;
  start.max_clients = 3;  // 2·t > max_clients, or the client refuses the start
  Party party(id);
  fedstat_v1_SecAggKeys keys;
  FUZZ_CHECK(party.client.on_start(start, keys).ok());
  return cache.emplace(id, keys).first->second;
}

// run_real, remembered (the key agreements cost milliseconds).
const RealSession& oracle(const fedstat_v1_SecAggStart& start, const std::vector<uint32_t>& u1,
                          const std::set<uint32_t>& u2, const std::set<uint32_t>& u3) {
  static std::map<std::string, RealSession> memo;
  std::string key;
  auto put = [&key](uint64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(start.session);
  put(start.threshold);
  put(start.vector_length);
  put(start.bits);
  for (uint32_t id : u1) put(id);
  put(~uint64_t{0});
  for (uint32_t id : u2) put(id);
  put(~uint64_t{0});
  for (uint32_t id : u3) put(id);
  auto it = memo.find(key);
  if (it != memo.end()) return it->second;
  if (memo.size() >= kMaxOracles) memo.clear();
  return memo.emplace(key, run_real(start, u1, u2, u3)).first->second;
}

// ---- The host: the server under test, its twin and the model of what was accepted ------------

class Host {
 public:
  explicit Host(const SecAggServerConfig& config)
      : config_(config),
        server_(config),
        twin_(config),
        blinding_(fuzz_seed(), 0xB11D),
        twin_blinding_(fuzz_seed(), 0xB11E) {}

  void message(uint32_t sender, const Envelope& e) {
    uint64_t session = 0;
    switch (e.which_body) {
      case fedstat_v1_Envelope_secagg_keys_tag:
        session = e.body.secagg_keys.session;
        break;
      case fedstat_v1_Envelope_secagg_share_tag:
        session = e.body.secagg_share.session;
        break;
      case fedstat_v1_Envelope_secagg_masked_chunk_tag:
        session = e.body.secagg_masked_chunk.session;
        break;
      case fedstat_v1_Envelope_secagg_reveal_tag:
        session = e.body.secagg_reveal.session;
        break;
      default:
        return;  // not for the SecAggServer
    }
    const bool was_aborted = server_.aborted();
    const Status s = deliver(server_, sender, e);
    if (was_aborted) FUZZ_CHECK(!s.ok());
    if (!was_aborted && session != kSession) FUZZ_CHECK(s.code() == StatusCode::kInvalidArgument);
    // The client a message speaks for: keys name it (the round loop checks it is the sender).
    const uint32_t named =
        e.which_body == fedstat_v1_Envelope_secagg_keys_tag ? e.body.secagg_keys.client_id : sender;
    const size_t excluded_before = twin_.excluded().size();
    if (s.ok()) {
      FUZZ_CHECK(!server_.is_excluded(named));
      FUZZ_CHECK(deliver(twin_, sender, e).ok());
      accepted(sender, e);
    } else {
      SecAggServer probe = twin_;  // the twin never saw a rejected message: the same verdict
      FUZZ_CHECK(deliver(probe, sender, e).code() == s.code());
      FUZZ_CHECK(server_.excluded().size() <= excluded_before + 1);
      if (server_.excluded().size() > excluded_before) {
        // Excluded just now, for a malformed message (kDataLoss): the twin is told the same.
        FUZZ_CHECK(s.code() == StatusCode::kDataLoss && server_.is_excluded(named));
        FUZZ_CHECK(probe.excluded() == server_.excluded());
        twin_.exclude(named, server_.excluded().back().second);
        excluded_.insert(named);
      }
    }
    FUZZ_CHECK(server_.excluded().size() == twin_.excluded().size());
    compare();
  }

  void close_advertising() {
    const bool was_aborted = server_.aborted();
    const auto r = server_.close_advertising();
    const auto t = twin_.close_advertising();
    FUZZ_CHECK(r.status().code() == t.status().code());
    if (was_aborted) FUZZ_CHECK(!r.ok());
    if (r.ok()) {
      FUZZ_CHECK(!advertising_closed_);
      FUZZ_CHECK(keys_.size() >= config_.threshold && r->size() == keys_.size());
      size_t i = 0;
      for (const auto& [id, keys] : keys_) {  // ascending ids
        const fedstat_v1_SecAggPeerKeys& entry = (*r)[i];
        const fedstat_v1_SecAggPeerKeys& twin_entry = (*t)[i];
        FUZZ_CHECK(entry.index == i && entry.count == keys_.size() && entry.has_keys);
        FUZZ_CHECK(entry.keys.session == kSession && entry.keys.client_id == id);
        FUZZ_CHECK(same_keys(entry.keys, keys));
        FUZZ_CHECK(same_bytes(entry.keys.commitment.bytes, entry.keys.commitment.size,
                              keys.commitment.bytes, keys.commitment.size));
        FUZZ_CHECK(twin_entry.keys.client_id == id && same_keys(twin_entry.keys, keys));
        u1_.push_back(id);
        ++i;
      }
      advertising_closed_ = true;
    } else if (!was_aborted && server_.aborted()) {
      FUZZ_CHECK(!advertising_closed_ && keys_.size() < config_.threshold);
    }
    compare();
  }

  void close_sharing() {
    const bool was_aborted = server_.aborted();
    const auto r = server_.close_sharing();
    const auto t = twin_.close_sharing();
    FUZZ_CHECK(r.status().code() == t.status().code());
    if (was_aborted) FUZZ_CHECK(!r.ok());
    if (r.ok() || (!was_aborted && server_.aborted())) {
      FUZZ_CHECK(advertising_closed_ && !sharing_closed_);
    }
    std::set<uint32_t> u2;  // the clients that shared with every peer
    for (uint32_t id : u1_) {
      size_t peers = 0;
      for (uint32_t to : u1_) peers += shared_.count({id, to});
      if (peers + 1 == u1_.size() && !excluded_.count(id)) u2.insert(id);
    }
    if (r.ok()) {
      FUZZ_CHECK(u2.size() >= config_.threshold);
      FUZZ_CHECK(same_roster(r.value(), bitmap(u1_, u2, 2)) && same_roster(r.value(), t.value()));
      u2_ = u2;
      for (auto& [to, shares] : inbox_) {  // delivered: only what members of U2 sent
        (void)to;
        std::vector<fedstat_v1_SecAggShare> kept;
        for (const auto& share : shares) {
          if (u2_.count(share.from_id)) kept.push_back(share);
        }
        shares = kept;
      }
      sharing_closed_ = true;
    } else if (!was_aborted && server_.aborted()) {
      FUZZ_CHECK(u2.size() < config_.threshold);
    }
    compare();
  }

  void close_masking() {
    const bool was_aborted = server_.aborted();
    const auto r = server_.close_masking();
    const auto t = twin_.close_masking();
    FUZZ_CHECK(r.status().code() == t.status().code());
    if (was_aborted) FUZZ_CHECK(!r.ok());
    if (r.ok() || (!was_aborted && server_.aborted())) {
      FUZZ_CHECK(sharing_closed_ && !masking_closed_);
    }
    std::set<uint32_t> u3;  // the members of U2 whose whole vector arrived
    for (uint32_t id : u2_) {
      auto it = masked_.find(id);
      if (it != masked_.end() && it->second.size() == config_.vector_length &&
          !excluded_.count(id)) {
        u3.insert(id);
      }
    }
    if (r.ok()) {
      FUZZ_CHECK(u3.size() >= config_.threshold);
      FUZZ_CHECK(same_roster(r.value(), bitmap(u1_, u3, 3)) && same_roster(r.value(), t.value()));
      FUZZ_CHECK(server_.u3() == std::vector<uint32_t>(u3.begin(), u3.end()));
      u3_ = u3;
      masking_closed_ = true;
    } else if (!was_aborted && server_.aborted()) {
      FUZZ_CHECK(u3.size() < config_.threshold);
    }
    compare();
  }

  void finish() {
    const bool was_aborted = server_.aborted();
    const auto r = server_.finish(blinding_);
    const auto t = twin_.finish(twin_blinding_);
    FUZZ_CHECK(r.status().code() == t.status().code());
    if (was_aborted) FUZZ_CHECK(!r.ok());
    if (r.ok()) {
      FUZZ_CHECK(masking_closed_ && !finished_);
      FUZZ_CHECK(r.value() == t.value() && r->size() == config_.vector_length);
      for (uint64_t word : r.value()) FUZZ_CHECK(word <= limit_of(config_.bits));
      finished_ = true;
      check_sum(r.value());
    }
    compare();
  }

  void shares_for(uint32_t id) {
    const std::vector<fedstat_v1_SecAggShare> shares = server_.shares_for(id);
    FUZZ_CHECK(same_shares(shares, twin_.shares_for(id)));
    auto it = inbox_.find(id);
    FUZZ_CHECK(same_shares(
        shares, it == inbox_.end() ? std::vector<fedstat_v1_SecAggShare>() : it->second));
  }

 private:
  static Status deliver(SecAggServer& server, uint32_t sender, const Envelope& e) {
    switch (e.which_body) {
      case fedstat_v1_Envelope_secagg_keys_tag:
        return server.on_keys(e.body.secagg_keys);
      case fedstat_v1_Envelope_secagg_share_tag:
        return server.on_share(sender, e.body.secagg_share);
      case fedstat_v1_Envelope_secagg_masked_chunk_tag:
        return server.on_chunk(sender, e.body.secagg_masked_chunk);
      default:
        return server.on_reveal(sender, e.body.secagg_reveal);
    }
  }

  // An accepted message: what the protocol allows at this point, recorded in the model.
  void accepted(uint32_t sender, const Envelope& e) {
    switch (e.which_body) {
      case fedstat_v1_Envelope_secagg_keys_tag: {
        const fedstat_v1_SecAggKeys& keys = e.body.secagg_keys;
        FUZZ_CHECK(!advertising_closed_);
        FUZZ_CHECK(keys.client_id >= 1 && keys.client_id <= 0x80000000u);
        FUZZ_CHECK(keys.encryption_key.size == 32 && keys.masking_key.size == 32);
        FUZZ_CHECK(keys.commitment.size == fedstat::secagg::kCommitmentBytes);
        for (const auto& [id, held] : keys_) {
          FUZZ_CHECK(id != keys.client_id);
          FUZZ_CHECK(std::memcmp(held.encryption_key.bytes, keys.encryption_key.bytes, 32) != 0);
          FUZZ_CHECK(std::memcmp(held.masking_key.bytes, keys.masking_key.bytes, 32) != 0);
        }
        keys_[keys.client_id] = keys;
        FUZZ_CHECK(keys_.size() <= config_.max_clients);
        break;
      }
      case fedstat_v1_Envelope_secagg_share_tag: {
        const fedstat_v1_SecAggShare& share = e.body.secagg_share;
        FUZZ_CHECK(advertising_closed_ && !sharing_closed_);
        FUZZ_CHECK(share.from_id == sender && share.to_id != sender);
        FUZZ_CHECK(keys_.count(sender) && keys_.count(share.to_id));
        FUZZ_CHECK(share.ciphertext.size == fedstat::secagg::kShareCipherBytes);
        FUZZ_CHECK(shared_.insert({sender, share.to_id}).second);
        inbox_[share.to_id].push_back(share);
        break;
      }
      case fedstat_v1_Envelope_secagg_masked_chunk_tag: {
        const fedstat_v1_SecAggMaskedChunk& chunk = e.body.secagg_masked_chunk;
        FUZZ_CHECK(sharing_closed_ && !masking_closed_);
        FUZZ_CHECK(chunk.client_id == sender && u2_.count(sender));
        std::vector<uint64_t>& words = masked_[sender];
        FUZZ_CHECK(chunk.offset == words.size() && chunk.words_count >= 1);
        FUZZ_CHECK(uint64_t{chunk.offset} + chunk.words_count <= config_.vector_length);
        for (pb_size_t k = 0; k < chunk.words_count; ++k) {
          FUZZ_CHECK(chunk.words[k] <= limit_of(config_.bits));
          words.push_back(chunk.words[k]);
        }
        break;
      }
      default: {
        const fedstat_v1_SecAggReveal& reveal = e.body.secagg_reveal;
        FUZZ_CHECK(masking_closed_ && !finished_);
        FUZZ_CHECK(reveal.from_id == sender && u3_.count(sender) && u2_.count(reveal.about_id));
        FUZZ_CHECK(reveal.self_mask == (u3_.count(reveal.about_id) != 0));
        // 0: the sender holds no valid share of that client (nothing revealed).
        FUZZ_CHECK(reveal.share.size == fedstat::secagg::kShareBytes || reveal.share.size == 0);
        FUZZ_CHECK(revealed_.insert({sender, reveal.about_id}).second);
        if (reveal.share.size == 0) break;
        // Never both kinds about one client, whoever revealed them.
        FUZZ_CHECK(kinds_.count({reveal.about_id, !reveal.self_mask}) == 0);
        kinds_.insert({reveal.about_id, reveal.self_mask});
        reveals_.push_back(reveal);
        break;
      }
    }
  }

  // What the server shows equals what the twin shows (and the model's shares_for).
  void compare() {
    FUZZ_CHECK(server_.aborted() == twin_.aborted());
    FUZZ_CHECK(server_.abort_reason() == twin_.abort_reason());
    FUZZ_CHECK(server_.u3() == twin_.u3());
    FUZZ_CHECK(server_.excluded() == twin_.excluded());
    const fedstat_v1_SecAggStart start = server_.start();
    FUZZ_CHECK(start.session == config_.session && start.threshold == config_.threshold &&
               start.vector_length == config_.vector_length && start.bits == config_.bits &&
               start.max_clients == config_.max_clients);
    for (const auto& [id, keys] : keys_) {
      (void)keys;
      shares_for(id);
    }
  }

  // A session of real clients, each sending what the SDK client makes: the sum is Σ x_u.
  void check_sum(const std::vector<uint64_t>& sum) {
    if (u1_.size() > kStorage || config_.threshold > kStorage) return;
    for (uint32_t id : u1_) {
      if (id > kRealIds || !same_keys(keys_.at(id), real_keys(id))) return;
    }
    const RealSession& real = oracle(server_.start(), u1_, u2_, u3_);
    FUZZ_CHECK(real.ok);  // real clients take the rosters the server made of their keys
    for (uint32_t id : u3_) {
      if (masked_.at(id) != real.masked.at(id)) return;  // another input than the SDK's
    }
    for (const auto& reveal : reveals_) {
      bool genuine = false;
      for (const auto& made : real.reveals) genuine = genuine || same_reveal(reveal, made);
      if (!genuine) return;
    }
    // Every reveal genuine: no share is off its secret's polynomial, nobody is disputed.
    FUZZ_CHECK(server_.disputes().empty() && twin_.disputes().empty());
    std::vector<uint64_t> expected(config_.vector_length, 0);
    for (uint32_t id : u3_) {
      for (size_t i = 0; i < expected.size(); ++i) {
        expected[i] = (expected[i] + input_word(id, i, config_.bits)) & limit_of(config_.bits);
      }
    }
    FUZZ_CHECK(sum == expected);
  }

  SecAggServerConfig config_;
  SecAggServer server_, twin_;
  SeededStream blinding_, twin_blinding_;

  bool advertising_closed_ = false, sharing_closed_ = false, masking_closed_ = false;
  bool finished_ = false;
  std::map<uint32_t, fedstat_v1_SecAggKeys> keys_;                 // accepted, by id
  std::vector<uint32_t> u1_;                                       // roster order
  std::set<std::pair<uint32_t, uint32_t>> shared_;                 // accepted shares: (from, to)
  std::map<uint32_t, std::vector<fedstat_v1_SecAggShare>> inbox_;  // by recipient
  std::set<uint32_t> u2_, u3_;
  std::set<uint32_t> excluded_;  // for a malformed message (the server's excluded())
  std::map<uint32_t, std::vector<uint64_t>> masked_;  // accepted words, by sender
  std::set<std::pair<uint32_t, uint32_t>> revealed_;  // (from, about)
  std::set<std::pair<uint32_t, bool>> kinds_;         // (about, self_mask)
  std::vector<fedstat_v1_SecAggReveal> reveals_;
};

SecAggServerConfig config_from(const uint8_t* data) {
  SecAggServerConfig config;
  config.session = kSession;
  config.threshold = data[0] % 8u;
  config.max_clients = data[1] < 250 ? data[1] % 9u : kMaxSecAggClients - 2 + (data[1] - 250u);
  config.vector_length = data[2] % 131u;
  config.bits = data[3] % 66u;
  return config;
}

// ---- Seeds: real sessions of 4 clients (threshold 3), with dropouts and broken variants. -----

using Bytes = std::vector<uint8_t>;

Bytes encode(const Envelope& e) {
  return fedstat::fuzz::encoded(e);
}

Envelope envelope(pb_size_t tag) {
  return fedstat::fuzz::empty_envelope(tag);
}

class Script {
 public:
  Script(uint32_t threshold, uint32_t max_clients, uint32_t length, uint32_t bits)
      : bytes_{static_cast<uint8_t>(threshold), static_cast<uint8_t>(max_clients),
               static_cast<uint8_t>(length), static_cast<uint8_t>(bits)} {}
  void op(Op o) { bytes_.push_back(o); }
  void shares_for(uint32_t id) {
    bytes_.push_back(kSharesFor);
    bytes_.push_back(static_cast<uint8_t>(id));
  }
  void send(uint32_t sender, const Envelope& e) {
    const Bytes m = encode(e);
    bytes_.push_back(kMessage);
    bytes_.push_back(static_cast<uint8_t>(sender));
    bytes_.push_back(static_cast<uint8_t>(m.size() >> 8));
    bytes_.push_back(static_cast<uint8_t>(m.size()));
    bytes_.insert(bytes_.end(), m.begin(), m.end());
  }
  void keys(const fedstat_v1_SecAggKeys& k) {
    Envelope e = envelope(fedstat_v1_Envelope_secagg_keys_tag);
    e.body.secagg_keys = k;
    send(k.client_id, e);
  }
  void share(const fedstat_v1_SecAggShare& s) {
    Envelope e = envelope(fedstat_v1_Envelope_secagg_share_tag);
    e.body.secagg_share = s;
    send(s.from_id, e);
  }
  void chunk(const fedstat_v1_SecAggMaskedChunk& c) {
    Envelope e = envelope(fedstat_v1_Envelope_secagg_masked_chunk_tag);
    e.body.secagg_masked_chunk = c;
    send(c.client_id, e);
  }
  void reveal(const fedstat_v1_SecAggReveal& r) {
    Envelope e = envelope(fedstat_v1_Envelope_secagg_reveal_tag);
    e.body.secagg_reveal = r;
    send(r.from_id, e);
  }
  const Bytes& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }

 private:
  Bytes bytes_;
};

struct Plan {
  uint32_t threshold = 3, length = 70, bits = 20;
  std::vector<uint32_t> u1 = {1, 2, 3, 4};
  std::set<uint32_t> u2 = {1, 2, 3, 4}, u3 = {1, 2, 3, 4}, revealing = {1, 2, 3, 4};
  bool twice = false;  // every message and close twice
};

fedstat_v1_SecAggStart start_of(const Plan& plan) {
  fedstat_v1_SecAggStart start = fedstat_v1_SecAggStart_init_zero;
  start.session = kSession;
  start.threshold = plan.threshold;
  start.vector_length = plan.length;
  start.bits = plan.bits;
  start.max_clients = static_cast<uint32_t>(plan.u1.size());
  return start;
}

// The operations of a session in which the clients of U1 \ U2 drop before sharing, those of
// U2 \ U3 before masking and those of U3 \ revealing before unmasking. `ends` receives the
// script's size after each round (for truncated seeds); `before_reveals` runs first in round 3.
Script session(const Plan& plan, std::vector<size_t>* ends = nullptr,
               void (*before_reveals)(Script&, const RealSession&) = nullptr) {
  const RealSession real = run_real(start_of(plan), plan.u1, plan.u2, plan.u3);
  Script s(plan.threshold, static_cast<uint32_t>(plan.u1.size()), plan.length, plan.bits);
  const int times = plan.twice ? 2 : 1;
  auto mark = [&]() {
    if (ends != nullptr) ends->push_back(s.size());
  };
  for (const auto& keys : real.keys) {
    for (int k = 0; k < times; ++k) s.keys(keys);
  }
  for (int k = 0; k < times; ++k) s.op(kCloseAdvertising);
  mark();
  for (const auto& share : real.shares) {
    if (!plan.u2.count(share.from_id)) continue;
    for (int k = 0; k < times; ++k) s.share(share);
  }
  for (int k = 0; k < times; ++k) s.op(kCloseSharing);
  for (uint32_t id : plan.u2) s.shares_for(id);
  mark();
  for (const auto& [id, chunks] : real.chunks) {
    for (const auto& chunk : chunks) {
      for (int k = 0; k < times; ++k) s.chunk(chunk);
    }
  }
  for (int k = 0; k < times; ++k) s.op(kCloseMasking);
  mark();
  if (before_reveals != nullptr) before_reveals(s, real);
  for (const auto& reveal : real.reveals) {
    if (!plan.revealing.count(reveal.from_id)) continue;
    for (int k = 0; k < times; ++k) s.reveal(reveal);
  }
  for (int k = 0; k < times; ++k) s.op(kFinish);
  return s;
}

// Round 3 with client 4 dropped before masking: first the reveals the protocol forbids — a
// self-mask share of the dropped client, a key share of a survivor — then, after client 1's
// genuine key share of client 4, client 2's self-mask share of client 4 (the other kind).
void forbidden_reveals(Script& s, const RealSession& real) {
  for (const auto& reveal : real.reveals) {
    fedstat_v1_SecAggReveal wrong = reveal;
    wrong.self_mask = !reveal.self_mask;
    s.reveal(wrong);
  }
  for (const auto& reveal : real.reveals) {
    if (reveal.from_id == 1 && reveal.about_id == 4) s.reveal(reveal);
  }
  for (const auto& reveal : real.reveals) {
    if (reveal.from_id != 2 || reveal.about_id != 4) continue;
    fedstat_v1_SecAggReveal other = reveal;
    other.self_mask = true;
    s.reveal(other);
  }
}

void write_seeds(fedstat::fuzz::SeedWriter& out) {
  const Plan full;
  std::vector<size_t> ends;
  const Script whole = session(full, &ends);
  out.add(whole.bytes());
  for (size_t end : ends) out.add(whole.bytes().data(), end);  // cut after each round
  out.add(whole.bytes().data(), whole.size() - 20);            // the last reveal cut short

  Plan p = full;  // client 4 drops before sharing
  p.u2 = p.u3 = p.revealing = {1, 2, 3};
  out.add(session(p).bytes());
  p = full;  // before masking: its key share is revealed
  p.u3 = p.revealing = {1, 2, 3};
  out.add(session(p).bytes());
  out.add(session(p, nullptr, forbidden_reveals).bytes());
  p = full;  // before unmasking: in the sum, revealing nothing
  p.revealing = {1, 2, 3};
  out.add(session(p).bytes());
  p = full;  // every message and close twice
  p.twice = true;
  out.add(session(p).bytes());
  p = full;  // three clients (threshold 2), 64-bit words, one chunk
  p.threshold = 2;
  p.u1 = {1, 2, 3};
  p.u2 = p.u3 = p.revealing = {1, 2, 3};
  p.length = 3;
  p.bits = 64;
  out.add(session(p).bytes());
  p.u3 = p.revealing = {2, 3};  // client 1 drops before masking
  out.add(session(p).bytes());

  // Aborts: too few keys, too few shares (U2 = {1}), too few masked inputs (threshold 3);
  // then the rest of the session arrives.
  p = full;
  const Script three = session(p);
  p.u3 = p.revealing = {1, 2};
  Script masking_abort = session(p);
  out.add(masking_abort.bytes());
  Script keys_abort(3, 4, 70, 20);
  for (uint32_t id = 1; id <= 2; ++id) {
    fedstat_v1_SecAggKeys keys = real_keys(id);
    keys.session = kSession;
    keys.client_id = id;
    keys_abort.keys(keys);
  }
  keys_abort.op(kCloseAdvertising);
  Bytes bytes = keys_abort.bytes();
  bytes.insert(bytes.end(), three.bytes().begin() + 4, three.bytes().end());
  out.add(bytes);
  p = full;
  p.u2 = p.u3 = p.revealing = {1};
  bytes = session(p).bytes();
  bytes.insert(bytes.end(), whole.bytes().begin() + 4, whole.bytes().end());
  out.add(bytes);

  // Another session's messages, chunks out of order and above 2^bits (which excludes its
  // sender), an unknown sender.
  Script noisy(3, 4, 70, 20);
  const RealSession real = run_real(start_of(full), full.u1, full.u2, full.u3);
  FUZZ_CHECK(real.ok);
  for (const auto& keys : real.keys) {
    fedstat_v1_SecAggKeys other = keys;
    other.session = kSession + 1;
    noisy.keys(other);
    noisy.keys(keys);
  }
  noisy.op(kCloseAdvertising);
  for (const auto& share : real.shares) {
    fedstat_v1_SecAggShare stray = share;
    stray.from_id = 9;
    noisy.share(stray);
    noisy.share(share);
  }
  noisy.op(kCloseSharing);
  for (const auto& [id, chunks] : real.chunks) {
    fedstat_v1_SecAggMaskedChunk big = chunks.front();
    big.words[0] = uint64_t{1} << 20;
    if (id == 1) noisy.chunk(big);  // client 1 is excluded; the other three still make t
    noisy.chunk(chunks.back());
    for (const auto& chunk : chunks) noisy.chunk(chunk);
  }
  noisy.op(kCloseMasking);
  for (const auto& reveal : real.reveals) noisy.reveal(reveal);
  noisy.op(kFinish);
  noisy.op(kFinish);
  out.add(noisy.bytes());

  // Configurations outside the limits (the constructor throws).
  const uint8_t invalid[][4] = {
      {1, 4, 70, 20}, {5, 4, 70, 20},   {3, 4, 0, 20}, {3, 4, 70, 0},
      {3, 4, 70, 65}, {2, 255, 70, 20}, {2, 4, 70, 20}};  // the last: 2·t ≤ max_clients
  for (const auto& config : invalid) out.add(config, sizeof config);
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const SecAggServerConfig config = config_from(data);
  const bool valid = config.threshold >= 2 && config.threshold <= config.max_clients &&
                     2 * config.threshold > config.max_clients &&
                     config.max_clients <= kMaxSecAggClients && config.vector_length >= 1 &&
                     config.bits >= 1 && config.bits <= 64;
  try {
    SecAggServer probe(config);
  } catch (const std::invalid_argument&) {
    FUZZ_CHECK(!valid);
    return 0;
  }
  FUZZ_CHECK(valid);
  Host host(config);
  size_t at = 4;
  for (size_t ops = 0; at < size && ops < kMaxOps; ++ops) {
    switch (data[at++] % kOpCount) {
      case kMessage: {
        if (size - at < 3) return 0;
        const uint32_t sender = data[at];
        const size_t length = (size_t{data[at + 1]} << 8) | data[at + 2];
        at += 3;
        const size_t take = length < size - at ? length : size - at;
        Envelope e;
        const Status decoded = fedstat::wire::decode_envelope(ByteSpan(data + at, take), e);
        at += take;
        if (decoded.ok()) host.message(sender, e);  // the host drops what it cannot decode
        break;
      }
      case kCloseAdvertising:
        host.close_advertising();
        break;
      case kCloseSharing:
        host.close_sharing();
        break;
      case kCloseMasking:
        host.close_masking();
        break;
      case kFinish:
        host.finish();
        break;
      default:
        if (at < size) host.shares_for(data[at++]);
        break;
    }
  }
  return 0;
}
