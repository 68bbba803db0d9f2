#include "host_server/rounds/secagg_phase.h"

#include <stdexcept>

#include "sdk/base/csprng.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace host {
namespace {

SecAggServerConfig config_of(const fedstat_v1_Task& task, const Seed256& graph_seed,
                             const uint8_t* ca_public_key) {
  SecAggServerConfig c;
  c.session = task.secagg_session;
  c.threshold = task.threshold;
  c.vector_length = task.vector_length;
  c.bits = task.bits;
  c.max_clients = task.max_clients;
  c.degree = task.secagg_degree;
  c.dropout_ppm = task.secagg_dropout_ppm;
  c.corrupt_ppm = task.secagg_corrupt_ppm;
  std::copy(graph_seed.bytes, graph_seed.bytes + 32, c.graph_seed);
  if (ca_public_key != nullptr) {
    c.signed_keys = true;
    std::copy(ca_public_key, ca_public_key + sizeof(c.ca_public_key), c.ca_public_key);
  }
  return c;
}

fedstat_v1_Envelope wrap_roster(const fedstat_v1_SecAggRoster& roster) {
  fedstat_v1_Envelope e = wire::make_envelope();
  e.which_body = fedstat_v1_Envelope_secagg_roster_tag;
  e.body.secagg_roster = roster;
  return e;
}

pb_size_t expected_body(SecAggPhase::Stage stage) {
  switch (stage) {
    case SecAggPhase::Stage::kKeys:
      return fedstat_v1_Envelope_secagg_keys_tag;
    case SecAggPhase::Stage::kShares:
      return fedstat_v1_Envelope_secagg_share_tag;
    case SecAggPhase::Stage::kMasking:
      return fedstat_v1_Envelope_secagg_masked_chunk_tag;
    case SecAggPhase::Stage::kConsistency:
      return fedstat_v1_Envelope_secagg_consistency_tag;
    case SecAggPhase::Stage::kReveals:
      return fedstat_v1_Envelope_secagg_reveal_tag;
    default:
      return 0;
  }
}

}  // namespace

const char* SecAggPhase::stage_name(Stage stage) {
  switch (stage) {
    case Stage::kKeys:
      return "keys";
    case Stage::kShares:
      return "shares";
    case Stage::kMasking:
      return "masking";
    case Stage::kConsistency:
      return "consistency";
    case Stage::kReveals:
      return "reveals";
    case Stage::kDone:
      return "done";
    case Stage::kAborted:
      return "aborted";
  }
  return "unknown";
}

SecAggPhase::SecAggPhase(const fedstat_v1_Task& task, const std::set<uint32_t>& admitted,
                         const Seed256& graph_seed, const uint8_t* ca_public_key)
    : server_(config_of(task, graph_seed, ca_public_key)),
      signed_(ca_public_key != nullptr),
      signs_u2_(ca_public_key != nullptr && task.secagg_degree != 0),
      vector_length_(task.vector_length),
      members_(admitted),
      pending_(admitted) {}

uint32_t SecAggPhase::required(uint32_t member) const {
  switch (stage_) {
    case Stage::kKeys:
      return 1;
    case Stage::kShares:
      return server_.roster_size() - 1;
    case Stage::kMasking:
      return vector_length_ + (signs_u2_ ? 1 : 0);  // D8: the U2 view after the words
    case Stage::kConsistency:
      return 1;
    case Stage::kReveals: {
      auto it = reveals_owed_.find(member);
      return it == reveals_owed_.end() ? 0 : it->second;
    }
    default:
      return 0;
  }
}

bool SecAggPhase::member_done(uint32_t member) const {
  auto it = progress_.find(member);
  return it != progress_.end() && it->second >= required(member);
}

uint32_t SecAggPhase::held_from(uint32_t member) const {
  auto it = progress_.find(member);
  return it == progress_.end() ? 0 : it->second;
}

