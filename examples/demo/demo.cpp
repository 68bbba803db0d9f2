// fedstat-demo: one pass through the SDK on the host, printing what each stage did.
//
//   1. seeds the CSPRNG from the platform's entropy and draws a secret;
//   2. derives public, task-wide randomness from a task seed (same seed => same numbers anywhere);
//   3. hashes item ids into buckets with the seeded item hash;
//   4. counts simulated observations in a table carved from a fixed buffer by an Arena, and shows
//      the clear error when the buffer is too small;
//   5. calibrates Skellam noise for a target (ε, δ) and adds exact noise to the counts;
//   6. persists the table as an integrity-checked blob, reloads it, and shows corruption caught;
//   7. charges the privacy-budget ledger until it refuses a report;
//   8. sends a ClientHello Envelope over TCP (loopback) as a delimited nanopb frame to a peer
//      that decodes it and answers;
//   9. runs a secure-aggregation session (8 clients, 3 dropouts) through encoded messages;
//  10. estimates D_TV of two distributions from 10 clients' 48 KiB data-shift sketches each
//      (trust none), and from the same clients under trust dist (ε = 3: 48 KiB hashed histograms
//      with distributed discrete-Laplace noise, summed through secure aggregation), with errors;
//  11. estimates D_KL with PRIEST-KLD in the Dist model, and private dispersion and I².
// Usage: fedstat-demo [--seed N] [--storage-dir DIR] [--json]   (--help: examples, exit codes)
// --json prints one object instead of the narrative: {"version", "seed", "narrative": [lines],
// "results": {"secagg", "data_shift", "kl", "heterogeneity", "ledger"}}.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/dist_shift.h"
#include "host_server/estimate/hashed_tv.h"
#include "host_server/estimate/heterogeneity.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/kl_estimator.h"
#include "host_server/estimate/tv_estimator.h"
#include "host_server/secagg/secagg_simulation.h"
#include "host_server/tools/cli_conventions.h"
#include "nlohmann/json.hpp"
#include "platform/platform.h"
#include "platform/posix/posix_platform.h"
#include "sdk/base/arena.h"
#include "sdk/base/csprng.h"
#include "sdk/base/item_hash.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/noise/add_noise.h"
#include "sdk/privacy/accountants.h"
#include "sdk/privacy/budget_ledger.h"
#include "sdk/sketch/sketch_budget.h"
#include "sdk/version.h"
#include "sdk/wire/envelope_codec.h"

using namespace fedstat;  // NOLINT: a short demo

