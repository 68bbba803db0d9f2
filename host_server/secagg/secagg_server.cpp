#include "host_server/secagg/secagg_server.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "sdk/base/crypto.h"
#include "sdk/base/random_bits.h"
#include "sdk/secagg/mask.h"
#include "sdk/secagg/session_hash.h"
#include "sdk/secagg/shamir.h"

namespace fedstat {
namespace host {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kCipherBytes = secagg::kShareCipherBytes;
static_assert(kCipherBytes == 96, "the exclusion reason below says 96");

std::string about(uint32_t id, bool self_mask) {
  return "client " + std::to_string(id) + (self_mask ? " (self-mask seed)" : " (masking key)");
}

}  // namespace

SecAggServer::SecAggServer(const SecAggServerConfig& config) : config_(config) {
  if (config.threshold < 2 || config.threshold > config.max_clients ||
      config.max_clients > kMaxSecAggClients) {
    throw std::invalid_argument("secagg server: need 2 <= threshold <= max_clients <= 1024");
  }
  if (2 * uint64_t{config.threshold} <= config.max_clients) {
    // Devices refuse such a session (secagg_client.h): two disjoint groups of t could each be
    // shown their own U3.
    throw std::invalid_argument("secagg server: need 2 * threshold > max_clients");
  }
  if (config.vector_length == 0 || config.bits == 0 || config.bits > 64) {
    throw std::invalid_argument("secagg server: the length must be >= 1 and bits in 1..64");
  }
}

fedstat_v1_SecAggStart SecAggServer::start() const {
  fedstat_v1_SecAggStart s = fedstat_v1_SecAggStart_init_zero;
  s.session = config_.session;
  s.threshold = config_.threshold;
  s.vector_length = config_.vector_length;
  s.bits = config_.bits;
  s.max_clients = config_.max_clients;
  return s;
}

Status SecAggServer::abort(const std::string& reason) {
  stage_ = Stage::kAborted;
  abort_reason_ = reason;
  return Status(StatusCode::kAborted, "secagg: fewer survivors than the threshold; round aborted");
}

bool SecAggServer::is_excluded(uint32_t id) const {
  return excluded_ids_.count(id) != 0;
}

void SecAggServer::exclude(uint32_t id, const std::string& reason) {
  if (!excluded_ids_.insert(id).second) return;
  excluded_.emplace_back(id, reason);
  // Not yet in U1: its keys (if a replay met any) are left out of the roster.
  if (stage_ == Stage::kAdvertising) clients_.erase(id);
}

Status SecAggServer::refuse_and_exclude(uint32_t id, const std::string& reason) {
  exclude(id, reason);
  return data_loss("secagg: the sender is excluded from the session (malformed message)");
}

Status SecAggServer::check_session(uint64_t session) const {
  if (stage_ == Stage::kAborted) return fedstat::aborted("secagg: the round was aborted");
  if (session != config_.session) return invalid_argument("secagg: message for another session");
  return Status();
}

Status SecAggServer::on_keys(const fedstat_v1_SecAggKeys& keys) {
  FEDSTAT_RETURN_IF_ERROR(check_session(keys.session));
  if (stage_ != Stage::kAdvertising) {
    return failed_precondition("secagg: keys arrived after the key round closed");
  }
  if (keys.client_id == 0 || keys.client_id > 0x80000000u) {
    return invalid_argument("secagg: client ids lie in [1, 2^31]");
  }
  if (is_excluded(keys.client_id)) return permission_denied("secagg: that client was excluded");
  if (clients_.count(keys.client_id))
    return already_exists("secagg: that client already sent keys");
  if (keys.encryption_key.size != kKeyBytes || keys.masking_key.size != kKeyBytes) {
    return refuse_and_exclude(keys.client_id, "its public keys are not 32 bytes");
  }
  // Checked before the key reaches any device: a low-order key would make every peer's X25519
  // agreement with it fail (or give a secret the sender knows without a private key).
  for (const auto& [name, key] :
       {std::make_pair("encryption key", ByteSpan(keys.encryption_key.bytes, kKeyBytes)),
        std::make_pair("masking key", ByteSpan(keys.masking_key.bytes, kKeyBytes))}) {
    const Status valid = secagg::check_public_key(key);
    if (!valid.ok()) {
      std::string why = valid.message();
      if (why.rfind("secagg: ", 0) == 0) why.erase(0, 8);
      return refuse_and_exclude(keys.client_id, std::string("its ") + name + " is refused: " + why);
    }
  }
  for (const auto& [id, c] : clients_) {
    (void)id;
    if (std::memcmp(c.encryption_key, keys.encryption_key.bytes, kKeyBytes) == 0 ||
        std::memcmp(c.masking_key, keys.masking_key.bytes, kKeyBytes) == 0) {
      return already_exists("secagg: a public key was already advertised (replay?)");
    }
  }
  if (clients_.size() >= config_.max_clients) {
    return resource_exhausted("secagg: the session is full (max_clients)");
  }
  Client client;
  std::memcpy(client.encryption_key, keys.encryption_key.bytes, kKeyBytes);
  std::memcpy(client.masking_key, keys.masking_key.bytes, kKeyBytes);
  clients_.emplace(keys.client_id, std::move(client));
  return Status();
}

Result<std::vector<fedstat_v1_SecAggPeerKeys>> SecAggServer::close_advertising() {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (stage_ != Stage::kAdvertising) return failed_precondition("secagg: key round already closed");
  if (clients_.size() < config_.threshold) return abort("fewer than t clients advertised keys");
  crypto::Sha256 hash;
  uint8_t header[secagg::kSessionHeaderBytes];
  secagg::encode_session_header(config_.session, config_.threshold, config_.vector_length,
                                config_.bits, header);
  FEDSTAT_RETURN_IF_ERROR(hash.update(ByteSpan(header, sizeof(header))));
  std::vector<fedstat_v1_SecAggPeerKeys> roster;
  for (auto& [id, client] : clients_) {  // ascending ids: the roster order
    client.index = static_cast<uint32_t>(order_.size());
    order_.push_back(id);
    fedstat_v1_SecAggPeerKeys entry = fedstat_v1_SecAggPeerKeys_init_zero;
    entry.index = client.index;
    entry.count = static_cast<uint32_t>(clients_.size());
    entry.has_keys = true;
    entry.keys.session = config_.session;
    entry.keys.client_id = id;
    entry.keys.encryption_key.size = kKeyBytes;
    entry.keys.masking_key.size = kKeyBytes;
    std::memcpy(entry.keys.encryption_key.bytes, client.encryption_key, kKeyBytes);
    std::memcpy(entry.keys.masking_key.bytes, client.masking_key, kKeyBytes);
    roster.push_back(entry);
    uint8_t entry_bytes[secagg::kRosterEntryBytes];
    secagg::encode_roster_entry(id, client.encryption_key, client.masking_key, entry_bytes);
    FEDSTAT_RETURN_IF_ERROR(hash.update(ByteSpan(entry_bytes, sizeof(entry_bytes))));
  }
  FEDSTAT_RETURN_IF_ERROR(hash.finish(Span<uint8_t>(session_hash_, 32)));
  stage_ = Stage::kSharing;
  return roster;
}

Status SecAggServer::on_share(uint32_t sender, const fedstat_v1_SecAggShare& share) {
  FEDSTAT_RETURN_IF_ERROR(check_session(share.session));
  if (stage_ != Stage::kSharing) return failed_precondition("secagg: not the sharing round");
  if (share.from_id != sender) {
    return permission_denied("secagg: a share must come from the client it names as sender");
  }
  auto from = clients_.find(sender);
  if (from == clients_.end()) return not_found("secagg: the sender is not in the roster");
  if (is_excluded(sender)) return permission_denied("secagg: the sender was excluded");
  if (share.to_id == sender || !clients_.count(share.to_id)) {
    return not_found("secagg: the recipient is not another client of the roster");
  }
  if (share.ciphertext.size != kCipherBytes) {
    return refuse_and_exclude(
        sender, "a share of the wrong length (" + std::to_string(share.ciphertext.size) +
                    " bytes, not 96) for client " + std::to_string(share.to_id));
  }
  if (from->second.shared_to.count(share.to_id)) {
    return already_exists("secagg: a share for that recipient was already received");
  }
  from->second.shared_to.insert(share.to_id);
  inbox_[share.to_id].push_back(share);
  return Status();
}

fedstat_v1_SecAggRoster SecAggServer::roster(bool (*member)(const Client&)) const {
  fedstat_v1_SecAggRoster r = fedstat_v1_SecAggRoster_init_zero;
  r.session = config_.session;
  r.members.size = static_cast<pb_size_t>((order_.size() + 7) / 8);
  for (size_t i = 0; i < order_.size(); ++i) {
    if (member(clients_.at(order_[i]))) {
      r.members.bytes[i / 8] = static_cast<uint8_t>(r.members.bytes[i / 8] | (1u << (i % 8)));
    }
  }
  return r;
}

Result<fedstat_v1_SecAggRoster> SecAggServer::close_sharing() {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (stage_ != Stage::kSharing) return failed_precondition("secagg: not the sharing round");
  size_t u2 = 0;
  for (auto& [id, client] : clients_) {
    (void)id;
    client.in_u2 = !is_excluded(id) && client.shared_to.size() + 1 == clients_.size();
    u2 += client.in_u2 ? 1 : 0;
  }
  if (u2 < config_.threshold) return abort("fewer than t clients sent their shares");
  for (auto& [to, shares] : inbox_) {  // deliver only what members of U2 sent
    (void)to;
    shares.erase(std::remove_if(shares.begin(), shares.end(),
                                [&](const fedstat_v1_SecAggShare& s) {
                                  return !clients_.at(s.from_id).in_u2;
                                }),
                 shares.end());
  }
  stage_ = Stage::kMasking;
  fedstat_v1_SecAggRoster r = roster([](const Client& c) { return c.in_u2; });
  r.round = 2;
  return r;
}

std::vector<fedstat_v1_SecAggShare> SecAggServer::shares_for(uint32_t id) const {
  auto it = inbox_.find(id);
  return it == inbox_.end() ? std::vector<fedstat_v1_SecAggShare>() : it->second;
}

Status SecAggServer::on_chunk(uint32_t sender, const fedstat_v1_SecAggMaskedChunk& chunk) {
  FEDSTAT_RETURN_IF_ERROR(check_session(chunk.session));
  if (stage_ != Stage::kMasking) return failed_precondition("secagg: not the masked-input round");
  if (chunk.client_id != sender) {
    return permission_denied("secagg: a chunk must come from the client it names");
  }
  auto it = clients_.find(sender);
  if (it == clients_.end() || !it->second.in_u2 || is_excluded(sender)) {
    return permission_denied("secagg: only members of U2 send masked input");
  }
  Client& client = it->second;
  if (chunk.offset < client.received_words) {
    return already_exists("secagg: that part of the vector was already received");
  }
  if (chunk.offset > client.received_words) {
    return failed_precondition("secagg: chunks must arrive in order (a gap before this one)");
  }
  if (chunk.words_count == 0 ||
      uint64_t{chunk.offset} + chunk.words_count > config_.vector_length) {  // 64 bits: no wrap
    return out_of_range("secagg: the chunk runs past the vector's length");
  }
  const uint64_t limit = config_.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << config_.bits) - 1;
  for (pb_size_t k = 0; k < chunk.words_count; ++k) {
    if (chunk.words[k] > limit) {
      return refuse_and_exclude(
          sender, "a masked word above 2^bits - 1 (bits " + std::to_string(config_.bits) + ")");
    }
  }
  client.masked.insert(client.masked.end(), chunk.words, chunk.words + chunk.words_count);
  client.received_words += chunk.words_count;
  return Status();
}

