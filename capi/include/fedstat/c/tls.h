/** @file
 * fedstat C ABI: the TLS channel to fedstat-server, so that an app reaches the server with the
 * ABI alone (no TLS code of its own). Two ways to connect, one channel handle:
 *  - a pre-shared key (fedstat_tls_channel_connect): the C form of sdk/tls/tls_channel.h
 *    (TlsPskChannel), whose header states the pinned profile this follows: TLS 1.2 exactly, one
 *    suite (TLS-ECDHE-PSK-WITH-CHACHA20-POLY1305-SHA256: forward secrecy from X25519, an AEAD),
 *    mbedTLS underneath, session resumption on the next connect to the same server with the same
 *    key;
 *  - mutual TLS with X.509 certificates from the fleet CA (fedstat_tls_channel_connect_certificate,
 *    issue 42): the C form of sdk/tls/tls_certificate_channel.h (TlsCertificateChannel: TLS 1.2,
 *    TLS-ECDHE-ECDSA-WITH-CHACHA20-POLY1305-SHA256, P-256 certificates both ways, no resumption).
 *    The server then holds no secret that lets it act as the device, and the device checks the
 *    server's certificate and name (docs/protocol.md, "Device credentials").
 *
 * How a device authenticates (docs/protocol.md, "Connections and authentication"): its PSK
 * identity is its decimal device id ("17", the Client's fedstat_client_config.device_id) and its
 * key the 32 bytes the operator provisioned it with — the line "<device id> <64 hex digits>" of
 * the server's credentials file (an emulated fleet's server may instead derive every key from a
 * fleet secret; a real device is given its key, never that secret). A wrong key, or an id the
 * server does not hold, fails the handshake: FEDSTAT_PERMISSION_DENIED.
 *
 * With certificates the device is the id in its certificate's subject ("CN=fedstat-device <id>",
 * what `fedstat-ca sign --out-certificate` and `fedstat-ca issue` (fleet.crt) write), its key the
 * 64-hex private key of its credential (c/credential.h: the same key pair signs its
 * secure-aggregation keys), and it trusts the fleet CA's certificate (ca.crt) for the server's
 * certificate, which must name the `server_name` it expects (`fedstat-ca server-cert --name`).
 * fedstat-server takes it when its config has device_authentication "certificate" or "either".
 *
 * Use, once per check-in:
 *   fedstat_tls_channel_connect(channel, "192.0.2.7", 7443, device_id, psk, 32, 0);
 *   (or fedstat_tls_channel_connect_certificate(channel, "192.0.2.7", 7443, "fedstat.example.org",
 *        ca_crt, 0, device_crt, 0, private_key_hex, 0);)
 *   fedstat_client_run_session_tls(client, channel, &outcome);   (closes the connection)
 * The channel handle outlives its connections: with a PSK it keeps the last TLS session so that
 * the next connect resumes it (no key exchange) — fedstat_tls_channel_destroy wipes it, and so
 * does a certificate connect (one channel holds one kind at a time).
 *
 * Hosted (POSIX) builds only: the socket is the platform's (platform/posix/transport_posix.cpp:
 * TCP, a numeric IPv4 or IPv6 address or "localhost"; the app resolves names). On bare metal every
 * function here returns FEDSTAT_UNIMPLEMENTED (a firmware brings its own transport as a
 * fedstat_channel, or links sdk/tls over its transport hooks in C++). Link: fedstat::c (CMake) or
 * `pkg-config --libs fedstat-c`, which name mbedTLS (-lmbedtls -lmbedx509 -lmbedcrypto).
 *
 * @memory caller's, FEDSTAT_ALIGNMENT-aligned: fedstat_tls_channel_size = T bytes, the handle
 *   (4,600 bytes on x86-64 with Debian's mbedTLS 2.28: 24 of its own and the larger of
 *   TlsPskChannel — mbedTLS's contexts, a send and a receive frame of FEDSTAT_MAX_FRAME_BYTES,
 *   the saved session — and TlsCertificateChannel — the same contexts and frames, two parsed
 *   certificates' headers, the key's context, the server name). While connected, mbedTLS itself
 *   allocates (calloc) its record buffers (2 x 16,717 bytes with Debian's build), the handshake
 *   state and the transform, and with certificates the parsed CA and device certificates and the
 *   key (about 2 KiB), freed when the connection closes; a certificate connect also parses the
 *   device certificate once more to read its id (freed before the handshake).
 * @paper none (transport; RFC 4279 PSK, RFC 7905 ChaCha20-Poly1305 suites; Bonawitz et al. 2017
 *   §4 for the certificates' PKI).
 */
