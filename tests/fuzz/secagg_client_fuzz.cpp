// Fuzz target: a SecAggClient (sdk/secagg/secagg_client.h) driven through one session by a
// SEQUENCE of server messages from the fuzzer, as a device's loop drives it (sdk/client): each
// message is decoded as a wire Envelope (decode_envelope) and its SecAgg body handed to the
// client — SecAggStart → on_start, SecAggPeerKeys → on_peer_keys, SecAggShare → on_share,
// SecAggRoster → on_roster, SecAggResume → rewind, SecAggAbort → on_abort — after which the
// device sends what the client's stage calls for: every share (kSharing), the masked input
// (kReadyToMask: mask, then every chunk) and every reveal (kUnmasking).
//
// Input: messages, each one length byte then that many bytes of encoded Envelope (the last may
// be cut short). The client is id 1, with storage for 8 peers and a SeededStream of a fixed seed,
// so it draws the same keys every time: the seeds' shares from peers 2 and 3 decrypt.
//
// Invariants beyond "no crash or sanitizer report":
//   - never both kinds of share for one peer leave the client in the session (the self-mask seed
//     share and the secret-key share), whatever errors came before; its own key share never; a
//     b-share only for a peer of the accepted U3 (or itself), an s^SK share only for one of
//     U2 \ U3;
//   - messages for another session (or before any session) are refused: peer keys, shares,
//     rosters, and a SecAggStart once a session began unless it is the same start (which gives
//     the same keys);
//   - once aborted (a kAborted status, a SecAggAbort, a failed mask) the stage stays kAborted and
//     nothing more leaves the client;
//   - a refused message (any other error) changes nothing held: stage, roster size, session hash
//     (a U2 refused in kSharing when every share was made may move it to kShared, as documented
//     in on_roster);
//   - what the client sends is well formed (its session and id, a share for a roster peer, a
//     chunk inside the vector) and, sent again after a rewind, the same bytes.
#include <cstring>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/fuzz/fuzz_common.h"

namespace {

using fedstat::ByteSpan;
using fedstat::MutableByteSpan;
using fedstat::SeededStream;
using fedstat::Span;
using fedstat::Status;
using fedstat::StatusCode;
using fedstat::secagg::SecAggClient;
using fedstat::secagg::SecAggPeer;
using fedstat::secagg::SecAggStage;
using fedstat::wire::Envelope;

constexpr uint32_t kSelf = 1;
constexpr size_t kStorage = 8;
constexpr uint32_t kMaxMaskedLength = 1024;  // a longer vector is not masked (the device's limit)
constexpr size_t kMaxMessages = 64;

fedstat::Seed256 fuzz_seed() {
  fedstat::Seed256 seed;
  for (size_t i = 0; i < sizeof seed.bytes; ++i) seed.bytes[i] = static_cast<uint8_t>(0x5A ^ i);
  return seed;
}

// A device's side of one session, with what left it.
class Device {
 public:
  Device() : stream_(fuzz_seed(), kSelf) {
    FUZZ_CHECK(client_.init(kSelf, Span<SecAggPeer>(peers_, kStorage), stream_).ok());
  }

  void receive(const Envelope& e) {
    before_ = snapshot();
    switch (e.which_body) {
      case fedstat_v1_Envelope_secagg_start_tag:
        start(e.body.secagg_start);
        break;
      case fedstat_v1_Envelope_secagg_peer_keys_tag: {
        const fedstat_v1_SecAggPeerKeys& entry = e.body.secagg_peer_keys;
        const size_t before = client_.roster_size();
        const Status s = handled(client_.on_peer_keys(entry), false);
        if (!entry.has_keys || !session_known_ || entry.keys.session != session_) {
          FUZZ_CHECK(!s.ok());
        }
        if (s.ok() && client_.roster_size() > before) {
          FUZZ_CHECK(client_.roster_size() == before + 1 && entry.index == before);
          roster_.push_back(entry.keys.client_id);
        }
        break;
      }
      case fedstat_v1_Envelope_secagg_share_tag: {
        const Status s = handled(client_.on_share(e.body.secagg_share), false);
        if (!session_known_ || e.body.secagg_share.session != session_) FUZZ_CHECK(!s.ok());
        break;
      }
      case fedstat_v1_Envelope_secagg_roster_tag:
        roster(e.body.secagg_roster);
        break;
      case fedstat_v1_Envelope_secagg_resume_tag:
        (void)handled(client_.rewind(e.body.secagg_resume.round, e.body.secagg_resume.held), false);
        break;
      case fedstat_v1_Envelope_secagg_abort_tag:
        client_.on_abort();
        aborted_ = true;
        break;
      default:
        return;  // not for the SecAggClient
    }
    if (aborted_) FUZZ_CHECK(client_.stage() == SecAggStage::kAborted);
    send();
  }

