// fedstat-ca's files and the seeded fleet (see fleet_credentials.h).
#include "host_server/credential/fleet_credentials.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "host_server/estimate/host_common.h"
#include "host_server/hex.h"
#include "sdk/base/crypto.h"
#include "sdk/base/csprng.h"
#include "sdk/base/seeded_stream.h"

namespace fedstat {
namespace host {
namespace {

using credential::DeviceCertificate;
using credential::DeviceCredential;

[[noreturn]] void fail(const std::string& message) {
  throw FleetCredentialError(message);
}

std::string status_text(const Status& status) {
  return std::string(status_code_name(status.code())) + ": " + status.message();
}

// Draws a key pair from stream `stream` of `seed`, or from a fresh CSPRNG.
void draw_key_pair(const uint64_t* seed, uint64_t stream, uint8_t* private_key, uint8_t* public_key,
                   const std::string& what) {
  Status status;
  if (seed != nullptr) {
    SeededStream random(seed_from_u64(*seed), stream);
    status = credential::generate_key_pair(
        random, MutableByteSpan(private_key, credential::kPrivateKeyBytes),
        MutableByteSpan(public_key, credential::kPublicKeyBytes));
  } else {
    Csprng random;
    status = random.init(ByteSpan(reinterpret_cast<const uint8_t*>("fedstat-ca"), 10));
    if (status.ok()) {
      status = credential::generate_key_pair(
          random, MutableByteSpan(private_key, credential::kPrivateKeyBytes),
          MutableByteSpan(public_key, credential::kPublicKeyBytes));
    }
  }
  if (!status.ok()) fail(what + ": could not make a key pair: " + status_text(status));
}

// Splits on blanks.
std::vector<std::string> fields_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  std::string field;
  while (in >> field) out.push_back(field);
  return out;
}

// The file's lines after its magic first line, skipping blank and '#' lines: {line number, text}.
std::vector<std::pair<size_t, std::string>> read_records(const std::string& path, const char* magic,
                                                         const char* kind,
                                                         const char* also_accepted = nullptr,
                                                         bool* was_also = nullptr) {
  std::ifstream in(path);
  if (!in) fail(path + ": cannot open: " + std::strerror(errno));
  std::string first;
  std::getline(in, first);
  if (!first.empty() && first.back() == '\r') first.pop_back();
  if (was_also != nullptr) *was_also = false;
  if (first != magic) {
    if (also_accepted != nullptr && first == also_accepted) {
      *was_also = true;
    } else {
      std::string found = "an unknown kind of file";
      if (first == kCaKeyMagic) found = "a CA private key file";
      if (first == kCaPublicMagic) found = "a CA public key file";
      if (first == kFleetCredentialsMagic) found = "a fleet credentials file";
      fail(path + ": not " + kind + " (its first line should be '" + magic + "'; this is " + found +
           ")");
    }
  }
  std::vector<std::pair<size_t, std::string>> records;
  std::string line;
  size_t number = 1;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    records.emplace_back(number, line);
  }
  return records;
}

// Hex of exactly `bytes` bytes into `out`.
void read_hex(const std::string& where, const std::string& what, const std::string& text,
              size_t bytes, uint8_t* out) {
  const std::optional<std::vector<uint8_t>> decoded = decode_hex(text);
  if (!decoded) fail(where + ": " + what + " is not hex (digits 0-9, a-f)");
  if (decoded->size() != bytes) {
    fail(where + ": " + what + " is " + std::to_string(decoded->size()) + " bytes; it must be " +
         std::to_string(bytes) + " (" + std::to_string(2 * bytes) + " hex digits)");
  }
  std::memcpy(out, decoded->data(), bytes);
}

void read_public_key(const std::string& where, const std::string& text, uint8_t* out) {
  read_hex(where, "the public key", text, credential::kPublicKeyBytes, out);
  const Status status = credential::check_public_key(ByteSpan(out, credential::kPublicKeyBytes));
  if (!status.ok()) {
    fail(where + ": the public key is refused (" + status.message() +
         "): it must be a SEC1 uncompressed P-256 point, 04 || X || Y");
  }
}

uint32_t read_id(const std::string& where, const std::string& text) {
  uint64_t id = 0;
  bool digits = !text.empty() && text.size() <= 10;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (digits) id = std::stoull(text);
  if (!digits || id == 0 || id > kMaxCertificateId) {
    fail(where + ": the client id '" + text + "' must be a whole number in [1, 2^31]");
  }
  return static_cast<uint32_t>(id);
}

void read_certificate_fields(const std::string& where, const std::string& id,
                             const std::string& key, const std::string& signature,
                             const CaPublicKey& ca, DeviceCertificate& out) {
  out.client_id = read_id(where, id);
  read_public_key(where, key, out.public_key);
  read_hex(where, "the CA signature", signature, credential::kSignatureBytes, out.ca_signature);
  const Status status = credential::verify_certificate(ByteSpan(ca.data(), ca.size()), out);
  if (status.code() == StatusCode::kPermissionDenied) {
    fail(where + ": the certificate of client " + id +
         " does not verify under this CA public key (issued by another CA, or its id, key or "
         "signature changed)");
  }
  if (!status.ok()) fail(where + ": the certificate is refused: " + status_text(status));
}

// Opens `path` for writing with `mode`, refusing to replace a file unless `overwrite`.
void write_file(const std::string& path, const std::string& text, mode_t mode, bool overwrite) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (overwrite ? O_TRUNC : O_EXCL);
  const int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      fail(path +
           ": already exists; fedstat-ca does not replace key or credential files "
           "(remove it, or pass --force)");
    }
    fail(path + ": cannot create: " + std::strerror(errno));
  }
  if (overwrite && ::fchmod(fd, mode) != 0) {  // an existing file keeps its mode otherwise
    const int error = errno;
    ::close(fd);
    fail(path + ": cannot set its mode: " + std::strerror(error));
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      ::close(fd);
      fail(path + ": write failed: " + std::strerror(error));
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_error = errno;
  if (::close(fd) != 0 || !synced) {  // close whatever fsync said
    fail(path + ": write failed: " + std::strerror(synced ? errno : sync_error));
  }
}

}  // namespace

