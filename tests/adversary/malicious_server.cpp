#include "tests/adversary/malicious_server.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "host_server/secagg/share_decoder.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/mask.h"
#include "sdk/secagg/session_hash.h"
#include "sdk/secagg/shamir.h"

namespace fedstat {
namespace adversary {
namespace {

using secagg::SecAggStage;

uint64_t word_mask(uint32_t bits) {
  return bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

// A stream id no device uses: the server's own randomness (X25519 blinding, decoder checks).
constexpr uint64_t kServerStream = uint64_t{1} << 62;
constexpr uint64_t kSybilStreams = uint64_t{1} << 63;

// The messages in `by_signer` of the members of `u3` other than `self`, in `u3`'s order: what
// an honest server forwards to `self`.
std::vector<fedstat_v1_SecAggConsistency> signed_by_others(
    const std::set<uint32_t>& u3, uint32_t self,
    const std::map<uint32_t, fedstat_v1_SecAggConsistency>& by_signer) {
  std::vector<fedstat_v1_SecAggConsistency> out;
  for (uint32_t signer : u3) {
    auto it = by_signer.find(signer);
    if (signer != self && it != by_signer.end()) out.push_back(it->second);
  }
  return out;
}

}  // namespace

Device::Device(uint32_t device_id, bool is_sybil, uint32_t roster_room, uint64_t stream_key)
    : id(device_id),
      sybil(is_sybil),
      stream(Seed256{}, (stream_key << 32) + (is_sybil ? kSybilStreams : 0) + device_id),
      peers(roster_room) {
  const Status s = client.init(id, Span<secagg::SecAggPeer>(peers.data(), peers.size()), stream);
  if (!s.ok()) throw std::runtime_error("init: " + std::string(s.message()));
}

MaliciousServer::MaliciousServer(const RoundConfig& config) : config_(config) {
  start_.session = config.session;
  start_.threshold = config.threshold;
  start_.vector_length = config.length;
  start_.bits = config.bits;
  start_.max_clients = config.max_clients;
  start_.degree = config.degree;
  if (config.degree != 0) {
    start_.graph_commitment.size = 32;
    const Status s = secagg::graph_commitment(config.session, ByteSpan(config.graph_seed, 32),
                                              MutableByteSpan(start_.graph_commitment.bytes, 32));
    if (!s.ok()) throw std::runtime_error("graph commitment");
  }
  const uint32_t room = std::max<uint32_t>(config.max_clients, 2);
  // Bits 32–53 of a device's stream id: the session (low 16 bits) and the round.
  const uint64_t stream_key = (config.session & 0xffff) | (uint64_t{config.round & 0x3f} << 16);
  for (uint32_t id : config.honest) {
    auto d = std::make_unique<Device>(id, false, room, stream_key);
    d->input.resize(config.length);
    for (uint32_t i = 0; i < config.length; ++i) {
      d->input[i] = (uint64_t{id} * 1000003u + uint64_t{i} * 7919u + 17) & word_mask(config.bits);
    }
    devices_[id] = std::move(d);
  }
  for (auto& entry : devices_)
    entry.second->client.set_assumed_corrupt_ppm(config.assumed_corrupt_ppm);
  for (uint32_t id : config.colluders) devices_.at(id)->colluding = true;
  for (uint32_t id : config.sybils) {
    auto d = std::make_unique<Device>(id, true, room, stream_key);
    d->input.assign(config.length, 0);
    devices_[id] = std::move(d);
  }
  if (config.mode == Mode::kSigned) {
    start_.signed_keys = true;
    SeededStream ca_stream(Seed256{}, (uint64_t{1} << 60) + config.ca_seed);
    Status s = credential::generate_key_pair(ca_stream, MutableByteSpan(ca_private_, 32),
                                             MutableByteSpan(ca_public_, 65));
    if (!s.ok()) throw std::runtime_error("CA key: " + std::string(s.message()));
    for (uint32_t id : config.honest) {
      Device& d = *devices_[id];
      SeededStream key_stream(Seed256{}, (uint64_t{1} << 61) + id);
      s = credential::generate_key_pair(key_stream, MutableByteSpan(d.credential.private_key, 32),
                                        MutableByteSpan(d.credential.certificate.public_key, 65));
      if (s.ok()) {
        s = credential::issue_certificate(ByteSpan(ca_private_, 32), id,
                                          ByteSpan(d.credential.certificate.public_key, 65),
                                          d.credential.certificate);
      }
      if (!s.ok()) throw std::runtime_error("credential: " + std::string(s.message()));
      std::memcpy(d.credential.ca_public_key, ca_public_, 65);
      d.client.set_credential(&d.credential);
    }
  }
}

std::vector<uint32_t> MaliciousServer::all_ids() const {
  std::vector<uint32_t> ids;
  for (const auto& [id, d] : devices_) ids.push_back(id);
  return ids;
}

void MaliciousServer::refuse(Device& d, const Status& status, const char* step) {
  if (d.refused()) return;
  d.refusal = status;
  d.refused_at = step;
}

std::vector<uint32_t> MaliciousServer::ring_of(const std::vector<uint32_t>& members) const {
  std::vector<uint32_t> ring = members;
  std::sort(ring.begin(), ring.end());
  if (config_.degree == 0) return ring;
  std::vector<std::pair<uint64_t, uint32_t>> keyed;
  for (uint32_t id : ring) {
    const Result<uint64_t> p =
        secagg::ring_position(config_.session, ByteSpan(config_.graph_seed, 32), id);
    if (!p.ok()) throw std::runtime_error("ring position");
    keyed.emplace_back(*p, id);
  }
  std::sort(keyed.begin(), keyed.end());
  for (size_t i = 0; i < keyed.size(); ++i) ring[i] = keyed[i].second;
  return ring;
}

fedstat_v1_SecAggPeerKeys MaliciousServer::entry(const fedstat_v1_SecAggKeys& keys, uint32_t index,
                                                 uint32_t count) {
  fedstat_v1_SecAggPeerKeys e = fedstat_v1_SecAggPeerKeys_init_zero;
  e.index = index;
  e.count = count;
  e.has_keys = true;
  e.keys = keys;
  return e;
}

std::vector<uint32_t> MaliciousServer::neighbourhood(uint32_t id,
                                                     const std::vector<uint32_t>& members) const {
  const std::vector<uint32_t> ring = ring_of(members);
  const size_t m = ring.size();
  const uint32_t count = secagg::neighbourhood_size(static_cast<uint32_t>(m), config_.degree);
  size_t start = 0;
  if (count != m) {
    const size_t p = static_cast<size_t>(std::find(ring.begin(), ring.end(), id) - ring.begin());
    start = (p + m - config_.degree / 2) % m;
  }
  std::vector<uint32_t> out;
  for (uint32_t j = 0; j < count; ++j) out.push_back(ring[(start + j) % m]);
  return out;
}

std::vector<fedstat_v1_SecAggPeerKeys> MaliciousServer::honest_roster(
    uint32_t id, const std::vector<uint32_t>& members) const {
  const std::vector<uint32_t> ids = neighbourhood(id, members);
  const uint32_t count = static_cast<uint32_t>(ids.size());
  std::vector<fedstat_v1_SecAggPeerKeys> out;
  for (uint32_t j = 0; j < count; ++j) out.push_back(entry(devices_.at(ids[j])->keys, j, count));
  if (config_.degree != 0) {
    out.front().graph_seed.size = 32;
    std::memcpy(out.front().graph_seed.bytes, config_.graph_seed, 32);
    out.front().ring_size = static_cast<uint32_t>(members.size());
  }
  return out;
}

void MaliciousServer::advertise() {
  for (auto& [id, d] : devices_) {
    fedstat_v1_SecAggStart start = start_;
    // A Sybil holds no credential: the server has it advertise unsigned keys (an attack adds what
    // it forges).
    if (d->sybil) start.signed_keys = false;
    if (tamper_start && !d->sybil) tamper_start(id, start);
    const Status s = d->client.on_start(start, d->keys);
    if (!s.ok()) refuse(*d, s, "on_start");
  }
  u1_.clear();
  for (const auto& [id, d] : devices_) {
    if (!d->refused()) u1_.push_back(id);
  }
}

void MaliciousServer::send_rosters() {
  for (uint32_t id : u1_) {
    Device& d = *devices_.at(id);
    if (d.refused()) continue;
    std::vector<fedstat_v1_SecAggPeerKeys> roster = honest_roster(id, u1_);
    if (tamper_roster) tamper_roster(id, roster);
    d.roster.clear();
    d.roster_keys.clear();
    for (const auto& e : roster) {
      const Status s = d.client.on_peer_keys(e);
      if (!s.ok()) {
        refuse(d, s, "on_peer_keys");
        break;
      }
      d.roster.push_back(e.keys.client_id);
      d.roster_keys[e.keys.client_id] = e.keys;
    }
  }
}

void MaliciousServer::share() {
  std::set<uint32_t> sent;
  for (auto& [id, d] : devices_) {
    if (d->refused() || d->client.stage() != SecAggStage::kSharing) continue;
    for (;;) {
      fedstat_v1_SecAggShare out;
      const Result<bool> more = d->client.next_share(out);
      if (!more.ok()) {
        refuse(*d, more.status(), "next_share");
        break;
      }
      if (!*more) {
        sent.insert(id);
        break;
      }
      inbox_[out.to_id].push_back(out);
    }
  }
  for (auto& [to, shares] : inbox_) {
    auto it = devices_.find(to);
    if (it == devices_.end()) continue;
    Device& d = *it->second;
    for (const auto& share : shares) {
      if (d.refused() || !sent.count(share.from_id)) continue;
      const Status s = d.client.on_share(share);
      if (!s.ok()) {
        refuse(d, s, "on_share");
        continue;
      }
      if (d.server_held()) server_read_[to].insert(share.from_id);
    }
  }
  for (auto& [id, d] : devices_) {
    if (!sent.count(id)) refuse(*d, Status(), "did not share");
  }
}

fedstat_v1_SecAggRoster MaliciousServer::bitmap(const Device& d, uint32_t round,
                                                const std::set<uint32_t>& members) const {
  fedstat_v1_SecAggRoster r = fedstat_v1_SecAggRoster_init_zero;
  r.session = config_.session;
  r.round = round;
  r.members.size = static_cast<pb_size_t>((d.roster.size() + 7) / 8);
  for (size_t i = 0; i < d.roster.size(); ++i) {
    if (members.count(d.roster[i])) r.members.bytes[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
  }
  return r;
}

void MaliciousServer::mask_and_send() {
  for (auto& [id, d] : devices_) {
    if (d->refused()) continue;
    std::set<uint32_t> honest_u2;
    for (uint32_t peer : d->roster) {
      if (!devices_.at(peer)->refused()) honest_u2.insert(peer);
    }
    const std::set<uint32_t> u2 = u2_view ? u2_view(id, honest_u2) : honest_u2;
    Status s = d->client.on_roster(bitmap(*d, 2, u2));
    if (!s.ok()) {
      refuse(*d, s, "on_roster(2)");
      continue;
    }
    d->u2 = u2;
    d->masked = d->input;
    s = d->client.mask(Span<uint64_t>(d->masked.data(), d->masked.size()));
    if (!s.ok()) {
      refuse(*d, s, "mask");
      continue;
    }
    std::vector<uint64_t> sent(config_.length, 0);
    for (;;) {
      fedstat_v1_SecAggMaskedChunk chunk;
      const Result<bool> more =
          d->client.next_chunk(Span<const uint64_t>(d->masked.data(), d->masked.size()), chunk);
      if (!more.ok()) {
        refuse(*d, more.status(), "next_chunk");
        break;
      }
      if (!*more) break;
      for (pb_size_t k = 0; k < chunk.words_count; ++k) sent[chunk.offset + k] = chunk.words[k];
    }
    d->masked = sent;  // what the server received
    if (d->refused() || config_.mode != Mode::kSigned || config_.degree == 0) continue;
    s = d->client.masked_view_message(d->masked_view);  // D8: the signed U2 view
    if (!s.ok()) {
      refuse(*d, s, "masked_view_message");
      continue;
    }
    d->has_masked_view = true;
    masked_views_[id] = d->masked_view;
  }
}

void MaliciousServer::send_u3() {
  for (auto& [id, d] : devices_) {
    if (d->refused()) continue;
    std::set<uint32_t> honest_u3;
    for (uint32_t peer : d->u2) {
      if (!devices_.at(peer)->refused()) honest_u3.insert(peer);
    }
    const std::set<uint32_t> view = u3_view ? u3_view(id, honest_u3) : honest_u3;
    const Status s = d->client.on_roster(bitmap(*d, 3, view));
    if (!s.ok()) {
      refuse(*d, s, "on_roster(3)");
      continue;
    }
    d->u3 = view;
  }
}

void MaliciousServer::consistency() {
  if (config_.mode != Mode::kSigned) return;
  for (auto& [id, d] : devices_) {
    if (d->refused() || d->client.stage() != SecAggStage::kConsistency) continue;
    fedstat_v1_SecAggConsistency m = fedstat_v1_SecAggConsistency_init_zero;
    const Status s = d->client.consistency_message(m);
    if (!s.ok()) {
      refuse(*d, s, "consistency_message");
      continue;
    }
    d->has_consistency = true;
    d->consistency = m;
    consistency_[id] = m;
  }
  for (auto& [id, d] : devices_) {
    if (d->refused() || d->client.stage() != SecAggStage::kConsistency) continue;
    if (config_.degree != 0) {  // D8: the U2 views first
      const std::vector<fedstat_v1_SecAggConsistency> honest_views =
          signed_by_others(d->u3, id, masked_views_);
      const std::vector<fedstat_v1_SecAggConsistency> views =
          forward_masked_views ? forward_masked_views(id, masked_views_, honest_views)
                               : honest_views;
      for (const auto& m : views) d->masked_view_statuses.push_back(d->client.on_consistency(m));
    }
    const std::vector<fedstat_v1_SecAggConsistency> honest_forward =
        signed_by_others(d->u3, id, consistency_);
    const std::vector<fedstat_v1_SecAggConsistency> forward =
        forward_consistency ? forward_consistency(id, consistency_, honest_forward)
                            : honest_forward;
    for (const auto& m : forward) d->consistency_statuses.push_back(d->client.on_consistency(m));
  }
}

void MaliciousServer::reveal() {
  for (auto& [id, d] : devices_) {
    if (d->refused()) continue;
    for (;;) {
      fedstat_v1_SecAggReveal r;
      const Result<bool> more = d->client.next_reveal(r);
      d->reveal_status = more.status();
      if (!more.ok() || !*more) break;
      d->reveals.push_back(r);
    }
  }
}

void MaliciousServer::run_all() {
  advertise();
  send_rosters();
  share();
  mask_and_send();
  send_u3();
  consistency();
  reveal();
}

Knowledge MaliciousServer::knowledge_of(uint32_t v) const {
  Knowledge k;
  const Device& victim = *devices_.at(v);
  for (const auto& [id, d] : devices_) {
    if (d->server_held()) {
      // A share v dealt to a Sybil or a colluder: the server reads it in that device's roster
      // storage. Counted only when the two share a session hash (else it did not open: a bad
      // share).
      auto got = server_read_.find(id);
      if (got == server_read_.end() || !got->second.count(v)) continue;
      if (std::memcmp(d->client.session_hash().data(), victim.client.session_hash().data(), 32)) {
        continue;
      }
      for (const auto& p : d->peers) {
        if (p.id != v) continue;
        secagg::ShamirShare b, s;
        b.x = s.x = id;
        std::memcpy(b.y, p.self_mask_share, sizeof(b.y));
        std::memcpy(s.y, p.key_share, sizeof(s.y));
        k.b_shares[id] = b;
        k.s_shares[id] = s;
      }
      continue;
    }
    if (victim.server_held() && id != v &&
        !std::memcmp(d->client.session_hash().data(), victim.client.session_hash().data(), 32)) {
      // v is the server's own (a Sybil or a colluder): its secrets are the server's too. They
      // are read here as the shares v dealt, from each holder's roster storage.
      for (const auto& p : d->peers) {
        if (p.id != v) continue;
        secagg::ShamirShare b, s;
        b.x = s.x = id;
        std::memcpy(b.y, p.self_mask_share, sizeof(b.y));
        std::memcpy(s.y, p.key_share, sizeof(s.y));
        k.b_shares[id] = b;
        k.s_shares[id] = s;
      }
      continue;
    }
    for (const auto& r : d->reveals) {
      if (r.about_id != v || r.share.size != secagg::kShareBytes) continue;
      secagg::ShamirShare share;
      if (!secagg::share_from_bytes(id, ByteSpan(r.share.bytes, r.share.size), share).ok())
        continue;
      (r.self_mask ? k.b_shares : k.s_shares)[id] = share;
    }
  }
  return k;
}

std::vector<uint32_t> MaliciousServer::both_kinds_exposed() const {
  std::vector<uint32_t> out;
  for (const auto& [id, d] : devices_) {
    if (d->server_held()) continue;
    const Knowledge k = knowledge_of(id);
    if (k.b_shares.size() >= config_.threshold && k.s_shares.size() >= config_.threshold) {
      out.push_back(id);
    }
  }
  return out;
}

namespace {

// The first t shares of `shares` rebuilt into `secret`.
bool rebuild(const std::map<uint32_t, secagg::ShamirShare>& shares, uint32_t t,
             uint8_t secret[32]) {
  if (shares.size() < t) return false;
  std::vector<secagg::ShamirShare> list;
  for (const auto& [x, s] : shares) list.push_back(s);
  return secagg::shamir_reconstruct(Span<const secagg::ShamirShare>(list.data(), list.size()), t,
                                    MutableByteSpan(secret, 32))
      .ok();
}

}  // namespace

std::optional<std::vector<uint64_t>> MaliciousServer::recover_input(uint32_t v) const {
  const Device& victim = *devices_.at(v);
  SeededStream blinding(Seed256{}, kServerStream);
  // A masking key rebuilt from what the server holds about `owner` and checked against the
  // public key `expected` (32 bytes).
  auto masking_key = [&](uint32_t owner, const uint8_t* expected, uint8_t out[32]) {
    uint8_t check[32];
    return rebuild(knowledge_of(owner).s_shares, config_.threshold, out) &&
           crypto::x25519_public_key(ByteSpan(out, 32), Span<uint8_t>(check, 32),
                                     fill_from_random_source, &blinding)
               .ok() &&
           std::memcmp(check, expected, 32) == 0;
  };
  uint8_t b[32], s[32], check[32];
  // b_v, checked against v's commitment as the server would.
  if (!rebuild(knowledge_of(v).b_shares, config_.threshold, b) ||
      !secagg::self_mask_commitment(config_.session, v, ByteSpan(b, 32), MutableByteSpan(check, 32))
           .ok() ||
      std::memcmp(check, victim.keys.commitment.bytes, 32) != 0) {
    return std::nullopt;
  }
  const bool have_s_v = masking_key(v, victim.keys.masking_key.bytes, s);
  // v's session hash is public data (its roster's keys, or the sparse session's parameters): the
  // server computes it; reading it from the device is the same bytes.
  const ByteSpan hash = victim.client.session_hash();
  std::vector<uint64_t> x = victim.masked;
  Span<uint64_t> vec(x.data(), x.size());
  if (!secagg::apply_mask(hash, ByteSpan(b, 32), secagg::MaskKind::kSelf, true, config_.bits, vec)
           .ok()) {
    return std::nullopt;
  }
  // Each pairwise mask of v's U2: from s_v^SK and u's public key, or from s_u^SK (u dropped in
  // enough holders' U3) and v's public key — X25519 is symmetric.
  for (uint32_t u : victim.u2) {
    if (u == v) continue;
    const uint8_t* u_public = victim.roster_keys.at(u).masking_key.bytes;
    uint8_t s_u[32], shared[32];
    Status agreed;
    if (have_s_v) {
      agreed = crypto::x25519_shared_secret(ByteSpan(s, 32), ByteSpan(u_public, 32),
                                            Span<uint8_t>(shared, 32), fill_from_random_source,
                                            &blinding);
    } else if (masking_key(u, u_public, s_u)) {
      agreed = crypto::x25519_shared_secret(
          ByteSpan(s_u, 32), ByteSpan(victim.keys.masking_key.bytes, 32), Span<uint8_t>(shared, 32),
          fill_from_random_source, &blinding);
    } else {
      return std::nullopt;
    }
    if (!agreed.ok() || !secagg::apply_mask(hash, ByteSpan(shared, 32), secagg::MaskKind::kPairwise,
                                            /*subtract=*/u < v, config_.bits, vec)
                             .ok()) {
      return std::nullopt;
    }
  }
  return x;
}

std::optional<std::vector<uint64_t>> MaliciousServer::sum_from_reveals(
    const std::set<uint32_t>& u3) const {
  std::vector<uint32_t> holders;
  for (const auto& [id, d] : devices_) {
    if (!d->sybil) holders.push_back(id);
  }
  SeededStream random(Seed256{}, kServerStream + 1);
  host::ShareDecoder decoder(config_.threshold, holders, holders.size(), random);
  std::vector<uint64_t> sum(config_.length, 0);
  size_t trials = 64;
  for (uint32_t u : u3) {
    const Device& owner = *devices_.at(u);
    const Knowledge k = knowledge_of(u);
    if (k.b_shares.size() < config_.threshold) return std::nullopt;
    std::vector<secagg::ShamirShare> shares;
    for (const auto& [x, s] : k.b_shares) shares.push_back(s);
    const host::ShareDecoder::Verify verify = [&](ByteSpan secret) -> Result<bool> {
      uint8_t c[32];
      FEDSTAT_RETURN_IF_ERROR(
          secagg::self_mask_commitment(config_.session, u, secret, MutableByteSpan(c, 32)));
      return std::memcmp(c, owner.keys.commitment.bytes, 32) == 0;
    };
    const Result<host::DecodedSecret> decoded = decoder.decode(shares, verify, trials);
    if (!decoded.ok() || !decoded->ok()) return std::nullopt;
    std::vector<uint64_t> y = owner.masked;
    if (!secagg::apply_mask(owner.client.session_hash(), ByteSpan(decoded->secret, 32),
                            secagg::MaskKind::kSelf, true, config_.bits,
                            Span<uint64_t>(y.data(), y.size()))
             .ok()) {
      return std::nullopt;
    }
    for (uint32_t i = 0; i < config_.length; ++i) {
      sum[i] = (sum[i] + y[i]) & word_mask(config_.bits);
    }
  }
  return sum;
}

std::vector<uint64_t> MaliciousServer::true_sum(const std::set<uint32_t>& ids) const {
  std::vector<uint64_t> sum(config_.length, 0);
  for (uint32_t id : ids) {
    for (uint32_t i = 0; i < config_.length; ++i) {
      sum[i] = (sum[i] + devices_.at(id)->input[i]) & word_mask(config_.bits);
    }
  }
  return sum;
}

}  // namespace adversary
}  // namespace fedstat
