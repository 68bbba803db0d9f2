// fedstat-ca: the fleet's offline certificate authority (issue 42). It makes the CA's ECDSA P-256
// key pair and signs device certificates (sdk/credential/device_credential.h); the server and the
// devices hold only the CA's public key, so the server cannot mint devices. Run it on a machine
// the server does not control, and keep ca.key there.
//
//   fedstat-ca init --out-key ca.key --out-public ca.pub [--out-certificate ca.crt] [--seed N]
//                   [--force]
//   fedstat-ca ca-cert --ca-key ca.key --out ca.crt [--force]
//   fedstat-ca server-cert --ca-key ca.key --name NAME --out-certificate server.crt
//                          --out-key server.key [--seed N] [--force]
//   fedstat-ca issue --ca-key ca.key --first-id 1 --count N [--seed S] --out fleet.creds
//                    [--no-x509] [--force]
//   fedstat-ca sign --ca-key ca.key --id ID --public-key HEX [--out-certificate device.crt]
//                   [--force]
//   fedstat-ca verify --ca-public ca.pub (--creds fleet.creds | --certificate "ID KEY SIG")
//
// X.509 (mutual TLS, host_server/credential/x509_certificates.h), under the same CA key: init
// also writes the self-signed CA certificate (default: ca.crt for --out-public ca.pub), ca-cert
// writes it for an existing CA; server-cert makes the server's key pair and certificate (key 0600);
// issue also writes every device's certificate, for the key in its fleet line, to fleet.crt
// beside fleet.creds (--no-x509: not, for very large fleets: 1.5 ms a device); sign writes the
// device's certificate when --out-certificate is given (stdout stays the one certificate line).
//
// init: a CA key pair, from the platform's CSPRNG or, with --seed, from a seeded stream (test
// and emulation fleets only: anyone who knows N knows the key). issue: emulated devices'
// credentials (key pairs drawn from --seed's stream `id`, or the CSPRNG; every private key is in
// the file). sign: the production flow, for a device that generated its own key: prints its
// certificate line "ID PUBLIC_KEY CA_SIGNATURE". verify: checks every line of a fleet file (or
// one certificate) under ca.pub. File formats: host_server/credential/fleet_credentials.h.
// Bounds: ids in [1, 2^31]; --count ≤ 2^20 and first-id + count − 1 ≤ 2^31. Files are never
// replaced without --force; key and fleet files are created mode 0600.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "host_server/credential/fleet_credentials.h"
#include "host_server/credential/x509_certificates.h"
#include "host_server/hex.h"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/cli_numbers.h"

