/// @file
/// What the task kinds' files (contribution_<kind>.cpp) share: the seed, a Skellam share of the
/// task's λ, doubles carried as bits, sizes rounded to words. Internal to sdk/client.
///
/// @memory none (functions only).
/// @paper none.
#ifndef FEDSTAT_SDK_CLIENT_CONTRIBUTION_HELPERS_H_
#define FEDSTAT_SDK_CLIENT_CONTRIBUTION_HELPERS_H_

#include <stddef.h>
#include <stdint.h>

#include "fedstat/v1/envelope.pb.h"
#include "sdk/base/checked_size.h"
#include "sdk/base/result.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/base/span.h"
#include "sdk/client/task_kinds.h"
#include "sdk/noise/add_noise.h"
#include "sdk/privacy/accountants.h"

namespace fedstat {
namespace client {

/// `bytes` rounded up to 8 (kSizeOverflow stays kSizeOverflow).
constexpr size_t round_up8(size_t bytes) {
  return size_add(bytes, 7) == kSizeOverflow ? kSizeOverflow : size_add(bytes, 7) / 8 * 8;
}
/// Finite and ≥ 0.
bool finite_at_least_zero(double x);
/// The task's 32-byte seed (validate_task checked its size).
Seed256 seed_of(const fedstat_v1_Task& task);
/// A Skellam share of λ = device_noise_lambda (rounded up to a rational, as the host tools do).
/// @errors kInvalidArgument: λ has no usable rational; NoiseSampler::init's errors.
Status init_share(const fedstat_v1_Task& task, noise::NoiseSampler& share);
/// TaskData words holding IEEE-754 doubles' bits (a model, means): kInvalidArgument(`refusal`)
/// unless every one is finite. Written to `out` (out.size() == bits.size()) when it is not empty.
/// @errors kInvalidArgument(`refusal`): a NaN or an infinity.
Status decode_doubles(Span<const uint64_t> bits, Span<double> out, const char* refusal);

/// A TaskData of doubles' bits (a global model, host means): every one finite (decode_doubles).
/// @errors kInvalidArgument: a NaN or an infinity.
Status check_doubles_data(const fedstat_v1_Task& task, Span<const uint64_t> data);
/// DIST KL and MODEL_UPDATE: raises spend.epsilon to the Skellam accountant's ε (`noise`), or
/// kInvalidArgument when the accountant refused the task or gave no finite ε.
/// @errors kInvalidArgument: as above.
Status raise_to_skellam_epsilon(const Result<privacy::DpFromRdp>& noise, DeviceSpend& spend);
/// validate_task for a task whose kind is `kind`'s: the common fields (trust, ε, δ, λ, seed,
/// bits, the DIST roster), then the kind's own.
/// @errors validate_task's for this kind (kInvalidArgument naming the field; kUnimplemented for
/// an unknown trust model).
Status validate_kind_task(const fedstat_v1_Task& task, const TaskKindSupport& kind);
/// A builder's entry check: the task is of `kind` (else kInvalidArgument(`not_this_kind`), or
/// kUnimplemented for an unknown kind), valid (validate_kind_task), and `out_size` is its
/// vector_length (else kInvalidArgument).
/// @errors kInvalidArgument or kUnimplemented as above, and validate_kind_task's.
Status check_builder_task(const fedstat_v1_Task& task, const TaskKindSupport& kind, size_t out_size,
                          const char* not_this_kind);

}  // namespace client
}  // namespace fedstat

#endif  // FEDSTAT_SDK_CLIENT_CONTRIBUTION_HELPERS_H_
