// The C ABI's TLS-PSK channel (c/tls.h): sdk/tls's TlsPskChannel in the caller's memory, and a
// Client session over it. Hosted builds (FEDSTAT_CAPI_TLS, set by capi/CMakeLists.txt where
// libfedstat_sdk_tls is packaged); elsewhere every call is FEDSTAT_UNIMPLEMENTED.
#include "capi/client_session.h"
#include "capi/handle.h"

#if FEDSTAT_CAPI_TLS

#include <new>

#include "sdk/base/crypto.h"
#include "sdk/client/client.h"
#include "sdk/tls/tls_channel.h"

struct fedstat_tls_channel {
  uint32_t magic = fedstat::capi::kTlsChannelMagic;
  const char* last_error = "";
  uint64_t device_id = 0;  // the identity of the last successful connect (read while connected)
  fedstat::tls::TlsPskChannel channel;
};

namespace fedstat {
namespace capi {
namespace {

constexpr size_t kHandle = handle_bytes<fedstat_tls_channel>();
constexpr size_t kMaxHostLength = 255;  // as the POSIX transport takes it
constexpr size_t kEndpointBytes = 1 + kMaxHostLength + 2 + 5 + 1;  // "[host]:65535" and NUL
constexpr size_t kIdentityBytes = 11;  // client::kMaxDeviceId (2^31) in decimal and NUL

bool live(const fedstat_tls_channel* c) {
  return valid(c, kTlsChannelMagic);
}

// `value` in decimal and a NUL at `out`, which has room for both; the digits' count.
size_t write_decimal(uint64_t value, char* out) {
  char digits[20];  // 2^64 − 1 has 20
  size_t d = 0;
  do {
    digits[d++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  size_t n = 0;
  while (d > 0) out[n++] = digits[--d];
  out[n] = '\0';
  return n;
}

// "host:port", or "[host]:port" for an IPv6 address not already bracketed, into `out`.
Status make_endpoint(const char* host, uint16_t port, char (&out)[kEndpointBytes]) {
  if (host == nullptr || host[0] == '\0') return invalid_argument("tls connect: host is empty");
  size_t length = 0;
  bool colon = false;
  while (length <= kMaxHostLength && host[length] != '\0') {
    colon = colon || host[length] == ':';
    ++length;
  }
  if (length > kMaxHostLength) {
    return invalid_argument("tls connect: host is longer than 255 characters");
  }
  if (port == 0) return invalid_argument("tls connect: port 0 (the server's port is 1..65535)");
  const bool bracket = colon && host[0] != '[';
  size_t n = 0;
  if (bracket) out[n++] = '[';
  for (size_t i = 0; i < length; ++i) out[n++] = host[i];
  if (bracket) out[n++] = ']';
  out[n++] = ':';
  write_decimal(port, out + n);  // at most 5 digits and the NUL: kEndpointBytes counts them
  return Status();
}

}  // namespace
}  // namespace capi
}  // namespace fedstat

using namespace fedstat;        // NOLINT: the C entry points below are thin wrappers
using namespace fedstat::capi;  // NOLINT

extern "C" {

fedstat_status fedstat_tls_channel_size(size_t* bytes) {
  return size_status(kHandle, bytes);
}

fedstat_status fedstat_tls_channel_create(void* memory, size_t memory_bytes,
                                          fedstat_tls_channel** out) {
  const fedstat_status checked = check_memory(memory, memory_bytes, kHandle, out);
  if (checked != FEDSTAT_OK) return checked;
  *out = new (handle_address<fedstat_tls_channel>(memory)) fedstat_tls_channel();
  return FEDSTAT_OK;
}

fedstat_status fedstat_tls_channel_connect(fedstat_tls_channel* channel, const char* host,
                                           uint16_t port, uint64_t device_id, const uint8_t* psk,
                                           size_t psk_bytes, uint32_t timeout_ms) {
  if (!live(channel)) return FEDSTAT_INVALID_ARGUMENT;
  char endpoint[kEndpointBytes];
  const Status made = make_endpoint(host, port, endpoint);
  if (!made.ok()) return finish(channel, made);
  if (device_id == 0 || device_id > client::kMaxDeviceId) {
    return finish(channel, invalid_argument("tls connect: device id outside 1..2^31 (the Client's "
                                            "fedstat_client_config.device_id)"));
  }
  if (psk == nullptr || psk_bytes != FEDSTAT_TLS_PSK_BYTES) {
    return finish(channel, invalid_argument("tls connect: the PSK must be 32 bytes (the 64 hex "
                                            "digits of the server's credentials line, decoded)"));
  }
  char identity[kIdentityBytes];  // the PSK identity: the device id in decimal
  const size_t identity_length = write_decimal(device_id, identity);
  const Status status = channel->channel.connect(
      endpoint, ByteSpan(reinterpret_cast<const uint8_t*>(identity), identity_length),
      ByteSpan(psk, psk_bytes), timeout_ms != 0 ? timeout_ms : FEDSTAT_TLS_DEFAULT_TIMEOUT_MS);
  if (status.ok()) channel->device_id = device_id;
  return finish(channel, status);
}

fedstat_status fedstat_client_run_session_tls(fedstat_client* client, fedstat_tls_channel* channel,
                                              fedstat_session_outcome* outcome) {
  if (!client_live(client)) return FEDSTAT_INVALID_ARGUMENT;
  if (!live(channel) || outcome == nullptr) {
    if (live(channel)) channel->channel.close();  // closed when this returns: tls.h
    return client_finish(client, invalid_argument("run_session_tls: no TLS channel or outcome"));
  }
  if (!channel->channel.connected()) {
    return client_finish(client, failed_precondition("run_session_tls: the TLS channel is not "
                                                     "connected (fedstat_tls_channel_connect "
                                                     "first, once per session)"));
  }
  if (channel->device_id != client_device_id(client)) {
    channel->channel.close();  // as after any session: tls.h
    return client_finish(client,
                         invalid_argument("run_session_tls: the TLS channel connected as another "
                                          "device id than the Client's (the server refuses it)"));
  }
  return run_client_session(client, channel->channel, outcome);
}

fedstat_status fedstat_tls_channel_resumed(const fedstat_tls_channel* channel, int* resumed) {
  if (!live(channel) || resumed == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  *resumed = channel->channel.resumed() ? 1 : 0;
  return FEDSTAT_OK;
}

fedstat_status fedstat_tls_channel_close(fedstat_tls_channel* channel) {
  if (!live(channel)) return FEDSTAT_INVALID_ARGUMENT;
  channel->channel.close();
  return FEDSTAT_OK;
}

fedstat_status fedstat_tls_channel_destroy(fedstat_tls_channel* channel) {
  if (!live(channel)) return FEDSTAT_INVALID_ARGUMENT;
  channel->channel.~TlsPskChannel();  // closes, wipes the saved session, frees mbedTLS's state
  crypto::wipe(channel, sizeof(*channel));  // whatever the destructor leaves
  return FEDSTAT_OK;
}

const char* fedstat_tls_channel_last_error(const fedstat_tls_channel* channel) {
  return live(channel) ? channel->last_error : kNotAHandle;
}

}  // extern "C"

#else  // no TLS channel in this build (bare metal)

extern "C" {

fedstat_status fedstat_tls_channel_size(size_t* bytes) {
  (void)bytes;
  return FEDSTAT_UNIMPLEMENTED;
}

fedstat_status fedstat_tls_channel_create(void* memory, size_t memory_bytes,
                                          fedstat_tls_channel** out) {
  (void)memory;
  (void)memory_bytes;
  (void)out;
  return FEDSTAT_UNIMPLEMENTED;
}

fedstat_status fedstat_tls_channel_connect(fedstat_tls_channel* channel, const char* host,
                                           uint16_t port, uint64_t device_id, const uint8_t* psk,
                                           size_t psk_bytes, uint32_t timeout_ms) {
  (void)channel;
  (void)host;
  (void)port;
  (void)device_id;
  (void)psk;
  (void)psk_bytes;
  (void)timeout_ms;
  return FEDSTAT_UNIMPLEMENTED;
}

fedstat_status fedstat_client_run_session_tls(fedstat_client* client, fedstat_tls_channel* channel,
                                              fedstat_session_outcome* outcome) {
  (void)client;
  (void)channel;
  (void)outcome;
  return FEDSTAT_UNIMPLEMENTED;
}

fedstat_status fedstat_tls_channel_resumed(const fedstat_tls_channel* channel, int* resumed) {
  (void)channel;
  (void)resumed;
  return FEDSTAT_UNIMPLEMENTED;
}

fedstat_status fedstat_tls_channel_close(fedstat_tls_channel* channel) {
  (void)channel;
  return FEDSTAT_UNIMPLEMENTED;
}

fedstat_status fedstat_tls_channel_destroy(fedstat_tls_channel* channel) {
  (void)channel;
  return FEDSTAT_UNIMPLEMENTED;
}

const char* fedstat_tls_channel_last_error(const fedstat_tls_channel* channel) {
  (void)channel;
  return "the C ABI has no TLS channel in this build (bare metal): bring a fedstat_channel";
}

}  // extern "C"

#endif  // FEDSTAT_CAPI_TLS