bool SecAggPhase::all_done(const std::set<uint32_t>& dropped) const {
  // More members pending than dropouts: one of them is pending and not dropped.
  if (pending_.size() > dropped.size()) return false;
  for (uint32_t m : pending_) {
    if (dropped.count(m) == 0) return false;
  }
  return true;
}

Status SecAggPhase::on_message(uint32_t sender, const fedstat_v1_Envelope& e) {
  const bool u2_view = signs_u2_ && stage_ == Stage::kMasking &&
                       e.which_body == fedstat_v1_Envelope_secagg_consistency_tag;
  if (e.which_body != expected_body(stage_) && !u2_view) {
    return Status(StatusCode::kFailedPrecondition, "secagg: message for another round");
  }
  if (members_.count(sender) == 0) {
    return Status(StatusCode::kPermissionDenied, "secagg: sender is not in this round");
  }
  Status s;
  uint32_t count = 1;
  switch (stage_) {
    case Stage::kKeys:
      if (e.body.secagg_keys.client_id != sender) {
        return Status(StatusCode::kPermissionDenied, "secagg: keys name another client");
      }
      s = server_.on_keys(e.body.secagg_keys);
      break;
    case Stage::kShares:
      s = server_.on_share(sender, e.body.secagg_share);
      break;
    case Stage::kMasking:
      if (u2_view) {  // D8: counted as one message after the words (held_from: words + 1)
        if (e.body.secagg_consistency.round != 2) {
          return Status(StatusCode::kFailedPrecondition, "secagg: message for another round");
        }
        s = server_.on_consistency(sender, e.body.secagg_consistency);
        break;
      }
      s = server_.on_chunk(sender, e.body.secagg_masked_chunk);
      count = e.body.secagg_masked_chunk.words_count;
      break;
    case Stage::kConsistency:
      s = server_.on_consistency(sender, e.body.secagg_consistency);
      break;
    case Stage::kReveals:
      s = server_.on_reveal(sender, e.body.secagg_reveal);
      break;
    default:
      return Status(StatusCode::kFailedPrecondition, "secagg: the round is over");
  }
  if (s.ok()) {
    if ((progress_[sender] += count) >= required(sender)) pending_.erase(sender);
  } else if (server_.is_excluded(sender) && members_.count(sender)) {
    members_.erase(sender);  // excluded just now: nobody waits for it
    progress_.erase(sender);
    pending_.erase(sender);
  }
  return s;
}

void SecAggPhase::exclude(uint32_t member, const std::string& reason) {
  server_.exclude(member, reason);
  members_.erase(member);
  progress_.erase(member);
  pending_.erase(member);
}

Status SecAggPhase::close(std::vector<uint64_t>* sum) {
  progress_.clear();
  pending_.clear();
  switch (stage_) {
    case Stage::kKeys: {
      auto r = server_.close_advertising();
      if (!r.ok()) break;
      members_.clear();  // U1 (in ring order: the whole ring, for either graph)
      for (const auto& p : r.value()) members_.insert(p.keys.client_id);
      stage_ = Stage::kShares;
      pending_ = members_;
      return Status();
    }
    case Stage::kShares: {
      auto r = server_.close_sharing();
      if (!r.ok()) break;
      const std::vector<uint32_t> u2 = server_.u2();
      members_ = std::set<uint32_t>(u2.begin(), u2.end());
      stage_ = Stage::kMasking;
      pending_ = members_;
      return Status();
    }
    case Stage::kMasking: {
      auto r = server_.close_masking();
      if (!r.ok()) break;
      const std::vector<uint32_t> u3 = server_.u3();
      members_ = std::set<uint32_t>(u3.begin(), u3.end());
      u3_size_ = static_cast<uint32_t>(members_.size());
      for (uint32_t m : members_) reveals_owed_[m] = server_.u2_in_roster_of(m);
      stage_ = signed_ ? Stage::kConsistency : Stage::kReveals;
      pending_ = members_;
      return Status();
    }
    case Stage::kConsistency: {
      // Who signed is decided here; the reveals' members are U3 less any member excluded while
      // signing (a malformed signature: its reveals would go unused).
      Status r = server_.close_consistency();
      if (!r.ok()) break;
      stage_ = Stage::kReveals;
      // A member shown too few signatures reveals nothing: the stage does not wait for it.
      pending_.clear();
      for (uint32_t m : members_) {
        if (server_.will_reveal(m)) pending_.insert(m);
      }
      return Status();
    }
    case Stage::kReveals: {
      // X25519 blinding and ShareDecoder's check polynomials (drawn after every reveal is in, so
      // no holder can aim a wrong share at them). The published sum does not depend on it: every
      // secret is verified before it is used; only which wrong shares are located can.
      Csprng random;
      Status init = random.init();
      if (!init.ok()) throw std::runtime_error(std::string("csprng: ") + init.message());
      auto r = server_.finish(random);
      if (!r.ok()) break;
      if (sum != nullptr) *sum = r.value();
      stage_ = Stage::kDone;
      return Status();
    }
    default:
      return Status(StatusCode::kFailedPrecondition, "secagg: nothing to close");
  }
  stage_ = Stage::kAborted;
  return Status(StatusCode::kAborted, "secagg: below the threshold");
}

