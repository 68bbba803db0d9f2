// The Client's secure aggregation (task_kinds.h, kSecureAggregation): its DIST rounds over the
// channel, in their own object file so that a Client built without secure aggregation does not
// link the SecAggClient and its crypto.
#include <string.h>

#include "sdk/client/client.h"
#include "sdk/client/contribution.h"
#include "sdk/client/task_kinds.h"

namespace fedstat {
namespace client {

struct ClientSecureAggregation {
  static Status start(Client& client, Span<secagg::SecAggPeer> peers) {
    // Signed rounds (protocol 5): the credential takes effect at the session's SecAggStart.
    client.secagg_.set_credential(client.config_.credential);
    // Signed complete graphs: 2t > n + ceil(gamma n) at the app's corrupt floor, at least.
    client.secagg_.set_assumed_corrupt_ppm(client.config_.task_policy.min_assumed_corrupt_ppm);
    return client.secagg_.init(static_cast<uint32_t>(client.config_.device_id), peers,
                               *client.random_);
  }
  static Status run(Client& client, FrameChannel& channel, Span<uint64_t> contribution,
                    bool resume) {
    return resume ? client.resume_secagg(channel, contribution)
                  : client.secagg_rounds(channel, contribution, Client::SecAggResumePoint());
  }
};

const SecureAggregationSupport kSecureAggregation = {ClientSecureAggregation::start,
                                                     ClientSecureAggregation::run, check_dist_graph,
                                                     &kDataShiftDistKind};

Status Client::resume_secagg(FrameChannel& channel, Span<uint64_t> contribution) {
  // Where the server's round is: SecAggResume (secure aggregation is running), or — the server
  // was still admitting — round 0's SecAggStart when admission closes.
  FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_secagg_resume_tag,
                                         fedstat_v1_Envelope_secagg_start_tag));
  SecAggResumePoint at;
  if (in_.which_body == fedstat_v1_Envelope_secagg_start_tag) {
    at.start_received = true;
    return secagg_rounds(channel, contribution, at);
  }
  const fedstat_v1_SecAggResume& resume = in_.body.secagg_resume;
  // A signed session has the consistency round as round 3 and the reveals as round 4.
  const uint32_t last_round = secagg_.signed_session() ? 4 : 3;
  if (resume.task_id != task_.task_id || resume.round > last_round) {
    return failed_precondition("SecAggResume for another task or a round that does not exist");
  }
  at.round = resume.round;
  at.held = resume.held;
  return secagg_rounds(channel, contribution, at);
}