#ifndef FEDSTAT_C_TLS_H_
#define FEDSTAT_C_TLS_H_

#include "base.h"
#include "client.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A TLS connection to fedstat-server, with a PSK or with certificates (opaque), in caller
 * memory. */
typedef struct fedstat_tls_channel fedstat_tls_channel;

/** The length of a device's pre-shared key: fedstat-server's keys are 32 bytes (64 hex digits in
 * its credentials file). */
#define FEDSTAT_TLS_PSK_BYTES 32

/** The connect timeout fedstat_tls_channel_connect uses when given 0 (milliseconds). */
#define FEDSTAT_TLS_DEFAULT_TIMEOUT_MS 10000

/** The memory a TLS channel handle needs, in `*bytes`.
 * @errors FEDSTAT_INVALID_ARGUMENT: `bytes` is NULL. FEDSTAT_UNIMPLEMENTED: a bare-metal build
 * (no TLS channel in the C ABI there). */
fedstat_status fedstat_tls_channel_size(size_t* bytes);

/** A closed TLS channel in `memory` (nothing allocated, no connection yet). *out points into
 * `memory`, which must outlive it. Call fedstat_tls_channel_destroy before the memory is reused
 * or freed (it wipes the saved TLS session).
 * @errors FEDSTAT_INVALID_ARGUMENT: `memory` or `out` is NULL, or `memory` is not
 * FEDSTAT_ALIGNMENT-aligned. FEDSTAT_RESOURCE_EXHAUSTED: `memory_bytes` is below
 * fedstat_tls_channel_size. FEDSTAT_UNIMPLEMENTED: a bare-metal build. */
fedstat_status fedstat_tls_channel_create(void* memory, size_t memory_bytes,
                                          fedstat_tls_channel** out);

/** Connects to fedstat-server at `host`:`port` over TCP and completes the TLS 1.2 PSK handshake
 * as device `device_id` (PSK identity: the id in decimal) with key `psk` (`psk_bytes` =
 * FEDSTAT_TLS_PSK_BYTES), all within `timeout_ms` (0: FEDSTAT_TLS_DEFAULT_TIMEOUT_MS). `host` is
 * a numeric IPv4 ("127.0.0.1") or IPv6 ("::1", with or without brackets) address, or
 * "localhost". The key and identity are copied into mbedTLS's state for the connection only.
 * A saved session from the last connect with the same host, port, id and key is offered and,
 * if the server still holds it, resumed. On any error the channel is closed again; a failed
 * handshake also drops the saved session (a refused or unreachable TCP connection, or a failed
 * set-up before the handshake, keeps it: it is only ever offered again to the same host, port,
 * id and key); the message, fedstat_tls_channel_last_error, says what failed. Create a channel
 * once: creating again over a live channel's memory, without fedstat_tls_channel_destroy, leaks its
 * socket and mbedTLS state.
 * @errors FEDSTAT_INVALID_ARGUMENT: `channel` is NULL or not a TLS channel; `host` NULL, empty,
 * longer than 255 characters, or not a numeric address or "localhost"; `port` 0; `device_id`
 * outside 1..2^31 (the Client's range); `psk` NULL or `psk_bytes` not FEDSTAT_TLS_PSK_BYTES.
 * FEDSTAT_FAILED_PRECONDITION: the channel is already connected (a session closes it).
 * FEDSTAT_UNAVAILABLE: the connection was refused or the address is unreachable (no server
 * listening there), the server closed it during the handshake or ended it with an unexpected
 * alert, or the platform entropy that seeds the TLS random generator failed.
 * FEDSTAT_PERMISSION_DENIED: the server refused the key — a wrong PSK, or a device id it does not
 * know (it answers both alike, so as not to tell which ids exist). FEDSTAT_DEADLINE_EXCEEDED: no
 * connection or no completed handshake within `timeout_ms` (a host that drops packets, or a peer
 * that does not speak fedstat's TLS). FEDSTAT_RESOURCE_EXHAUSTED: mbedTLS ran out of memory.
 * FEDSTAT_INTERNAL: another mbedTLS setup failure. FEDSTAT_UNIMPLEMENTED: a bare-metal build. */
