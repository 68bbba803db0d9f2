/* A device that sends its report to a running fedstat-server, through fedstat's C ABI alone
 * (<fedstat/fedstat.h>; no TLS or socket code of its own): the next step after first_report
 * (examples/report_to_server/README.md).
 *
 *   report_to_server [--credential FILE] [--certificate FILE --ca-certificate FILE
 *                    --server-name NAME] HOST PORT DEVICE_ID PSK_FILE [STORAGE_DIR]
 *
 * It counts its events in a histogram (a fixed pseudo-random stream per device), loads its
 * privacy ledger, connects to the server over TLS 1.2 with its pre-shared key (PSK_FILE: the 64
 * hex digits of its line in the server's credentials file), checks in once, answers the task
 * the server offers (a data-shift or KL task: it holds a histogram) and prints what the server
 * acknowledged: the task's outcome and what the ledger was charged. The ledger and the Client's
 * round marker are kept in STORAGE_DIR (default: $FEDSTAT_STORAGE_DIR, else ".").
 * With --credential, the device takes part in signed DIST rounds (c/credential.h): FILE holds its
 * credential from fedstat-ca in three lines — its private key (64 hex digits), its certificate
 * line ("ID PUBLIC_KEY CA_SIGNATURE", as fedstat-ca sign prints it) and the CA's public key (130
 * hex digits, ca.pub's second line).
 * With --certificate (and --credential, whose private key it proves), it connects with mutual TLS
 * instead of the PSK (c/tls.h fedstat_tls_channel_connect_certificate; PSK_FILE is not read and
 * may be "-"): FILE is its X.509 certificate (PEM, `fedstat-ca sign --out-certificate`),
 * --ca-certificate the fleet CA's (ca.crt) and --server-name the name in the server's certificate
 * (`fedstat-ca server-cert --name`).
 *
 * Exit status: 0 the session ended with an outcome (completed, declined, no task), 2 usage, an
 * unreadable PSK file, certificate file, or a credential file that is unreadable or refused (the
 * message says why), 3
 * local state (ledger, round marker, memory), 4 could not connect (the message says why: refused,
 * wrong key, untrusted server, server name mismatch, timeout), 5 the session failed.
 *
 * Memory: static buffers only (about 300 KiB, most of it the Client's work memory); mbedTLS
 * allocates its record buffers while connected (c/tls.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <fedstat/fedstat.h>

#define EVENTS 1000
#define DISTINCT_ITEMS 200
#define LEDGER_SPENDS 16
#define WORK_BYTES (256u * 1024u) /* the Client computes contributions here */

static uint64_t histogram_memory[320]; /* uint64_t gives FEDSTAT_ALIGNMENT (8) */
static uint64_t ledger_memory[1024];
static uint64_t random_memory[128];
static uint64_t tls_memory[640];
static uint64_t client_memory[(WORK_BYTES + 8192) / 8];

static uint64_t wall_clock_seconds(void) {
  return (uint64_t)time(NULL);
}

static int fail(int code, const char* step, fedstat_status status, const char* message) {
  fprintf(stderr, "report_to_server: %s failed: %s: %s\n", step, fedstat_status_name(status),
          message);
  return code;
}

/* One hex digit's value, or -1 (sscanf's %x would also take a sign, spaces or "0x"). */
static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* The 32-byte key from a file holding 64 hex digits (then optional whitespace). */
static int read_psk(const char* path, uint8_t psk[FEDSTAT_TLS_PSK_BYTES]) {
  char hex[2 * FEDSTAT_TLS_PSK_BYTES + 2];
  size_t got, i;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return -1;
  got = fread(hex, 1, sizeof hex - 1, f);
  fclose(f);
  hex[got] = '\0';
  if (got < 2 * FEDSTAT_TLS_PSK_BYTES) return -1;
  for (i = 0; i < FEDSTAT_TLS_PSK_BYTES; ++i) {
    const int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
    if (high < 0 || low < 0) return -1;
    psk[i] = (uint8_t)(16 * high + low);
  }
  return (got == 2 * FEDSTAT_TLS_PSK_BYTES || hex[2 * FEDSTAT_TLS_PSK_BYTES] <= ' ') ? 0 : -1;
}

