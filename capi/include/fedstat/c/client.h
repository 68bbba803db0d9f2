/** @file
 * fedstat C ABI: the device's Client, the one object an app holds to take part in fedstat tasks.
 * The C form of sdk/client/client.h, whose header states the session's message order, checks,
 * ledger charge, resume and reboot rules this follows.
 *
 * What the app supplies:
 *   * the connection: fedstat-server's TLS-PSK, through the ABI's own channel (c/tls.h:
 *     fedstat_tls_channel_connect, then fedstat_client_run_session_tls), or a fedstat_channel,
 *     three C callbacks over any reliable ordered byte stream the app brings (a phone's socket
 *     API with its own TLS, a firmware's UART); the Client sends and receives the
 *     length-prefixed frames of docs/protocol.md through it;
 *   * its data, as the SDK reads it without copying: a sparse histogram (DATA_SHIFT, KL_ANSWERS),
 *     labelled examples (MODEL_UPDATE), a vector in [0,1]^d (HETEROGENEITY) — tasks of a kind
 *     with no data are declined;
 *   * a ledger (loaded) and a random source (a CSPRNG in production), which outlive the Client;
 *   * a wall clock in seconds for the ledger, and the storage directory (fedstat_set_storage_
 *     directory) where the round marker is kept.
 * Callbacks must return (never unwind or longjmp through fedstat code) and must not call this
 * Client. One session at a time per Client; Clients do not share ledgers across threads.
 *
 * Refusals: too little or misaligned memory writes nothing; a refusal found by the C++ init (a
 * bad device id, a corrupt marker) may have used the memory, with no handle.
 *
 * @memory caller's, FEDSTAT_ALIGNMENT-aligned: fedstat_client_size(work_bytes) =
 *   K + work_bytes
 * where K is the handle (5,720 bytes on 64-bit hosts: the C++ Client, 3.3 KiB, a send and a
 * receive buffer of FEDSTAT_MAX_FRAME_BYTES each, and room for the device credential of
 * c/credential.h, 236 bytes) and work_bytes the memory the Client computes
 * contributions in (sdk/client/client.h: 8*L + 8*data_words + scratch for a task of L words; a
 * task needing more is declined, FEDSTAT_SESSION_DECLINED_MEMORY; the ClientHello tells the
 * server work_bytes).
 * @paper none (the protocol around 000-004's device routines and Bonawitz et al. 2017).
 */
#ifndef FEDSTAT_C_CLIENT_H_
#define FEDSTAT_C_CLIENT_H_

#include "base.h"
#include "histogram.h"
#include "ledger.h"
#include "random.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The device's Client (opaque), in caller memory. */
typedef struct fedstat_client fedstat_client;

/** The largest frame (prefix + encoded message) either side sends. */
#define FEDSTAT_MAX_FRAME_BYTES 738

/** The app's connection. Each callback returns FEDSTAT_OK or an error code (FEDSTAT_UNAVAILABLE:
 * the peer is gone; FEDSTAT_DEADLINE_EXCEEDED: nothing within timeout_ms); the session ends
 * with that code (a value that is no fedstat_status_code: FEDSTAT_INTERNAL). */
typedef struct fedstat_channel {
  void* context; /**< passed to every callback */
  /** Sends all `size` bytes. */
  fedstat_status (*send)(void* context, const uint8_t* bytes, size_t size);
  /** Receives at least 1 and at most `capacity` bytes into `buffer` (*received = how many), or
   * fails; frames may arrive split or joined in any way. A reported 0 bytes or more than
   * `capacity` ends the session (FEDSTAT_INTERNAL). */
  fedstat_status (*receive)(void* context, uint8_t* buffer, size_t capacity, size_t* received,
                            uint32_t timeout_ms);
  /** Ends the connection (called once when a session ends; may be NULL). */
  void (*close)(void* context);
} fedstat_channel;

/** A Client's identity, timeout, clock and round-marker name (fedstat_client_create). */
typedef struct fedstat_client_config {
  uint64_t device_id;                   /**< 1..2^31, also the secure-aggregation id */
  uint32_t receive_timeout_ms;          /**< per message (0: 30000) */
  uint64_t (*wall_clock_seconds)(void); /**< seconds since 1970 for the ledger (an RTC) */
  /** the round marker's blob: NULL: "fedstat-client-round"; 1-64 characters of
   * [A-Za-z0-9_.-]; copied */
  const char* round_blob_name;
} fedstat_client_config;