namespace {

using fedstat::host::FleetCredentialError;

int refuse(const std::string& message) {
  std::fprintf(stderr, "fedstat-ca: %s\n", message.c_str());
  return fedstat::tools::kExitRefused;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fedstat-ca: the fleet's offline certificate authority (device credentials)"};
  fedstat::tools::apply_conventions(
      app, "fedstat-ca",
      {"fedstat-ca init --out-key ca.key --out-public ca.pub",
       "fedstat-ca issue --ca-key ca.key --first-id 1 --count 100 --seed 7 --out fleet.creds",
       "fedstat-ca server-cert --ca-key ca.key --name fedstat.example.org --out-certificate "
       "server.crt --out-key server.key",
       "fedstat-ca sign --ca-key ca.key --id 42 --public-key 04... --out-certificate 42.crt",
       "fedstat-ca verify --ca-public ca.pub --creds fleet.creds"});
  app.require_subcommand(1);
  const CLI::Validator id_range = fedstat::tools::whole_number(1, fedstat::host::kMaxCertificateId);

  std::string out_key, out_public, ca_key_path, ca_public_path, out_path, creds_path, public_hex,
      certificate_text, out_certificate, server_name;
  uint64_t seed = 0;
  uint64_t first_id = 0, count = 0, id = 0;
  bool force = false, no_x509 = false;

  CLI::App* init =
      app.add_subcommand("init", "make the CA's key pair (ca.key secret, ca.pub public)");
  init->add_option("--out-key", out_key, "the CA private key file to create (mode 0600)")
      ->required();
  init->add_option("--out-public", out_public, "the CA public key file to create")->required();
  CLI::Option* init_seed =
      init->add_option("--seed", seed, "test/emulation fleets only: draw the key from this seed")
          ->check(fedstat::tools::whole_number(0, UINT64_MAX));
  init->add_option("--out-certificate", out_certificate,
                   "the self-signed CA certificate (X.509, PEM) to create; default: --out-public "
                   "with .crt for .pub (ca.pub: ca.crt)");
  init->add_flag("--force", force, "replace existing files");

  CLI::App* ca_cert = app.add_subcommand(
      "ca-cert", "write the CA's self-signed X.509 certificate (ca.crt) for an existing CA");
  ca_cert->add_option("--ca-key", ca_key_path, "the CA private key file")->required();
  ca_cert->add_option("--out", out_path, "the CA certificate file to create")->required();
  ca_cert->add_flag("--force", force, "replace an existing file");

  CLI::App* server_cert =
      app.add_subcommand("server-cert", "a server key pair and its X.509 certificate (mutual TLS)");
  server_cert->add_option("--ca-key", ca_key_path, "the CA private key file")->required();
  server_cert
      ->add_option("--name", server_name,
                   "the name devices connect to: a DNS name or an IP address (subjectAltName)")
      ->required();
  server_cert->add_option("--out-certificate", out_certificate, "the certificate file to create")
      ->required();
  server_cert->add_option("--out-key", out_key, "the private key file to create (mode 0600)")
      ->required();
  CLI::Option* server_seed =
      server_cert
          ->add_option("--seed", seed, "test/emulation only: draw the server key from this seed")
          ->check(fedstat::tools::whole_number(0, UINT64_MAX));
  server_cert->add_flag("--force", force, "replace existing files");

  CLI::App* issue =
      app.add_subcommand("issue", "emulated fleet: key pairs and certificates, one line a device");
  issue->add_option("--ca-key", ca_key_path, "the CA private key file")->required();
  issue->add_option("--first-id", first_id, "the first client id (1..2^31)")
      ->required()
      ->check(id_range);
  issue->add_option("--count", count, "how many devices (1..2^20)")
      ->required()
      ->check(fedstat::tools::whole_number(1, fedstat::host::kMaxFleetDevices));
  CLI::Option* issue_seed =
      issue->add_option("--seed", seed, "draw device id's key from stream id of this seed")
          ->check(fedstat::tools::whole_number(0, UINT64_MAX));
  issue->add_option("--out", out_path, "the fleet credentials file to create (mode 0600)")
      ->required();
  issue->add_flag("--no-x509", no_x509,
                  "do not write the devices' X.509 certificates (fleet.crt beside --out)");
  issue->add_flag("--force", force, "replace existing files");

  CLI::App* sign = app.add_subcommand("sign",
                                      "certify a device's own public key (prints the "
                                      "certificate line)");
  sign->add_option("--ca-key", ca_key_path, "the CA private key file")->required();
  sign->add_option("--id", id, "the device's client id (1..2^31)")->required()->check(id_range);
  sign->add_option("--public-key", public_hex,
                   "the device's P-256 public key: 130 hex digits, SEC1 uncompressed (04...)")
      ->required();
  sign->add_option("--out-certificate", out_certificate,
                   "also write the device's X.509 certificate (PEM) to this file");
  sign->add_flag("--force", force, "replace an existing --out-certificate file");

  CLI::App* verify = app.add_subcommand("verify", "check a fleet file or a certificate");
  verify->add_option("--ca-public", ca_public_path, "the CA public key file")->required();
  CLI::Option* creds =
      verify->add_option("--creds", creds_path, "a fleet credentials file: every line");
  CLI::Option* certificate = verify->add_option(
      "--certificate", certificate_text, "one certificate line 'ID PUBLIC_KEY CA_SIGNATURE'");
  creds->excludes(certificate);
  certificate->excludes(creds);

  if (const auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;

  try {
    if (init->parsed()) {
      const fedstat::host::CaKey ca = fedstat::host::make_ca_key(*init_seed ? &seed : nullptr);
      if (out_certificate.empty()) {  // ca.pub → ca.crt
        const bool pub =
            out_public.size() > 4 && out_public.compare(out_public.size() - 4, 4, ".pub") == 0;
        out_certificate = (pub ? out_public.substr(0, out_public.size() - 4) : out_public) + ".crt";
      }
      const std::string certificate = fedstat::host::ca_certificate_pem(ca);
      // Nothing is written unless every file can be: refuse existing ones first.
      if (!force) {
        for (const std::string& path : {out_key, out_public, out_certificate}) {
          if (std::FILE* f = std::fopen(path.c_str(), "r")) {
            std::fclose(f);
            return refuse(path +
                          ": already exists; fedstat-ca does not replace key or credential "
                          "files (remove it, or pass --force)");
          }
        }
      }
      fedstat::host::write_ca_key(out_key, ca, force);
      fedstat::host::write_ca_public_key(out_public, ca.public_key, force);
      fedstat::host::write_credential_file(out_certificate, certificate, 0644, force);
      std::printf("CA public key %s\nwritten: %s (secret, keep offline), %s, %s\n",
                  fedstat::host::encode_hex(ca.public_key.data(), ca.public_key.size()).c_str(),
                  out_key.c_str(), out_public.c_str(), out_certificate.c_str());
      return fedstat::tools::kExitDone;
    }
    if (ca_cert->parsed()) {
      const fedstat::host::CaKey ca = fedstat::host::read_ca_key(ca_key_path);
      fedstat::host::write_credential_file(out_path, fedstat::host::ca_certificate_pem(ca), 0644,
                                           force);
      std::printf("CA certificate written to %s\n", out_path.c_str());
      return fedstat::tools::kExitDone;
    }
    if (server_cert->parsed()) {
      const fedstat::host::CaKey ca = fedstat::host::read_ca_key(ca_key_path);
      const fedstat::host::ServerCertificate made =
          fedstat::host::make_server_certificate(ca, server_name, *server_seed ? &seed : nullptr);
      if (!force) {
        for (const std::string& path : {out_certificate, out_key}) {
          if (std::FILE* f = std::fopen(path.c_str(), "r")) {
            std::fclose(f);
            return refuse(path + ": already exists (remove it, or pass --force)");
          }
        }
      }
      fedstat::host::write_credential_file(out_key, made.private_key_pem, 0600, force);
      fedstat::host::write_credential_file(out_certificate, made.certificate_pem, 0644, force);
      std::printf("server certificate for %s written: %s, key %s (secret, mode 0600)\n",
                  server_name.c_str(), out_certificate.c_str(), out_key.c_str());
      return fedstat::tools::kExitDone;
    }
    if (issue->parsed()) {
      if (first_id + count - 1 > fedstat::host::kMaxCertificateId) {
        return refuse("--first-id " + std::to_string(first_id) + " --count " +
                      std::to_string(count) + ": the last id would exceed 2^31 = 2147483648");
      }
      const fedstat::host::CaKey ca = fedstat::host::read_ca_key(ca_key_path);
      std::vector<fedstat::credential::DeviceCredential> fleet;
      fleet.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        fleet.push_back(fedstat::host::issue_device_credential(
            ca, static_cast<uint32_t>(first_id + i), *issue_seed ? &seed : nullptr));
      }
      const std::string x509_path = fedstat::host::device_certificates_path(out_path);
      std::string x509;
      if (!no_x509) {
        if (!force) {
          if (std::FILE* f = std::fopen(x509_path.c_str(), "r")) {
            std::fclose(f);
            return refuse(x509_path + ": already exists (remove it, or pass --force)");
          }
        }
        x509 = fedstat::host::device_certificates_text(ca, fleet);
      }
      fedstat::host::write_fleet_credentials(out_path, fleet, force);
      if (!no_x509) fedstat::host::write_credential_file(x509_path, x509, 0644, force);
      std::printf("%llu credentials (ids %llu..%llu) written to %s%s\n",
                  static_cast<unsigned long long>(count), static_cast<unsigned long long>(first_id),
                  static_cast<unsigned long long>(first_id + count - 1), out_path.c_str(),
                  no_x509 ? "" : (", their X.509 certificates to " + x509_path).c_str());
      return fedstat::tools::kExitDone;
    }
    if (sign->parsed()) {
      const fedstat::host::CaKey ca = fedstat::host::read_ca_key(ca_key_path);
      const auto key = fedstat::host::decode_hex(public_hex);
      if (!key) return refuse("--public-key: not hex (an even number of digits 0-9, a-f)");
      if (key->size() != fedstat::credential::kPublicKeyBytes) {
        return refuse("--public-key: " + std::to_string(key->size()) +
                      " bytes; a P-256 public key is 65 (130 hex digits: 04 || X || Y, SEC1 "
                      "uncompressed)");
      }
      fedstat::credential::DeviceCertificate out;
      const fedstat::Status status = fedstat::credential::issue_certificate(
          fedstat::ByteSpan(ca.private_key.data(), ca.private_key.size()),
          static_cast<uint32_t>(id), fedstat::ByteSpan(key->data(), key->size()), out);
      if (!status.ok()) {
        return refuse(std::string("--public-key: refused: ") + status.message() +
                      " (a SEC1 uncompressed P-256 point is required)");
      }
      if (!out_certificate.empty()) {
        fedstat::host::CaPublicKey device_key{};
        std::copy(key->begin(), key->end(), device_key.begin());
        fedstat::host::write_credential_file(
            out_certificate,
            fedstat::host::device_certificate_pem(ca, static_cast<uint32_t>(id), device_key), 0644,
            force);
      }
      std::printf("%s\n", fedstat::host::certificate_line(out).c_str());
      return fedstat::tools::kExitDone;
    }
    // verify
    if (!*creds && !*certificate) return refuse("verify: give --creds FILE or --certificate LINE");
    const fedstat::host::CaPublicKey ca = fedstat::host::read_ca_public_key(ca_public_path);
    if (*certificate) {
      const auto cert = fedstat::host::parse_certificate_line(certificate_text, ca);
      std::printf("certificate of client %u verifies\n", cert.client_id);
      return fedstat::tools::kExitDone;
    }
    const auto fleet = fedstat::host::read_fleet_credentials(creds_path, ca);
    std::printf("%zu credentials verify under %s\n", fleet.size(), ca_public_path.c_str());
    return fedstat::tools::kExitDone;
  } catch (const FleetCredentialError& e) {
    return refuse(e.what());
  }
}
