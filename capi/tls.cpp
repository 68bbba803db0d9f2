// The C ABI's TLS channel (c/tls.h): sdk/tls's TlsPskChannel or TlsCertificateChannel (one at a
// time, in a union) in the caller's memory, and a Client session over it. Hosted builds
// (FEDSTAT_CAPI_TLS, set by capi/CMakeLists.txt where libfedstat_sdk_tls is packaged); elsewhere
// every call is FEDSTAT_UNIMPLEMENTED. The certificate connect also needs mbedTLS with X.509
// (FEDSTAT_TLS_CERTIFICATES, sdk/tls/tls_certificate_channel.h).
#include "capi/client_session.h"
#include "capi/handle.h"
#include "capi/hex.h"

#if FEDSTAT_CAPI_TLS

#include <new>

#include "sdk/base/crypto.h"
#include "sdk/client/client.h"
#include "sdk/tls/tls_certificate_channel.h"
#include "sdk/tls/tls_channel.h"

#if defined(FEDSTAT_TLS_CERTIFICATES)
#include <string.h>

#include "mbedtls/oid.h"
#include "mbedtls/x509_crt.h"
#endif

namespace fedstat {
namespace capi {
// The SDK channel a fedstat_tls_channel holds: the PSK one from create on, replaced by the
// certificate one at the first certificate connect (and back at the next PSK connect).
union TlsChannels {
  TlsChannels() : psk() {}
  ~TlsChannels() {}  // the handle destroys the live member (its kind says which)
  TlsChannels(const TlsChannels&) = delete;
  TlsChannels& operator=(const TlsChannels&) = delete;
  tls::TlsPskChannel psk;
#if defined(FEDSTAT_TLS_CERTIFICATES)
  tls::TlsCertificateChannel certificate;
#endif
};
enum class TlsKind : uint32_t { kPsk, kCertificate };
}  // namespace capi
}  // namespace fedstat

struct fedstat_tls_channel {
  uint32_t magic = fedstat::capi::kTlsChannelMagic;
  fedstat::capi::TlsKind kind = fedstat::capi::TlsKind::kPsk;  // the live member of `channels`
  const char* last_error = "";
  uint64_t device_id = 0;  // the identity of the last successful connect (read while connected)
  fedstat::capi::TlsChannels channels;

