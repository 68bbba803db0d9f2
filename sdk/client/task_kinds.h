/// @file
/// TaskKinds: which task kinds a Client computes, and whether it takes part in secure
/// aggregation — chosen when the app is linked, so that a firmware image carries only the code
/// of what it answers (docs/footprint.md). Each kind is one TaskKindSupport object, defined in
/// its own file with its checks and builder (contribution_<kind>.cpp); an app names the ones it
/// wants, and the linker leaves the others out:
///
///   static const client::TaskKindSupport* const kKinds[] = {&client::kDataShiftKind,
///                                                           &client::kKlAnswersKind};
///   client.init(config, client::TaskKinds{kKinds, nullptr}, memory, data, ledger, random);
///
/// all_task_kinds() is every kind with secure aggregation (what Client::init without a TaskKinds
/// and the free functions of contribution.h use). A Client offered a task of a kind it was not
/// built with, or a DIST task without secure aggregation, declines it (REFUSED, kUnimplemented)
/// before anything is charged.
///
/// @memory static tables only: one TaskKindSupport (the kind, a flag and six function pointers)
/// per kind linked in; a Client copies at most kMaxTaskKinds pointers.
/// @paper none (how the Client dispatches 000–004's device routines).
#ifndef FEDSTAT_SDK_CLIENT_TASK_KINDS_H_
#define FEDSTAT_SDK_CLIENT_TASK_KINDS_H_

#include <stddef.h>
#include <stdint.h>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/result.h"
#include "sdk/base/span.h"
#include "sdk/client/client_data.h"
#include "sdk/privacy/budget_ledger.h"

namespace fedstat {
namespace secagg {
struct SecAggPeer;
struct SecAggThreatModel;
}  // namespace secagg
namespace client {

class Client;
class FrameChannel;

/// A ledger spend (epsilon, delta, and has_rdp with rdp[] at privacy::kLedgerOrders).
using DeviceSpend = privacy::PrivacySpend;

/// The app's data for a task, as a kind reads it from ClientData.
struct AppData {
  bool held = false;      ///< false: the app holds none for this kind (declined NO_DATA)
  Status usable;          ///< held but not fitting the task: the error (declined NO_DATA)
  size_t local_size = 0;  ///< histogram capacity (DATA_SHIFT) or example count (MODEL_UPDATE)
};

/// One task kind the Client can compute. Every function is called only for a task of this kind
/// whose common fields validate_task already checked (validate before the others).
struct TaskKindSupport {
  /// The kind this entry computes.
  fedstat_v1_TaskKind kind;
  /// True when a DIST task of this kind carries a Skellam share (device_noise_lambda > 0).
  bool dist_share;
  /// The kind's own fields (kInvalidArgument naming the field).
  Status (*validate)(const fedstat_v1_Task& task);
  /// The app's data for the task (held, usable, local size).
  AppData (*app_data)(const fedstat_v1_Task& task, ClientData& data);
  /// The TaskData's content (data.size() == data_words already checked).
  Status (*validate_data)(const fedstat_v1_Task& task, Span<const uint64_t> data);
  /// The builder's scratch bytes; kSizeOverflow when they do not fit size_t.
  size_t (*scratch_bytes)(const fedstat_v1_Task& task, size_t local_size);
  /// Raises `spend` (the task's ε, δ on entry) to what the device's noise guarantees when
  /// `honest_shares` Skellam shares (this device's included; 1 ≤ it ≤ threshold) are in a
  /// released DIST sum (contribution.h, device_spend).
  Status (*device_spend)(const fedstat_v1_Task& task, uint32_t honest_shares, DeviceSpend& spend);
  /// The contribution from the app's data (contribution.h, build_contribution).
  Status (*build)(const fedstat_v1_Task& task, ClientData& data, Span<const uint64_t> task_data,
                  RandomBits& noise, MutableByteSpan scratch, Span<uint64_t> out);
};

// The four kinds, each in its own object file: a kind an app does not name is not linked.
/// DATA_SHIFT (contribution_data_shift.cpp).
extern const TaskKindSupport kDataShiftKind;
/// KL_ANSWERS (contribution_kl.cpp).
extern const TaskKindSupport kKlAnswersKind;
/// MODEL_UPDATE (contribution_model_update.cpp).
extern const TaskKindSupport kModelUpdateKind;
/// HETEROGENEITY (contribution_heterogeneity.cpp).
extern const TaskKindSupport kHeterogeneityKind;
/// DATA_SHIFT of trust DIST (contribution_data_shift_dist.cpp: the hashed histogram with Pólya
/// shares, contribution.h). Not listed in a TaskKinds: reached through
/// SecureAggregationSupport::data_shift_dist when kDataShiftKind is listed, so that an image
/// without secure aggregation leaves it out.
extern const TaskKindSupport kDataShiftDistKind;

/// Secure aggregation in the Client (client_secagg.cpp: the SecAggClient's rounds over the
/// channel). Null in a TaskKinds: DIST tasks are declined.
struct SecureAggregationSupport {
  /// Sets the Client's SecAggClient up for its accepted DIST task, its peers in `peers`.
  Status (*start)(Client& client, Span<secagg::SecAggPeer> peers);
  /// Runs (or, `resume`, resumes) the DIST round of the Client's task over `channel`.
  Status (*run)(Client& client, FrameChannel& channel, Span<uint64_t> contribution, bool resume);
  /// The SecAgg+ bound of a sparse graph at `floor` (check_dist_graph, contribution.h): reached
  /// through here so that an image without secure aggregation leaves the bound's code out.
  Status (*check_graph)(const fedstat_v1_Task& task, const secagg::SecAggThreatModel& floor);
  /// The DATA_SHIFT kind of trust DIST (kDataShiftDistKind), for a Client built with
  /// kDataShiftKind: here so that only an image with secure aggregation links it.
  const TaskKindSupport* data_shift_dist;
};
/// The Client's secure aggregation (sdk/secagg/secagg_client.h and its crypto).
extern const SecureAggregationSupport kSecureAggregation;

/// At most this many entries in a TaskKinds: one per kind.
constexpr size_t kMaxTaskKinds = 4;

/// The kinds a Client computes. Client::init copies the pointers (the array may be a local); the
/// TaskKindSupport objects they point at are the static ones above.
struct TaskKinds {
  Span<const TaskKindSupport* const> kinds;                      ///< at most one entry per kind
  const SecureAggregationSupport* secure_aggregation = nullptr;  ///< null: no DIST tasks
  /// The support of `kind`, or null when it is not among `kinds`.
  const TaskKindSupport* find(int64_t kind) const;
  /// The support that computes `task`: find(task.kind), except a DIST DATA_SHIFT task (with
  /// kDataShiftKind among `kinds` and secure aggregation), which secure_aggregation->
  /// data_shift_dist computes. Null when find is.
  const TaskKindSupport* support_for(const fedstat_v1_Task& task) const;
};

/// Every kind, with secure aggregation.
TaskKinds all_task_kinds();

}  // namespace client
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CLIENT_TASK_KINDS_H_
