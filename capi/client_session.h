// Internal to the C ABI (never installed): what capi/tls.cpp needs of a fedstat_client, whose
// layout only capi/client.cpp knows — a session over any FrameChannel (the app's callbacks,
// capi/channel.h, or the TLS channel, sdk/tls/tls_channel.h), the Client's device id, and its
// credential (capi/credential.cpp).
//
// Memory: none of its own. Paper: none.
#ifndef FEDSTAT_CAPI_CLIENT_SESSION_H_
#define FEDSTAT_CAPI_CLIENT_SESSION_H_

#include <stdint.h>

#include "fedstat/fedstat.h"
#include "sdk/base/status.h"
#include "sdk/client/frame_channel.h"
#include "sdk/credential/device_credential.h"

namespace fedstat {
namespace capi {

// A live Client handle (not NULL, its magic word in place).
bool client_live(const fedstat_client* client);
// The device id the live `client` was created with.
uint64_t client_device_id(const fedstat_client* client);
// Records `status`'s message on the live `client` and returns its code.
fedstat_status client_finish(fedstat_client* client, const Status& status);
// Copies `credential` (nullptr: none), already checked, into the live `client`'s handle and gives
// it to the Client (client::Client::set_credential), wiping the one it held; records and returns
// kFailedPrecondition, changing nothing, while a round is pending.
fedstat_status client_set_credential(fedstat_client* client,
                                     const credential::DeviceCredential* credential);
// Whether the live `client` holds a credential.
bool client_has_credential(const fedstat_client* client);
// fedstat_client_run_session's body over `frames`, on a live `client` with a non-NULL `outcome`.
fedstat_status run_client_session(fedstat_client* client, client::FrameChannel& frames,
                                  fedstat_session_outcome* outcome);

}  // namespace capi
}  // namespace fedstat

#endif  // FEDSTAT_CAPI_CLIENT_SESSION_H_