/* A whole text file, NUL-terminated, into `out` (`size` bytes); -1 if unreadable or too long. */
static int read_text(const char* path, char* out, size_t size) {
  size_t got;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return -1;
  got = fread(out, 1, size - 1, f);
  fclose(f);
  if (got == 0 || got == size - 1) return -1;
  out[got] = '\0';
  return 0;
}

/* The three lines of a credential file (each NUL-terminated, its newline removed); -1 if the file
 * cannot be read or has not three lines that fit. */
static int read_credential(const char* path, char lines[3][320]) {
  int n = 0;
  FILE* f = fopen(path, "rb");
  if (f == NULL) return -1;
  while (n < 3 && fgets(lines[n], 320, f) != NULL) {
    const size_t length = strlen(lines[n]);
    if (length == 0 || lines[n][length - 1] != '\n') break; /* too long, or no newline */
    lines[n][length - 1] = '\0';
    ++n;
  }
  fclose(f);
  return n == 3 ? 0 : -1;
}

static const char* outcome_text(int32_t result) {
  switch (result) {
    case FEDSTAT_SESSION_NO_TASK:
      return "no task offered (check in later)";
    case FEDSTAT_SESSION_VERSION_TOO_OLD:
      return "refused: this SDK is too old for the server";
    case FEDSTAT_SESSION_DECLINED_INTERRUPTED:
      return "declined (its round was cut by a restart)";
    case FEDSTAT_SESSION_DECLINED_NO_DATA:
      return "declined (no data for this kind of task)";
    case FEDSTAT_SESSION_DECLINED_MEMORY:
      return "declined (needs more than WORK_BYTES)";
    case FEDSTAT_SESSION_DECLINED_BUDGET:
      return "declined (privacy budget exhausted)";
    case FEDSTAT_SESSION_COMPLETED:
      return "completed: every report chunk acknowledged, the round published";
    case FEDSTAT_SESSION_ABORTED:
      return "aborted by the server (too few devices)";
    case FEDSTAT_SESSION_DECLINED_POLICY:
      return "declined (outside this device's task policy)";
    case FEDSTAT_SESSION_DECLINED_ALREADY_CHARGED:
      return "declined (already charged for it)";
    default:
      return "unknown";
  }
}