Result<fedstat_v1_SecAggRoster> SecAggServer::close_masking() {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (stage_ != Stage::kMasking) return failed_precondition("secagg: not the masked-input round");
  size_t u3 = 0;
  for (auto& [id, client] : clients_) {
    (void)id;
    client.in_u3 =
        client.in_u2 && !is_excluded(id) && client.received_words == config_.vector_length;
    u3 += client.in_u3 ? 1 : 0;
  }
  if (u3 < config_.threshold) return abort("fewer than t clients sent their masked input");
  stage_ = Stage::kUnmasking;
  fedstat_v1_SecAggRoster r = roster([](const Client& c) { return c.in_u3; });
  r.round = 3;
  return r;
}

Status SecAggServer::on_reveal(uint32_t sender, const fedstat_v1_SecAggReveal& reveal) {
  FEDSTAT_RETURN_IF_ERROR(check_session(reveal.session));
  if (stage_ != Stage::kUnmasking) return failed_precondition("secagg: not the unmasking round");
  if (reveal.from_id != sender) {
    return permission_denied("secagg: a reveal must come from the client it names");
  }
  auto from = clients_.find(sender);
  if (from == clients_.end() || !from->second.in_u3) {
    return permission_denied("secagg: only members of U3 reveal shares");
  }
  if (is_excluded(sender)) return permission_denied("secagg: the sender was excluded");
  auto about = clients_.find(reveal.about_id);
  if (about == clients_.end() || !about->second.in_u2) {
    return not_found("secagg: a reveal about a client outside U2");
  }
  if (reveal.self_mask != about->second.in_u3) {
    return permission_denied(
        "secagg: the protocol reveals b only for survivors and s^SK only for dropped clients");
  }
  if (from->second.revealed_about.count(reveal.about_id)) {
    return already_exists("secagg: that client already revealed a share about that peer");
  }
  if (reveal.share.size != 0 && reveal.share.size != secagg::kShareBytes) {
    return refuse_and_exclude(
        sender, "a reveal of the wrong length (" + std::to_string(reveal.share.size) +
                    " bytes, not 36) about client " + std::to_string(reveal.about_id));
  }
  secagg::ShamirShare parsed;
  if (reveal.share.size != 0 &&
      !secagg::share_from_bytes(sender, ByteSpan(reveal.share.bytes, reveal.share.size), parsed)
           .ok()) {
    return refuse_and_exclude(sender, "a reveal about client " + std::to_string(reveal.about_id) +
                                          " that is not a field element (>= 2^31 + 11)");
  }
  from->second.revealed_about.insert(reveal.about_id);
  // Empty: the sender holds no valid share of that peer (its share was bad); nothing to keep.
  if (reveal.share.size == 0) return Status();
  auto& bucket = reveal.self_mask ? self_shares_[reveal.about_id] : key_shares_[reveal.about_id];
  bucket.emplace_back(
      sender, std::vector<uint8_t>(reveal.share.bytes, reveal.share.bytes + reveal.share.size));
  return Status();
}