Status Client::secagg_rounds(FrameChannel& channel, Span<uint64_t> contribution,
                             SecAggResumePoint at) {
  // Each round's opening is processed whole, also what a resumed device already holds (the
  // SecAggClient accepts the same again and refuses anything else); then only the messages the
  // server does not hold are sent: the first at.held of round at.round are skipped.
  if (at.round == 0) {
    if (!at.start_received) {
      FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_secagg_start_tag));
    }
    const fedstat_v1_SecAggStart start = in_.body.secagg_start;
    if (start.session != task_.secagg_session || start.threshold != task_.threshold ||
        start.vector_length != task_.vector_length || start.bits != task_.bits ||
        start.max_clients > task_.max_clients) {
      return failed_precondition("SecAggStart does not match the task");
    }
    // The graph the device judged (validate_task: the degree, and the threat model (k, t) were
    // chosen for) is the one the round runs: a server cannot check a sparse task against the
    // device's bound and then run another graph, or the complete one with a sparse threshold.
    if (start.degree != task_.secagg_degree || start.dropout_ppm != task_.secagg_dropout_ppm ||
        start.corrupt_ppm != task_.secagg_corrupt_ppm) {
      return failed_precondition(
          "SecAggStart's graph (degree, dropout_ppm, corrupt_ppm) does not match the task's");
    }
    const bool keys_held = at.held > 0 && secagg_.stage() == secagg::SecAggStage::kAdvertised;
    if (!keys_held) {
      start_message(fedstat_v1_Envelope_secagg_keys_tag);
      // A device with a credential joins signed sessions only (kPermissionDenied), one without
      // refuses them (kFailedPrecondition): either way nothing is sent, and the session ends.
      FEDSTAT_RETURN_IF_ERROR(secagg_.on_start(start, out_.body.secagg_keys));
      FEDSTAT_RETURN_IF_ERROR(send(channel));
    }
  }
  if (at.round <= 1) {
    // Round 1: the roster U1, then my shares for every peer.
    while (true) {
      FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_secagg_peer_keys_tag));
      FEDSTAT_RETURN_IF_ERROR(secagg_.on_peer_keys(in_.body.secagg_peer_keys));
      if (in_.body.secagg_peer_keys.index + 1 == in_.body.secagg_peer_keys.count) break;
    }
    if (at.round == 1) FEDSTAT_RETURN_IF_ERROR(secagg_.rewind(1, at.held));
    while (true) {
      start_message(fedstat_v1_Envelope_secagg_share_tag);
      Result<bool> more = secagg_.next_share(out_.body.secagg_share);
      FEDSTAT_RETURN_IF_ERROR(more.status());
      if (!more.value()) break;
      FEDSTAT_RETURN_IF_ERROR(send(channel));
    }
  }
  if (at.round <= 2) {
    // The peers' shares for me, then U2.
    while (true) {
      FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_secagg_share_tag,
                                             fedstat_v1_Envelope_secagg_roster_tag));
      if (in_.which_body == fedstat_v1_Envelope_secagg_share_tag) {
        FEDSTAT_RETURN_IF_ERROR(secagg_.on_share(in_.body.secagg_share));
        continue;
      }
      if (in_.body.secagg_roster.round != 2) return failed_precondition("expected the U2 roster");
      break;
    }
    const Status roster = secagg_.on_roster(in_.body.secagg_roster);
    if (roster.code() == StatusCode::kAborted) round_ended_ = true;
    FEDSTAT_RETURN_IF_ERROR(roster);
    // Round 2: the masked contribution — masked once, for the first U2 (a resumed device
    // holds it masked already and sends the words the server does not hold).
    if (secagg_.stage() == secagg::SecAggStage::kReadyToMask) {
      memcpy(marker_.u2, in_.body.secagg_roster.members.bytes, in_.body.secagg_roster.members.size);
      FEDSTAT_RETURN_IF_ERROR(secagg_.mask(contribution));
    }
    // Signed sparse sessions (protocol 6, rule D8): the U2 view follows the last chunk, and the
    // server counts it as one more message of round 2 (held = the words + 1 once it is stored).
    const bool signs_u2 = secagg_.signed_session() && task_.secagg_degree != 0;
    const uint32_t words = static_cast<uint32_t>(contribution.size());
    const bool u2_view_held = signs_u2 && at.round == 2 && at.held > words;
    if (at.round == 2) {
      FEDSTAT_RETURN_IF_ERROR(secagg_.rewind(2, u2_view_held ? words : at.held));
    }
    while (true) {
      start_message(fedstat_v1_Envelope_secagg_masked_chunk_tag);
      Result<bool> more = secagg_.next_chunk(contribution, out_.body.secagg_masked_chunk);
      FEDSTAT_RETURN_IF_ERROR(more.status());
      if (!more.value()) break;
      FEDSTAT_RETURN_IF_ERROR(send(channel));
    }
    if (signs_u2 && !u2_view_held) {
      start_message(fedstat_v1_Envelope_secagg_consistency_tag);
      FEDSTAT_RETURN_IF_ERROR(secagg_.masked_view_message(out_.body.secagg_consistency));
      FEDSTAT_RETURN_IF_ERROR(send(channel));
    }
  }
  // Round 3: U3; record what will be revealed about whom, then reveal.
  FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_secagg_roster_tag));
  if (in_.body.secagg_roster.round != 3) return failed_precondition("expected the U3 roster");
  const Status roster = secagg_.on_roster(in_.body.secagg_roster);
  if (roster.code() == StatusCode::kAborted) round_ended_ = true;
  FEDSTAT_RETURN_IF_ERROR(roster);  // a resumed device refuses any U3 but its first
  if (marker_.stage != kRoundUnmasking) {
    // No record, no reveal: the stage moves to "unmasking" only once the write succeeded, so a
    // failed write is tried again (or the round dropped) before any reveal is sent.
    const uint8_t stage_before = marker_.stage;
    memcpy(marker_.u3, in_.body.secagg_roster.members.bytes, in_.body.secagg_roster.members.size);
    marker_.stage = kRoundUnmasking;
    const Status saved = save_marker();
    if (!saved.ok()) {
      marker_.stage = stage_before;
      return saved;
    }
  }
  uint32_t reveals_round = 3;  // the server's round of the reveals (SecAggResume.round)
  if (secagg_.signed_session()) {
    reveals_round = 4;
    FEDSTAT_RETURN_IF_ERROR(consistency_round(channel, at));
  }
  if (at.round == reveals_round) FEDSTAT_RETURN_IF_ERROR(secagg_.rewind(3, at.held));
  while (true) {
    start_message(fedstat_v1_Envelope_secagg_reveal_tag);
    Result<bool> more = secagg_.next_reveal(out_.body.secagg_reveal);
    FEDSTAT_RETURN_IF_ERROR(more.status());
    if (!more.value()) break;
    FEDSTAT_RETURN_IF_ERROR(send(channel));
  }
  return Status();
}