/** How a session ended (fedstat_session_outcome.result). */
enum fedstat_session_result {
  FEDSTAT_SESSION_NO_TASK = 0,              /**< the server had no task: check in later */
  FEDSTAT_SESSION_VERSION_TOO_OLD = 1,      /**< the SDK must be updated */
  FEDSTAT_SESSION_DECLINED_INTERRUPTED = 2, /**< this task's round was cut by a reboot */
  FEDSTAT_SESSION_DECLINED_NO_DATA = 3,     /**< the app holds no data for the task's kind */
  FEDSTAT_SESSION_DECLINED_MEMORY = 4,      /**< the task needs more than work_bytes */
  FEDSTAT_SESSION_DECLINED_BUDGET = 5,      /**< the ledger refused the task's cost */
  FEDSTAT_SESSION_COMPLETED = 6,            /**< the round completed (RoundOutcome) */
  FEDSTAT_SESSION_ABORTED = 7,              /**< RoundOutcome{completed = false} or SecAggAbort */
  /** the task is outside the Client's task policy (fedstat_client_last_policy_refusal says which
   * rule) */
  FEDSTAT_SESSION_DECLINED_POLICY = 8,
  /** the ledger already holds a spend of this task (answered, or declined after its charge, in
   * an earlier session): declined TASK_CLOSED, nothing charged again, nothing computed */
  FEDSTAT_SESSION_DECLINED_ALREADY_CHARGED = 9
};

/** What a session that returned FEDSTAT_OK came to (fedstat_client_run_session). */
typedef struct fedstat_session_outcome {
  int32_t result;   /**< enum fedstat_session_result */
  uint32_t task_id; /**< 0 when no task was offered */
} fedstat_session_outcome;

/** The rounds a Client holds across sessions (fedstat_client_get_state). */
typedef struct fedstat_client_state {
  uint32_t interrupted_task;    /**< a round cut by a reboot, found at create (0: none) */
  uint32_t pending_report_task; /**< a round a lost channel cut off: the next session resumes it */
} fedstat_client_state;

/** The memory a Client with `work_bytes` of work memory needs, K + work_bytes, in `*bytes`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `bytes` is NULL. FEDSTAT_RESOURCE_EXHAUSTED: K + work_bytes
 * exceeds SIZE_MAX. */
fedstat_status fedstat_client_size(size_t work_bytes, size_t* bytes);
/** A Client in `memory` (work_bytes = memory_bytes - K), reading the stored round marker. *out
 * points into `memory`, which must outlive it, as must `ledger` and `random`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `config`, `memory` or `out` is NULL; `ledger` or `random`
 * NULL or not a ledger / random source; a round blob name that is empty or longer than 64
 * characters, or that storage refuses; `memory` not FEDSTAT_ALIGNMENT-aligned; a device id
 * outside 1..2^31; no clock. FEDSTAT_RESOURCE_EXHAUSTED: `memory_bytes` is below K.
 * FEDSTAT_DATA_LOSS: the stored round marker is corrupt
 * (fedstat_client_forget_interrupted_round deletes it). FEDSTAT_UNAVAILABLE: storage could not
 * be read. FEDSTAT_INTERNAL: the storage backend misbehaved. */
fedstat_status fedstat_client_create(void* memory, size_t memory_bytes,
                                     const fedstat_client_config* config, fedstat_ledger* ledger,
                                     fedstat_random* random, fedstat_client** out);

/** A task kind a Client can compute (opaque, static; fedstat_task_kind_*). */
typedef struct fedstat_task_kind fedstat_task_kind;
/** The Client's secure aggregation, for DIST tasks (opaque, static). */
typedef struct fedstat_secure_aggregation fedstat_secure_aggregation;
/** DATA_SHIFT: the sketch report of the app's histogram; for a DIST task, its hashed histogram
 * with Pólya shares, which needs fedstat_secure_aggregation_support() too. @errors none. */
const fedstat_task_kind* fedstat_task_kind_data_shift(void);
/** KL_ANSWERS: the app's counts at the task's points. @errors none. */
const fedstat_task_kind* fedstat_task_kind_kl_answers(void);
/** MODEL_UPDATE: the quantised update of the app's examples. @errors none. */
const fedstat_task_kind* fedstat_task_kind_model_update(void);
/** HETEROGENEITY: the app's vector's heterogeneity rounds. @errors none. */
const fedstat_task_kind* fedstat_task_kind_heterogeneity(void);
/** Secure aggregation (DIST tasks). @errors none. */
const fedstat_secure_aggregation* fedstat_secure_aggregation_support(void);