std::vector<fedstat_v1_Envelope> SecAggPhase::opening_for(uint32_t member) const {
  std::vector<fedstat_v1_Envelope> out;
  switch (stage_) {
    case Stage::kKeys: {
      fedstat_v1_Envelope e = wire::make_envelope();
      e.which_body = fedstat_v1_Envelope_secagg_start_tag;
      e.body.secagg_start = server_.start();
      out.push_back(e);
      break;
    }
    case Stage::kShares:
      for (const auto& p : server_.roster_for(member)) {
        fedstat_v1_Envelope e = wire::make_envelope();
        e.which_body = fedstat_v1_Envelope_secagg_peer_keys_tag;
        e.body.secagg_peer_keys = p;
        out.push_back(e);
      }
      break;
    case Stage::kMasking:
      for (const auto& share : server_.shares_for(member)) {
        fedstat_v1_Envelope e = wire::make_envelope();
        e.which_body = fedstat_v1_Envelope_secagg_share_tag;
        e.body.secagg_share = share;
        out.push_back(e);
      }
      out.push_back(wrap_roster(server_.u2_for(member)));
      break;
    case Stage::kConsistency:
      out.push_back(wrap_roster(server_.u3_for(member)));
      break;
    case Stage::kReveals: {
      const fedstat_v1_SecAggRoster u3 = server_.u3_for(member);
      out.push_back(wrap_roster(u3));
      if (!signed_) break;
      // The signatures of the other signers of its view, then round 4's roster: the bitmap over
      // its roster of those signers, which ends them.
      fedstat_v1_SecAggRoster end = fedstat_v1_SecAggRoster_init_zero;
      end.session = u3.session;
      end.round = 4;
      end.members.size = u3.members.size;
      std::set<uint32_t> forwarded;
      for (const auto& m : server_.consistency_for(member)) {
        fedstat_v1_Envelope e = wire::make_envelope();
        e.which_body = fedstat_v1_Envelope_secagg_consistency_tag;
        e.body.secagg_consistency = m;
        out.push_back(e);
        if (m.round == 0) forwarded.insert(m.signer_id);  // U2 views (D8) are not signers
      }
      const auto roster = server_.roster_for(member);
      for (size_t i = 0; i < roster.size() && i / 8 < end.members.size; ++i) {
        if (forwarded.count(roster[i].keys.client_id) != 0) {
          end.members.bytes[i / 8] |= static_cast<uint8_t>(1u << (i % 8));
        }
      }
      out.push_back(wrap_roster(end));
      break;
    }
    default:
      break;
  }
  return out;
}

}  // namespace host
}  // namespace fedstat