void write_credential_file(const std::string& path, const std::string& text, unsigned mode,
                           bool overwrite) {
  write_file(path, text, static_cast<mode_t>(mode), overwrite);
}

CaKey make_ca_key(const uint64_t* seed) {
  CaKey ca;
  draw_key_pair(seed, 0, ca.private_key.data(), ca.public_key.data(), "the CA");
  return ca;
}

DeviceCredential issue_device_credential(const CaKey& ca, uint32_t client_id,
                                         const uint64_t* seed) {
  if (client_id == 0 || client_id > kMaxCertificateId) {
    fail("client id " + std::to_string(client_id) + ": must be in [1, 2^31]");
  }
  DeviceCredential out;
  uint8_t public_key[credential::kPublicKeyBytes];
  draw_key_pair(seed, client_id, out.private_key, public_key,
                "client " + std::to_string(client_id));
  const Status status = credential::issue_certificate(
      ByteSpan(ca.private_key.data(), ca.private_key.size()), client_id,
      ByteSpan(public_key, sizeof(public_key)), out.certificate);
  if (!status.ok()) {
    fail("client " + std::to_string(client_id) +
         ": could not issue a certificate: " + status_text(status));
  }
  std::memcpy(out.ca_public_key, ca.public_key.data(), ca.public_key.size());
  return out;
}

CaKey read_ca_key(const std::string& path) {
  const auto records = read_records(path, kCaKeyMagic, "a CA private key file");
  if (records.size() != 1) {
    fail(path +
         ": a CA key file holds one line after its first (private and public key hex); "
         "found " +
         std::to_string(records.size()));
  }
  const std::string where = path + ":" + std::to_string(records[0].first);
  const std::vector<std::string> fields = fields_of(records[0].second);
  if (fields.size() != 2) fail(where + ": expected '<private key hex> <public key hex>'");
  CaKey ca;
  read_hex(where, "the private key", fields[0], credential::kPrivateKeyBytes,
           ca.private_key.data());
  read_public_key(where, fields[1], ca.public_key.data());
  SeededStream blinding(seed_from_u64(0x6361));  // blinding only: the result does not depend on it
  uint8_t derived[credential::kPublicKeyBytes];
  const Status status =
      credential::public_key_of(ByteSpan(ca.private_key.data(), ca.private_key.size()), blinding,
                                MutableByteSpan(derived, sizeof(derived)));
  if (!status.ok()) fail(where + ": the private key is refused: " + status_text(status));
  if (std::memcmp(derived, ca.public_key.data(), sizeof(derived)) != 0) {
    fail(where + ": the public key is not the private key's (a damaged or edited key file)");
  }
  crypto::wipe(derived, sizeof(derived));
  return ca;
}

CaPublicKey read_ca_public_key(const std::string& path) {
  bool is_key_file = false;
  const auto records =
      read_records(path, kCaPublicMagic, "a CA public key file", kCaKeyMagic, &is_key_file);
  if (is_key_file) return read_ca_key(path).public_key;
  if (records.size() != 1) {
    fail(path + ": a CA public key file holds one line after its first (the key's hex); found " +
         std::to_string(records.size()));
  }
  const std::string where = path + ":" + std::to_string(records[0].first);
  const std::vector<std::string> fields = fields_of(records[0].second);
  if (fields.size() != 1) fail(where + ": expected '<public key hex>'");
  CaPublicKey key;
  read_public_key(where, fields[0], key.data());
  return key;
}

