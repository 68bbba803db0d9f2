// Reads the firmware's provisioning and its simulated sensor's events (provisioning.h).
#include "examples/cortex_m_firmware/provisioning.h"

#include <stdio.h>
#include <string.h>

#include "platform/baremetal/hooks.h"
#include "sdk/base/crypto.h"

namespace firmware {
namespace {

using fedstat::MutableByteSpan;
using fedstat::Result;
using fedstat::Status;

// Whitespace-separated tokens of a file read through the platform's read_at hook, 128 bytes at
// a time.
class TokenReader {
 public:
  explicit TokenReader(const char* name) : name_(name) {}
  ~TokenReader() { fedstat::crypto::wipe(buffer_, sizeof(buffer_)); }  // it held the key's digits
  TokenReader(const TokenReader&) = delete;
  TokenReader& operator=(const TokenReader&) = delete;

  // The next token into `out` (NUL-terminated); false at the end of the file. A token longer
  // than `capacity` − 1 or a read error sets error().
  bool next(char* out, size_t capacity) {
    size_t n = 0;
    for (;;) {
      if (position_ == filled_ && !refill()) break;
      if (position_ == filled_) break;  // end of file
      const char c = static_cast<char>(buffer_[position_++]);
      const bool space = c == ' ' || c == '\n' || c == '\r' || c == '\t';
      if (space) {
        if (n > 0) break;
        continue;
      }
      if (n + 1 >= capacity) {
        error_ = fedstat::invalid_argument("provisioning: a token is too long");
        return false;
      }
      out[n++] = c;
    }
    out[n] = '\0';
    return n > 0;
  }
  Status error() const { return error_; }

 private:
  bool refill() {
    const auto& hooks = fedstat::platform::baremetal::installed_hooks();
    if (hooks.read_at == nullptr) {
      error_ = fedstat::unavailable("provisioning: no storage hook installed");
      return false;
    }
    const Result<size_t> got =
        hooks.read_at(name_, offset_, MutableByteSpan(buffer_, sizeof(buffer_)));
    if (!got.ok()) {
      error_ = got.status();
      return false;
    }
    offset_ += got.value();
    position_ = 0;
    filled_ = got.value();
    return true;
  }