/** As fedstat_client_create, for a Client that computes only the `kind_count` kinds in `kinds`
 * (pointers copied), and DIST tasks only when `secure_aggregation` is not NULL. The code of
 * what it is not given is not linked into the app (docs/footprint.md); a task of another kind,
 * or a DIST task without secure aggregation, is declined (FEDSTAT_UNIMPLEMENTED from
 * fedstat_client_run_session) before anything is charged. fedstat_client_create is this with
 * every kind and secure aggregation.
 * @errors fedstat_client_create's; FEDSTAT_INVALID_ARGUMENT also when `kinds` is NULL with
 * kind_count > 0, holds a NULL entry or one kind twice, or kind_count exceeds 4. */
fedstat_status fedstat_client_create_with_kinds(
    void* memory, size_t memory_bytes, const fedstat_client_config* config,
    const fedstat_task_kind* const* kinds, size_t kind_count,
    const fedstat_secure_aggregation* secure_aggregation, fedstat_ledger* ledger,
    fedstat_random* random, fedstat_client** out);

/** The app's data for DATA_SHIFT and KL_ANSWERS tasks: a sparse histogram (pointer kept, not
 * copied: it must stay valid and unchanged while a session runs). NULL removes it.
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client, or `histogram` is not a
 * histogram or not a sparse one (the data set before stays). */
fedstat_status fedstat_client_set_histogram(fedstat_client* client,
                                            const fedstat_histogram* histogram);
/** As fedstat_client_set_histogram, for MODEL_UPDATE tasks: n labelled examples of dimension d
 * (features: n*d floats, row-major; labels: -1 or +1; checked when a task reads them). n = 0
 * removes them.
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client; with n > 0, `features` or
 * `labels` NULL, d = 0, or n*d overflows (the data set before stays). */
fedstat_status fedstat_client_set_examples(fedstat_client* client, const float* features,
                                           const int8_t* labels, size_t n, size_t d);
/** As fedstat_client_set_histogram, for HETEROGENEITY tasks: x, d values in [0, 1] (checked when
 * a task reads them). d = 0 removes it.
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client, or `x` is NULL with a
 * nonzero d (the data set before stays). */
fedstat_status fedstat_client_set_unit_vector(fedstat_client* client, const double* x, size_t d);

/** Report chunks the Client sends before it waits for an Ack (ClientConfig::report_window):
 * 1, the default, one at a time (any transport); up to 16 over TCP, where 8 sends a 40-chunk
 * report in about 5 round trips instead of 40. Takes effect at the next session.
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client, or `window` is 0 or above
 * 16 (the window is unchanged). */
fedstat_status fedstat_client_set_report_window(fedstat_client* client, uint8_t window);

/** Bits of fedstat_task_policy.accepted_trust: the trust models a Client takes tasks of. */
#define FEDSTAT_TRUST_TRUSTED 1u /**< TRUSTED: the server adds the noise to exact words */
#define FEDSTAT_TRUST_TAGG 2u    /**< TAGG: a trusted aggregator adds it; the collector sees them */
#define FEDSTAT_TRUST_DIST 4u    /**< DIST: the device's own noise share, secure aggregation */
#define FEDSTAT_TRUST_NONE 8u    /**< NONE: no privacy, exact words, nothing charged */

/** Bits of fedstat_task_policy.answered_kinds: the task kinds a Client answers (1 << the wire's
 * TaskKind number). */
#define FEDSTAT_KIND_DATA_SHIFT 2u    /**< DATA_SHIFT: sketch or hashed buckets (a histogram) */
#define FEDSTAT_KIND_KL_ANSWERS 4u    /**< KL_ANSWERS: counts at query points (a histogram) */
#define FEDSTAT_KIND_HETEROGENEITY 8u /**< HETEROGENEITY, both stages (a unit vector) */
#define FEDSTAT_KIND_MODEL_UPDATE 16u /**< MODEL_UPDATE (labelled examples) */

/** What the app lets its Client take part in (sdk/client/task_policy.h, which gives each rule
 * and why its default). A task outside it is declined before anything is read past the Task,
 * charged or computed: FEDSTAT_SESSION_DECLINED_POLICY, TaskReply.reason POLICY.
 * Make one with fedstat_task_policy_default and change the fields the app needs: a policy it did
 * not make (zeroed, or initialised field by field) is refused by fedstat_client_set_task_policy,
 * because a field left at 0 would be a weaker policy than the app meant — min_exact_epsilon 0
 * turns the floor on TRUSTED/TAGG tasks off. */
