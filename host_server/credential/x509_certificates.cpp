// fedstat-ca's X.509 certificates (see x509_certificates.h).
#include "host_server/credential/x509_certificates.h"

#include <arpa/inet.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "host_server/device_identity.h"
#include "host_server/estimate/host_common.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ecp.h"
#include "mbedtls/entropy.h"
#include "mbedtls/error.h"
#include "mbedtls/oid.h"
#include "mbedtls/pk.h"
#include "mbedtls/x509_crt.h"
#include "sdk/base/crypto.h"
#include "sdk/base/csprng.h"
#include "sdk/base/seeded_stream.h"

namespace fedstat {
namespace host {
namespace {

constexpr char kNotBefore[] = "20240101000000";
constexpr char kNotAfter[] = "20991231235959";
// Stream of the seed a seeded server key is drawn from: above every device id's (1..2^31).
constexpr uint64_t kServerKeyStream = (1ull << 32) + 1;

[[noreturn]] void fail(const std::string& message) {
  throw FleetCredentialError(message);
}

std::string mbedtls_text(int rc) {
  char text[160];
  mbedtls_strerror(rc, text, sizeof(text));
  return text;
}

void check(int rc, const std::string& what) {
  if (rc != 0) fail("X.509: " + what + " failed: " + mbedtls_text(rc));
}

// RAII owners of mbedTLS contexts.
struct Pk {
  mbedtls_pk_context pk;
  Pk() { mbedtls_pk_init(&pk); }
  ~Pk() { mbedtls_pk_free(&pk); }
};
struct Writer {
  mbedtls_x509write_cert crt;
  Writer() { mbedtls_x509write_crt_init(&crt); }
  ~Writer() { mbedtls_x509write_crt_free(&crt); }
};
struct Drbg {
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
  Drbg() {
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    static constexpr char kPersonalisation[] = "fedstat-ca x509";
    check(mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy,
                                reinterpret_cast<const unsigned char*>(kPersonalisation),
                                sizeof(kPersonalisation) - 1),
          "seeding the DRBG");
  }
  ~Drbg() {
    mbedtls_ctr_drbg_free(&drbg);
    mbedtls_entropy_free(&entropy);
  }
};

// `pk` as a P-256 key: the public point, and the private scalar when given.
void load_key(Pk& out, const uint8_t* private_key, const uint8_t* public_key) {
  check(mbedtls_pk_setup(&out.pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)), "pk setup");
  mbedtls_ecp_keypair* ec = mbedtls_pk_ec(out.pk);
  check(mbedtls_ecp_group_load(&ec->grp, MBEDTLS_ECP_DP_SECP256R1), "loading P-256");
  if (private_key != nullptr) {
    check(mbedtls_mpi_read_binary(&ec->d, private_key, credential::kPrivateKeyBytes),
          "reading the private key");
  }
  check(mbedtls_ecp_point_read_binary(&ec->grp, &ec->Q, public_key, credential::kPublicKeyBytes),
        "reading the public key");
  check(mbedtls_ecp_check_pubkey(&ec->grp, &ec->Q), "checking the public key (not on P-256)");
}

// DER: tag, definite length, contents.
void der(std::vector<uint8_t>& out, uint8_t tag, const std::vector<uint8_t>& contents) {
  out.push_back(tag);
  const size_t n = contents.size();
  if (n < 128) {
    out.push_back(static_cast<uint8_t>(n));
  } else if (n < 256) {
    out.push_back(0x81);
    out.push_back(static_cast<uint8_t>(n));
  } else {
    out.push_back(0x82);
    out.push_back(static_cast<uint8_t>(n >> 8));
    out.push_back(static_cast<uint8_t>(n));
  }
  out.insert(out.end(), contents.begin(), contents.end());
}

void set_extended_key_usage(Writer& w, const char* oid, size_t oid_length) {
  std::vector<uint8_t> purpose;
  der(purpose, MBEDTLS_ASN1_OID, std::vector<uint8_t>(oid, oid + oid_length));
  std::vector<uint8_t> value;
  der(value, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE, purpose);
  check(mbedtls_x509write_crt_set_extension(&w.crt, MBEDTLS_OID_EXTENDED_KEY_USAGE,
                                            MBEDTLS_OID_SIZE(MBEDTLS_OID_EXTENDED_KEY_USAGE), 0,
                                            value.data(), value.size()),
        "extendedKeyUsage");
}

void set_serial(Writer& w, uint64_t serial) {
  mbedtls_mpi value;
  mbedtls_mpi_init(&value);
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(serial >> (56 - 8 * i));
  int rc = mbedtls_mpi_read_binary(&value, bytes, sizeof(bytes));
  if (rc == 0) rc = mbedtls_x509write_crt_set_serial(&w.crt, &value);
  mbedtls_mpi_free(&value);
  check(rc, "serial");
}

// The fields every certificate shares; subject, subject key and extensions are the caller's.
void prepare(Writer& w, Pk& issuer, const std::string& subject, uint64_t serial) {
  mbedtls_x509write_crt_set_version(&w.crt, MBEDTLS_X509_CRT_VERSION_3);
  mbedtls_x509write_crt_set_md_alg(&w.crt, MBEDTLS_MD_SHA256);
  mbedtls_x509write_crt_set_issuer_key(&w.crt, &issuer.pk);
  check(mbedtls_x509write_crt_set_issuer_name(&w.crt, kCaSubject), "issuer name");
  check(mbedtls_x509write_crt_set_subject_name(&w.crt, subject.c_str()), "subject name");
  check(mbedtls_x509write_crt_set_validity(&w.crt, kNotBefore, kNotAfter), "validity");
  set_serial(w, serial);
}

std::string pem(Writer& w) {
  Drbg random;  // ECDSA's blinding (the signature itself is RFC 6979 deterministic)
  unsigned char buffer[4096];
  check(mbedtls_x509write_crt_pem(&w.crt, buffer, sizeof(buffer), mbedtls_ctr_drbg_random,
                                  &random.drbg),
        "writing the certificate");
  return reinterpret_cast<const char*>(buffer);
}

void load_ca(Pk& out, const CaKey& ca) {
  load_key(out, ca.private_key.data(), ca.public_key.data());
}

}  // namespace

