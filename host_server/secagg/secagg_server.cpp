#include "host_server/secagg/secagg_server.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>

#include "host_server/secagg/share_decoder.h"
#include "sdk/base/crypto.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/mask.h"
#include "sdk/secagg/session_hash.h"
#include "sdk/secagg/shamir.h"
#include "sdk/secagg/signed_keys.h"

namespace fedstat {
namespace host {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kCipherBytes = secagg::kShareCipherBytes;
static_assert(kCipherBytes == 96, "the exclusion reason below says 96");

// "client 503's self-mask seed", "client 503's masking key".
std::string secret_name(uint32_t id, bool self_mask) {
  return "client " + std::to_string(id) + (self_mask ? "'s self-mask seed" : "'s masking key");
}

// "holder 501", "holders 501, 502 and 503": every one named — an abort's suspects are what an
// operator compares across rounds (docs/protocol.md), so none is left out (at n = 1024, at most
// about 5 KB in the one stored abort reason).
std::string holder_list(const std::vector<uint32_t>& ids) {
  std::string out = ids.size() == 1 ? "holder " : "holders ";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += i + 1 == ids.size() ? " and " : ", ";
    out += std::to_string(ids[i]);
  }
  return out;
}

}  // namespace

SecAggServer::SecAggServer(const SecAggServerConfig& config) : config_(config) {
  if (config.vector_length == 0 || config.bits == 0 || config.bits > 64) {
    throw std::invalid_argument("secagg server: the length must be >= 1 and bits in 1..64");
  }
  if (config.threshold < 2 || config.threshold > config.max_clients) {
    throw std::invalid_argument("secagg server: need 2 <= threshold <= max_clients");
  }
  if (config.degree == 0) {
    if (config.max_clients > kMaxSecAggClients) {
      throw std::invalid_argument(
          "secagg server: a complete graph allows at most 1024 clients (use the sparse graph)");
    }
    if (2 * uint64_t{config.threshold} <= config.max_clients) {
      // Devices refuse such a session (secagg_client.h): two disjoint groups of t could each be
      // shown their own U3.
      throw std::invalid_argument("secagg server: need 2 * threshold > max_clients");
    }
  } else {
    check_sparse_config(config);
  }
  if (config.signed_keys) {
    if (!credential::check_public_key(ByteSpan(config.ca_public_key, 65)).ok()) {
      throw std::invalid_argument("secagg server: the CA public key is not a valid P-256 point");
    }
    if (config.degree > secagg::kMaxSignedSparseDegree) {
      throw std::invalid_argument(
          "secagg server: a signed sparse session's degree is at most 126 (a consistency view "
          "names at most 127 ids)");
    }
    const fedstat_v1_SecAggStart started = start();
    const Status digest = secagg::start_parameters_digest(
        started, MutableByteSpan(start_digest_, sizeof(start_digest_)));
    if (!digest.ok()) throw std::runtime_error(digest.message());
  }
}

void SecAggServer::check_sparse_config(const SecAggServerConfig& config) {
  if (config.degree % 2 != 0 || config.degree > secagg::kMaxGraphDegree) {
    throw std::invalid_argument("secagg server: a sparse graph's degree is even, in [2, 1022]");
  }
  if (config.max_clients > secagg::kMaxSparseClients) {
    throw std::invalid_argument("secagg server: a sparse graph allows at most 10^7 clients");
  }
  if (2 * uint64_t{config.threshold} <= uint64_t{config.degree} + 1 ||
      config.threshold > config.degree + 1) {
    throw std::invalid_argument(
        "secagg server: a sparse graph needs degree + 1 < 2 * threshold <= 2 * (degree + 1)");
  }
  const Status committed =
      secagg::graph_commitment(config.session, ByteSpan(config.graph_seed, 32),
                               MutableByteSpan(graph_commitment_, sizeof(graph_commitment_)));
  if (!committed.ok()) throw std::runtime_error(committed.message());
}

fedstat_v1_SecAggStart SecAggServer::start() const {
  fedstat_v1_SecAggStart s = fedstat_v1_SecAggStart_init_zero;
  s.session = config_.session;
  s.threshold = config_.threshold;
  s.vector_length = config_.vector_length;
  s.bits = config_.bits;
  s.max_clients = config_.max_clients;
  s.degree = config_.degree;
  s.dropout_ppm = config_.dropout_ppm;
  s.corrupt_ppm = config_.corrupt_ppm;
  s.signed_keys = config_.signed_keys;
  if (config_.degree != 0) {
    s.graph_commitment.size = sizeof(graph_commitment_);
    std::memcpy(s.graph_commitment.bytes, graph_commitment_, sizeof(graph_commitment_));
  }
  return s;
}

uint32_t SecAggServer::roster_size() const {
  if (ring_.empty()) return 0;
  return secagg::neighbourhood_size(static_cast<uint32_t>(ring_.size()), config_.degree);
}