typedef struct fedstat_task_policy {
  /** FEDSTAT_TRUST_* bits; default TRUSTED | TAGG | DIST (NONE off: an app opts in) */
  uint32_t accepted_trust;
  /** the largest ε the ledger may be charged for one task (finite, > 0; default 10) */
  double max_epsilon;
  /** the largest δ charged for one task, in [0, 1) (default 1e-5): a weaker δ is refused */
  double max_delta;
  /** the smallest ε a TRUSTED or TAGG task may be charged, in [0, max_epsilon] (default 0.1) */
  double min_exact_epsilon;
  /** DIST: how many noise shares in a released sum (the device's own included) the app assumes
   * come from honest devices; a task is charged, and max_epsilon weighs, the ε of the noise of
   * min(threshold, this) shares. 0 (default): the task's threshold — the semi-honest server that
   * fedstat-server calibrates its noise for. 1: only the device's own share — against a server
   * that fields devices of its own (it issues every PSK) or peers that collude with it; most DIST
   * tasks then cost far more than they declare and are declined unless each share is large
   * (sdk/client/task_policy.h weighs the trade-off). */
  uint32_t assumed_honest_shares;
  /** FEDSTAT_KIND_* bits: the task kinds the app answers; default all four. A task of another
   * kind is declined (FEDSTAT_POLICY_TASK_KIND) before anything is read past the Task or charged.
   * Leave out a kind the app never holds data for: a decline for want of data comes after the
   * ledger is charged and keeps the charge (fedstat_client_run_session), so a server could
   * otherwise drain the budget with tasks of that kind (sdk/client/task_policy.h, rule 0). */
  uint32_t answered_kinds;
  /** DIST with a sparse secure-aggregation graph (SecAgg+): the least dropout rate, in parts per
   * million, the device judges the task's degree and threshold at — max(the task's declared rate,
   * this); below 1000000, default 50000 (5 %). A task whose graph fails the bound there is
   * refused (FEDSTAT_INVALID_ARGUMENT, nothing charged). 0 trusts the task's declaration
   * (sdk/client/task_policy.h). */
  uint32_t min_assumed_dropout_ppm;
  /** the same for the fraction of devices the adversary may control (default 50000, 5 %) */
  uint32_t min_assumed_corrupt_ppm;
  /** set by fedstat_task_policy_default; never set it yourself (see above) */
  uint32_t made_by_default;
} fedstat_task_policy;

/** Which rule of the task policy declined the last session's task
 * (fedstat_client_last_policy_refusal). */
enum fedstat_policy_refusal {
  FEDSTAT_POLICY_NOT_REFUSED = 0,         /**< the last session was not a policy decline */
  FEDSTAT_POLICY_TRUST_MODEL = 1,         /**< its trust model is not accepted */
  FEDSTAT_POLICY_EPSILON_ABOVE_MAX = 2,   /**< its ε charge exceeds max_epsilon */
  FEDSTAT_POLICY_DELTA_ABOVE_MAX = 3,     /**< its δ charge exceeds max_delta */
  FEDSTAT_POLICY_EXACT_EPSILON_BELOW = 4, /**< TRUSTED/TAGG charged below min_exact_epsilon */
  FEDSTAT_POLICY_TASK_KIND = 5            /**< its kind is not in answered_kinds (checked first) */
};

/** The default task policy, in `*policy` (what a Client has from fedstat_client_create): the
 * start of every policy an app sets (copies of it included).
 * @errors FEDSTAT_INVALID_ARGUMENT: `policy` is NULL. */
fedstat_status fedstat_task_policy_default(fedstat_task_policy* policy);
/** Sets the Client's task policy for the tasks offered from the next session on (a round already
 * accepted is resumed under the policy it was accepted with). Start from
 * fedstat_task_policy_default and change what the app needs, e.g. add FEDSTAT_TRUST_NONE.
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client, `policy` is NULL, not made
 * by fedstat_task_policy_default (the message names it), or malformed — accepted_trust 0 or with
 * another bit, max_epsilon NaN, infinite or <= 0, max_delta outside [0, 1), min_exact_epsilon
 * NaN, infinite, negative or above max_epsilon, answered_kinds 0 or with another bit (the
 * message, fedstat_client_last_error, names the field; the policy is unchanged). */
