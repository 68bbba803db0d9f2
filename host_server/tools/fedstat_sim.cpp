// fedstat-sim: N emulated devices, each a real Client (sdk/client) over real TLS-PSK (sdk/tls),
// take part in a task a running fedstat-server serves; their data comes from files.
//
//   fedstat-sim --server HOST:PORT --clients N --task FILE --data DIR --fleet-secret HEX
//               [--dropout R] [--seed S] [--first-id ID] [--memory BYTES] [--noise-seed S] [--json]
//
// --task FILE   the task's declaration, as in the server's config (host_server/tasks/task_plan.h)
// --task-id ID  --task FILE is then a server config (an object with "tasks", as
//               examples/server/server.json): the declaration of task ID in it; relative file
//               names resolve against that file's directory, as the server's do
// --data DIR    data_shift, kl: DIR/items.txt (an item-count file) split across the N devices
//               (seeded); model_update: DIR/examples.csv (labelled examples,
//               host_server/estimate/labelled_examples.h), device i holding rows
//               [i·n, (i + 1)·n), n = the task's examples_per_client (too few rows: an error);
//               heterogeneity: DIR/vectors.csv, one row per device (device first-id + i takes
//               row i + 1), d numbers in [0, 1] (estimate/heterogeneity.h's strict reader; the
//               weight w = min(1/s², W) comes from the row's own variance), at least N rows
// --dropout R   each device drops out with probability R, before one phase chosen uniformly:
//               keys, shares, masked input or reveals (dist; signed: also its consistency
//               signature), or its report (other models)
// --credentials FILE  (with --ca-public-key) a fleet file of fedstat-ca issue
//               (host_server/credential/fleet_credentials.h): each device takes its credential
//               from it (ClientConfig::credential) and joins signed DIST sessions only — the
//               server needs ca_public_key. Every device id must be in the file
// --ca-public-key FILE  the fleet CA's ca.pub, against which --credentials is checked
// --tls-certificates FILE  (with --credentials, --tls-ca) mutual TLS: each device connects with
//               its X.509 certificate from FILE (fedstat-ca issue's fleet.crt, beside the
//               fleet.creds given as --credentials: the certificates are for those keys) instead
//               of its PSK; the server needs tls_certificate/tls_private_key/tls_client_ca and
//               device_authentication "certificate" or "either". --fleet-secret may then be left
//               out
// --tls-ca FILE the fleet CA certificate (ca.crt) the devices check the server's against
// --tls-server-name NAME  the name the server's certificate must carry; default: --server's host
// --accept-trust LIST  the trust models the devices' Clients accept (ClientConfig::task_policy,
//               sdk/client/task_policy.h), comma-separated: trusted, tagg, dist, none, all; default
//               trusted,tagg,dist (the SDK's). A trust-"none" task needs "none" here, else every
//               device declines it ("declined-policy" in the outcomes)
// --answer-kinds LIST  the task kinds the devices' Clients answer (TaskPolicy::answered_kinds),
//               comma-separated: data_shift, kl, model_update, heterogeneity, all; default all.
//               A task of another kind is declined for free ("declined-policy")
// --seed S      devices draw noise and keys from SeededStream(S, id): the sim then recomputes the
//               aggregate of the devices whose input the server summed, in process, and prints
//               its SHA-256 and estimate, to compare with `fedstat-server results`
// --noise-seed S  the in-process estimate's central noise (trusted tasks) from SeededStream(S);
//               without it, the CSPRNG. The server's own draw comes from its CSPRNG (a seed it
//               stores per round), so a trusted estimate is never reproduced: compare the
//               aggregate's SHA-256 there (none and dist estimates carry no server noise)
// The JSON also carries "exact": the task's non-private value over all of DIR's data (the truth
// the estimate is for; a measurement, never something a server publishes) — model_update: the
// estimate (held-out accuracy) of the same round without noise or dropouts.
// A chained task (heterogeneity: stage 1, then stage 2 once the server released stage 1) is run
// in one go: every device takes part in both stages, one after the other, with a dropout drawn
// for each stage (a device that dropped out of stage 1 checks in again for stage 2), its k-th
// stage's randomness from SeededStream(S, id + k·2^32). The in-process recomputation plans
// stage 2 from its own stage-1 result, as the server does from the published one. The JSON then
// has "stages": [{task, outcomes, contributors, expected}, ...] instead of the one-task fields.
// Exit codes: 0 every device did what it was asked: completed the task (each stage of a chained
// one), or dropped out where --dropout told it to; 1 a runtime failure, or fewer devices did
// than were asked — one line per reason on stderr, grouped ("task 3: 40 of 40 devices failed:
// could not connect to ..."; host_server/sim/fleet_shortfall.h), the same lines as "shortfall"
// in the JSON, which is printed all the same; 2 usage (the command line or the task file).
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "CLI/CLI.hpp"
#include "host_server/credential/fleet_credentials.h"
#include "host_server/credential/x509_certificates.h"
#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/heterogeneity.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/labelled_examples.h"
#include "host_server/net/credentials.h"
#include "host_server/server_config.h"
#include "host_server/sim/device_threads.h"
#include "host_server/sim/emulated_device.h"
#include "host_server/sim/fleet_shortfall.h"
#include "host_server/tasks/task_plan.h"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/progress.h"
#include "nlohmann/json.hpp"
#include "platform/posix/posix_platform.h"
#include "sdk/client/client.h"
#include "sdk/quantise/quantise.h"

