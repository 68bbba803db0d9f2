/// @file
/// What a firmware image is given at manufacture and what its sensor saw, read from the board's
/// storage (here semihosting files in QEMU's working directory; on a board, a provisioning flash
/// page and the sensor driver):
///   device.txt                 "id <decimal>" and "psk <64 hex digits>" lines, optionally
///                              "sessions <check-ins before giving up, 1..1000>" (default 120)
///                              and "trust <trust models the device answers, comma-separated:
///                              trusted, tagg, dist, none, all>" (default trusted,tagg,dist; a
///                              trust-none task needs none: sdk/client/task_policy.h);
///                              the test build also takes "seed <decimal>" (reproducible
///                              randomness: main.cpp). A device that joins signed DIST rounds
///                              (issue 42) also has its credential from the fleet CA, all three
///                              lines or none: "signing_key <64 hex: its P-256 private key>",
///                              "certificate <id> <130 hex public key> <128 hex CA signature>"
///                              (the line `fedstat-ca sign` prints; the id must be the device's)
///                              and "ca_public_key <130 hex: the CA's public key, ca.pub>"
///   device-<id>-items.txt      "capacity <histogram slots>", then "<item> <count>" lines: the
///                              simulated sensor's events, replayed one event at a time
///   device-<id>-examples.txt   "dimension <d>", then per training example "<label> <d features>",
///                              each feature an IEEE-754 single's bits in 8 hex digits (exact)
///
/// @memory a 128-byte read buffer and a 132-byte token on the stack while reading; the credential
/// (sizeof(DeviceCredential) = 236 bytes) in the Provisioning.
/// @paper none (application).
#ifndef FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_PROVISIONING_H_
#define FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_PROVISIONING_H_

#include <stddef.h>
#include <stdint.h>

#include "sdk/base/span.h"
#include "sdk/base/status.h"
#include "sdk/client/task_policy.h"
#include "sdk/credential/device_credential.h"
#include "sdk/histogram/sparse_histogram.h"
#include "sdk/tasks/logistic_trainer.h"

namespace firmware {

/// The device's identity, key and randomness seed.
struct Provisioning {
  uint64_t id = 0;
  uint8_t psk[32] = {};
  uint64_t seed = 0;  ///< 0 (the default): the device's CSPRNG
  /// Check-ins before the firmware gives up waiting for a task's outcome ("sessions N", 1..1000).
  uint32_t max_sessions = 120;
  /// The trust models the device answers ("trust LIST"; kAccept* bits, task_policy.h).
  uint32_t accepted_trust = fedstat::client::kAcceptPrivate;
  /// Whether device.txt holds a credential (signing_key, certificate, ca_public_key): the device
  /// then joins signed DIST rounds only (ClientConfig::credential). Read, not yet checked: the
  /// firmware checks it (credential::check_credential) before its first check-in.
  bool has_credential = false;
  fedstat::credential::DeviceCredential credential;  ///< when has_credential
};

/// Reads device.txt.
/// @errors kNotFound: no device.txt. kInvalidArgument: a missing or malformed line (named; in a
/// build without status messages, the code only), a credential line without the other two, or a
/// certificate for another id.
fedstat::Result<Provisioning> read_provisioning();

/// Counts the device's sensor events from device-<id>-items.txt into `histogram`, initialised
/// over `table` sized as the file's capacity line says.
/// @errors kNotFound: no such file. kInvalidArgument: malformed. kResourceExhausted: the
/// capacity exceeds table.size(), or an event did not fit the histogram.
fedstat::Status count_sensor_events(uint64_t id,
                                    fedstat::Span<fedstat::histogram::SparseEntry> table,
                                    fedstat::histogram::SparseHistogram& histogram);

/// Reads device-<id>-examples.txt into `features` and `labels`; `out` views them.
/// @errors kNotFound: no such file. kInvalidArgument: malformed (a label not ±1, a feature not 8
/// hex digits, a short row). kResourceExhausted: more examples or values than the spans hold.
fedstat::Status read_examples(uint64_t id, fedstat::Span<float> features,
                              fedstat::Span<int8_t> labels, fedstat::tasks::Examples& out);

}  // namespace firmware

#endif  // FEDSTAT_EXAMPLES_CORTEX_M_FIRMWARE_PROVISIONING_H_