  const char* name_;
  uint8_t buffer_[128];
  size_t offset_ = 0, position_ = 0, filled_ = 0;
  Status error_;
};

bool parse_decimal(const char* text, uint64_t& out) {
  if (*text == '\0') return false;
  uint64_t value = 0;
  for (; *text != '\0'; ++text) {
    if (*text < '0' || *text > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(*text - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  out = value;
  return true;
}

// "device-<id>-<kind>.txt", a device's data file.
struct DataFileName {
  DataFileName(uint64_t id, const char* kind) {
    snprintf(text, sizeof(text), "device-%lu-%s.txt", static_cast<unsigned long>(id), kind);
  }
  char text[40];
};

// A data file's first line, "<key> <positive decimal>", into `value`; `refusal` otherwise (or
// the reader's own error).
Status read_header(TokenReader& reader, const char* key, uint64_t& value, const char* refusal) {
  char token[24];
  if (!reader.next(token, sizeof(token)) || strcmp(token, key) != 0 ||
      !reader.next(token, sizeof(token)) || !parse_decimal(token, value) || value == 0) {
    return reader.error().ok() ? fedstat::invalid_argument(refusal) : reader.error();
  }
  return Status();
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Exactly 2·`bytes` hex digits of `text` into `out`; false otherwise (`out` then partly written).
bool parse_hex(const char* text, uint8_t* out, size_t bytes) {
  if (strlen(text) != 2 * bytes) return false;
  for (size_t i = 0; i < bytes; ++i) {
    const int high = hex_value(text[2 * i]), low = hex_value(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<uint8_t>(high * 16 + low);
  }
  return true;
}

}  // namespace

Result<Provisioning> read_provisioning() {
  TokenReader reader("device.txt");
  Provisioning p;
  bool have_id = false, have_psk = false, have_key = false, have_certificate = false,
       have_ca = false;
  uint64_t certificate_id = 0;
  // A value: at most 130 hex digits (a P-256 public key) and its NUL.
  char key[16], value[132];
  const fedstat::crypto::ScopedWipe wipe_value(value, sizeof(value));  // the key, in hex
  while (reader.next(key, sizeof(key))) {
    if (!reader.next(value, sizeof(value))) {
      return fedstat::invalid_argument("device.txt: a key without a value");
    }
    if (strcmp(key, "id") == 0) {
      have_id = parse_decimal(value, p.id) && p.id >= 1 && p.id <= (uint64_t{1} << 31);
      if (!have_id) return fedstat::invalid_argument("device.txt: id must be 1..2^31");
    } else if (strcmp(key, "seed") == 0) {
      if (!parse_decimal(value, p.seed)) {
        return fedstat::invalid_argument("device.txt: seed must be a decimal");
      }
    } else if (strcmp(key, "psk") == 0) {
      if (!parse_hex(value, p.psk, sizeof(p.psk))) {
        return fedstat::invalid_argument("device.txt: psk must be 64 hex digits");
      }
      have_psk = true;
    } else if (strcmp(key, "signing_key") == 0) {
      have_key = parse_hex(value, p.credential.private_key, sizeof(p.credential.private_key));
      if (!have_key)
        return fedstat::invalid_argument("device.txt: signing_key must be 64 hex digits");
    } else if (strcmp(key, "certificate") == 0) {
      // "<id> <public key> <CA signature>", as fedstat-ca sign prints it.
      fedstat::credential::DeviceCertificate& c = p.credential.certificate;
      have_certificate = parse_decimal(value, certificate_id) && certificate_id >= 1 &&
                         certificate_id <= (uint64_t{1} << 31) &&
                         reader.next(value, sizeof(value)) &&
                         parse_hex(value, c.public_key, sizeof(c.public_key)) &&
                         reader.next(value, sizeof(value)) &&
                         parse_hex(value, c.ca_signature, sizeof(c.ca_signature));
      if (!have_certificate) {
        return reader.error().ok()
                   ? fedstat::invalid_argument(
                         "device.txt: certificate must be <id 1..2^31> <130 hex public key> <128 "
                         "hex CA signature>")
                   : reader.error();
      }
      c.client_id = static_cast<uint32_t>(certificate_id);
    } else if (strcmp(key, "ca_public_key") == 0) {
      have_ca = parse_hex(value, p.credential.ca_public_key, sizeof(p.credential.ca_public_key));
      if (!have_ca)
        return fedstat::invalid_argument("device.txt: ca_public_key must be 130 hex digits");
    } else if (strcmp(key, "sessions") == 0) {
      uint64_t sessions = 0;
      if (!parse_decimal(value, sessions) || sessions < 1 || sessions > 1000) {
        return fedstat::invalid_argument("device.txt: sessions must be 1..1000");
      }
      p.max_sessions = static_cast<uint32_t>(sessions);
    } else if (strcmp(key, "trust") == 0) {
      const Result<uint32_t> bits = fedstat::client::parse_accepted_trust(value);
      if (!bits.ok()) {
        return fedstat::invalid_argument(
            "device.txt: trust must list trusted, tagg, dist, none or all, comma-separated");
      }
      p.accepted_trust = bits.value();
    } else {
      return fedstat::invalid_argument(
          "device.txt: unknown key (id, psk, sessions, trust, seed, signing_key, certificate, "
          "ca_public_key)");
    }
  }
  if (!reader.error().ok()) return reader.error();
  if (!have_id || !have_psk)
    return fedstat::invalid_argument("device.txt: id and psk are required");
  p.has_credential = have_key || have_certificate || have_ca;
  if (p.has_credential && !(have_key && have_certificate && have_ca)) {
    return fedstat::invalid_argument(
        "device.txt: a credential needs signing_key, certificate and ca_public_key, all three");
  }
  if (p.has_credential && certificate_id != p.id) {
    return fedstat::invalid_argument("device.txt: the certificate is for another device id");
  }
  return p;
}

Status count_sensor_events(uint64_t id, fedstat::Span<fedstat::histogram::SparseEntry> table,
                           fedstat::histogram::SparseHistogram& histogram) {
  DataFileName name(id, "items");
  TokenReader reader(name.text);
  char token[24];
  uint64_t capacity = 0;
  Status status =
      read_header(reader, "capacity", capacity, "items: the first line must be capacity N (N > 0)");
  if (!status.ok()) return status;
  if (capacity > table.size()) {
    return fedstat::resource_exhausted(
        "items: the histogram's capacity exceeds the firmware's table");
  }
  status = histogram.init(
      fedstat::Span<fedstat::histogram::SparseEntry>(table.data(), static_cast<size_t>(capacity)));
  if (!status.ok()) return status;
  uint64_t item = 0, count = 0;
  while (reader.next(token, sizeof(token))) {
    if (!parse_decimal(token, item) || item > UINT32_MAX || !reader.next(token, sizeof(token)) ||
        !parse_decimal(token, count)) {
      return fedstat::invalid_argument("items: lines must be <item> <count>");
    }
    // The sensor reports one event at a time.
    for (uint64_t k = 0; k < count; ++k) {
      status = histogram.add(static_cast<uint32_t>(item));
      if (!status.ok()) return status;
    }
  }
  return reader.error();
}

Status read_examples(uint64_t id, fedstat::Span<float> features, fedstat::Span<int8_t> labels,
                     fedstat::tasks::Examples& out) {
  DataFileName name(id, "examples");
  TokenReader reader(name.text);
  char token[24];
  uint64_t dimension = 0;
  const Status status = read_header(reader, "dimension", dimension,
                                    "examples: the first line must be dimension d (d > 0)");
  if (!status.ok()) return status;
  if (dimension > features.size()) {
    return fedstat::resource_exhausted("examples: the dimension exceeds the firmware's arrays");
  }
  const size_t d = static_cast<size_t>(dimension);
  size_t rows = 0;
  while (reader.next(token, sizeof(token))) {
    if (strcmp(token, "1") != 0 && strcmp(token, "-1") != 0) {
      return fedstat::invalid_argument("examples: a label must be 1 or -1");
    }
    if (rows >= labels.size() || (rows + 1) * d > features.size()) {
      return fedstat::resource_exhausted("examples: more than the firmware's arrays hold");
    }
    labels[rows] = token[0] == '-' ? -1 : 1;
    for (size_t k = 0; k < d; ++k) {
      uint32_t bits = 0;
      if (!reader.next(token, sizeof(token)) || strlen(token) != 8) {
        return fedstat::invalid_argument("examples: a feature must be 8 hex digits");
      }
      for (int i = 0; i < 8; ++i) {
        const int v = hex_value(token[i]);
        if (v < 0) return fedstat::invalid_argument("examples: a feature is not hex");
        bits = (bits << 4) | static_cast<uint32_t>(v);
      }
      memcpy(&features[rows * d + k], &bits, sizeof(bits));
    }
    ++rows;
  }
  if (!reader.error().ok()) return reader.error();
  out.features = fedstat::Span<const float>(features.data(), rows * d);
  out.labels = fedstat::Span<const int8_t>(labels.data(), rows);
  out.dimension = d;
  return Status();
}

}  // namespace firmware