 private:
  struct Snapshot {
    SecAggStage stage;
    size_t roster_size;
    uint8_t hash[32];
  };
  Snapshot snapshot() const {
    Snapshot s{client_.stage(), client_.roster_size(), {}};
    std::memcpy(s.hash, client_.session_hash().data(), 32);
    return s;
  }

  // Checks a handler's verdict against the state before it; `u2_in_sharing`: a round-2 roster.
  Status handled(Status status, bool u2_in_sharing) {
    const Snapshot& b = before_;
    if (status.code() == StatusCode::kAborted) aborted_ = true;
    if (status.ok() || status.code() == StatusCode::kAborted) return status;
    const Snapshot a = snapshot();
    const bool shared =
        u2_in_sharing && b.stage == SecAggStage::kSharing && a.stage == SecAggStage::kShared;
    FUZZ_CHECK(a.stage == b.stage || shared);
    FUZZ_CHECK(a.roster_size == b.roster_size);
    FUZZ_CHECK(std::memcmp(a.hash, b.hash, 32) == 0);
    return status;
  }

  void start(const fedstat_v1_SecAggStart& start) {
    fedstat_v1_SecAggKeys keys;
    const Status s = handled(client_.on_start(start, keys), false);
    if (session_known_) {
      const bool same = start.session == start_.session && start.threshold == start_.threshold &&
                        start.vector_length == start_.vector_length && start.bits == start_.bits;
      // Only the same start again, while the keys are being collected, is taken.
      if (!same || before_.stage != SecAggStage::kAdvertised) FUZZ_CHECK(!s.ok());
      if (s.ok()) {
        FUZZ_CHECK(keys.session == keys_.session && keys.client_id == keys_.client_id);
        FUZZ_CHECK(std::memcmp(keys.encryption_key.bytes, keys_.encryption_key.bytes, 32) == 0);
        FUZZ_CHECK(std::memcmp(keys.masking_key.bytes, keys_.masking_key.bytes, 32) == 0);
        FUZZ_CHECK(std::memcmp(keys.commitment.bytes, keys_.commitment.bytes, 32) == 0);
      }
      return;
    }
    if (!s.ok()) return;
    FUZZ_CHECK(keys.session == start.session && keys.client_id == kSelf);
    FUZZ_CHECK(keys.encryption_key.size == 32 && keys.masking_key.size == 32);
    FUZZ_CHECK(keys.commitment.size == fedstat::secagg::kCommitmentBytes);
    session_known_ = true;
    session_ = start.session;
    start_ = start;
    keys_ = keys;
  }

  bool member(const std::vector<uint8_t>& bitmap, size_t index) const {
    return index / 8 < bitmap.size() && ((bitmap[index / 8] >> (index % 8)) & 1u) != 0;
  }

  void roster(const fedstat_v1_SecAggRoster& roster) {
    const SecAggStage stage = client_.stage();
    const Status s = handled(client_.on_roster(roster), roster.round == 2);
    if (!session_known_ || roster.session != session_) FUZZ_CHECK(!s.ok());
    if (!s.ok()) return;
    const std::vector<uint8_t> members(roster.members.bytes,
                                       roster.members.bytes + roster.members.size);
    if (roster.round == 2 && client_.stage() == SecAggStage::kReadyToMask &&
        stage != SecAggStage::kReadyToMask) {
      FUZZ_CHECK(!have_u2_);
      have_u2_ = true;
      u2_ = members;
    }
    if (roster.round == 3 && client_.stage() == SecAggStage::kUnmasking &&
        stage == SecAggStage::kMasked) {
      FUZZ_CHECK(have_u2_ && !have_u3_);
      have_u3_ = true;
      u3_ = members;
    }
    // A roster accepted again must be the one acted on.
    if (roster.round == 2 && have_u2_) FUZZ_CHECK(members == u2_);
    if (roster.round == 3 && have_u3_) FUZZ_CHECK(members == u3_);
  }