using namespace fedstat;
using namespace fedstat::host;
using nlohmann::json;

namespace {

// The most devices one fedstat-sim runs (--clients): 10^5, ten times the 10,000-device DIST round
// issue 40 asks for. Each is a thread on a 256 KiB stack (DeviceThreads: 25 GiB of address space
// at the limit, touched pages only) holding a TLS session and its Client's memory (--memory,
// left unpaged until used); past a few tens of thousands the host's thread limit (ulimit -u,
// kernel.threads-max) and the server's connections bind first — several fedstat-sim processes
// with distinct --first-id ranges share a larger fleet. The old limit, 1024, was the complete
// secure-aggregation graph's roster bitmap, which a sparse DIST round (and a round of devices
// of which only max_clients take part) does not have.
constexpr uint32_t kMaxSimDevices = 100000;

// What one device gives its Client for `task` (the caller memory of Client::memory_bytes, with the
// device's local size) plus the Client object itself: sdk/client/client.h's formula.
size_t client_memory(const fedstat_v1_Task& task, const EmulatedClient& device) {
  return value_or_throw(client::Client::memory_bytes(task, local_size(task, device)),
                        "the Client's memory") +
         sizeof(client::Client);
}

// The server's sum (mod 2^bits, quantise::add_mod) of the contributions of the given (device,
// task index) pairs, each recomputed in process as its Client builds it.
std::vector<uint64_t> sum_contributions(const fedstat_v1_Task& task,
                                        const std::vector<uint64_t>& task_data,
                                        const std::vector<std::pair<uint32_t, uint32_t>>& who,
                                        const EmulatedClients& data,
                                        const std::vector<DeviceSetup>& setups, uint64_t seed) {
  std::vector<uint64_t> sum(task.vector_length, 0);
  for (const auto& [i, index] : who) {
    const std::vector<uint64_t> words =
        expected_contribution(task, task_data, *data[i], seed, setups[i].id, index);
    check(quantise::add_mod(Span<uint64_t>(sum.data(), sum.size()),
                            Span<const uint64_t>(words.data(), words.size()), task.bits),
          "the in-process sum");
  }
  return sum;
}

const char* trust_name(fedstat_v1_TrustModel trust) {
  switch (trust) {
    case fedstat_v1_TrustModel_TRUSTED:
      return "trusted";
    case fedstat_v1_TrustModel_TAGG:
      return "tagg";
    case fedstat_v1_TrustModel_DIST:
      return "dist";
    case fedstat_v1_TrustModel_NONE:
      return "none";
    default:
      return "?";
  }
}

// An external device's data, for its firmware to read (examples/cortex_m_firmware/provisioning.h):
// device-<id>-items.txt: "capacity <slots>", then "<item> <count>" lines; or
// device-<id>-examples.txt: "dimension <d>", then per example "<label> <d features>", each
// feature its IEEE-754 single's bits in 8 hex digits (exact on every target).
void write_external_data(const std::string& dir, uint64_t id, const EmulatedClient& device) {
  const std::string stem = dir + "/device-" + std::to_string(id);
  std::string path;
  std::ofstream out;
  if (device.examples.count() > 0) {
    path = stem + "-examples.txt";
    out.open(path);
    out << "dimension " << device.examples.dimension << "\n";
    for (size_t row = 0; row < device.examples.count(); ++row) {
      out << static_cast<int>(device.examples.labels[row]);
      for (size_t k = 0; k < device.examples.dimension; ++k) {
        uint32_t bits = 0;
        std::memcpy(&bits, &device.examples.features[row * device.examples.dimension + k], 4);
        char hex[10];
        std::snprintf(hex, sizeof(hex), " %08x", bits);
        out << hex;
      }
      out << "\n";
    }
  } else {
    path = stem + "-items.txt";
    out.open(path);
    out << "capacity " << device.table.size() << "\n";
    for (const histogram::SparseEntry& entry : device.table) {
      if (entry.count != 0) out << entry.id << " " << entry.count << "\n";
    }
  }
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

// --task's JSON as a task declaration: the file itself (task_id 0), or with --task-id the task of
// that id in a server config's "tasks". std::invalid_argument saying which it is not.
json task_declaration(const json& file, const std::string& path, uint32_t task_id) {
  const bool server_config = file.is_object() && file.contains("tasks");
  if (task_id == 0) {
    if (server_config) {
      throw std::invalid_argument("--task " + path +
                                  " is a server config (it has \"tasks\"): add --task-id ID to "
                                  "name one of its tasks");
    }
    return file;
  }
  if (!server_config || !file["tasks"].is_array()) {
    throw std::invalid_argument("--task-id: --task " + path +
                                " must then be a server config (an object with a \"tasks\" "
                                "array, as examples/server/server.json)");
  }
  std::string ids;
  for (const json& task : file["tasks"]) {
    if (!task.is_object() || !task.contains("id")) continue;
    if (task["id"] == task_id) return task;
    ids += (ids.empty() ? "" : ", ") + task["id"].dump();
  }
  throw std::invalid_argument("--task-id " + std::to_string(task_id) + ": " + path +
                              " declares no such task (its ids: " + ids + ")");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "fedstat-sim: a fleet of emulated devices (real Clients over real TLS) taking part "
      "in a task served by fedstat-server."};
  fedstat::tools::apply_conventions(
      app, "fedstat-sim",
      {"fedstat-sim --server 127.0.0.1:7443 --clients 200 --task shift.json --data data/ "
       "--fleet-secret $(cat fleet.key) --dropout 0.05 --seed 7 --json"},
      {{0, "every device completed the task, or dropped out where --dropout told it to"},
       {1,
        "a runtime failure, or fewer devices completed than asked: why, one line per reason, "
        "on stderr (and \"shortfall\" in the JSON; \"outcomes\" and \"devices\" say more)"},
       {2, "the command line or the task file was wrong"}});
  std::string server, task_path, data_dir, secret_hex, state_dir, credentials_path, ca_path;
  std::string tls_certificates_path, tls_ca_path, tls_server_name;
  std::string external_dir = ".";
  std::string accept_trust = "trusted,tagg,dist";
  std::string answer_kinds = "all";
  uint32_t clients = 10, max_sessions = 600, external = 0;
  int report_window = 1;
  double dropout = 0;
  uint64_t seed = 0, first_id = 1, noise_seed = 0, task_id = 0;
  size_t memory = 4u << 20;
  bool json_output = false;
  app.add_option("--server", server, "the server's HOST:PORT")->required();
  app.add_option("--clients", clients,
                 "devices (1 to 100000; a DIST round above 1024 needs the sparse graph, "
                 "task_plan.h)")
      ->check(CLI::Range(1u, kMaxSimDevices));
  app.add_option("--task", task_path, "the task declaration (JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--task-id", task_id,
                 "the task of that id in --task, which is then a server config (an object with "
                 "\"tasks\", e.g. examples/server/server.json)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 31));
  app.add_option("--data", data_dir, "directory holding items.txt (model_update: examples.csv)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--fleet-secret", secret_hex,
                 "64 hex digits: device keys are HKDF(secret, id) (required unless "
                 "--tls-certificates)");
  app.add_option("--dropout", dropout, "probability a device drops out")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--seed", seed, "device randomness seed (0: CSPRNG, no in-process check)");
  app.add_option("--first-id", first_id, "the first device id")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
  app.add_option("--memory", memory, "bytes each device gives its Client");
  app.add_option("--noise-seed", noise_seed,
                 "seed of the in-process estimate's central noise (the server's is its own)");
  app.add_option("--state", state_dir, "where devices keep ledgers and round state (default: .)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--report-window", report_window,
                 "Report chunks a device sends before it waits for an Ack (1 to 16; "
                 "ClientConfig::report_window)")
      ->check(CLI::Range(1, 16));
  app.add_option("--accept-trust", accept_trust,
                 "the trust models the devices accept, comma-separated: trusted, tagg, dist, none, "
                 "all (default trusted,tagg,dist, the SDK's task policy; a trust \"none\" task "
                 "needs none, else every device declines it)");
  app.add_option("--answer-kinds", answer_kinds,
                 "the task kinds the devices answer, comma-separated: data_shift, kl, "
                 "model_update, heterogeneity, all (default all; another kind is declined)");
  app.add_option("--max-sessions", max_sessions, "check-ins per device before it gives up")
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--external", external,
                 "the first N devices run elsewhere (e.g. firmware under QEMU): not started here; "
                 "each one's data is written to --external-dir (device-<id>-items.txt, or "
                 "device-<id>-examples.txt for model_update), "
                 "and it is counted as a contributor in the in-process check")
      ->check(CLI::Range(0u, kMaxSimDevices));
  app.add_option("--external-dir", external_dir, "where --external devices' data are written")
      ->check(CLI::ExistingDirectory);
  app.add_option("--credentials", credentials_path,
                 "fleet credentials of fedstat-ca issue: each device signs its DIST rounds "
                 "(needs --ca-public-key and a server with ca_public_key)")
      ->check(CLI::ExistingFile);
  app.add_option("--ca-public-key", ca_path, "the fleet CA's ca.pub (with --credentials)")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-certificates", tls_certificates_path,
                 "mutual TLS: the devices' X.509 certificates (fedstat-ca issue's fleet.crt, for "
                 "--credentials' keys)")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-ca", tls_ca_path,
                 "with --tls-certificates: the fleet CA certificate (ca.crt) the server's must "
                 "chain to")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-server-name", tls_server_name,
                 "with --tls-certificates: the name in the server's certificate (default: "
                 "--server's host)");
  app.add_flag("--json", json_output, "print one JSON object");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;
  try {
    const auto start = std::chrono::steady_clock::now();
    const bool certificates = !tls_certificates_path.empty();
    if (certificates && (tls_ca_path.empty() || credentials_path.empty())) {
      throw std::invalid_argument(
          "--tls-certificates needs --tls-ca (ca.crt) and --credentials (the devices' keys: the "
          "fleet.creds the certificates were issued with)");
    }
    if (!certificates && (!tls_ca_path.empty() || !tls_server_name.empty())) {
      throw std::invalid_argument("--tls-ca and --tls-server-name go with --tls-certificates");
    }
    if (!certificates && secret_hex.empty()) {
      throw std::invalid_argument("--fleet-secret is required (unless --tls-certificates)");
    }
    const auto secret =
        secret_hex.empty() ? std::array<uint8_t, 32>{} : parse_hex32(secret_hex, "--fleet-secret");
    std::map<uint32_t, std::string> x509;
    std::string tls_ca;
    if (certificates) {
      try {
        x509 = read_device_certificates(tls_certificates_path);
      } catch (const FleetCredentialError& e) {
        throw std::invalid_argument(std::string("--tls-certificates: ") + e.what());
      }
      std::ifstream ca_file(tls_ca_path);
      std::ostringstream ca_text;
      ca_text << ca_file.rdbuf();
      tls_ca = ca_text.str();
      if (tls_server_name.empty()) {
        tls_server_name = server.substr(0, server.rfind(':'));
        if (tls_server_name.size() > 2 && tls_server_name.front() == '[') {
          tls_server_name = tls_server_name.substr(1, tls_server_name.size() - 2);
        }
      }
    }
    const Result<uint32_t> accepted_trust = client::parse_accepted_trust(accept_trust.c_str());
    if (!accepted_trust.ok()) {
      throw std::invalid_argument(std::string("--accept-trust: ") +
                                  accepted_trust.status().message());
    }
    const Result<uint32_t> answered_kinds = client::parse_answered_kinds(answer_kinds.c_str());
    if (!answered_kinds.ok()) {
      throw std::invalid_argument(std::string("--answer-kinds: ") +
                                  answered_kinds.status().message());
    }
    if (!state_dir.empty()) {
      check(platform::posix::set_storage_directory(state_dir.c_str()), "--state");
    }
    // Every device's ledger and round marker go there: refused before any device checks in.
    struct stat storage {};
    const char* storage_dir = platform::posix::storage_directory();
    if (stat(storage_dir, &storage) != 0 || !S_ISDIR(storage.st_mode)) {
      throw std::invalid_argument(std::string("the devices' storage directory ") + storage_dir +
                                  " (--state, else FEDSTAT_STORAGE_DIR) is not a directory");
    }
    std::ifstream task_file(task_path);
    json declaration;
    try {
      declaration = json::parse(task_file);
    } catch (const json::exception& e) {  // a wrong task file is a usage error, as a bad field
      throw std::invalid_argument("--task " + task_path + ": not JSON: " + e.what());
    }
    declaration = task_declaration(declaration, task_path, static_cast<uint32_t>(task_id));
    const size_t slash = task_path.rfind('/');
    const std::string base_dir = slash == std::string::npos ? "." : task_path.substr(0, slash);
    // Devices with credentials join signed sessions only: plan as a signed server does.
    const TaskPlan plan = plan_task(declaration, base_dir, 0, noise_seed,
                                    /*signed_sessions=*/!credentials_path.empty());
    const bool dist = plan.task.trust == fedstat_v1_TrustModel_DIST;
    if (external > clients) throw std::invalid_argument("--external exceeds --clients");
    if (external > 0 && plan.task.kind == fedstat_v1_TaskKind_HETEROGENEITY) {
      throw std::invalid_argument("--external is for data_shift, kl and model_update tasks");
    }
    const uint32_t stages = plan.next_stage ? 2 : 1;
    if (credentials_path.empty() != ca_path.empty()) {
      throw std::invalid_argument("--credentials and --ca-public-key go together");
    }
    // Each device's credential, by id (read_fleet_credentials checks every line under the CA).
    std::map<uint64_t, credential::DeviceCredential> credentials;
    if (!credentials_path.empty()) {
      try {
        const CaPublicKey ca = read_ca_public_key(ca_path);
        for (const auto& c : read_fleet_credentials(credentials_path, ca)) {
          credentials[c.certificate.client_id] = c;
        }
      } catch (const FleetCredentialError& e) {
        throw std::invalid_argument(std::string("--credentials: ") + e.what());
      }
      for (uint64_t id = first_id + external; id < first_id + clients; ++id) {
        if (credentials.count(id) == 0) {
          throw std::invalid_argument(
              "--credentials " + credentials_path + " holds no device " + std::to_string(id) +
              " (fedstat-ca issue --first-id/--count must cover the fleet)");
        }
        if (certificates && x509.count(static_cast<uint32_t>(id)) == 0) {
          throw std::invalid_argument("--tls-certificates " + tls_certificates_path +
                                      " holds no device " + std::to_string(id));
        }
      }
    }
    const bool signed_dist = dist && !credentials.empty();

    // Only the file the task's kind reads.
    EmulatedClients data;
    if (plan.task.kind == fedstat_v1_TaskKind_MODEL_UPDATE) {
      const fedstat_v1_ModelUpdateParameters& m = plan.task.parameters.model_update;
      data = split_examples(read_labelled_examples(data_dir + "/examples.csv", m.dimension),
                            clients, m.examples_per_client);
    } else if (plan.task.kind == fedstat_v1_TaskKind_HETEROGENEITY) {
      const std::string path = data_dir + "/vectors.csv";
      const ClientVectors rows = read_client_vectors(path);
      if (rows.size() < clients) {
        throw std::runtime_error(path + " has " + std::to_string(rows.size()) + " rows for " +
                                 std::to_string(clients) + " devices");
      }
      for (uint32_t i = 0; i < clients; ++i) {
        if (rows[i].size() != plan.task.parameters.heterogeneity.dimension) {
          throw std::runtime_error(path + ": the rows have " + std::to_string(rows[i].size()) +
                                   " values, the task's dimension is " +
                                   std::to_string(plan.task.parameters.heterogeneity.dimension));
        }
        data.push_back(std::make_unique<EmulatedClient>());
        data.back()->vector = rows[i];
      }
    } else {
      const ItemCounts items = read_item_counts(data_dir + "/items.txt");
      SeededBits split(seed, 11);
      data = split_across_clients(items, clients, split.bits());
    }

    // Who drops out of which stage, and before what: seeded draws per device and stage.
    SeededBits choose(seed, 12);
    std::vector<DeviceSetup> setups(clients);
    static const char* dist_points[] = {"keys", "shares", "masking", "reveals", "consistency"};
    std::vector<std::vector<std::string>> drop_names(clients, std::vector<std::string>(stages));
    for (uint32_t i = 0; i < clients; ++i) {
      DeviceSetup& s = setups[i];
      s.id = first_id + i;
      s.endpoint = server;
      s.psk = net::derive_device_psk(secret, s.id);
      s.seed = seed;
      s.memory_bytes = memory;
      s.max_sessions = max_sessions;
      s.report_window = static_cast<uint8_t>(report_window);
      s.accepted_trust = accepted_trust.value();
      s.answered_kinds = answered_kinds.value();
      if (signed_dist && i >= external) s.credential = &credentials.at(s.id);
      if (certificates && i >= external) {
        s.tls_certificate = &x509.at(static_cast<uint32_t>(s.id));
        s.tls_ca = &tls_ca;
        s.tls_key = &credentials.at(s.id);
        s.tls_server_name = tls_server_name;
      }
      // A device waits for the server longer than any of the task's phases may last.
      s.receive_timeout_ms = static_cast<uint32_t>(std::min<uint64_t>(
          UINT32_MAX, 1000 * std::max<uint64_t>(120, uint64_t{plan.phase_timeout_seconds} + 60)));
      s.tasks = stages;
      s.drop_before.assign(stages, 0);
      if (stages > 1) {
        // Waiting for stage 2 while stage 1 runs: a check-in a second (each is a TLS handshake
        // the server pays for), for up to 15 minutes.
        s.next_task_retry_millis = 1000;
        s.max_sessions = 900;
      }
      for (uint32_t k = 0; k < stages; ++k) {
        const double u = static_cast<double>(value_or_throw(choose.bits().uniform_below(1u << 30),
                                                            "dropout draw")) /
                         (1u << 30);
        if (u < dropout) {
          drop_names[i][k] = dist ? dist_points[value_or_throw(
                                        choose.bits().uniform_below(signed_dist ? 5 : 4), "phase")]
                                  : "report";
          s.drop_before[k] = drop_point_tag(drop_names[i][k]);
        }
      }
    }
    std::vector<DeviceReport> reports(clients);
    // One thread per device on a 256 KiB stack (DeviceThreads): 10,000 of them reserve 2.5 GiB
    // of address space, touched pages only, where std::thread's 8 MiB default would be 80 GiB.
    DeviceThreads threads;
    std::mutex finished_mutex;
    std::condition_variable finished_changed;
    uint32_t finished = 0;
    for (uint32_t i = 0; i < external; ++i) {
      write_external_data(external_dir, setups[i].id, *data[i]);
      drop_names[i].assign(stages, "");
      reports[i].id = setups[i].id;
      reports[i].outcome = "external";
      reports[i].task_id = plan.task.task_id;
      DeviceTaskReport task;
      task.task_id = plan.task.task_id;
      task.outcome = "external";
      reports[i].tasks.push_back(task);
    }
    {
      const std::lock_guard<std::mutex> lock(finished_mutex);
      finished = external;
    }
    threads.start(clients - external, [&](size_t k) {
      const uint32_t i = external + static_cast<uint32_t>(k);
      try {
        reports[i] = run_emulated_device(setups[i], *data[i]);
      } catch (const std::exception& e) {
        reports[i].id = setups[i].id;
        reports[i].outcome = "error";
        reports[i].detail = e.what();
      }
      const std::lock_guard<std::mutex> lock(finished_mutex);
      ++finished;
      finished_changed.notify_one();
    });
    {
      // Progress on a terminal while the fleet runs (tools/progress.h); woken by each device
      // that finishes and at the redraw interval.
      fedstat::tools::Progress progress("fedstat-sim", "device", clients);
      std::unique_lock<std::mutex> lock(finished_mutex);
      while (finished < clients) {
        progress.update(finished);
        finished_changed.wait_for(lock, fedstat::tools::kProgressInterval);
      }
    }
    threads.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // Stage by stage: the outcomes, the devices whose input the server summed — those that
    // completed, and (dist) those that sent their masked input and then dropped before revealing
    // — and, with a seed, their aggregate and its estimate recomputed in process.
    json stage_results = json::array();
    TaskPlan stage_plan = plan;
    json previous_expected;
    uint64_t completed_bytes = 0;
    uint32_t completed_last = 0;
    for (uint32_t k = 0; k < stages; ++k) {
      if (k > 0) {
        if (previous_expected.is_null()) break;  // no stage-1 recomputation to plan stage 2 from
        stage_plan = plan.next_stage(previous_expected.dump(), 0);
      }
      const uint32_t id = stage_plan.task.task_id;
      std::map<std::string, uint32_t> outcomes;
      std::vector<std::pair<uint32_t, uint32_t>> contributors;  // (device, task index)
      for (uint32_t i = 0; i < clients; ++i) {
        const DeviceReport& r = reports[i];
        const DeviceTaskReport* t = nullptr;
        for (const DeviceTaskReport& task : r.tasks) {
          if (task.task_id == id) t = &task;
        }
        if (t == nullptr) {
          // Never offered this task: its outcome is the device's last word (error, no-task).
          ++outcomes[r.tasks.size() > k ? r.tasks[k].outcome : r.outcome];
          continue;
        }
        ++outcomes[t->outcome];
        const bool summed = t->outcome == "completed" || t->outcome == "external" ||
                            (t->outcome == "dropped" && (drop_names[i][t->index] == "reveals" ||
                                                         drop_names[i][t->index] == "consistency"));
        if (summed) contributors.emplace_back(i, t->index);
      }
      const uint32_t completed = outcomes.count("completed") ? outcomes.at("completed") : 0;
      json stage{{"task", id}, {"outcomes", outcomes}, {"contributors", contributors.size()}};
      previous_expected = json();
      if (seed != 0 && completed > 0) {
        const std::vector<uint64_t> sum =
            sum_contributions(stage_plan.task, stage_plan.data, contributors, data, setups, seed);
        previous_expected = stage_plan.estimate(sum, static_cast<uint32_t>(contributors.size()));
        stage["expected"] = previous_expected;
      }
      stage_results.push_back(stage);
      completed_last = completed;
    }
    for (uint32_t i = 0; i < clients; ++i) {
      if (reports[i].outcome == "completed") completed_bytes += reports[i].frame_bytes_sent;
    }
    json devices = json::array();
    double epsilon_spent_max = 0;
    for (uint32_t i = 0; i < clients; ++i) {
      const DeviceReport& r = reports[i];
      epsilon_spent_max = std::max(epsilon_spent_max, r.epsilon_spent);
      json device{{"id", r.id},
                  {"outcome", r.outcome},
                  {"drop_before", drop_names[i][0]},
                  {"frame_bytes", r.frame_bytes_sent},
                  {"sessions", r.sessions},
                  {"reconnects", r.reconnects},
                  {"epsilon_spent", r.epsilon_spent},
                  {"detail", r.detail}};
      if (i < external && seed != 0 && plan.task.trust == fedstat_v1_TrustModel_NONE) {
        // What this device's report must be, word for word: its stored Report chunks can be
        // checked against it. Trust none only: under any other model a hash of one device's
        // contribution (small, low-entropy) would undo what the model protects.
        device["contribution_sha256"] = sum_digest(
            expected_contribution(plan.task, plan.data, *data[i], seed, setups[i].id, 0));
      }
      if (stages > 1) {
        json tasks = json::array();
        for (const DeviceTaskReport& t : r.tasks) {
          tasks.push_back({{"task", t.task_id},
                           {"outcome", t.outcome},
                           {"drop_before", drop_names[i][t.index]},
                           {"detail", t.detail}});
        }
        device["tasks"] = tasks;
      }
      devices.push_back(device);
    }
    json out{{"task", plan.task.task_id},
             {"clients", clients},
             {"bytes_per_completed_device",
              completed_last ? static_cast<double>(completed_bytes) / completed_last : 0.0},
             {"epsilon_spent_max", epsilon_spent_max},
             {"client_memory_bytes", client_memory(plan.task, *data[0])},
             {"seconds", seconds}};
    if (stages > 1) {
      out["stages"] = stage_results;
    } else {
      out["outcomes"] = stage_results[0]["outcomes"];
      out["contributors"] = stage_results[0]["contributors"];
      if (stage_results[0].contains("expected")) out["expected"] = stage_results[0]["expected"];
    }
    if (plan.exact) {
      out["exact"] = plan.exact(data_dir);
    } else if (plan.task.kind == fedstat_v1_TaskKind_MODEL_UPDATE) {
      // The truth for a model: the same round without noise or dropouts — every device's
      // contribution built for the task with trust none, summed, through the same estimator.
      fedstat_v1_Task clear = plan.task;
      clear.trust = fedstat_v1_TrustModel_NONE;
      clear.device_noise_lambda = 0;
      clear.epsilon = 0;
      clear.delta = 0;
      std::vector<std::pair<uint32_t, uint32_t>> everyone;
      for (uint32_t i = 0; i < clients; ++i) everyone.emplace_back(i, 0);
      const json noiseless = plan.estimate(
          sum_contributions(clear, plan.data, everyone, data, setups, seed ? seed : 1), clients);
      if (noiseless.contains("estimate")) out["exact"] = noiseless["estimate"];
    }
    out["devices"] = devices;
    // Devices that declined under their task policy say so on stderr too: a fleet that forgot
    // --accept-trust none for a trust "none" task is told, not left to read the JSON.
    for (const json& stage : stage_results) {
      if (!stage["outcomes"].contains("declined-policy")) continue;
      std::fprintf(stderr,
                   "fedstat-sim: task %s: %s devices declined it under their task policy "
                   "(trust \"%s\" with --accept-trust %s; sdk/client/task_policy.h)\n",
                   stage["task"].dump().c_str(),
                   stage["outcomes"]["declined-policy"].dump().c_str(), trust_name(plan.task.trust),
                   accept_trust.c_str());
    }
    // Did every device do what it was asked? Each stage's devices that neither completed nor
    // dropped out where they were told to, grouped by what happened (fleet_shortfall.h).
    std::vector<uint32_t> task_ids{plan.task.task_id};
    if (stages > 1) task_ids.push_back(plan.next_task_id);
    std::vector<std::vector<bool>> told_to_drop(clients);
    for (uint32_t i = 0; i < clients; ++i) {
      for (const std::string& name : drop_names[i]) told_to_drop[i].push_back(!name.empty());
    }
    const std::vector<std::string> shortfall = fleet_shortfall(reports, task_ids, told_to_drop);
    out["shortfall"] = shortfall;
    if (json_output) {
      std::cout << out.dump() << "\n";
    } else {
      std::cout << clients << " devices in " << seconds << " s\n";
      for (const json& stage : stage_results) {
        std::cout << "task " << stage["task"] << ":";
        for (const auto& [name, count] : stage["outcomes"].items()) {
          std::cout << " " << name << " " << count;
        }
        std::cout << "\n";
        if (stage.contains("expected")) {
          std::cout << "in-process: " << stage["expected"].dump() << "\n";
        }
      }
    }
    for (const std::string& line : shortfall) {
      std::fprintf(stderr, "fedstat-sim: %s\n", line.c_str());
    }
    return shortfall.empty() ? 0 : 1;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fedstat-sim: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fedstat-sim: %s\n", e.what());
    return 1;
  }
}