  fedstat::client::FrameChannel& frames() {
#if defined(FEDSTAT_TLS_CERTIFICATES)
    if (kind == fedstat::capi::TlsKind::kCertificate) return channels.certificate;
#endif
    return channels.psk;
  }
  bool connected() const {
#if defined(FEDSTAT_TLS_CERTIFICATES)
    if (kind == fedstat::capi::TlsKind::kCertificate) return channels.certificate.connected();
#endif
    return channels.psk.connected();
  }
  // Destroys the live SDK channel (closing it, wiping the PSK channel's saved session) and
  // wipes its bytes; `channels` holds nothing after.
  void destroy_channel() {
#if defined(FEDSTAT_TLS_CERTIFICATES)
    if (kind == fedstat::capi::TlsKind::kCertificate) {
      channels.certificate.~TlsCertificateChannel();
    } else {
      channels.psk.~TlsPskChannel();
    }
#else
    channels.psk.~TlsPskChannel();
#endif
    fedstat::crypto::wipe(&channels, sizeof(channels));
  }
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

// Makes the PSK channel the live one (a closed channel of that kind stays as it is, its saved
// session too).
void use_psk(fedstat_tls_channel* c) {
  if (c->kind == TlsKind::kPsk) return;
  c->destroy_channel();
  new (&c->channels.psk) tls::TlsPskChannel();
  c->kind = TlsKind::kPsk;
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

#if defined(FEDSTAT_TLS_CERTIFICATES)
// The 32-byte key from exactly 64 hex digits, whitespace around them allowed (c/credential.h's
// form); false, with `out` wiped, for anything else.
bool decode_private_key(const char* hex,
                        uint8_t (&out)[tls::TlsCertificateChannel::kPrivateKeyBytes]) {
  const char* p = skip_space(hex);
  const bool ok = take_hex(p, out, sizeof(out)) && *skip_space(p) == '\0';
  if (!ok) crypto::wipe(out, sizeof(out));
  return ok;
}

// The certificate bytes as mbedTLS takes them: `bytes` 0 means a NUL-terminated PEM string
// (strlen + 1 bytes, its NUL included).
ByteSpan certificate_span(const char* text, size_t bytes) {
  if (bytes == 0) bytes = strlen(text) + 1;
  return ByteSpan(reinterpret_cast<const uint8_t*>(text), bytes);
}

// The device id in a certificate's subject CN, "fedstat-device <id>" with id in 1..2^31 written
// without leading zeros (as fedstat-server reads it, host_server/net/tls_server.h), or 0: not
// such a certificate (or it does not parse: the channel says why). mbedTLS allocates while
// parsing (hosted builds only) and frees before returning.
uint64_t certificate_device_id(ByteSpan certificate, Status& status) {
  static constexpr char kPrefix[] = "fedstat-device ";
  constexpr size_t kPrefixLength = sizeof(kPrefix) - 1;
  mbedtls_x509_crt parsed;
  mbedtls_x509_crt_init(&parsed);
  uint64_t id = 0;
  const int rc = mbedtls_x509_crt_parse(&parsed, certificate.data(), certificate.size());
  if (rc == MBEDTLS_ERR_X509_ALLOC_FAILED) {
    status = resource_exhausted("tls connect: out of memory parsing the device certificate");
  } else if (rc != 0) {
    status = invalid_argument(
        "tls connect: bad certificate: the device certificate does not parse (PEM with its NUL, "
        "or DER: fedstat-ca sign --out-certificate or issue's fleet.crt)");
  } else {
    for (const mbedtls_x509_name* n = &parsed.subject; n != nullptr; n = n->next) {
      if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &n->oid) != 0) continue;
      const size_t length = n->val.len;
      const unsigned char* v = n->val.p;
      if (length <= kPrefixLength || length > kPrefixLength + 10 ||
          memcmp(v, kPrefix, kPrefixLength) != 0 || v[kPrefixLength] == '0') {
        break;
      }
      uint64_t value = 0;
      size_t i = kPrefixLength;
      for (; i < length && v[i] >= '0' && v[i] <= '9'; ++i) value = 10 * value + (v[i] - '0');
      if (i == length && value <= client::kMaxDeviceId) id = value;
      break;
    }
    if (id == 0) {
      status = invalid_argument(
          "tls connect: not a device certificate (its subject CN must be \"fedstat-device <id>\", "
          "id 1..2^31: fedstat-ca sign --out-certificate)");
    }
  }
  mbedtls_x509_crt_free(&parsed);
  return id;
}
#endif  // FEDSTAT_TLS_CERTIFICATES
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
  if (channel->connected()) {
    return finish(channel, failed_precondition("tls connect: the channel is already connected (a "
                                               "session closes it)"));
  }
  use_psk(channel);               // a certificate channel before: closed, replaced
  char identity[kIdentityBytes];  // the PSK identity: the device id in decimal
  const size_t identity_length = write_decimal(device_id, identity);
  const Status status = channel->channels.psk.connect(
      endpoint, ByteSpan(reinterpret_cast<const uint8_t*>(identity), identity_length),
      ByteSpan(psk, psk_bytes), timeout_ms != 0 ? timeout_ms : FEDSTAT_TLS_DEFAULT_TIMEOUT_MS);
  if (status.ok()) channel->device_id = device_id;
  return finish(channel, status);
}