Status Client::consistency_round(FrameChannel& channel, SecAggResumePoint at) {
  // Signed sessions, after U3 (secagg_client.h): this device's signature over its view of U3 —
  // unless the server holds it (a resume in round 3 with one held, or in round 4) — then the
  // members' signatures the server forwards, ended by a SecAggRoster of round 4 (its bitmap: the
  // members whose messages were forwarded). A resumed device gets U3 again first.
  const bool own_held = at.round > 3 || (at.round == 3 && at.held > 0);
  if (!own_held) {
    start_message(fedstat_v1_Envelope_secagg_consistency_tag);
    FEDSTAT_RETURN_IF_ERROR(secagg_.consistency_message(out_.body.secagg_consistency));
    FEDSTAT_RETURN_IF_ERROR(send(channel));
  }
  while (true) {
    FEDSTAT_RETURN_IF_ERROR(receive_expect(channel, fedstat_v1_Envelope_secagg_consistency_tag,
                                           fedstat_v1_Envelope_secagg_roster_tag));
    if (in_.which_body == fedstat_v1_Envelope_secagg_roster_tag) {
      const fedstat_v1_SecAggRoster& roster = in_.body.secagg_roster;
      if (roster.session != task_.secagg_session) {
        return failed_precondition("a SecAggRoster for another session");
      }
      if (roster.round == 4) break;  // the forwarded signatures are all in
      if (roster.round != 3) return failed_precondition("expected U3 or the end of round 3");
      FEDSTAT_RETURN_IF_ERROR(secagg_.on_roster(roster));  // U3 again: the same, else refused
      continue;
    }
    const Status counted = secagg_.on_consistency(in_.body.secagg_consistency);
    // A signature that does not verify is not counted, and the round goes on (the threshold
    // decides); a view that disagrees with this device's (kAborted: the server showed members
    // different U3 sets) aborted the session — nothing is revealed — and ends it, as does any
    // other refusal (a message a server following the protocol never forwards).
    if (counted.code() == StatusCode::kPermissionDenied) continue;
    FEDSTAT_RETURN_IF_ERROR(counted);
  }
  if (secagg_.stage() != secagg::SecAggStage::kUnmasking &&
      secagg_.stage() != secagg::SecAggStage::kDone) {
    // Fewer than threshold members' signatures verified over this device's view: it reveals
    // nothing (the server may have shown others another U3), and the session ends.
    secagg_.on_abort();
    return Status(StatusCode::kAborted,
                  "secagg: fewer consistency signatures verified than the threshold: nothing "
                  "revealed");
  }
  return Status();
}

}  // namespace client
}  // namespace fedstat