namespace {

// The narrative goes to stdout, or with --json into narrative_text for the "narrative" array;
// the numbers a program would want go into results.
bool json_output = false;
std::string narrative_text;
nlohmann::json results = nlohmann::json::object();

void say(const char* format, ...) __attribute__((format(printf, 1, 2)));
void say(const char* format, ...) {
  char line[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  if (json_output) {
    narrative_text += line;
  } else {
    std::fputs(line, stdout);
  }
}

int fail(const char* step, const Status& status) {
  std::fprintf(stderr, "demo: %s failed: [%s] %s\n", step, status_code_name(status.code()),
               status.message());
  return 1;
}

// A loopback peer that reads one frame, checks it, and answers with a ServerError frame that
// echoes the client id (the real server is fedstat-server's issue).
struct LoopbackPeer {
  int listen_fd = -1;
  uint16_t port = 0;
  std::thread thread;
  std::string report;

  bool start() {
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (listen_fd < 0 || bind(listen_fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        listen(listen_fd, 1) != 0 ||
        getsockname(listen_fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
      return false;
    }
    port = ntohs(address.sin_port);
    thread = std::thread([this] { serve(); });
    return true;
  }

  void serve() {
    const int fd = accept(listen_fd, nullptr, nullptr);
    uint8_t buffer[wire::kMaxFrameBytes];
    size_t have = 0;
    wire::Envelope in{};
    for (;;) {
      const ssize_t n = recv(fd, buffer + have, sizeof(buffer) - have, 0);
      if (n <= 0) break;
      have += static_cast<size_t>(n);
      auto frame = wire::decode_frame(ByteSpan(buffer, have), in);
      if (!frame.ok()) {
        report = std::string("peer rejected the frame: ") + frame.status().message();
        break;
      }
      if (!frame->complete) continue;
      char text[160];
      std::snprintf(
          text, sizeof(text),
          "peer decoded a %zu-byte frame: ClientHello{client_id=%" PRIu64 ", sdk_version=\"%s\"}",
          frame->consumed, in.body.client_hello.client_id, in.body.client_hello.sdk_version);
      report = text;
      wire::Envelope answer = wire::make_envelope();
      answer.which_body = fedstat_v1_Envelope_server_error_tag;
      answer.body.server_error.status_code = static_cast<uint32_t>(StatusCode::kUnimplemented);
      std::snprintf(answer.body.server_error.detail, sizeof(answer.body.server_error.detail),
                    "hello %" PRIu64 ": reports are not accepted yet",
                    in.body.client_hello.client_id);
      uint8_t out[wire::kMaxFrameBytes];
      auto size = wire::encode_frame(answer, MutableByteSpan(out));
      if (size.ok()) send(fd, out, size.value(), 0);
      break;
    }
    close(fd);
  }

  void stop() {
    if (thread.joinable()) thread.join();
    if (listen_fd >= 0) close(listen_fd);
  }
};

// Steps 9–11: the analytics built on those stages, with emulated clients on this machine.
int analytics_steps(uint64_t seed) {
  using namespace fedstat::host;  // NOLINT: a demo
  try {
    // 9. Secure aggregation: 8 clients, threshold 5, one dropout before each of rounds 1–3.
    SecAggSimConfig secagg;
    secagg.clients = 8;
    secagg.threshold = 5;
    secagg.length = 256;
    secagg.drop_before_sharing = secagg.drop_before_masking = secagg.drop_before_unmasking = 1;
    secagg.seed = seed;
    const SecAggSimResult r = run_secagg_simulation(secagg);
    say("9. secure aggregation (Bonawitz et al.): 8 clients, t = 5, 3 dropouts: %s; the "
        "sum of the %u inputs the server received, %.0f bytes sent per client\n",
        r.ok ? "exact" : "WRONG", r.survivors, r.bytes_per_client);
    if (!r.ok) return fail("secure aggregation", Status(StatusCode::kInternal, "wrong sum"));
    results["secagg"] = {
        {"exact", r.ok}, {"survivors", r.survivors}, {"bytes_per_client", r.bytes_per_client}};

    // 10. Data shift: two Zipf-like distributions over 20,000 items, 10 clients each, 48 KiB.
    ItemCounts p, q;
    for (uint32_t i = 1; i <= 20000; ++i) {
      p.items.push_back({i, 1 + 200000 / i});
      q.items.push_back({i, 1 + static_cast<uint64_t>(150000 / std::pow(i, 1.15))});
    }
    for (const auto& i : p.items) p.total += i.count;
    for (const auto& i : q.items) q.total += i.count;
    const double exact = exact_tv(p, q);
    const auto params = sketch::params_for_budget(49152, seed_from_u64(seed)).value();
    SeededBits split(seed, 11);
    // The devices' noise (and every release's) comes from the CSPRNG: a seed anyone knows would
    // let them recompute it.
    NoiseBits noise = NoiseBits::csprng();
    auto merged = [&](const ItemCounts& data) {
      const auto reports =
          sketch_clients(split_across_clients(data, 10, split.bits()), params, 0, noise);
      return merge_reports(parse_reports(reports));
    };
    const TvEstimate tv = estimate_tv(merged(p), merged(q), TvOptions{});
    say("10. data shift, trust none: 10 clients per distribution, %zu-byte sketches: D_TV top-k "
        "%.4f (error %+.4f), HH %.4f, exact %.4f\n",
        sketch::shift_sketch_memory_bytes(params), tv.topk, tv.topk - exact, tv.hh, exact);
    // The same fleets under trust dist (issue 41): each client's counts in 12,288 public buckets
    // (48 KiB of 32-bit words) plus its share of one discrete Laplace(1/3) per bucket (the SDK's
    // client::build_data_shift_dist), summed through secure aggregation: ε = 3 per event.
    DistShiftConfig dist;
    dist.buckets = 49152 / 4;
    dist.max_clients = 10;
    dist.shares = 10;
    dist.noise_scale = dist_shift_noise_scale(3, 0);
    auto dist_sum = [&](const ItemCounts& data) {
      return signed_sum(dist_shift_fleet_sum(split_across_clients(data, 10, split.bits()),
                                             seed_from_u64(seed), dist, noise, /*secure=*/true),
                        dist.bits);
    };
    const HashedTvEstimate hashed = estimate_hashed_tv(dist_sum(p), dist_sum(q), dist.noise_scale);
    say("    trust dist, epsilon 3 per event: %u buckets of 32 bits per client, summed through "
        "secure aggregation: D_TV %.4f (error %+.4f)\n",
        dist.buckets, hashed.tv, hashed.tv - exact);
    results["data_shift"] = {
        {"topk", tv.topk},
        {"hh", tv.hh},
        {"exact", exact},
        {"sketch_bytes", sketch::shift_sketch_memory_bytes(params)},
        {"none", {{"trust", "none"}, {"tv", tv.topk}, {"error", tv.topk - exact}}},
        {"dist",
         {{"trust", "dist"},
          {"epsilon", 3},
          {"tv", hashed.tv},
          {"error", hashed.tv - exact},
          {"buckets", dist.buckets},
          {"bytes", dist.buckets * 4}}}};

    // 11. PRIEST-KLD (Dist: clients add Skellam shares) and heterogeneity (analytic Gaussian).
    ItemCounts pi;
    for (uint32_t i = 1; i <= 200; ++i) pi.items.push_back({i, 1 + 5000 / i});
    for (const auto& i : pi.items) pi.total += i.count;
    ItemCounts data;
    for (uint32_t i = 1; i <= 200; ++i) data.items.push_back({i, 1 + 40000 / (i + 3)});
    for (const auto& i : data.items) data.total += i.count;
    SeededBits kl_bits(seed, 12);
    const EmulatedClients clients = split_across_clients(data, 20, kl_bits.bits());
    KlOptions kl;
    kl.model = KlModel::kDist;
    kl.epsilon = 2;
    const KlPlan plan = plan_kl(pi, 500, 20, 1, kl_bits.bits());
    const KlEstimate k =
        estimate_kl(plan, collect_kl_sums(plan, clients, kl, noise), kl, noise.stream(0));
    const double kl_exact = exact_kl(pi, data).divergence;
    say("11. PRIEST-KLD, Dist model (eps 2, 20 clients, T 500): %.4f, exact %.4f\n", k.estimate,
        kl_exact);
    results["kl"] = {{"estimate", k.estimate}, {"exact", kl_exact}, {"epsilon", 2}};
    ClientVectors vectors;
    for (int i = 0; i < 200; ++i) {
      std::vector<double> x(5);
      double sum = 0;
      for (int j = 0; j < 5; ++j)
        sum += (x[j] = 1.0 + ((i * 7 + j * 13) % 11) * (j == i % 5 ? 3 : 1));
      for (double& v : x) v /= sum;
      vectors.push_back(x);
    }
    HeterogeneityOptions h;
    h.epsilon = 1;
    h.delta = 1e-5;
    const HeterogeneityEstimate he = estimate_heterogeneity(vectors, h, noise.stream(0));
    const HeterogeneityExact hx = exact_heterogeneity(vectors, h.config);  // the demo holds all
    say("    heterogeneity (agm, eps 1): dispersion %.4f (exact %.4f), I^2 %.3f (exact "
        "%.3f)\n",
        he.dispersion.estimate, hx.dispersion, he.i2.estimate, hx.i2);
    results["heterogeneity"] = {{"dispersion", he.dispersion.estimate},
                                {"dispersion_exact", hx.dispersion},
                                {"i2", he.i2.estimate},
                                {"i2_exact", hx.i2},
                                {"epsilon", 1}};
  } catch (const std::exception& e) {
    std::fprintf(stderr, "demo: an analytics step failed: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t task_seed_number = 2026;
  std::string storage_dir;
  CLI::App app{"fedstat-demo: one pass through the SDK on the host, printing what each stage did"};
  fedstat::tools::apply_conventions(
      app, "fedstat-demo",
      {"fedstat-demo", "fedstat-demo --seed 7 --json",
       "fedstat-demo --storage-dir /tmp/demo-state   keep the persisted blobs there"},
      {{1, "a stage failed (which one, and its status, is on stderr)"}});
  app.add_option("--seed", task_seed_number, "the task seed (public, task-wide randomness)")
      ->capture_default_str();
  app.add_option("--storage-dir", storage_dir,
                 "where the demo persists its blobs (default: a "
                 "temporary directory, removed at the end)");
  app.add_flag("--json", json_output, "print one JSON object instead of the narrative");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;
  say("fedstat %s demo (wire protocol %u)\n\n", FEDSTAT_VERSION_STRING, wire::kProtocolVersion);

  // 1. Secret randomness.
  Csprng csprng;
  if (Status s = csprng.init(); !s.ok()) return fail("seeding the CSPRNG", s);
  uint8_t secret[8];
  if (Status s = csprng.fill(MutableByteSpan(secret)); !s.ok()) return fail("CSPRNG draw", s);
  say("1. CSPRNG (CTR_DRBG, seeded from getrandom): secret draw %02x%02x%02x%02x... "
      "(different every run)\n",
      secret[0], secret[1], secret[2], secret[3]);

  // 2. Public, task-derived randomness.
  Seed256 task_seed;
  for (int i = 0; i < 8; ++i)
    task_seed.bytes[i] = static_cast<uint8_t>(task_seed_number >> (8 * i));
  SeededStream task_stream(task_seed, /*stream_id=*/0);
  auto query_point = task_stream.uniform_below(1000000);
  auto hash_key0 = task_stream.next_u64();
  auto hash_key1 = task_stream.next_u64();
  if (!query_point.ok() || !hash_key0.ok() || !hash_key1.ok()) {
    return fail("task stream", query_point.status());
  }
  say("2. task seed %" PRIu64 " -> query point %" PRIu64 ", hash key %016" PRIx64 "%016" PRIx64
      " (same on every device)\n",
      task_seed_number, query_point.value(), hash_key0.value(), hash_key1.value());

  // 3. Item hashing.
  const ItemHasher hasher(hash_key0.value(), hash_key1.value());
  constexpr uint32_t kBuckets = 16;
  say("3. item hash buckets (of %u):", kBuckets);
  for (uint64_t item : {3u, 14u, 15u, 92u, 65u}) {
    say(" %" PRIu64 "->%" PRIu64, item, hasher.hash_id(item) % kBuckets);
  }
  say("\n");

  // 4. Counting in caller memory.
  alignas(8) static uint8_t device_memory[256];
  Arena arena{MutableByteSpan(device_memory)};
  auto table = arena.allocate_array<uint32_t>(kBuckets);
  if (!table.ok()) return fail("arena allocation", table.status());
  SeededStream events(task_seed, /*stream_id=*/1);
  constexpr int kEvents = 10000;
  for (int i = 0; i < kEvents; ++i) {
    auto item = events.uniform_below(1000);
    if (!item.ok()) return fail("event stream", item.status());
    ++table.value()[hasher.hash_id(item.value()) % kBuckets];
  }
  say("4. counted %d simulated events into %u buckets in a %zu-byte arena (used %zu):", kEvents,
      kBuckets, arena.capacity(), arena.used());
  for (uint32_t c : table.value()) say(" %u", c);
  say("\n");
  auto too_big = arena.allocate_array<uint32_t>(1000);
  say("   asking the same arena for 1000 more counters: [%s] %s\n",
      status_code_name(too_big.status().code()), too_big.status().message());

  // 5. Privacy: calibrate Skellam noise for a target (ε, δ), noise the counts exactly, charge the
  //    device's budget ledger (which refuses once the budget is spent).
  const double target_epsilon = 1.0, target_delta = 1e-6;
  constexpr uint32_t kClients = 100;
  auto lambda =
      privacy::skellam_lambda(target_epsilon, target_delta, privacy::Sensitivity{1, 1}, kClients);
  if (!lambda.ok()) return fail("skellam_lambda", lambda.status());
  auto lambda_at_least = noise::rational_at_least(lambda.value());  // never rounded down
  if (!lambda_at_least.ok()) return fail("lambda as a rational", lambda_at_least.status());
  const noise::Rational lambda_rational = lambda_at_least.value();
  noise::NoiseSampler skellam;
  if (Status s = skellam.init(noise::NoiseSpec{noise::NoiseKind::kSkellam, lambda_rational, 1});
      !s.ok()) {
    return fail("Skellam sampler", s);
  }
  RandomBits noise_bits(csprng);  // privacy noise comes from the CSPRNG, never a public seed
  uint32_t noised[kBuckets];
  if (Status s = noise::add_noise_mod(Span<const uint32_t>(table.value()), Span<uint32_t>(noised),
                                      32, skellam, noise_bits);
      !s.ok()) {
    return fail("add_noise_mod", s);
  }
  say("5. per-client Skellam lambda %.3f: this device's share of the noise; the secure sum of "
      "%u clients carries Sk(%.1f), which gives (eps %.2f, delta %.0e) for counts "
      "(L1 = L2 = 1). Noised counts mod 2^32:",
      lambda_rational.to_double(), kClients, lambda_rational.to_double() * kClients, target_epsilon,
      target_delta);
  for (uint32_t c : noised) say(" %d", static_cast<int32_t>(c));
  say("\n");

  // 6. Persistence.
  char temp_dir[] = "/tmp/fedstat-demo-XXXXXX";
  if (storage_dir.empty()) {
    if (mkdtemp(temp_dir) == nullptr) return fail("mkdtemp", unavailable("no temp dir"));
    storage_dir = temp_dir;
  }
  if (Status s = platform::posix::set_storage_directory(storage_dir.c_str()); !s.ok()) {
    return fail("storage directory", s);
  }
  const ByteSpan table_bytes = as_bytes(Span<const uint32_t>(table.value()));
  if (Status s = platform::save_blob("demo-table", table_bytes); !s.ok()) {
    return fail("save_blob", s);
  }
  uint32_t reloaded[kBuckets] = {};
  auto loaded = platform::load_blob("demo-table", as_writable_bytes(Span<uint32_t>(reloaded)));
  if (!loaded.ok()) return fail("load_blob", loaded.status());
  const bool same = std::memcmp(reloaded, table.value().data(), sizeof(reloaded)) == 0;
  say("6. saved the table to %s/demo-table (%zu payload bytes), reloaded: %s\n",
      storage_dir.c_str(), loaded.value(), same ? "identical" : "DIFFERENT");
  if (!same) return 1;
  const std::string path = storage_dir + "/demo-table";
  if (FILE* f = std::fopen(path.c_str(), "r+b")) {
    std::fseek(f, 20, SEEK_SET);
    std::fputc(0x5A, f);
    std::fclose(f);
  }
  loaded = platform::load_blob("demo-table", as_writable_bytes(Span<uint32_t>(reloaded)));
  say("   after flipping one stored byte, reloading says: [%s] %s\n",
      status_code_name(loaded.status().code()), loaded.status().message());
  if (loaded.ok()) return 1;
  (void)platform::remove_blob("demo-table").ok();

  // 7. The privacy-budget ledger, persisted next to the table: two reports of ε = 0.4 fit a
  //    budget of 1.0, a third is refused, and nothing changes when it is.
  {
    static privacy::PrivacySpend entries[8];
    static uint8_t scratch[privacy::BudgetLedger::blob_bytes(8)];
    privacy::BudgetLedger ledger;
    privacy::LedgerConfig config;
    config.epsilon_budget = 1.0;
    config.delta_budget = 1e-5;
    config.blob_name = "demo-ledger";
    if (Status s =
            ledger.init(config, Span<privacy::PrivacySpend>(entries), MutableByteSpan(scratch));
        !s.ok()) {
      return fail("ledger init", s);
    }
    if (Status s = ledger.load(); !s.ok()) return fail("ledger load", s);
    privacy::PrivacySpend report;
    report.epsilon = 0.4;
    report.delta = 1e-6;
    const uint64_t now = 1795300000;  // wall-clock seconds from the app (an RTC, the network)
    say("7. privacy ledger (budget eps 1.0 per 30 days):");
    for (uint32_t task = 1; task <= 3; ++task) {
      report.task_id = task;
      const Status s = ledger.charge(report, now + task);
      say(" report %u eps 0.4 -> %s;", task, s.ok() ? "charged" : status_code_name(s.code()));
      results["ledger"]["reports"].push_back(s.ok() ? "charged" : status_code_name(s.code()));
    }
    say(" spent eps %.2f\n", ledger.spent(now + 3).value().epsilon);
    (void)platform::remove_blob("demo-ledger").ok();
  }
  if (storage_dir == temp_dir) rmdir(temp_dir);

  // 8. The wire.
  LoopbackPeer peer;
  if (!peer.start()) return fail("loopback peer", unavailable("cannot listen on 127.0.0.1"));
  const std::string endpoint = "127.0.0.1:" + std::to_string(peer.port);
  auto connection = platform::transport_connect(endpoint.c_str(), 2000);
  if (!connection.ok()) {
    peer.stop();
    return fail("connect", connection.status());
  }
  wire::Envelope hello = wire::make_envelope();
  hello.which_body = fedstat_v1_Envelope_client_hello_tag;
  hello.body.client_hello.client_id = task_seed_number;
  std::strncpy(hello.body.client_hello.sdk_version, FEDSTAT_VERSION_STRING,
               sizeof(hello.body.client_hello.sdk_version) - 1);
  uint8_t frame[wire::kMaxFrameBytes];
  auto frame_size = wire::encode_frame(hello, MutableByteSpan(frame));
  if (!frame_size.ok()) return fail("encode", frame_size.status());
  if (Status s = platform::transport_send(connection.value(), ByteSpan(frame, frame_size.value()));
      !s.ok()) {
    return fail("send", s);
  }
  uint8_t answer_bytes[wire::kMaxFrameBytes];
  size_t have = 0;
  wire::Envelope answer{};
  bool answered = false;
  while (!answered) {
    auto n = platform::transport_receive(connection.value(),
                                         MutableByteSpan(answer_bytes).subspan(have), 5000);
    if (!n.ok()) return fail("receive", n.status());
    have += n.value();
    auto r = wire::decode_frame(ByteSpan(answer_bytes, have), answer);
    if (!r.ok()) return fail("decode answer", r.status());
    answered = r->complete;
  }
  platform::transport_close(connection.value());
  peer.stop();
  say("8. sent a %zu-byte ClientHello frame over TCP; %s\n", frame_size.value(),
      peer.report.c_str());
  say("   the peer answered: ServerError{%s, \"%s\"}\n",
      status_code_name(static_cast<StatusCode>(answer.body.server_error.status_code)),
      answer.body.server_error.detail);
  if (int rc = analytics_steps(task_seed_number); rc != 0) return rc;
  say("\ndemo finished: every stage ran\n");
  if (json_output) {
    nlohmann::json narrative = nlohmann::json::array();
    size_t begin = 0;
    while (begin < narrative_text.size()) {
      size_t end = narrative_text.find('\n', begin);
      if (end == std::string::npos) end = narrative_text.size();
      if (end > begin) narrative.push_back(narrative_text.substr(begin, end - begin));
      begin = end + 1;
    }
    const nlohmann::json out{{"version", FEDSTAT_VERSION_STRING},
                             {"seed", task_seed_number},
                             {"narrative", narrative},
                             {"results", results}};
    std::printf("%s\n", out.dump().c_str());
  }
  return 0;
}