fedstat_status fedstat_tls_channel_connect_certificate(
    fedstat_tls_channel* channel, const char* host, uint16_t port, const char* server_name,
    const char* ca_certificate, size_t ca_certificate_bytes, const char* device_certificate,
    size_t device_certificate_bytes, const char* private_key_hex, uint32_t timeout_ms) {
  if (!live(channel)) return FEDSTAT_INVALID_ARGUMENT;
#if defined(FEDSTAT_TLS_CERTIFICATES)
  char endpoint[kEndpointBytes];
  const Status made = make_endpoint(host, port, endpoint);
  if (!made.ok()) return finish(channel, made);
  if (server_name == nullptr || server_name[0] == '\0') {
    return finish(channel, invalid_argument("tls connect: the server name is empty (give the name "
                                            "in the server's certificate: fedstat-ca server-cert "
                                            "--name)"));
  }
  if (ca_certificate == nullptr || device_certificate == nullptr) {
    return finish(channel, invalid_argument("tls connect: the CA certificate or the device "
                                            "certificate is NULL"));
  }
  if (private_key_hex == nullptr) {
    return finish(channel, invalid_argument("tls connect: the private key is NULL"));
  }
  if (channel->connected()) {
    return finish(channel, failed_precondition("tls connect: the channel is already connected (a "
                                               "session closes it)"));
  }
  const ByteSpan ca = certificate_span(ca_certificate, ca_certificate_bytes);
  const ByteSpan own = certificate_span(device_certificate, device_certificate_bytes);
  Status status;
  const uint64_t device_id = certificate_device_id(own, status);
  if (device_id == 0) return finish(channel, status);
  uint8_t key[tls::TlsCertificateChannel::kPrivateKeyBytes];
  if (!decode_private_key(private_key_hex, key)) {
    return finish(channel, invalid_argument("tls connect: the private key must be 64 hex digits "
                                            "(the credential's, c/credential.h)"));
  }
  if (channel->kind != TlsKind::kCertificate) {  // the PSK channel and its saved session go
    channel->destroy_channel();
    new (&channel->channels.certificate) tls::TlsCertificateChannel();
    channel->kind = TlsKind::kCertificate;
  }
  status = channel->channels.certificate.connect(
      endpoint, server_name, ca, own, ByteSpan(key, sizeof(key)),
      timeout_ms != 0 ? timeout_ms : FEDSTAT_TLS_DEFAULT_TIMEOUT_MS);
  crypto::wipe(key, sizeof(key));  // mbedTLS's copy is zeroised when the connection closes
  if (status.ok()) channel->device_id = device_id;
  return finish(channel, status);
#else
  (void)host;
  (void)port;
  (void)server_name;
  (void)ca_certificate;
  (void)ca_certificate_bytes;
  (void)device_certificate;
  (void)device_certificate_bytes;
  (void)private_key_hex;
  (void)timeout_ms;
  return finish(channel, unimplemented("tls connect: this build's mbedTLS has no X.509 "
                                       "(MBEDTLS_X509_CRT_PARSE_C): certificates are unavailable, "
                                       "use the pre-shared key"));
#endif
}

fedstat_status fedstat_client_run_session_tls(fedstat_client* client, fedstat_tls_channel* channel,
                                              fedstat_session_outcome* outcome) {
  if (!client_live(client)) return FEDSTAT_INVALID_ARGUMENT;
  if (!live(channel) || outcome == nullptr) {
    if (live(channel)) channel->frames().close();  // closed when this returns: tls.h
    return client_finish(client, invalid_argument("run_session_tls: no TLS channel or outcome"));
  }
  if (!channel->connected()) {
    return client_finish(client, failed_precondition("run_session_tls: the TLS channel is not "
                                                     "connected (fedstat_tls_channel_connect "
                                                     "first, once per session)"));
  }
  if (channel->device_id != client_device_id(client)) {
    channel->frames().close();  // as after any session: tls.h
    return client_finish(client,
                         invalid_argument("run_session_tls: the TLS channel connected as another "
                                          "device id than the Client's (the server refuses it)"));
  }
  return run_client_session(client, channel->frames(), outcome);
}

fedstat_status fedstat_tls_channel_resumed(const fedstat_tls_channel* channel, int* resumed) {
  if (!live(channel) || resumed == nullptr) return FEDSTAT_INVALID_ARGUMENT;
  *resumed = channel->kind == TlsKind::kPsk && channel->channels.psk.resumed() ? 1 : 0;
  return FEDSTAT_OK;
}

fedstat_status fedstat_tls_channel_close(fedstat_tls_channel* channel) {
  if (!live(channel)) return FEDSTAT_INVALID_ARGUMENT;
  channel->frames().close();
  return FEDSTAT_OK;
}

fedstat_status fedstat_tls_channel_destroy(fedstat_tls_channel* channel) {
  if (!live(channel)) return FEDSTAT_INVALID_ARGUMENT;
  channel->destroy_channel();  // closes, wipes the saved session, frees mbedTLS's state
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

fedstat_status fedstat_tls_channel_connect_certificate(
    fedstat_tls_channel* channel, const char* host, uint16_t port, const char* server_name,
    const char* ca_certificate, size_t ca_certificate_bytes, const char* device_certificate,
    size_t device_certificate_bytes, const char* private_key_hex, uint32_t timeout_ms) {
  (void)channel;
  (void)host;
  (void)port;
  (void)server_name;
  (void)ca_certificate;
  (void)ca_certificate_bytes;
  (void)device_certificate;
  (void)device_certificate_bytes;
  (void)private_key_hex;
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
