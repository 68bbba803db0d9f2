// fedstat-ca: the fleet's offline certificate authority (issue 42). It makes the CA's ECDSA P-256
// key pair and signs device certificates (sdk/credential/device_credential.h); the server and the
// devices hold only the CA's public key, so the server cannot mint devices. Run it on a machine
// the server does not control, and keep ca.key there.
//
//   fedstat-ca init --out-key ca.key --out-public ca.pub [--seed N] [--force]
//   fedstat-ca issue --ca-key ca.key --first-id 1 --count N [--seed S] --out fleet.creds [--force]
//   fedstat-ca sign --ca-key ca.key --id ID --public-key HEX
//   fedstat-ca verify --ca-public ca.pub (--creds fleet.creds | --certificate "ID KEY SIG")
//
// init: a CA key pair, from the platform's CSPRNG or, with --seed, from a seeded stream (test
// and emulation fleets only: anyone who knows N knows the key). issue: emulated devices'
// credentials (key pairs drawn from --seed's stream `id`, or the CSPRNG; every private key is in
// the file). sign: the production flow, for a device that generated its own key: prints its
// certificate line "ID PUBLIC_KEY CA_SIGNATURE". verify: checks every line of a fleet file (or
// one certificate) under ca.pub. File formats: host_server/credential/fleet_credentials.h.
// Bounds: ids in [1, 2^31]; --count ≤ 2^20 and first-id + count − 1 ≤ 2^31. Files are never
// replaced without --force; key and fleet files are created mode 0600.
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "host_server/credential/fleet_credentials.h"
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
       "fedstat-ca sign --ca-key ca.key --id 42 --public-key 04...",
       "fedstat-ca verify --ca-public ca.pub --creds fleet.creds"});
  app.require_subcommand(1);
  const CLI::Validator id_range = fedstat::tools::whole_number(1, fedstat::host::kMaxCertificateId);

  std::string out_key, out_public, ca_key_path, ca_public_path, out_path, creds_path, public_hex,
      certificate_text;
  uint64_t seed = 0;
  uint64_t first_id = 0, count = 0, id = 0;
  bool force = false;

  CLI::App* init =
      app.add_subcommand("init", "make the CA's key pair (ca.key secret, ca.pub public)");
  init->add_option("--out-key", out_key, "the CA private key file to create (mode 0600)")
      ->required();
  init->add_option("--out-public", out_public, "the CA public key file to create")->required();
  CLI::Option* init_seed =
      init->add_option("--seed", seed, "test/emulation fleets only: draw the key from this seed")
          ->check(fedstat::tools::whole_number(0, UINT64_MAX));
  init->add_flag("--force", force, "replace existing files");

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
  issue->add_flag("--force", force, "replace an existing file");

  CLI::App* sign = app.add_subcommand("sign",
                                      "certify a device's own public key (prints the "
                                      "certificate line)");
  sign->add_option("--ca-key", ca_key_path, "the CA private key file")->required();
  sign->add_option("--id", id, "the device's client id (1..2^31)")->required()->check(id_range);
  sign->add_option("--public-key", public_hex,
                   "the device's P-256 public key: 130 hex digits, SEC1 uncompressed (04...)")
      ->required();

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
      fedstat::host::write_ca_key(out_key, ca, force);
      fedstat::host::write_ca_public_key(out_public, ca.public_key, force);
      std::printf("CA public key %s\nwritten: %s (secret, keep offline), %s\n",
                  fedstat::host::encode_hex(ca.public_key.data(), ca.public_key.size()).c_str(),
                  out_key.c_str(), out_public.c_str());
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
      fedstat::host::write_fleet_credentials(out_path, fleet, force);
      std::printf("%llu credentials (ids %llu..%llu) written to %s\n",
                  static_cast<unsigned long long>(count), static_cast<unsigned long long>(first_id),
                  static_cast<unsigned long long>(first_id + count - 1), out_path.c_str());
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