std::string ca_certificate_pem(const CaKey& ca) {
  Pk key;
  load_ca(key, ca);
  Writer w;
  prepare(w, key, kCaSubject, 1);
  mbedtls_x509write_crt_set_subject_key(&w.crt, &key.pk);
  check(mbedtls_x509write_crt_set_basic_constraints(&w.crt, 1, 0), "basicConstraints");
  check(mbedtls_x509write_crt_set_key_usage(&w.crt, MBEDTLS_X509_KU_KEY_CERT_SIGN), "keyUsage");
  check(mbedtls_x509write_crt_set_subject_key_identifier(&w.crt), "subjectKeyIdentifier");
  return pem(w);
}

ServerCertificate make_server_certificate(const CaKey& ca, const std::string& name,
                                          const uint64_t* seed) {
  if (name.empty() || name.size() > 253) {
    fail("server name '" + name + "': give a DNS name or an IP address of 1 to 253 characters");
  }
  for (const char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == ':';
    if (!ok) {
      fail("server name '" + name +
           "': only letters, digits, '.', '-' and ':' (a DNS name or an IP address)");
    }
  }
  uint8_t private_key[credential::kPrivateKeyBytes];
  crypto::ScopedWipe wipe(private_key, sizeof(private_key));
  CaPublicKey public_key{};
  Status status;
  if (seed != nullptr) {
    SeededStream random(seed_from_u64(*seed), kServerKeyStream);
    status = credential::generate_key_pair(random, MutableByteSpan(private_key),
                                           MutableByteSpan(public_key.data(), public_key.size()));
  } else {
    Csprng random;
    status = random.init(ByteSpan(reinterpret_cast<const uint8_t*>("fedstat-ca server"), 17));
    if (status.ok()) {
      status = credential::generate_key_pair(random, MutableByteSpan(private_key),
                                             MutableByteSpan(public_key.data(), public_key.size()));
    }
  }
  if (!status.ok()) fail(std::string("server key pair: ") + status.message());

  Pk issuer;
  load_ca(issuer, ca);
  Pk subject_key;
  load_key(subject_key, private_key, public_key.data());
  Writer w;
  uint64_t serial = 0;
  {
    Drbg random;
    check(mbedtls_ctr_drbg_random(&random.drbg, reinterpret_cast<unsigned char*>(&serial),
                                  sizeof(serial)),
          "drawing a serial");
    serial = (serial >> 2) | 1;  // positive, nonzero
  }
  prepare(w, issuer, "CN=" + name + ",O=fedstat", serial);
  mbedtls_x509write_crt_set_subject_key(&w.crt, &subject_key.pk);
  check(mbedtls_x509write_crt_set_basic_constraints(&w.crt, 0, -1), "basicConstraints");
  check(mbedtls_x509write_crt_set_key_usage(&w.crt, MBEDTLS_X509_KU_DIGITAL_SIGNATURE), "keyUsage");
  set_extended_key_usage(w, MBEDTLS_OID_SERVER_AUTH, MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH));
  std::vector<uint8_t> names;
  der(names, MBEDTLS_ASN1_CONTEXT_SPECIFIC | 2, std::vector<uint8_t>(name.begin(), name.end()));
  uint8_t address[16];
  if (inet_pton(AF_INET, name.c_str(), address) == 1) {
    der(names, MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7, std::vector<uint8_t>(address, address + 4));
  } else if (inet_pton(AF_INET6, name.c_str(), address) == 1) {
    der(names, MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7, std::vector<uint8_t>(address, address + 16));
  }
  std::vector<uint8_t> san;
  der(san, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE, names);
  check(mbedtls_x509write_crt_set_extension(&w.crt, MBEDTLS_OID_SUBJECT_ALT_NAME,
                                            MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME), 0,
                                            san.data(), san.size()),
        "subjectAltName");
  ServerCertificate out;
  out.certificate_pem = pem(w);
  unsigned char key_pem[1024];
  check(mbedtls_pk_write_key_pem(&subject_key.pk, key_pem, sizeof(key_pem)),
        "writing the server key");
  out.private_key_pem = reinterpret_cast<const char*>(key_pem);
  crypto::wipe(key_pem, sizeof(key_pem));
  return out;
}