  // Sends what the stage calls for (bounded: a failure stops the round until the next message).
  void send() {
    if (client_.stage() == SecAggStage::kSharing) {
      for (size_t i = 0; i <= kStorage; ++i) {
        fedstat_v1_SecAggShare share;
        const auto more = client_.next_share(share);
        if (!more.ok() || !more.value()) break;
        sent_share(share);
      }
    }
    if (client_.stage() == SecAggStage::kReadyToMask && start_.vector_length <= kMaxMaskedLength) {
      masked_.resize(start_.vector_length);
      const uint64_t limit = start_.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << start_.bits) - 1;
      for (size_t i = 0; i < masked_.size(); ++i) masked_[i] = (i * 0x9E3779B97F4A7C15u) & limit;
      const Status s = client_.mask(Span<uint64_t>(masked_.data(), masked_.size()));
      if (!s.ok()) {
        aborted_ = true;  // a failure part way wipes the input and ends the session
        FUZZ_CHECK(client_.stage() == SecAggStage::kAborted);
      }
    }
    if (client_.stage() == SecAggStage::kMasked) {
      for (size_t i = 0; i <= kMaxMaskedLength / fedstat::secagg::kChunkWords + 1; ++i) {
        fedstat_v1_SecAggMaskedChunk chunk;
        const auto more =
            client_.next_chunk(Span<const uint64_t>(masked_.data(), masked_.size()), chunk);
        if (!more.ok() || !more.value()) break;
        sent_chunk(chunk);
      }
    }
    if (client_.stage() == SecAggStage::kUnmasking) {
      for (size_t i = 0; i <= kStorage + 1; ++i) {
        fedstat_v1_SecAggReveal reveal;
        const auto more = client_.next_reveal(reveal);
        if (!more.ok() || !more.value()) break;
        sent_reveal(reveal);
      }
    }
  }

  void sent_share(const fedstat_v1_SecAggShare& share) {
    FUZZ_CHECK(!aborted_);
    FUZZ_CHECK(session_known_ && share.session == session_ && share.from_id == kSelf);
    FUZZ_CHECK(share.to_id != kSelf && index_of(share.to_id) < roster_.size());
    FUZZ_CHECK(share.ciphertext.size == fedstat::secagg::kShareCipherBytes);
    const std::vector<uint8_t> bytes(share.ciphertext.bytes,
                                     share.ciphertext.bytes + share.ciphertext.size);
    const auto held = shares_.emplace(share.to_id, bytes);
    FUZZ_CHECK(held.first->second == bytes);  // sent again: the same bytes
  }

  void sent_chunk(const fedstat_v1_SecAggMaskedChunk& chunk) {
    FUZZ_CHECK(!aborted_);
    FUZZ_CHECK(session_known_ && chunk.session == session_ && chunk.client_id == kSelf);
    FUZZ_CHECK(chunk.words_count >= 1 && chunk.words_count <= fedstat::secagg::kChunkWords);
    FUZZ_CHECK(uint64_t{chunk.offset} + chunk.words_count <= masked_.size());
    FUZZ_CHECK(std::memcmp(chunk.words, masked_.data() + chunk.offset,
                           chunk.words_count * sizeof(uint64_t)) == 0);
  }

  void sent_reveal(const fedstat_v1_SecAggReveal& reveal) {
    FUZZ_CHECK(!aborted_);
    FUZZ_CHECK(session_known_ && reveal.session == session_ && reveal.from_id == kSelf);
    // Empty: no valid share of that peer is held (its share was bad), so nothing is revealed.
    FUZZ_CHECK(reveal.share.size == fedstat::secagg::kShareBytes ||
               (reveal.share.size == 0 && reveal.about_id != kSelf));
    FUZZ_CHECK(have_u2_ && have_u3_);
    const size_t index = index_of(reveal.about_id);
    FUZZ_CHECK(index < roster_.size());
    if (reveal.about_id == kSelf) {
      FUZZ_CHECK(reveal.self_mask);  // never this client's own s^SK
    } else {
      FUZZ_CHECK(member(u2_, index));
      FUZZ_CHECK(reveal.self_mask == member(u3_, index));
    }
    if (reveal.share.size == 0) {  // the same peer never with a share as well
      FUZZ_CHECK(revealed_.count({reveal.about_id, true}) == 0);
      FUZZ_CHECK(revealed_.count({reveal.about_id, false}) == 0);
      empty_.insert(reveal.about_id);
      return;
    }
    FUZZ_CHECK(empty_.count(reveal.about_id) == 0);
    // Never both kinds of share for one peer; one kind sent again: the same bytes.
    FUZZ_CHECK(revealed_.count({reveal.about_id, !reveal.self_mask}) == 0);
    const std::vector<uint8_t> bytes(reveal.share.bytes, reveal.share.bytes + reveal.share.size);
    const auto held = revealed_.emplace(std::make_pair(reveal.about_id, reveal.self_mask), bytes);
    FUZZ_CHECK(held.first->second == bytes);
  }