fedstat_status fedstat_tls_channel_connect(fedstat_tls_channel* channel, const char* host,
                                           uint16_t port, uint64_t device_id, const uint8_t* psk,
                                           size_t psk_bytes, uint32_t timeout_ms);

/** Connects to fedstat-server at `host`:`port` over TCP and completes a mutually authenticated
 * TLS 1.2 handshake with X.509 certificates (sdk/tls/tls_certificate_channel.h), all within
 * `timeout_ms` (0: FEDSTAT_TLS_DEFAULT_TIMEOUT_MS): the server's certificate must chain to
 * `ca_certificate` (the fleet CA's, ca.crt) and name `server_name` (a DNS name or the IP address
 * it was issued for, `fedstat-ca server-cert --name`); the device presents `device_certificate`
 * (`fedstat-ca sign --out-certificate`, or its block of fleet.crt) and proves `private_key_hex`,
 * its credential's private key (64 hex digits, whitespace around them ignored: the string given
 * to fedstat_client_set_credential). The channel connects as the device id in the certificate's
 * subject ("CN=fedstat-device <id>"); fedstat_client_run_session_tls then needs a Client of that
 * id. Certificates are PEM or DER, `*_bytes` long with a PEM's terminating NUL included, or
 * `*_bytes` 0 for a NUL-terminated PEM string. `host` is as for fedstat_tls_channel_connect.
 * The key is decoded on the stack and wiped when the call returns; mbedTLS's copy and the parsed
 * certificates are freed (the key zeroised) when the connection closes. Nothing is resumed: every
 * connect is a full handshake. A PSK session the channel saved is wiped (one channel holds one
 * kind at a time; a later fedstat_tls_channel_connect makes a full PSK handshake). On any error
 * the channel is closed again; fedstat_tls_channel_last_error says what failed.
 * @errors FEDSTAT_INVALID_ARGUMENT: `channel` is NULL or not a TLS channel; `host` or `port` as
 * for fedstat_tls_channel_connect; `server_name` NULL, empty or longer than 253 characters; a
 * certificate NULL or not parsing ("bad certificate", naming which); a device certificate that is
 * not a fedstat device's (its CN not "fedstat-device <id>" with id 1..2^31, or not one P-256
 * certificate); `private_key_hex` NULL, not 64 hex digits or not a P-256 scalar; "wrong key": the
 * private key is not the device certificate's. FEDSTAT_FAILED_PRECONDITION: the channel is
 * already connected. FEDSTAT_PERMISSION_DENIED (the message says which): "untrusted server" (its
 * certificate does not chain to `ca_certificate`), "server name mismatch" (it does not name
 * `server_name`), a server certificate not for serverAuth, expired or not P-256 ECDSA, or the
 * server refused this device's certificate ("refused this device's certificate": issued by
 * another CA, or not a device certificate). FEDSTAT_UNAVAILABLE: the connection was refused or
 * the address is unreachable ("connection refused"), the server closed it during the handshake,
 * "no common cipher suite" (a server whose device_authentication is "psk"), another fatal alert,
 * or the platform entropy failed. FEDSTAT_DEADLINE_EXCEEDED: no connection or no completed
 * handshake within `timeout_ms` ("timed out"). FEDSTAT_RESOURCE_EXHAUSTED: mbedTLS ran out of
 * memory. FEDSTAT_INTERNAL: another mbedTLS setup failure. FEDSTAT_UNIMPLEMENTED: a bare-metal
 * build, or an mbedTLS without X.509 (MBEDTLS_X509_CRT_PARSE_C): use the PSK there. */