int main(int argc, char** argv) {
  fedstat_histogram* histogram = NULL;
  fedstat_ledger* ledger = NULL;
  fedstat_random* random = NULL;
  fedstat_client* client = NULL;
  fedstat_tls_channel* tls = NULL;
  fedstat_ledger_config ledger_config;
  fedstat_client_config config;
  fedstat_task_policy policy;
  fedstat_session_outcome outcome;
  uint8_t psk[FEDSTAT_TLS_PSK_BYTES];
  static char credential[3][320]; /* key, certificate, CA key (--credential) */
  const char* credential_path = NULL;
  const char* certificate_path = NULL;
  const char* ca_certificate_path = NULL;
  const char* server_name = NULL;
  static char certificate_pem[4096], ca_certificate_pem[4096];
  char* end = NULL;
  unsigned long port;
  uint64_t device_id;
  uint32_t state, event;
  double epsilon = 0, delta = 0;
  int resumed = 0;
  fedstat_status st;

  while (argc > 2 && strncmp(argv[1], "--", 2) == 0) {
    if (strcmp(argv[1], "--credential") == 0) {
      credential_path = argv[2];
    } else if (strcmp(argv[1], "--certificate") == 0) {
      certificate_path = argv[2];
    } else if (strcmp(argv[1], "--ca-certificate") == 0) {
      ca_certificate_path = argv[2];
    } else if (strcmp(argv[1], "--server-name") == 0) {
      server_name = argv[2];
    } else {
      break;
    }
    argv += 2;
    argc -= 2;
  }
  if (argc < 5 || argc > 6 || (certificate_path != NULL) != (ca_certificate_path != NULL) ||
      (certificate_path != NULL) != (server_name != NULL) ||
      (certificate_path != NULL && credential_path == NULL)) {
    fprintf(stderr,
            "usage: report_to_server [--credential FILE] [--certificate FILE --ca-certificate FILE "
            "--server-name NAME] HOST PORT DEVICE_ID PSK_FILE [STORAGE_DIR]\n"
            "  (--certificate needs the other two and --credential; PSK_FILE is then unused)\n");
    return 2;
  }
  port = strtoul(argv[2], &end, 10);
  if (*end != '\0' || port == 0 || port > 65535) {
    fprintf(stderr, "report_to_server: PORT must be 1..65535\n");
    return 2;
  }
  device_id = strtoull(argv[3], &end, 10);
  if (*end != '\0' || device_id == 0) {
    fprintf(stderr, "report_to_server: DEVICE_ID must be a positive decimal number\n");
    return 2;
  }
  if (certificate_path != NULL) {
    if (read_text(certificate_path, certificate_pem, sizeof certificate_pem) != 0 ||
        read_text(ca_certificate_path, ca_certificate_pem, sizeof ca_certificate_pem) != 0) {
      fprintf(stderr, "report_to_server: %s and %s must be PEM certificates (under 4 KiB)\n",
              certificate_path, ca_certificate_path);
      return 2;
    }
    memset(psk, 0, sizeof psk); /* not used */
  } else if (read_psk(argv[4], psk) != 0) {
    fprintf(stderr, "report_to_server: %s must hold the device's key, 64 hex digits\n", argv[4]);
    return 2;
  }
  if (credential_path != NULL && read_credential(credential_path, credential) != 0) {
    fprintf(stderr,
            "report_to_server: %s must hold three lines: the private key, the certificate line "
            "and the CA's public key\n",
            credential_path);
    return 2;
  }
  if (argc == 6 && (st = fedstat_set_storage_directory(argv[5])) != FEDSTAT_OK) {
    return fail(2, "storage directory", st, argv[5]);
  }

  /* 1. The app's observations: a sparse histogram of its events. */
  st = fedstat_histogram_create_sparse(histogram_memory, sizeof histogram_memory, 256, &histogram);
  if (st != FEDSTAT_OK) return fail(3, "histogram", st, "memory (fedstat_histogram_sparse_size)");
  state = 12345u + (uint32_t)device_id;
  for (event = 0; event < EVENTS; ++event) {
    uint32_t item;
    state = state * 1664525u + 1013904223u; /* the "sensor": a fixed pseudo-random stream */
    item = (state >> 8) % DISTINCT_ITEMS;
    item = item * item / DISTINCT_ITEMS; /* more events on small ids */
    st = fedstat_histogram_add(histogram, item, 1);
    if (st != FEDSTAT_OK) return fail(3, "counting", st, fedstat_histogram_last_error(histogram));
  }

  /* 2. What the Client needs: the device's privacy ledger (stored), a CSPRNG, the Client. */
  ledger_config.epsilon_budget = 10;
  ledger_config.delta_budget = 1e-5;
  ledger_config.window_seconds = 2592000; /* 30 days */
  ledger_config.blob_name = "report-ledger";
  st = fedstat_ledger_create(ledger_memory, sizeof ledger_memory, &ledger_config, LEDGER_SPENDS,
                             &ledger);
  if (st != FEDSTAT_OK) return fail(3, "ledger", st, "memory (fedstat_ledger_size)");
  st = fedstat_ledger_load(ledger);
  if (st != FEDSTAT_OK) return fail(3, "loading the ledger", st, fedstat_ledger_last_error(ledger));
  st = fedstat_random_create_csprng(random_memory, sizeof random_memory, (const uint8_t*)argv[3],
                                    strlen(argv[3]), &random);
  if (st != FEDSTAT_OK) return fail(3, "CSPRNG", st, "entropy");
  memset(&config, 0, sizeof config);
  config.device_id = device_id;
  config.wall_clock_seconds = wall_clock_seconds;
  config.round_blob_name = "report-round";
  st = fedstat_client_create(client_memory, sizeof client_memory, &config, ledger, random, &client);
  if (st != FEDSTAT_OK) return fail(3, "Client", st, "device id, memory or round marker");
  /* It holds a histogram only: tasks of other kinds are declined before any charge. */
  fedstat_task_policy_default(&policy);
  policy.answered_kinds = FEDSTAT_KIND_DATA_SHIFT | FEDSTAT_KIND_KL_ANSWERS;
  st = fedstat_client_set_task_policy(client, &policy);
  if (st == FEDSTAT_OK) st = fedstat_client_set_histogram(client, histogram);
  if (st != FEDSTAT_OK) return fail(3, "Client setup", st, fedstat_client_last_error(client));
  /* Its credential, checked (the certificate for this id under the CA, the key the certificate's):
   * it then joins signed DIST rounds only. */
  if (credential_path != NULL) {
    st = fedstat_client_set_credential(client, credential[0], credential[1], credential[2], random);
    if (certificate_path == NULL || st != FEDSTAT_OK) {
      memset(credential[0], 0, sizeof credential[0]); /* else after the TLS connect, below */
    }
    if (st != FEDSTAT_OK) {
      return fail(2, "the credential", st, fedstat_client_last_error(client));
    }
  }
  printf("fedstat %s: device %llu counted %u events%s\n", fedstat_version(),
         (unsigned long long)device_id, (unsigned)EVENTS,
         credential_path != NULL ? " (credential checked: signed DIST rounds only)" : "");

  /* 3. Check in: TLS (PSK, or mutual TLS with certificates) to the server, then one session. */
  st = fedstat_tls_channel_create(tls_memory, sizeof tls_memory, &tls);
  if (st != FEDSTAT_OK) return fail(3, "TLS channel", st, "memory (fedstat_tls_channel_size)");
  if (certificate_path != NULL) {
    st = fedstat_tls_channel_connect_certificate(tls, argv[1], (uint16_t)port, server_name,
                                                 ca_certificate_pem, 0, certificate_pem, 0,
                                                 credential[0], 0);
    memset(credential[0], 0, sizeof credential[0]);
  } else {
    st = fedstat_tls_channel_connect(tls, argv[1], (uint16_t)port, device_id, psk, sizeof psk, 0);
  }
  memset(psk, 0, sizeof psk);
  if (st != FEDSTAT_OK) {
    fprintf(stderr, "report_to_server: connecting to %s port %lu failed: %s: %s\n", argv[1], port,
            fedstat_status_name(st), fedstat_tls_channel_last_error(tls));
    (void)fedstat_tls_channel_destroy(tls); /* a live channel: cannot fail */
    return 4;
  }
  if (fedstat_tls_channel_resumed(tls, &resumed) != FEDSTAT_OK) resumed = 0;
  printf("connected to %s port %lu as device %llu (TLS 1.2 %s, %s)\n", argv[1], port,
         (unsigned long long)device_id, certificate_path != NULL ? "certificate" : "PSK",
         resumed ? "resumed session" : "full handshake");
  st = fedstat_client_run_session_tls(client, tls, &outcome);
  (void)fedstat_tls_channel_destroy(tls); /* a live channel: cannot fail */
  if (st != FEDSTAT_OK) {
    const char* detail = fedstat_client_last_server_detail(client);
    fprintf(stderr, "report_to_server: session failed: %s: %s%s%s\n", fedstat_status_name(st),
            fedstat_client_last_error(client), detail[0] ? "; server: " : "", detail);
    return 5;
  }

  /* 4. What the server acknowledged, and what the ledger was charged for it. */
  printf("server: task %u %s\n", (unsigned)outcome.task_id, outcome_text(outcome.result));
  if (fedstat_ledger_spent(ledger, wall_clock_seconds(), &epsilon, &delta) == FEDSTAT_OK) {
    printf("ledger: epsilon %g of %g spent, delta %g\n", epsilon, ledger_config.epsilon_budget,
           delta);
  }
  return 0;
}