  size_t index_of(uint32_t id) const {
    for (size_t i = 0; i < roster_.size(); ++i) {
      if (roster_[i] == id) return i;
    }
    return roster_.size();
  }

  SeededStream stream_;
  SecAggPeer peers_[kStorage];
  SecAggClient client_;
  Snapshot before_{};

  bool session_known_ = false;
  uint64_t session_ = 0;
  fedstat_v1_SecAggStart start_ = fedstat_v1_SecAggStart_init_zero;
  fedstat_v1_SecAggKeys keys_ = fedstat_v1_SecAggKeys_init_zero;
  std::vector<uint32_t> roster_;  // U1's ids by roster index, as the client took them
  bool have_u2_ = false, have_u3_ = false;
  std::vector<uint8_t> u2_, u3_;
  bool aborted_ = false;
  std::vector<uint64_t> masked_;
  std::map<uint32_t, std::vector<uint8_t>> shares_;
  std::map<std::pair<uint32_t, bool>, std::vector<uint8_t>> revealed_;
  std::set<uint32_t> empty_;  // peers revealed with an empty share (nothing held)
};

// ---- Seeds: a real 3-client session (threshold 2) seen from client 1, and variants. ----------

struct Party {
  explicit Party(uint32_t id) : stream(fuzz_seed(), id) {
    FUZZ_CHECK(client.init(id, Span<SecAggPeer>(peers, kStorage), stream).ok());
  }
  SeededStream stream;
  SecAggPeer peers[kStorage];
  SecAggClient client;
};

using Message = std::vector<uint8_t>;

Message encode(const Envelope& e) {
  Message out = fedstat::fuzz::encoded(e);
  FUZZ_CHECK(out.size() <= 255);  // one length byte per message
  return out;
}

Envelope envelope(pb_size_t tag) {
  return fedstat::fuzz::empty_envelope(tag);
}

Message roster_message(uint64_t session, uint32_t round, uint8_t members) {
  Envelope e = envelope(fedstat_v1_Envelope_secagg_roster_tag);
  e.body.secagg_roster.session = session;
  e.body.secagg_roster.round = round;
  e.body.secagg_roster.members.size = 1;
  e.body.secagg_roster.members.bytes[0] = members;
  return encode(e);
}

Message resume_message(uint32_t round, uint32_t held) {
  Envelope e = envelope(fedstat_v1_Envelope_secagg_resume_tag);
  e.body.secagg_resume.task_id = 1;
  e.body.secagg_resume.round = round;
  e.body.secagg_resume.held = held;
  return encode(e);
}

std::vector<uint8_t> join(const std::vector<Message>& messages) {
  std::vector<uint8_t> out;
  for (const Message& m : messages) {
    out.push_back(static_cast<uint8_t>(m.size()));
    out.insert(out.end(), m.begin(), m.end());
  }
  return out;
}