fedstat_status fedstat_client_set_task_policy(fedstat_client* client,
                                              const fedstat_task_policy* policy);
/** The rule that declined the last session's task (enum fedstat_policy_refusal; FEDSTAT_POLICY_
 * NOT_REFUSED unless it ended FEDSTAT_SESSION_DECLINED_POLICY), in `*refusal`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client, or `refusal` is NULL. */
fedstat_status fedstat_client_last_policy_refusal(const fedstat_client* client, int32_t* refusal);

/** One session with the server over `channel` (closed when it returns). FEDSTAT_OK with the
 * outcome (declines for the task policy, no data, memory, budget or a reboot included), or the
 * error that ended it: the C++ Client::run_session's (sdk/client/client.h), as they are.
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client, or `channel`, its send or
 * receive callback, or `outcome` is NULL (nothing sent). A task refused, after a decline is sent:
 * FEDSTAT_INVALID_ARGUMENT or FEDSTAT_UNIMPLEMENTED for task fields or TaskData the device
 * refuses, or app data (examples, vector) that do not fit the task; FEDSTAT_FAILED_PRECONDITION
 * when the app holds fewer examples than the task was calibrated for. A decline because of the
 * app's data (these two, FEDSTAT_SESSION_DECLINED_NO_DATA, and FEDSTAT_SESSION_DECLINED_MEMORY
 * when the data's size makes the task too large) comes after the ledger is charged for the task
 * and keeps the charge: a free one would let a server read the data off declines
 * (sdk/client/client.h, the order of checks) — which is also why an app sets
 * fedstat_task_policy.answered_kinds to the kinds it holds data for. A task the ledger was already
 * charged for, offered again, is FEDSTAT_SESSION_DECLINED_ALREADY_CHARGED, free. The ledger's
 * refusals
 * other than the budget (FEDSTAT_FAILED_PRECONDITION: not loaded or locked;
 * FEDSTAT_INVALID_ARGUMENT: an implausible clock reading; FEDSTAT_UNAVAILABLE: storage).
 * FEDSTAT_FAILED_PRECONDITION: the server sent a message of the wrong kind, for another task,
 * out of order, an Ack with the wrong offset, or a resume that does not match (nothing more is
 * sent). A ServerError ends the session with its code (detail:
 * fedstat_client_last_server_detail), except RETRY_LATER, TASK_CLOSED or VERSION_TOO_OLD in
 * answer to the ClientHello: FEDSTAT_OK and the outcome. A channel's error as its callback
 * returned it (FEDSTAT_UNAVAILABLE, FEDSTAT_DEADLINE_EXCEEDED, ...: a round already built is
 * resumed by the next session); FEDSTAT_DEADLINE_EXCEEDED also: no whole frame within the
 * receive timeout; FEDSTAT_DATA_LOSS: a malformed frame (FEDSTAT_OUT_OF_RANGE: one longer than
 * any message), or a pending round's memory changed since the channel was lost (the round is
 * dropped, nothing sent); FEDSTAT_INTERNAL: a receive callback that reported 0 bytes or more
 * than offered, or returned no fedstat_status_code. FEDSTAT_UNAVAILABLE also: storage could not
 * write the round marker. Errors of building the contribution and of secure aggregation, as
 * they are. */
fedstat_status fedstat_client_run_session(fedstat_client* client, const fedstat_channel* channel,
                                          fedstat_session_outcome* outcome);

/** The ServerError detail that ended the last session ("" if none; a fixed message when
 * `client` is NULL or not a Client). */
const char* fedstat_client_last_server_detail(const fedstat_client* client);
/** The Client's interrupted and pending rounds, in `*state`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client, or `state` is NULL. */
fedstat_status fedstat_client_get_state(const fedstat_client* client, fedstat_client_state* state);
/** Deletes a recorded interrupted round (NULL: the default name); none recorded is FEDSTAT_OK.
 * @errors FEDSTAT_INVALID_ARGUMENT: storage refuses the name (empty, a character outside
 * [A-Za-z0-9_.-], a leading '.', more than 64 characters; POSIX: the path is too long).
 * FEDSTAT_UNAVAILABLE: storage could not remove it. */
fedstat_status fedstat_client_forget_interrupted_round(const char* round_blob_name);

/** The message of the last call on `client` that failed ("" if none; a fixed message when
 * `client` is NULL or not a Client). */
const char* fedstat_client_last_error(const fedstat_client* client);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_CLIENT_H_ */