void write_ca_key(const std::string& path, const CaKey& ca, bool overwrite) {
  write_file(path,
             std::string(kCaKeyMagic) + "\n" +
                 encode_hex(ca.private_key.data(), ca.private_key.size()) + " " +
                 encode_hex(ca.public_key.data(), ca.public_key.size()) + "\n",
             0600, overwrite);
}

void write_ca_public_key(const std::string& path, const CaPublicKey& key, bool overwrite) {
  write_file(path, std::string(kCaPublicMagic) + "\n" + encode_hex(key.data(), key.size()) + "\n",
             0644, overwrite);
}

std::string certificate_line(const DeviceCertificate& certificate) {
  return std::to_string(certificate.client_id) + " " +
         encode_hex(certificate.public_key, sizeof(certificate.public_key)) + " " +
         encode_hex(certificate.ca_signature, sizeof(certificate.ca_signature));
}

std::string fleet_credential_line(const DeviceCredential& credential) {
  return std::to_string(credential.certificate.client_id) + " " +
         encode_hex(credential.private_key, sizeof(credential.private_key)) + " " +
         encode_hex(credential.certificate.public_key, sizeof(credential.certificate.public_key)) +
         " " +
         encode_hex(credential.certificate.ca_signature,
                    sizeof(credential.certificate.ca_signature));
}

void write_fleet_credentials(const std::string& path,
                             const std::vector<DeviceCredential>& credentials, bool overwrite) {
  std::string text = std::string(kFleetCredentialsMagic) + "\n" +
                     "# client_id private_key certificate_public_key ca_signature\n";
  for (const DeviceCredential& c : credentials) text += fleet_credential_line(c) + "\n";
  write_file(path, text, 0600, overwrite);
}

std::vector<DeviceCredential> read_fleet_credentials(const std::string& path,
                                                     const CaPublicKey& ca) {
  const auto records = read_records(path, kFleetCredentialsMagic, "a fleet credentials file");
  if (records.empty()) fail(path + ": no credentials (only the first line)");
  if (records.size() > kMaxFleetDevices) {
    fail(path + ": more than " + std::to_string(kMaxFleetDevices) + " credentials");
  }
  std::vector<DeviceCredential> out;
  out.reserve(records.size());
  std::set<uint32_t> seen;
  SeededStream blinding(seed_from_u64(0x6362));  // blinding only: the results do not depend on it
  for (const auto& [number, line] : records) {
    const std::string where = path + ":" + std::to_string(number);
    const std::vector<std::string> fields = fields_of(line);
    if (fields.size() != 4) {
      fail(where +
           ": expected 4 fields '<client id> <private key hex> <public key hex> "
           "<CA signature hex>', found " +
           std::to_string(fields.size()));
    }
    DeviceCredential credential;
    read_hex(where, "the private key", fields[1], credential::kPrivateKeyBytes,
             credential.private_key);
    read_certificate_fields(where, fields[0], fields[2], fields[3], ca, credential.certificate);
    if (!seen.insert(credential.certificate.client_id).second) {
      fail(where + ": client id " + fields[0] + " appears twice");
    }
    std::memcpy(credential.ca_public_key, ca.data(), ca.size());
    // The certificate verified above; what check_credential would add is the key match, without
    // a second signature check per line.
    uint8_t derived[credential::kPublicKeyBytes];
    const Status status = credential::public_key_of(ByteSpan(credential.private_key), blinding,
                                                    MutableByteSpan(derived, sizeof(derived)));
    if (!status.ok()) fail(where + ": the private key is refused: " + status_text(status));
    if (std::memcmp(derived, credential.certificate.public_key, sizeof(derived)) != 0) {
      fail(where + ": the private key of client " + fields[0] +
           " is not its certificate's key (mismatched or damaged line)");
    }
    out.push_back(credential);
  }
  return out;
}

DeviceCertificate parse_certificate_line(const std::string& line, const CaPublicKey& ca) {
  const std::vector<std::string> fields = fields_of(line);
  if (fields.size() != 3) {
    fail(
        "certificate: expected 3 fields '<client id> <public key hex> <CA signature hex>', found " +
        std::to_string(fields.size()));
  }
  DeviceCertificate certificate;
  read_certificate_fields("certificate", fields[0], fields[1], fields[2], ca, certificate);
  return certificate;
}

}  // namespace host
}  // namespace fedstat