std::string device_certificate_pem(const CaKey& ca, uint32_t client_id,
                                   const CaPublicKey& public_key) {
  if (client_id == 0 || client_id > kMaxCertificateId) {
    fail("device certificate: id " + std::to_string(client_id) + " is outside 1..2^31");
  }
  Pk issuer;
  load_ca(issuer, ca);
  Pk subject_key;
  load_key(subject_key, nullptr, public_key.data());
  Writer w;
  prepare(w, issuer,
          std::string("CN=") + kDeviceCommonNamePrefix + std::to_string(client_id) + ",O=fedstat",
          client_id);
  mbedtls_x509write_crt_set_subject_key(&w.crt, &subject_key.pk);
  check(mbedtls_x509write_crt_set_basic_constraints(&w.crt, 0, -1), "basicConstraints");
  check(mbedtls_x509write_crt_set_key_usage(&w.crt, MBEDTLS_X509_KU_DIGITAL_SIGNATURE), "keyUsage");
  set_extended_key_usage(w, MBEDTLS_OID_CLIENT_AUTH, MBEDTLS_OID_SIZE(MBEDTLS_OID_CLIENT_AUTH));
  return pem(w);
}

std::optional<uint32_t> device_id_of_common_name(const std::string& common_name) {
  const size_t prefix = std::strlen(kDeviceCommonNamePrefix);
  if (common_name.compare(0, prefix, kDeviceCommonNamePrefix) != 0) return std::nullopt;
  // The canonical decimal form (no sign, no leading zero), and within the certificate ids.
  const std::optional<uint64_t> id = parse_device_identity(common_name.substr(prefix));
  if (!id || *id > kMaxCertificateId) return std::nullopt;
  return static_cast<uint32_t>(*id);
}

std::string device_certificates_path(const std::string& fleet_credentials_path) {
  static constexpr char kCreds[] = ".creds";
  const size_t n = sizeof(kCreds) - 1;
  if (fleet_credentials_path.size() > n &&
      fleet_credentials_path.compare(fleet_credentials_path.size() - n, n, kCreds) == 0) {
    return fleet_credentials_path.substr(0, fleet_credentials_path.size() - n) + ".crt";
  }
  return fleet_credentials_path + ".crt";
}

std::string device_certificates_text(const CaKey& ca,
                                     const std::vector<credential::DeviceCredential>& fleet) {
  std::string out;
  for (const credential::DeviceCredential& device : fleet) {
    CaPublicKey key{};
    std::memcpy(key.data(), device.certificate.public_key, key.size());
    out += kDeviceCommonNamePrefix + std::to_string(device.certificate.client_id) + "\n";
    out += device_certificate_pem(ca, device.certificate.client_id, key);
  }
  return out;
}

std::map<uint32_t, std::string> read_device_certificates(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(path + ": cannot open: " + std::strerror(errno));
  std::map<uint32_t, std::string> out;
  std::string line, block;
  std::optional<uint32_t> id;
  bool inside = false;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = path + ":" + std::to_string(number);
    if (inside) {
      block += line + "\n";
      if (line == "-----END CERTIFICATE-----") {
        inside = false;
        if (!out.emplace(*id, block).second)
          fail(where + ": device " + std::to_string(*id) + " appears twice");
        id.reset();
      }
      continue;
    }
    if (line.empty()) continue;
    if (line == "-----BEGIN CERTIFICATE-----") {
      if (!id) fail(where + ": a certificate without its \"fedstat-device <id>\" line before it");
      inside = true;
      block = line + "\n";
      continue;
    }
    id = device_id_of_common_name(line);
    if (!id) {
      fail(where +
           ": expected \"fedstat-device <id>\" or a PEM certificate (a file written by "
           "fedstat-ca issue)");
    }
  }
  if (inside) fail(path + ": the last certificate is not closed (a truncated file?)");
  if (out.empty()) fail(path + ": no certificate");
  return out;
}

}  // namespace host
}  // namespace fedstat