void write_seeds(fedstat::fuzz::SeedWriter& out) {
  fedstat_v1_SecAggStart start = fedstat_v1_SecAggStart_init_zero;
  start.session = 0x5EC0A6617ull;
  start.threshold = 2;
  start.vector_length = 70;  // two chunks
  start.bits = 20;
  start.max_clients = 3;
  Party parties[3] = {Party(1), Party(2), Party(3)};
  Envelope e = envelope(fedstat_v1_Envelope_secagg_start_tag);
  e.body.secagg_start = start;
  const Message start_message = encode(e);

  std::vector<Message> entries;
  fedstat_v1_SecAggPeerKeys roster[3];
  for (uint32_t i = 0; i < 3; ++i) {
    roster[i] = fedstat_v1_SecAggPeerKeys_init_zero;
    roster[i].index = i;
    roster[i].count = 3;
    roster[i].has_keys = true;
    FUZZ_CHECK(parties[i].client.on_start(start, roster[i].keys).ok());
    e = envelope(fedstat_v1_Envelope_secagg_peer_keys_tag);
    e.body.secagg_peer_keys = roster[i];
    entries.push_back(encode(e));
  }
  Message share_from[4];  // the shares for client 1, by sender
  for (Party& p : parties) {
    for (const fedstat_v1_SecAggPeerKeys& entry : roster) {
      FUZZ_CHECK(p.client.on_peer_keys(entry).ok());
    }
    fedstat_v1_SecAggShare share;
    for (auto more = p.client.next_share(share); more.ok() && more.value();
         more = p.client.next_share(share)) {
      if (share.to_id != kSelf) continue;
      e = envelope(fedstat_v1_Envelope_secagg_share_tag);
      e.body.secagg_share = share;
      share_from[share.from_id] = encode(e);
    }
  }
  FUZZ_CHECK(!share_from[2].empty() && !share_from[3].empty());
  const uint64_t s = start.session;
  const std::vector<Message> opening = {start_message, entries[0],    entries[1],
                                        entries[2],    share_from[2], share_from[3]};
  auto with = [&](std::vector<Message> tail) {
    std::vector<Message> all = opening;
    all.insert(all.end(), tail.begin(), tail.end());
    return all;
  };
  const std::vector<Message> full = with({roster_message(s, 2, 7), roster_message(s, 3, 7)});
  out.add(join(full));
  for (size_t k = 1; k < full.size(); ++k) {  // truncated: the first k messages
    out.add(join(std::vector<Message>(full.begin(), full.begin() + k)));
  }
  std::vector<uint8_t> cut = join(full);
  cut.resize(cut.size() - full.back().size() / 2);  // the last message cut short
  out.add(cut);
  // Client 3 dropped before unmasking: client 1 reveals its key share.
  out.add(join(with({roster_message(s, 2, 7), roster_message(s, 3, 3)})));
  // Client 3 dropped before masking (its share arrived, it is not in U2).
  out.add(join(with({roster_message(s, 2, 3), roster_message(s, 3, 3)})));
  // Client 3 dropped before sharing.
  out.add(join({start_message, entries[0], entries[1], entries[2], share_from[2],
                roster_message(s, 2, 3), roster_message(s, 3, 3)}));
  // Resumptions: the same messages again, and rewinds of every round.
  out.add(join({start_message, start_message, entries[0], entries[1], entries[1], entries[2],
                resume_message(1, 0), entries[0], share_from[2], share_from[2], share_from[3],
                roster_message(s, 2, 7), roster_message(s, 2, 7), resume_message(2, 64),
                roster_message(s, 3, 3), resume_message(3, 1), roster_message(s, 3, 3),
                resume_message(3, 0)}));
  // A refused U3 after the first, which would have revealed the other share of client 3.
  out.add(join(with({roster_message(s, 2, 7), roster_message(s, 3, 3), roster_message(s, 3, 7),
                     resume_message(3, 2)})));
  // Aborted after U2; below the threshold at U3; another session's messages.
  Envelope abort = envelope(fedstat_v1_Envelope_secagg_abort_tag);
  abort.body.secagg_abort.session = s;
  out.add(join(with({roster_message(s, 2, 7), encode(abort), roster_message(s, 3, 7)})));
  out.add(join(with({roster_message(s, 2, 7), roster_message(s, 3, 1)})));
  out.add(join(with({roster_message(s + 1, 2, 7), roster_message(s, 2, 7),
                     roster_message(s + 1, 3, 7), roster_message(s, 3, 7)})));
}

}  // namespace

FEDSTAT_FUZZ_SEEDS(write_seeds)

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Device device;
  size_t at = 0;
  for (size_t messages = 0; at < size && messages < kMaxMessages; ++messages) {
    const size_t length = data[at++];
    const size_t take = length < size - at ? length : size - at;
    Envelope e;
    const Status decoded = fedstat::wire::decode_envelope(ByteSpan(data + at, take), e);
    at += take;
    if (!decoded.ok()) continue;  // the device drops what it cannot decode
    device.receive(e);
  }
  return 0;
}