std::vector<uint32_t> SecAggServer::u3() const {
  std::vector<uint32_t> ids;
  for (const auto& [id, client] : clients_) {
    if (client.in_u3) ids.push_back(id);
  }
  return ids;
}

namespace {

// The holders' x (their ids) of a share list, the key of the per-holder-set caches below.
std::vector<uint32_t> xs_of(const std::vector<secagg::ShamirShare>& shares) {
  std::vector<uint32_t> xs;
  xs.reserve(shares.size());
  for (const auto& s : shares) xs.push_back(s.x);
  return xs;
}

}  // namespace

Result<std::vector<uint64_t>> SecAggServer::finish(RandomSource& random) {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (stage_ != Stage::kUnmasking) return failed_precondition("secagg: not the unmasking round");
  const uint64_t limit = config_.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << config_.bits) - 1;
  const uint32_t t = config_.threshold;
  std::vector<uint64_t> sum(config_.vector_length, 0);
  for (const auto& [id, client] : clients_) {
    (void)id;
    if (!client.in_u3) continue;
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = (sum[i] + client.masked[i]) & limit;
  }

  // The secrets to rebuild: b_v for v ∈ U3, s_v^SK for v ∈ U2 \ U3, each with its shares (x =
  // the holder's id), parsed once (on_reveal checked them).
  struct Secret {
    uint32_t about = 0;
    bool self_mask = true;
    std::vector<secagg::ShamirShare> shares;
  };
  std::vector<Secret> secrets;
  for (const auto& [id, client] : clients_) {
    if (!client.in_u2) continue;
    Secret secret;
    secret.about = id;
    secret.self_mask = client.in_u3;
    for (const auto& [holder, bytes] : client.in_u3 ? self_shares_[id] : key_shares_[id]) {
      secagg::ShamirShare share;
      FEDSTAT_RETURN_IF_ERROR(
          secagg::share_from_bytes(holder, ByteSpan(bytes.data(), bytes.size()), share));
      secret.shares.push_back(share);
    }
    std::sort(secret.shares.begin(), secret.shares.end(),
              [](const secagg::ShamirShare& a, const secagg::ShamirShare& b) { return a.x < b.x; });
    secrets.push_back(std::move(secret));
  }
  auto live_shares = [&](const Secret& secret) {
    std::vector<secagg::ShamirShare> live;
    for (const auto& share : secret.shares) {
      if (!is_excluded(share.x)) live.push_back(share);
    }
    return live;
  };

  // Two random check polynomials g, g2 of degree < the largest redundancy m − t, drawn now that
  // every share is fixed (a holder cannot aim its error at them). A set of m holders uses their
  // first m − t coefficients.
  size_t redundancy = 0;
  for (const Secret& secret : secrets) {
    const size_t m = live_shares(secret).size();
    if (m > t) redundancy = std::max<size_t>(redundancy, m - t);
  }
  std::vector<uint32_t> g(redundancy), g2(redundancy);
  {
    RandomBits bits(random);
    for (size_t k = 0; k < redundancy; ++k) {
      FEDSTAT_ASSIGN_OR_RETURN(const uint64_t a, bits.uniform_below(secagg::kShamirPrime));
      FEDSTAT_ASSIGN_OR_RETURN(const uint64_t b, bits.uniform_below(secagg::kShamirPrime));
      g[k] = static_cast<uint32_t>(a);
      g2[k] = static_cast<uint32_t>(b);
    }
  }
  struct Check {
    std::vector<uint32_t> w, w2;
    bool w_has_zero = false;  // g vanishes at a holder: its share needs g2's syndrome too
  };
  std::map<std::vector<uint32_t>, Check> checks;  // by holder set: O(m²) once per set
  auto check_for = [&](const std::vector<uint32_t>& xs) -> Result<const Check*> {
    auto it = checks.find(xs);
    if (it != checks.end()) return &it->second;
    Check c;
    c.w.resize(xs.size());
    c.w2.resize(xs.size());
    const Span<const uint32_t> points(xs.data(), xs.size());
    const size_t degree = xs.size() - t;
    FEDSTAT_RETURN_IF_ERROR(secagg::shamir_check_weights(
        points, t, Span<const uint32_t>(g.data(), degree), Span<uint32_t>(c.w.data(), c.w.size())));
    FEDSTAT_RETURN_IF_ERROR(secagg::shamir_check_weights(points, t,
                                                         Span<const uint32_t>(g2.data(), degree),
                                                         Span<uint32_t>(c.w2.data(), c.w2.size())));
    c.w_has_zero = std::find(c.w.begin(), c.w.end(), 0u) != c.w.end();
    return &checks.emplace(xs, std::move(c)).first->second;
  };

  // Every secret with more than t live shares is checked; a holder whose share is off the
  // polynomial is excluded (from every secret) and the check runs again without it.
  for (const Secret& secret : secrets) {
    while (true) {
      const std::vector<secagg::ShamirShare> live = live_shares(secret);
      if (live.size() <= t) break;  // below t: the rebuild below aborts; t: nothing to check
      FEDSTAT_ASSIGN_OR_RETURN(const Check* c, check_for(xs_of(live)));
      const Span<const secagg::ShamirShare> shares(live.data(), live.size());
      const Span<const uint32_t> w(c->w.data(), c->w.size()), w2(c->w2.data(), c->w2.size());
      bool located = false;
      for (size_t k = 0; k < secagg::kShamirPieces && !located; ++k) {
        const uint32_t s = secagg::shamir_syndrome(w, shares, k);
        const uint32_t s2 = s != 0 || c->w_has_zero ? secagg::shamir_syndrome(w2, shares, k) : 0;
        if (s == 0 && s2 == 0) continue;
        const Result<size_t> culprit = secagg::shamir_locate_one(w, w2, s, s2);
        if (!culprit.ok()) {
          return abort("the reveals about " + about(secret.about, secret.self_mask) +
                       " do not fit one polynomial and the wrong one cannot be located (" +
                       std::to_string(live.size()) + " shares, " + std::to_string(t) +
                       " needed; one wrong share is located from " + std::to_string(t + 2) + ")");
        }
        exclude(live[culprit.value()].x, "its reveal about " +
                                             about(secret.about, secret.self_mask) +
                                             " is off the polynomial of the other shares");
        located = true;
      }
      if (!located) break;
    }
  }

  // Rebuild each secret from its first t live shares; the Lagrange coefficients once per set.
  std::map<std::vector<uint32_t>, std::vector<uint32_t>> lagrange;
  const ByteSpan session(session_hash_, 32);
  const Span<uint64_t> words(sum.data(), sum.size());
  for (const Secret& secret : secrets) {
    std::vector<secagg::ShamirShare> live = live_shares(secret);
    if (live.size() < t) {
      return abort("fewer than t valid shares to rebuild " + about(secret.about, secret.self_mask) +
                   " (" + std::to_string(live.size()) + " of " + std::to_string(t) + ")");
    }
    live.resize(t);
    const std::vector<uint32_t> xs = xs_of(live);
    auto coefficients = lagrange.find(xs);
    if (coefficients == lagrange.end()) {
      std::vector<uint32_t> c(t);
      FEDSTAT_RETURN_IF_ERROR(secagg::shamir_lagrange_at_zero(
          Span<const uint32_t>(xs.data(), xs.size()), Span<uint32_t>(c.data(), c.size())));
      coefficients = lagrange.emplace(xs, std::move(c)).first;
    }
    uint8_t secret_bytes[32];
    const crypto::ScopedWipe wipe_secret(secret_bytes, sizeof(secret_bytes));
    const Status rebuilt = secagg::shamir_combine(
        Span<const secagg::ShamirShare>(live.data(), live.size()),
        Span<const uint32_t>(coefficients->second.data(), coefficients->second.size()),
        MutableByteSpan(secret_bytes, 32));
    if (rebuilt.code() == StatusCode::kDataLoss) {
      return abort("the shares of " + about(secret.about, secret.self_mask) +
                   " do not fit one secret (a wrong share among exactly t cannot be located)");
    }
    FEDSTAT_RETURN_IF_ERROR(rebuilt);
    if (secret.self_mask) {
      FEDSTAT_RETURN_IF_ERROR(secagg::apply_mask(
          session, ByteSpan(secret_bytes, 32), secagg::MaskKind::kSelf, true, config_.bits, words));
      continue;
    }
    // A masking key must give the public key its owner advertised: this also catches a wrong
    // share among exactly t, which the polynomial check cannot see.
    uint8_t public_key[32];
    const Status derived =
        crypto::x25519_public_key(ByteSpan(secret_bytes, 32), Span<uint8_t>(public_key, 32),
                                  fill_from_random_source, &random);
    if ((derived.ok() &&
         std::memcmp(public_key, clients_.at(secret.about).masking_key, kKeyBytes) != 0) ||
        derived.code() == StatusCode::kInvalidArgument) {
      return abort("the masking key rebuilt for client " + std::to_string(secret.about) +
                   " does not give the public key it advertised (a wrong share among exactly t)");
    }
    FEDSTAT_RETURN_IF_ERROR(derived);
    for (const auto& [other_id, other] : clients_) {
      if (!other.in_u3) continue;
      uint8_t shared[32];
      const crypto::ScopedWipe wipe_shared(shared, sizeof(shared));
      FEDSTAT_RETURN_IF_ERROR(crypto::x25519_shared_secret(
          ByteSpan(secret_bytes, 32), ByteSpan(other.masking_key, 32), Span<uint8_t>(shared, 32),
          fill_from_random_source, &random));
      // `other` added +PRG when the dropped id is smaller, −PRG when larger: undo it.
      FEDSTAT_RETURN_IF_ERROR(
          secagg::apply_mask(session, ByteSpan(shared, 32), secagg::MaskKind::kPairwise,
                             /*subtract=*/secret.about < other_id, config_.bits, words));
    }
  }
  stage_ = Stage::kDone;
  return sum;
}

}  // namespace host
}  // namespace fedstat
