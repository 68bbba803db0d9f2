#include "host_server/secagg/secagg_server.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "sdk/base/crypto.h"
#include "sdk/secagg/mask.h"
#include "sdk/secagg/session_hash.h"
#include "sdk/secagg/shamir.h"

namespace fedstat {
namespace host {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kCipherBytes = 96;  // sdk/secagg/secagg_client.h kShareCipherBytes

}  // namespace

SecAggServer::SecAggServer(const SecAggServerConfig& config) : config_(config) {
  if (config.threshold < 2 || config.threshold > config.max_clients ||
      config.max_clients > kMaxSecAggClients) {
    throw std::invalid_argument("secagg server: need 2 <= threshold <= max_clients <= 1024");
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
  if (keys.encryption_key.size != kKeyBytes || keys.masking_key.size != kKeyBytes) {
    return data_loss("secagg: public keys are 32 bytes");
  }
  if (clients_.count(keys.client_id))
    return already_exists("secagg: that client already sent keys");
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
  if (share.to_id == sender || !clients_.count(share.to_id)) {
    return not_found("secagg: the recipient is not another client of the roster");
  }
  if (share.ciphertext.size != kCipherBytes) return data_loss("secagg: a share has the wrong size");
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
    client.in_u2 = client.shared_to.size() + 1 == clients_.size();
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
  if (it == clients_.end() || !it->second.in_u2) {
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
    if (chunk.words[k] > limit) return out_of_range("secagg: a word exceeds 2^bits - 1");
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
    client.in_u3 = client.in_u2 && client.received_words == config_.vector_length;
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
  auto about = clients_.find(reveal.about_id);
  if (about == clients_.end() || !about->second.in_u2) {
    return not_found("secagg: a reveal about a client outside U2");
  }
  if (reveal.self_mask != about->second.in_u3) {
    return permission_denied(
        "secagg: the protocol reveals b only for survivors and s^SK only for dropped clients");
  }
  if (reveal.share.size != secagg::kShareBytes) return data_loss("secagg: shares are 36 bytes");
  if (from->second.revealed_about.count(reveal.about_id)) {
    return already_exists("secagg: that client already revealed a share about that peer");
  }
  from->second.revealed_about.insert(reveal.about_id);
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

Result<std::vector<uint64_t>> SecAggServer::finish(RandomSource& blinding) {
  FEDSTAT_RETURN_IF_ERROR(check_session(config_.session));
  if (stage_ != Stage::kUnmasking) return failed_precondition("secagg: not the unmasking round");
  const uint64_t limit = config_.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << config_.bits) - 1;
  std::vector<uint64_t> sum(config_.vector_length, 0);
  for (const auto& [id, client] : clients_) {
    (void)id;
    if (!client.in_u3) continue;
    for (size_t i = 0; i < sum.size(); ++i) sum[i] = (sum[i] + client.masked[i]) & limit;
  }
  auto reconstruct = [&](const std::vector<std::pair<uint32_t, std::vector<uint8_t>>>& shares,
                         uint8_t secret[32]) -> Status {
    if (shares.size() < config_.threshold) {
      return Status(StatusCode::kAborted, "secagg: fewer than t shares to unmask a client");
    }
    std::vector<secagg::ShamirShare> parsed(config_.threshold);
    for (size_t i = 0; i < parsed.size(); ++i) {
      FEDSTAT_RETURN_IF_ERROR(secagg::share_from_bytes(
          shares[i].first, ByteSpan(shares[i].second.data(), shares[i].second.size()), parsed[i]));
    }
    return secagg::shamir_reconstruct(Span<const secagg::ShamirShare>(parsed.data(), parsed.size()),
                                      config_.threshold, MutableByteSpan(secret, 32));
  };
  const ByteSpan session(session_hash_, 32);
  const Span<uint64_t> words(sum.data(), sum.size());
  for (const auto& [id, client] : clients_) {
    uint8_t secret[32];
    if (client.in_u3) {
      const Status rebuilt = reconstruct(self_shares_[id], secret);
      if (rebuilt.code() == StatusCode::kAborted) return abort("too few self-mask shares");
      FEDSTAT_RETURN_IF_ERROR(rebuilt);
      FEDSTAT_RETURN_IF_ERROR(secagg::apply_mask(
          session, ByteSpan(secret, 32), secagg::MaskKind::kSelf, true, config_.bits, words));
    } else if (client.in_u2) {
      const Status rebuilt = reconstruct(key_shares_[id], secret);
      if (rebuilt.code() == StatusCode::kAborted) return abort("too few key shares");
      FEDSTAT_RETURN_IF_ERROR(rebuilt);
      for (const auto& [other_id, other] : clients_) {
        if (!other.in_u3) continue;
        uint8_t shared[32];
        FEDSTAT_RETURN_IF_ERROR(crypto::x25519_shared_secret(
            ByteSpan(secret, 32), ByteSpan(other.masking_key, 32), Span<uint8_t>(shared, 32),
            fill_from_random_source, &blinding));
        // `other` added +PRG when the dropped id is smaller, −PRG when larger: undo it.
        FEDSTAT_RETURN_IF_ERROR(
            secagg::apply_mask(session, ByteSpan(shared, 32), secagg::MaskKind::kPairwise,
                               /*subtract=*/id < other_id, config_.bits, words));
      }
    }
  }
  stage_ = Stage::kDone;
  return sum;
}

}  // namespace host
}  // namespace fedstat