fedstat_status fedstat_tls_channel_connect_certificate(
    fedstat_tls_channel* channel, const char* host, uint16_t port, const char* server_name,
    const char* ca_certificate, size_t ca_certificate_bytes, const char* device_certificate,
    size_t device_certificate_bytes, const char* private_key_hex, uint32_t timeout_ms);

/** As fedstat_client_run_session, over a connected TLS channel instead of the app's callbacks:
 * one session with the server (the channel's connection is closed when it returns; the channel
 * can connect again), with a PSK or with certificates alike. The channel must have connected as
 * this Client's device id (its PSK identity, or its certificate's id).
 * @errors fedstat_client_run_session's (recorded on `client`: fedstat_client_last_error), and
 * FEDSTAT_INVALID_ARGUMENT: `client` is NULL or not a Client, `channel` NULL or not a TLS channel,
 * `outcome` NULL, or the channel connected as another device id than the Client's (nothing
 * sent; the server would refuse it). FEDSTAT_FAILED_PRECONDITION: the channel is not connected
 * (fedstat_tls_channel_connect first, once per session). The connection's own errors end the
 * session as a callback's would: FEDSTAT_UNAVAILABLE (the server closed it or it broke),
 * FEDSTAT_DEADLINE_EXCEEDED (no whole message within the Client's receive_timeout_ms).
 * FEDSTAT_UNIMPLEMENTED: a bare-metal build. */
fedstat_status fedstat_client_run_session_tls(fedstat_client* client, fedstat_tls_channel* channel,
                                              fedstat_session_outcome* outcome);

/** Whether the last successful connect resumed the saved TLS session (an abbreviated handshake,
 * no key exchange): 1 in `*resumed`, else 0 (always 0 after a certificate connect).
 * @errors FEDSTAT_INVALID_ARGUMENT: `channel` is NULL or not a TLS channel, or `resumed` is NULL.
 * FEDSTAT_UNIMPLEMENTED: a bare-metal build. */
fedstat_status fedstat_tls_channel_resumed(const fedstat_tls_channel* channel, int* resumed);

/** Closes the connection (sends close_notify, best effort) if one is open; the saved session is
 * kept for the next connect. A session closes the connection itself: this is for an app that
 * connected and then decided not to run one.
 * @errors FEDSTAT_INVALID_ARGUMENT: `channel` is NULL or not a TLS channel. FEDSTAT_UNIMPLEMENTED:
 * a bare-metal build. */
fedstat_status fedstat_tls_channel_close(fedstat_tls_channel* channel);

/** Closes the connection, wipes the saved session (its master secret) and frees mbedTLS's state.
 * The handle is unusable after; its memory may be reused.
 * @errors FEDSTAT_INVALID_ARGUMENT: `channel` is NULL, already destroyed or not a TLS channel.
 * FEDSTAT_UNIMPLEMENTED: a bare-metal build. */
fedstat_status fedstat_tls_channel_destroy(fedstat_tls_channel* channel);

/** The message of the last call on `channel` that failed ("" if none; a fixed message when
 * `channel` is NULL or not a TLS channel). */
const char* fedstat_tls_channel_last_error(const fedstat_tls_channel* channel);

#ifdef __cplusplus
}
#endif

#endif /* FEDSTAT_C_TLS_H_ */