size_t SecAggServer::roster_start(size_t ring_index) const {
  const size_t m = ring_.size();
  if (roster_size() == m) return 0;  // every member: the ring from its first
  return (ring_index + m - config_.degree / 2) % m;
}

uint32_t SecAggServer::roster_member(size_t ring_index, size_t j) const {
  return ring_[(roster_start(ring_index) + j) % ring_.size()];
}

bool SecAggServer::neighbours(uint32_t a, uint32_t b) const {
  if (roster_size() == ring_.size()) return true;
  const size_t m = ring_.size();
  const size_t pa = clients_.at(a).index, pb = clients_.at(b).index;
  const size_t d = pa > pb ? pa - pb : pb - pa;
  return std::min(d, m - d) <= config_.degree / 2;
}

Status SecAggServer::abort(const std::string& reason) {
  stage_ = Stage::kAborted;
  abort_reason_ = reason;
  return Status(StatusCode::kAborted, "secagg: the round was aborted (abort_reason() says why)");
}

bool SecAggServer::is_excluded(uint32_t id) const {
  return excluded_ids_.count(id) != 0;
}

void SecAggServer::exclude(uint32_t id, const std::string& reason) {
  if (!excluded_ids_.insert(id).second) return;
  excluded_.emplace_back(id, reason);
  // Not yet in U1: its keys (if a replay met any) are left out of the roster.
  auto held = clients_.find(id);
  if (stage_ == Stage::kAdvertising && held != clients_.end()) {
    advertised_keys_.erase(
        std::string(reinterpret_cast<const char*>(held->second.encryption_key), kKeyBytes));
    advertised_keys_.erase(
        std::string(reinterpret_cast<const char*>(held->second.masking_key), kKeyBytes));
    clients_.erase(held);
  }
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
  if (keys.commitment.size != secagg::kCommitmentBytes) {
    // Without it the seed rebuilt for this client could not be checked (secagg_server.h).
    return refuse_and_exclude(keys.client_id,
                              "its keys carry no 32-byte commitment to its self-mask seed (a "
                              "device older than protocol version 3: update its SDK)");
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
  const std::string encryption_key(reinterpret_cast<const char*>(keys.encryption_key.bytes),
                                   kKeyBytes);
  const std::string masking_key(reinterpret_cast<const char*>(keys.masking_key.bytes), kKeyBytes);
  if (advertised_keys_.count(encryption_key) || advertised_keys_.count(masking_key)) {
    return already_exists("secagg: a public key was already advertised (replay?)");
  }
  if (clients_.size() >= config_.max_clients) {
    return resource_exhausted("secagg: the session is full (max_clients)");
  }
  if (config_.signed_keys) {
    // Keys the fleet CA does not vouch for never reach a device (each would refuse the roster).
    const Status certified = secagg::verify_signed_keys(ByteSpan(config_.ca_public_key, 65), keys,
                                                        ByteSpan(start_digest_, 32));
    if (certified.code() == StatusCode::kPermissionDenied) {
      std::string why = certified.message();
      if (why.rfind("secagg: ", 0) == 0) why.erase(0, 8);
      exclude(keys.client_id, why);
    }
    FEDSTAT_RETURN_IF_ERROR(certified);
  }
  advertised_keys_.insert(encryption_key);  // O(log n) per key, not a scan of every client
  advertised_keys_.insert(masking_key);
  Client client;
  std::memcpy(client.encryption_key, keys.encryption_key.bytes, kKeyBytes);
  std::memcpy(client.masking_key, keys.masking_key.bytes, kKeyBytes);
  std::memcpy(client.commitment, keys.commitment.bytes, secagg::kCommitmentBytes);
  if (config_.signed_keys) {
    std::memcpy(client.signing_key, keys.certificate.public_key.bytes, 65);
    std::memcpy(client.ca_signature, keys.certificate.ca_signature.bytes, 64);
    std::memcpy(client.key_signature, keys.key_signature.bytes, 64);
  }
  clients_.emplace(keys.client_id, std::move(client));
  return Status();
}

fedstat_v1_SecAggPeerKeys SecAggServer::roster_entry(uint32_t id, uint32_t index,
                                                     uint32_t count) const {
  const Client& client = clients_.at(id);
  fedstat_v1_SecAggPeerKeys entry = fedstat_v1_SecAggPeerKeys_init_zero;
  entry.index = index;
  entry.count = count;
  entry.has_keys = true;
  entry.keys.session = config_.session;
  entry.keys.client_id = id;
  entry.keys.encryption_key.size = kKeyBytes;
  entry.keys.masking_key.size = kKeyBytes;
  entry.keys.commitment.size = secagg::kCommitmentBytes;
  std::memcpy(entry.keys.encryption_key.bytes, client.encryption_key, kKeyBytes);
  std::memcpy(entry.keys.masking_key.bytes, client.masking_key, kKeyBytes);
  std::memcpy(entry.keys.commitment.bytes, client.commitment, secagg::kCommitmentBytes);
  if (config_.signed_keys) {
    entry.keys.has_certificate = true;
    entry.keys.certificate.client_id = id;
    entry.keys.certificate.public_key.size = 65;
    std::memcpy(entry.keys.certificate.public_key.bytes, client.signing_key, 65);
    entry.keys.certificate.ca_signature.size = 64;
    std::memcpy(entry.keys.certificate.ca_signature.bytes, client.ca_signature, 64);
    entry.keys.key_signature.size = 64;
    std::memcpy(entry.keys.key_signature.bytes, client.key_signature, 64);
  }
  return entry;
}

Result<std::vector<fedstat_v1_SecAggPeerKeys>> SecAggServer::close_advertising() {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (stage_ != Stage::kAdvertising) return failed_precondition("secagg: key round already closed");
  if (clients_.size() < config_.threshold) return abort("fewer than t clients advertised keys");
  // The ring: ascending ids (complete graph), or ascending ring positions under the committed
  // seed (sparse, graph.h) — a permutation fixed before any key arrived.
  std::vector<std::pair<uint64_t, uint32_t>> placed;
  placed.reserve(clients_.size());
  for (const auto& [id, client] : clients_) {
    (void)client;
    uint64_t position = 0;
    if (config_.degree != 0) {
      FEDSTAT_ASSIGN_OR_RETURN(
          position, secagg::ring_position(config_.session, ByteSpan(config_.graph_seed, 32), id));
    }
    placed.emplace_back(position, id);
  }
  std::sort(placed.begin(), placed.end());  // (position, id): graph.h's ring_before
  ring_.clear();
  for (const auto& [position, id] : placed) {
    (void)position;
    clients_.at(id).index = static_cast<uint32_t>(ring_.size());
    ring_.push_back(id);
  }
  std::vector<fedstat_v1_SecAggPeerKeys> roster;
  if (config_.degree == 0) {
    crypto::Sha256 hash;
    uint8_t header[secagg::kSessionHeaderBytes];
    secagg::encode_session_header(config_.session, config_.threshold, config_.vector_length,
                                  config_.bits, header);
    FEDSTAT_RETURN_IF_ERROR(hash.update(ByteSpan(header, sizeof(header))));
    for (uint32_t id : ring_) {
      const Client& client = clients_.at(id);
      roster.push_back(roster_entry(id, client.index, static_cast<uint32_t>(ring_.size())));
      uint8_t entry_bytes[secagg::kRosterEntryBytes];
      secagg::encode_roster_entry(id, client.encryption_key, client.masking_key, client.commitment,
                                  entry_bytes);
      FEDSTAT_RETURN_IF_ERROR(hash.update(ByteSpan(entry_bytes, sizeof(entry_bytes))));
    }
    FEDSTAT_RETURN_IF_ERROR(hash.finish(Span<uint8_t>(session_hash_, 32)));
  } else {
    for (uint32_t id : ring_) {  // for information: each member is sent roster_for(id)
      roster.push_back(
          roster_entry(id, clients_.at(id).index, static_cast<uint32_t>(ring_.size())));
    }
    FEDSTAT_RETURN_IF_ERROR(secagg::sparse_session_hash(
        config_.session, config_.threshold, config_.vector_length, config_.bits, config_.degree,
        config_.max_clients, ByteSpan(config_.graph_seed, 32), static_cast<uint32_t>(ring_.size()),
        MutableByteSpan(session_hash_, 32)));
  }
  stage_ = Stage::kSharing;
  return roster;
}

std::vector<fedstat_v1_SecAggPeerKeys> SecAggServer::roster_for(uint32_t id) const {
  std::vector<fedstat_v1_SecAggPeerKeys> out;
  auto it = clients_.find(id);
  if (ring_.empty() || it == clients_.end() || stage_ == Stage::kAdvertising) return out;
  const uint32_t size = roster_size();
  out.reserve(size);
  for (uint32_t j = 0; j < size; ++j) {
    out.push_back(roster_entry(roster_member(it->second.index, j), j, size));
  }
  if (config_.degree != 0) {
    out.front().graph_seed.size = 32;
    std::memcpy(out.front().graph_seed.bytes, config_.graph_seed, 32);
    out.front().ring_size = static_cast<uint32_t>(ring_.size());
  }
  return out;
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
  if (!neighbours(sender, share.to_id)) {
    return not_found("secagg: the recipient is not one of the sender's neighbours");
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

fedstat_v1_SecAggRoster SecAggServer::bitmap(uint32_t round, size_t size,
                                             const std::function<bool(size_t)>& named) const {
  fedstat_v1_SecAggRoster r = fedstat_v1_SecAggRoster_init_zero;
  r.session = config_.session;
  r.round = round;
  if (size > 8 * sizeof(r.members.bytes)) return r;  // beyond a bitmap: per client only
  r.members.size = static_cast<pb_size_t>((size + 7) / 8);
  for (size_t i = 0; i < size; ++i) {
    if (named(i))
      r.members.bytes[i / 8] = static_cast<uint8_t>(r.members.bytes[i / 8] | (1u << (i % 8)));
  }
  return r;
}

fedstat_v1_SecAggRoster SecAggServer::roster(uint32_t round, bool (*member)(const Client&)) const {
  return bitmap(round, ring_.size(), [&](size_t i) { return member(clients_.at(ring_[i])); });
}

fedstat_v1_SecAggRoster SecAggServer::roster_of(uint32_t id, uint32_t round,
                                                bool (*member)(const Client&)) const {
  auto it = clients_.find(id);
  if (it == clients_.end() || ring_.empty()) return bitmap(round, 0, nullptr);
  const size_t index = it->second.index;
  return bitmap(round, roster_size(),
                [&](size_t j) { return member(clients_.at(roster_member(index, j))); });
}

uint32_t SecAggServer::count_in_roster(size_t ring_index, bool (*member)(const Client&)) const {
  uint32_t n = 0;
  for (uint32_t j = 0; j < roster_size(); ++j) {
    n += member(clients_.at(roster_member(ring_index, j))) ? 1 : 0;
  }
  return n;
}

fedstat_v1_SecAggRoster SecAggServer::u2_for(uint32_t id) const {
  return roster_of(id, 2, [](const Client& c) { return c.in_u2; });
}

fedstat_v1_SecAggRoster SecAggServer::u3_for(uint32_t id) const {
  return roster_of(id, 3, [](const Client& c) { return c.in_u3; });
}

Result<fedstat_v1_SecAggRoster> SecAggServer::close_sharing() {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (stage_ != Stage::kSharing) return failed_precondition("secagg: not the sharing round");
  size_t u2 = 0;
  for (auto& [id, client] : clients_) {
    (void)id;
    client.in_u2 = !is_excluded(id) && client.shared_to.size() + 1 == roster_size();
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
  return roster(2, [](const Client& c) { return c.in_u2; });
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
  client.partial.insert(client.partial.end(), chunk.words, chunk.words + chunk.words_count);
  client.received_words += chunk.words_count;
  // Whole: into the running sum — in a signed sparse session only once its U2 view is stored
  // too (on_masked_view), since a member without one is left out of U3.
  if (client.received_words == config_.vector_length && !signs_u2_views()) add_to_sum(client);
  return Status();
}

void SecAggServer::add_to_sum(Client& client) {
  // The copy goes once summed (memory O(L) per client mid-vector only).
  const uint64_t limit = config_.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << config_.bits) - 1;
  if (sum_.empty()) sum_.assign(config_.vector_length, 0);
  for (size_t i = 0; i < sum_.size(); ++i) sum_[i] = (sum_[i] + client.partial[i]) & limit;
  std::vector<uint64_t>().swap(client.partial);
}

Result<fedstat_v1_SecAggRoster> SecAggServer::close_masking() {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (stage_ != Stage::kMasking) return failed_precondition("secagg: not the masked-input round");
  size_t u3 = 0;
  for (auto& [id, client] : clients_) {
    (void)id;
    // A whole vector is in the running sum already: its sender is in U3 (a member excluded
    // after its last word, by a replayed note, stays — as one excluded while revealing does).
    // Signed sparse sessions (rule D8): and whose signed U2 view arrived (its vector enters the sum
    // with it), without which no
    // neighbour reveals its self-mask share.
    client.in_u3 = client.in_u2 && client.received_words == config_.vector_length &&
                   (!signs_u2_views() || client.signed_u2);
    u3 += client.in_u3 ? 1 : 0;
  }
  if (u3 < config_.threshold) return abort("fewer than t clients sent their masked input");
  // Sparse: every secret of U2 needs t holders that reveal (its neighbourhood's members in U3,
  // itself included); with fewer the server could not unmask, so it asks for no reveal at all.
  for (uint32_t id : ring_) {
    const Client& client = clients_.at(id);
    if (!client.in_u2 || roster_size() == ring_.size()) continue;
    const uint32_t holders = count_in_roster(client.index, [](const Client& c) { return c.in_u3; });
    if (holders < config_.threshold) {
      return abort(
          "only " + std::to_string(holders) + " of client " + std::to_string(id) +
          "'s neighbourhood sent their masked input (t = " + std::to_string(config_.threshold) +
          " needed to unmask it): its neighbourhood dropped below the threshold");
    }
  }
  stage_ = config_.signed_keys ? Stage::kConsistency : Stage::kUnmasking;
  return roster(3, [](const Client& c) { return c.in_u3; });
}

std::vector<uint32_t> SecAggServer::roster_view(uint32_t id, bool Client::*in_set) const {
  std::vector<uint32_t> view;
  auto it = clients_.find(id);
  if (it == clients_.end() || ring_.empty()) return view;
  for (uint32_t j = 0; j < roster_size(); ++j) {
    const uint32_t member = roster_member(it->second.index, j);
    if (clients_.at(member).*in_set) view.push_back(member);
  }
  std::sort(view.begin(), view.end());
  return view;
}

Status SecAggServer::on_masked_view(uint32_t sender, const fedstat_v1_SecAggConsistency& message) {
  if (!signs_u2_views() || stage_ != Stage::kMasking) {
    return failed_precondition("secagg: a U2 view belongs to a signed sparse session's round 2");
  }
  if (message.signer_id != sender) {
    return permission_denied("secagg: a U2 view must come from its signer");
  }
  auto it = clients_.find(sender);
  if (it == clients_.end() || !it->second.in_u2) {
    return permission_denied("secagg: only members of U2 sign a U2 view");
  }
  if (is_excluded(sender)) return permission_denied("secagg: the sender was excluded");
  Client& client = it->second;
  if (client.signed_u2) return already_exists("secagg: that member's U2 view was already received");
  if (client.received_words != config_.vector_length) {
    return failed_precondition("secagg: the U2 view follows the whole masked input");
  }
  if (message.signature.size != 64) {
    return refuse_and_exclude(
        sender,
        "a U2 view signature of " + std::to_string(message.signature.size) + " bytes, not 64");
  }
  const std::vector<uint32_t> view = u2_view(sender);
  if (!std::equal(view.begin(), view.end(), message.members,
                  message.members + message.members_count) ||
      view.size() != message.members_count) {
    return invalid_argument("secagg: the U2 view's members are not the U2 sent to its signer");
  }
  uint8_t digest[32];
  FEDSTAT_RETURN_IF_ERROR(secagg::consistency_digest(
      ByteSpan(session_hash_, 32), sender, ByteSpan(client.encryption_key, 32),
      ByteSpan(client.masking_key, 32), Span<const uint32_t>(view.data(), view.size()),
      MutableByteSpan(digest, sizeof(digest)), secagg::ViewRound::kU2));
  const Status verified =
      credential::verify_digest(ByteSpan(client.signing_key, 65), ByteSpan(digest, 32),
                                ByteSpan(message.signature.bytes, 64));
  if (verified.code() == StatusCode::kPermissionDenied) {
    // Its own message over the view the server sent it: its fault (as a consistency signature's).
    exclude(sender, "its U2 view signature does not verify over the U2 sent to it");
    return permission_denied(
        "secagg: the U2 view signature does not verify over the U2 sent to its signer");
  }
  FEDSTAT_RETURN_IF_ERROR(verified);
  std::memcpy(client.u2_signature, message.signature.bytes, 64);
  client.signed_u2 = true;
  client.u2_view_signed = view;
  add_to_sum(client);  // its whole vector, held until now
  return Status();
}

Status SecAggServer::on_consistency(uint32_t sender, const fedstat_v1_SecAggConsistency& message) {
  FEDSTAT_RETURN_IF_ERROR(check_session(message.session));
  if (message.round == 2) return on_masked_view(sender, message);
  if (message.round != 0) {
    return invalid_argument("secagg: a consistency message of a round other than 2 (U2) or U3");
  }
  if (!config_.signed_keys || stage_ != Stage::kConsistency) {
    return failed_precondition("secagg: not the consistency round of a signed session");
  }
  if (message.signer_id != sender) {
    return permission_denied("secagg: a consistency message must come from its signer");
  }
  auto it = clients_.find(sender);
  if (it == clients_.end() || !it->second.in_u3) {
    return permission_denied("secagg: only members of U3 sign the consistency round");
  }
  if (is_excluded(sender)) return permission_denied("secagg: the sender was excluded");
  Client& client = it->second;
  if (client.signed_consistency) {
    return already_exists("secagg: that member's consistency message was already received");
  }
  if (message.signature.size != 64) {
    return refuse_and_exclude(
        sender,
        "a consistency signature of " + std::to_string(message.signature.size) + " bytes, not 64");
  }
  const std::vector<uint32_t> view = u3_view(sender);
  if (config_.degree == 0 ? message.members_count != 0
                          : !std::equal(view.begin(), view.end(), message.members,
                                        message.members + message.members_count)) {
    return invalid_argument(
        "secagg: the consistency message's members are not the U3 view sent to its signer");
  }
  uint8_t digest[32];
  FEDSTAT_RETURN_IF_ERROR(secagg::consistency_digest(
      ByteSpan(session_hash_, 32), sender, ByteSpan(client.encryption_key, 32),
      ByteSpan(client.masking_key, 32), Span<const uint32_t>(view.data(), view.size()),
      MutableByteSpan(digest, sizeof(digest))));
  const Status verified =
      credential::verify_digest(ByteSpan(client.signing_key, 65), ByteSpan(digest, 32),
                                ByteSpan(message.signature.bytes, 64));
  if (verified.code() == StatusCode::kPermissionDenied) {
    // The sender's own message: its fault, and a check it could make the server repeat forever
    // (the wrong-length case above excludes it too).
    exclude(sender, "its consistency signature does not verify over the U3 view sent to it");
    return permission_denied(
        "secagg: the consistency signature does not verify over the U3 view sent to its signer");
  }
  FEDSTAT_RETURN_IF_ERROR(verified);
  std::memcpy(client.consistency_signature, message.signature.bytes, 64);
  client.signed_consistency = true;
  if (config_.degree != 0) client.consistency_view = view;  // forwarded as signed
  return Status();
}

std::vector<fedstat_v1_SecAggConsistency> SecAggServer::consistency_for(uint32_t member) const {
  std::vector<fedstat_v1_SecAggConsistency> out;
  if (!config_.signed_keys) return out;
  auto it = clients_.find(member);
  if (it == clients_.end() || !it->second.in_u3) return out;
  const auto forward = [&](uint32_t signer, uint32_t round, const std::vector<uint32_t>& members,
                           const uint8_t* signature) {
    fedstat_v1_SecAggConsistency m = fedstat_v1_SecAggConsistency_init_zero;
    m.session = config_.session;
    m.signer_id = signer;
    m.round = round;
    std::copy(members.begin(), members.end(), m.members);
    m.members_count = static_cast<pb_size_t>(members.size());
    m.signature.size = 64;
    std::memcpy(m.signature.bytes, signature, 64);
    out.push_back(m);
  };
  const std::vector<uint32_t> view = u3_view(member);
  if (signs_u2_views()) {  // D8: first the U2 views of the others of its U3 view
    for (uint32_t signer : view) {
      const Client& client = clients_.at(signer);
      if (signer == member || !client.signed_u2) continue;
      forward(signer, 2, client.u2_view_signed, client.u2_signature);
    }
  }
  for (uint32_t signer : view) {
    const Client& client = clients_.at(signer);
    if (signer == member || !client.signed_consistency) continue;
    // (consistency_view is empty unless sparse: a complete graph's message names no members)
    forward(signer, 0, client.consistency_view, client.consistency_signature);
  }
  return out;
}

std::vector<uint32_t> SecAggServer::consistency_signers() const {
  std::vector<uint32_t> ids;
  for (const auto& [id, client] : clients_) {
    if (client.signed_consistency) ids.push_back(id);
  }
  return ids;
}

Status SecAggServer::close_consistency() {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (!config_.signed_keys || stage_ != Stage::kConsistency) {
    return failed_precondition("secagg: not the consistency round of a signed session");
  }
  // Which members of U3 will reveal: those shown enough signatures of their roster — t, itself
  // included, with the complete graph; t besides itself with a sparse one (SecAggClient::
  // on_consistency). An upper bound (a device also needs its peer's valid share), so a member
  // marked here as silent is silent.
  const uint32_t needed = config_.degree == 0 ? config_.threshold : config_.threshold + 1;
  for (uint32_t id : ring_) {
    Client& client = clients_.at(id);
    if (!client.in_u3) continue;
    const uint32_t peers_signed = count_in_roster(
        client.index, [](const Client& c) { return c.in_u3 && c.signed_consistency; });
    // Itself counts once whether or not its own message arrived.
    client.will_reveal = peers_signed - (client.signed_consistency ? 1 : 0) + 1 >= needed;
  }
  for (uint32_t id : ring_) {
    const Client& client = clients_.at(id);
    if (!client.in_u2) continue;
    const uint32_t holders =
        count_in_roster(client.index, [](const Client& c) { return c.in_u3 && c.will_reveal; });
    if (holders < config_.threshold) {
      return abort("only " + std::to_string(holders) + " holders of client " + std::to_string(id) +
                   "'s secrets were shown t = " + std::to_string(config_.threshold) +
                   " consistency signatures: too few consistency signatures to unmask");
    }
  }
  stage_ = Stage::kUnmasking;
  return Status();
}

bool SecAggServer::will_reveal(uint32_t member) const {
  auto it = clients_.find(member);
  return it != clients_.end() && it->second.in_u3 &&
         (!config_.signed_keys || it->second.will_reveal);
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
  if (reveal.about_id != sender && !neighbours(sender, reveal.about_id)) {
    return not_found("secagg: a reveal about a client outside the sender's neighbourhood");
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
  // Empty: the sender holds no valid share of that peer (its share was bad); nothing to keep but
  // the evidence (finish() names it if the peer's secret cannot be rebuilt).
  if (reveal.share.size == 0) {
    empty_reveals_[reveal.about_id].push_back(sender);
    return Status();
  }
  auto& bucket = reveal.self_mask ? self_shares_[reveal.about_id] : key_shares_[reveal.about_id];
  bucket.emplace_back(
      sender, std::vector<uint8_t>(reveal.share.bytes, reveal.share.bytes + reveal.share.size));
  return Status();
}

std::vector<uint32_t> SecAggServer::u2() const {
  std::vector<uint32_t> ids;
  for (const auto& [id, client] : clients_) {
    if (client.in_u2) ids.push_back(id);
  }
  return ids;
}

uint32_t SecAggServer::u2_in_roster_of(uint32_t id) const {
  auto it = clients_.find(id);
  if (it == clients_.end() || ring_.empty()) return 0;
  return count_in_roster(it->second.index, [](const Client& c) { return c.in_u2; });
}

std::vector<uint32_t> SecAggServer::u3() const {
  std::vector<uint32_t> ids;
  for (const auto& [id, client] : clients_) {
    if (client.in_u3) ids.push_back(id);
  }
  return ids;
}

Result<std::vector<uint64_t>> SecAggServer::finish(RandomSource& random) {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (stage_ != Stage::kUnmasking) return failed_precondition("secagg: not the unmasking round");
  const uint32_t t = config_.threshold;
  std::vector<uint64_t> sum = sum_;  // Σ_{U3} masked inputs, summed as each vector completed
  sum.resize(config_.vector_length, 0);

  // The secrets to rebuild: b_v for v ∈ U3, s_v^SK for v ∈ U2 \ U3, each with the shares of the
  // holders not excluded (x = the holder's id, ascending), parsed once (on_reveal checked them).
  struct Secret {
    uint32_t about = 0;
    bool self_mask = true;
    std::vector<secagg::ShamirShare> shares;
  };
  std::vector<Secret> secrets;
  std::set<uint32_t> holders;  // U: every holder whose shares are used
  size_t most_shares = 0;
  for (const auto& [id, client] : clients_) {
    if (!client.in_u2) continue;
    Secret secret;
    secret.about = id;
    secret.self_mask = client.in_u3;
    for (const auto& [holder, bytes] : client.in_u3 ? self_shares_[id] : key_shares_[id]) {
      if (is_excluded(holder)) continue;
      secagg::ShamirShare share;
      FEDSTAT_RETURN_IF_ERROR(
          secagg::share_from_bytes(holder, ByteSpan(bytes.data(), bytes.size()), share));
      secret.shares.push_back(share);
      holders.insert(holder);
    }
    std::sort(secret.shares.begin(), secret.shares.end(),
              [](const secagg::ShamirShare& a, const secagg::ShamirShare& b) { return a.x < b.x; });
    most_shares = std::max(most_shares, secret.shares.size());
    secrets.push_back(std::move(secret));
  }
  // Fewer than t shares of any secret: nothing can rebuild it. Checked before decoding anything;
  // the reason names the owner and the evidence (review finding F1: a dealer of unreadable shares
  // is not removable after U2 in this message flow — docs/protocol.md, "What remains").
  for (const Secret& secret : secrets) {
    if (secret.shares.size() >= t) continue;
    std::vector<uint32_t> empty, excluded_holders;
    for (uint32_t holder : empty_reveals_[secret.about]) {
      (is_excluded(holder) ? excluded_holders : empty).push_back(holder);
    }
    for (const auto& [holder, bytes] :
         secret.self_mask ? self_shares_[secret.about] : key_shares_[secret.about]) {
      (void)bytes;
      if (is_excluded(holder)) excluded_holders.push_back(holder);
    }
    std::sort(empty.begin(), empty.end());
    const std::string owner = "client " + std::to_string(secret.about);
    std::string why =
        "fewer than t valid shares to rebuild " + secret_name(secret.about, secret.self_mask) +
        " (" + std::to_string(secret.shares.size()) + " of " + std::to_string(t) + " needed)";
    if (!empty.empty()) {
      // The evidence is symmetric (second review of issue 39, A1): an empty reveal is a holder's
      // word that its share was unreadable, and holders that withhold readable shares produce
      // the same record as a dealer of unreadable ones. No remedy aimed at one side.
      why += ": " + std::to_string(empty.size()) + " of the " +
             std::to_string(empty.size() + secret.shares.size()) +
             " holders that revealed about it sent no share of it (" + holder_list(empty) +
             ") — either " + owner + " dealt them unreadable shares or they withheld readable " +
             "ones, which the server cannot tell apart: " + owner + " and those holders are " +
             "equally suspect";
    }
    if (!excluded_holders.empty()) {
      why += "; the reveals of " + std::to_string(excluded_holders.size()) +
             " excluded holder(s) are unused";
    }
    return abort(why);
  }

  // Rebuild each secret, verified before it is used (share_decoder.h): b_v against v's
  // commitment, s_v^SK against the public key v advertised. The check polynomials are drawn now
  // that every share is fixed.
  ShareDecoder decoder(t, std::vector<uint32_t>(holders.begin(), holders.end()), most_shares,
                       random);
  size_t seed_trials = SIZE_MAX, key_trials = kMaxKeyTrials;
  const ByteSpan session(session_hash_, 32);
  const Span<uint64_t> words(sum.data(), sum.size());
  for (const Secret& secret : secrets) {
    const Client& owner = clients_.at(secret.about);
    ShareDecoder::Verify verify;
    if (secret.self_mask) {
      verify = [&](ByteSpan candidate) -> Result<bool> {
        uint8_t commitment[secagg::kCommitmentBytes];
        FEDSTAT_RETURN_IF_ERROR(secagg::self_mask_commitment(
            config_.session, secret.about, candidate, MutableByteSpan(commitment, 32)));
        return std::memcmp(commitment, owner.commitment, sizeof(commitment)) == 0;
      };
    } else {
      verify = [&](ByteSpan candidate) -> Result<bool> {
        uint8_t public_key[32];
        const Status derived = crypto::x25519_public_key(candidate, Span<uint8_t>(public_key, 32),
                                                         fill_from_random_source, &random);
        if (derived.code() == StatusCode::kInvalidArgument) return false;
        FEDSTAT_RETURN_IF_ERROR(derived);
        return std::memcmp(public_key, owner.masking_key, kKeyBytes) == 0;
      };
    }
    FEDSTAT_ASSIGN_OR_RETURN(
        DecodedSecret decoded,
        decoder.decode(secret.shares, verify, secret.self_mask ? seed_trials : key_trials));
    const crypto::ScopedWipe wipe_secret(decoded.secret, sizeof(decoded.secret));
    if (!decoded.ok()) return abort(failure_reason(secret.about, secret.self_mask, decoded));
    for (uint32_t holder : decoded.holders) {
      disputes_.push_back({holder, secret.about, secret.self_mask});
    }
    const ByteSpan secret_bytes(decoded.secret, 32);
    if (secret.self_mask) {
      FEDSTAT_RETURN_IF_ERROR(secagg::apply_mask(session, secret_bytes, secagg::MaskKind::kSelf,
                                                 true, config_.bits, words));
      continue;
    }
    // Only the dropped client's neighbours in U3 masked with it.
    const uint32_t size = roster_size();
    for (uint32_t j = 0; j < size; ++j) {
      const uint32_t other_id = roster_member(owner.index, j);
      const Client& other = clients_.at(other_id);
      if (other_id == secret.about || !other.in_u3) continue;
      uint8_t shared[32];
      const crypto::ScopedWipe wipe_shared(shared, sizeof(shared));
      FEDSTAT_RETURN_IF_ERROR(crypto::x25519_shared_secret(
          secret_bytes, ByteSpan(other.masking_key, 32), Span<uint8_t>(shared, 32),
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

std::string SecAggServer::failure_reason(uint32_t about, bool self_mask,
                                         const DecodedSecret& decoded) const {
  using Failure = DecodedSecret::Failure;
  const std::string name = secret_name(about, self_mask);
  const std::string owner = "client " + std::to_string(about);
  const std::string check = self_mask ? "its commitment" : "the public key it advertised";
  const std::string m = std::to_string(decoded.shares);
  const std::string t = std::to_string(config_.threshold);
  const std::string inconsistent = owner + " dealt inconsistent shares";
  switch (decoded.failure) {
    case Failure::kExactlyT:
      return "the " + m + " reveals about " + name + " (exactly t; " +
             holder_list(decoded.holders) + ") rebuild a secret that does not match " + check +
             ", and exactly t shares cannot be checked against each other: one of them is "
             "wrong, or " +
             inconsistent;
    case Failure::kAgreeButWrong:
      return "all " + m + " reveals about " + name +
             " fit one polynomial, yet its secret does not "
             "match " +
             check + ": " + owner + " dealt shares of another " +
             (self_mask ? "seed" : "masking key") + ", or at least " +
             std::to_string(decoded.shares - config_.threshold + 1) +
             " of its holders changed their shares in concert";
    case Failure::kNotOneWrongShare:
      return "the " + m + " reveals about " + name + " (" + t +
             " needed) do not fit one "
             "polynomial and no single wrong share explains them: two or more are wrong "
             "(colluding holders; in dispute: " +
             holder_list(decoded.holders) + "), or " + inconsistent;
    case Failure::kLocatedButWrong:
      return "the " + m + " reveals about " + name + " do not fit one polynomial, and without " +
             holder_list(decoded.holders) +
             " (where the check points) the secret still does not match " + check +
             ": more than one share is wrong (colluding holders), or " + inconsistent +
             " (nobody is excluded for it)";
    case Failure::kNoSubsetVerifies:
      return "the " + m + " reveals about " + name + " (exactly t + 1; " +
             holder_list(decoded.holders) +
             ") do not fit one polynomial, and leaving out any "
             "one of them gives no secret that matches " +
             check + ": more than one is wrong, or " + inconsistent;
    case Failure::kTrialBudgetSpent:
      return "the " + m + " reveals about " + name +
             " (exactly t + 1) hold a wrong share, and "
             "the round's " +
             std::to_string(kMaxKeyTrials) +
             " trial rebuilds of masking keys "
             "are spent (too many such secrets; in dispute: " +
             holder_list(decoded.holders) + ")";
    case Failure::kNone:
      break;
  }
  return "the reveals about " + name + " could not be resolved";
}

}  // namespace host
}  // namespace fedstat
