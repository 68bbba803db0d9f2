// The server's ingest rate with 10, 100 and 1,000 concurrent devices, as a ratio against its floor
// measured in the same run: decoding the same reports' frames and inserting them into SQLite in
// one process.
//
//   BM_ServerIngest/<kind>/<devices>  a real fedstat-server (the built binary, a child process,
//       its SQLite store in WAL mode as deployed) and <devices> emulated devices — each a real
//       Client (sdk/client) over real TLS-PSK on loopback, one thread each — take part in one
//       task: check-in, Task + TaskData, TaskReply, the report in Report chunks of 64 words each
//       stored before its Ack, the RoundOutcome. Timed: from the devices' start until every
//       device holds its RoundOutcome (server start-up and shut-down are not timed). Any device
//       that did not complete fails the run.
//   BM_ServerIngest/<kind>/<devices>/1  the same with a returning fleet: before the timed round
//       each device has made one TLS connection to this server (a handshake, then close; not
//       timed), so that its check-in resumes that TLS session (an abbreviated handshake, no
//       X25519 on either side: host_server/net/tls_session_cache.h) — as a device does that
//       reports again within the server's session lifetime (1 h by default). /0: every device
//       new to the server, a full ECDHE-PSK handshake each. The run fails if a returning device
//       did not resume, or a new one did. Counters: the server's CPU time a report in the timed
//       part (its process CPU clock: all its threads) and this process's (the devices:
//       Client, TLS, thread start; getrusage) — where the cores went. On c cores a rate of r
//       reports/s leaves at most c / r CPU seconds a report to both together, so the devices'
//       share alone bounds the rate a loopback fleet can show.
//   BM_ServerIngest/<kind>/<devices>/<returning>/<window>  the devices'
//   ClientConfig::report_window:
//       1 (stop-and-wait, the default, what a UART needs) or 8 (what a device on TCP would set:
//       client.h), the Report chunks a device sends before it waits for an Ack.
//   BM_DecodeAndInsert/<kind>/<devices>/0  the same devices' reports (the same words, chunked
//       and framed as the Client sends them, encoded before timing), each frame decoded
//       (wire::decode_frame), checked and summed (TrustedSum, as the server does) and appended to
//       a fresh SQLite store (open_sqlite_store, the server's durability) in one transaction per
//       message — each message durable before its Ack could be sent, as the server's contract
//       asks. Counted in elapsed time, as the server's rate (SQLite's fsyncs count).
//   BM_DecodeAndInsert/<kind>/<devices>/1  the same with one transaction per report: a floor
//       for a server that commits a report's chunks together. The server commits the messages
//       that arrive while its writer's last commit ran in one transaction
//       (store/write_behind_store.h), so under load it may commit less often than /0 does; the
//       printed ratio is against /0, and against /1 beside it.
//   BM_ReportOverLatency/<window>/<rtt_ms>  two devices' data-shift reports (40 chunks each; a
//       round's least) to a real server through a proxy that delays every byte by rtt/2 each way
//       (delay_proxy.h: a link with that round-trip time), with ClientConfig::report_window =
//       <window>: from the devices' start to their RoundOutcome, a full handshake included. The
//       printed speed-up is window 1's time ÷ this window's at the same round-trip time.
// Kinds: 0 = data_shift, trust none, a 5 × 512 sketch (2,560 words: 40 chunks per report);
//        1 = kl, trust trusted, 300 rounds (≤ 301 words: 5 chunks).
// "reports/s" is devices ÷ seconds. The printed ratio is ingest ÷ decode-and-insert for the same
// kind and devices (goal in issue 13: ≥ 0.5); a second line gives the CPU a report of the server,
// the devices and the floor (its one thread's CPU time). Both sides share the machine's cores with
// the devices' own work in the ingest run (TLS, the Client), as a loopback fleet does. Devices: one
// thread each with a 256 KiB stack (host_server/sim/device_threads.h) and the Client memory its
// task needs (Client::memory_bytes), so 1,000 of them fit; the descriptor limit is raised to one
// socket per device. All 1,000 check in at once (max_clients ≤ 1024). Run from a Release build:
// build/host-release/tests/bench/fedstat_ingest_bench (about 4 minutes;
// --benchmark_filter=/1000 for the largest fleet only).
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/hex.h"
#include "host_server/net/credentials.h"
#include "host_server/rounds/trusted_sum.h"
#include "host_server/sim/device_threads.h"
#include "host_server/sim/emulated_device.h"
#include "host_server/store/sqlite_store.h"
#include "host_server/tasks/task_plan.h"
#include "nlohmann/json.hpp"
#include "platform/posix/posix_platform.h"
#include "sdk/client/client.h"
#include "sdk/tls/tls_channel.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/bench/delay_proxy.h"
#include "tests/bench/same_run_reporter.h"
#include "tests/common/server_process.h"

namespace fedstat {
namespace {

using host::EmulatedClients;
using nlohmann::json;
namespace fs = std::filesystem;

constexpr uint64_t kDeviceSeed = 17;
constexpr uint8_t kSecretByte = 0x5a;

const char* kind_name(int64_t kind) {
  return kind == 0 ? "data_shift none" : "kl trusted";
}

// The task declaration of `kind` for `devices` devices (min = max: the round closes when all
// have reported).
json declaration(int64_t kind, int64_t devices) {
  json task{{"id", 1},
            {"min_clients", devices},
            {"max_clients", devices},
            {"deadline_seconds", 3600},
            {"admission_seconds", 600},
            {"phase_timeout_seconds", 600},
            {"seed", std::string(62, '0') + "31"}};
  if (kind == 0) {
    task.update({{"kind", "data_shift"}, {"trust", "none"}, {"epsilon", 0}, {"delta", 0}});
    task["data_shift"] = {
        {"rows", 5},     {"width", 512},       {"heap_capacity", 64},         {"k", 1024},
        {"domain", 600}, {"local_epsilon", 0}, {"reference", "reference.txt"}};
  } else {
    task.update({{"kind", "kl"}, {"trust", "trusted"}, {"epsilon", 4.0}, {"delta", 1e-6}});
    task["kl"] = {{"reference", "reference.txt"}, {"rounds", 300}, {"lambda", 0.1}};
  }
  return task;
}

// One measurement's files: the data (a Zipf law over 300 items shifted by 15 ids), the
// reference (320 items), the task and the server's config, in a fresh directory.
struct Workload {
  fs::path dir;
  json task;
  host::TaskPlan plan;
  EmulatedClients devices;
  std::array<uint8_t, 32> secret;
  size_t client_memory = 0;  // the most any device's Client needs

  Workload(int64_t kind, int64_t count) {
    char pattern[] = "/tmp/fedstat-ingest-XXXXXX";
    if (mkdtemp(pattern) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = pattern;
    std::ofstream items(dir / "items.txt"), reference(dir / "reference.txt");
    for (int i = 0; i < 300; ++i) items << i + 15 << " " << std::max(1, 100000 / (i + 1)) << "\n";
    for (int i = 0; i < 320; ++i) reference << i << " " << std::max(1, 100000 / (i + 1)) << "\n";
    items.close();
    reference.close();
    task = declaration(kind, count);
    plan = host::plan_task(task, dir.string(), 0, 0);
    host::SeededBits split(kDeviceSeed, 11);
    devices = host::split_across_clients(host::read_item_counts((dir / "items.txt").string()),
                                         static_cast<uint32_t>(count), split.bits());
    secret.fill(kSecretByte);
    for (const auto& device : devices) {
      client_memory = std::max(
          client_memory, host::value_or_throw(client::Client::memory_bytes(
                                                  plan.task, host::local_size(plan.task, *device)),
                                              "the Client's memory"));
    }
  }
  ~Workload() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

// The report frames device `i` sends: its contribution in Report chunks as Client::send_report
// builds them, each encoded as a frame.
std::vector<std::vector<uint8_t>> report_frames(Workload& w, uint32_t i) {
  const std::vector<uint64_t> words =
      host::expected_contribution(w.plan.task, w.plan.data, *w.devices[i], kDeviceSeed, i + 1);
  constexpr size_t kChunk = sizeof(fedstat_v1_Report::words) / sizeof(uint64_t);
  std::vector<std::vector<uint8_t>> frames;
  for (size_t offset = 0; offset < words.size(); offset += kChunk) {
    wire::Envelope e = wire::make_envelope();
    e.which_body = fedstat_v1_Envelope_report_tag;
    e.body.report.task_id = w.plan.task.task_id;
    e.body.report.offset = static_cast<uint32_t>(offset);
    const size_t count = std::min(kChunk, words.size() - offset);
    e.body.report.words_count = static_cast<pb_size_t>(count);
    for (size_t k = 0; k < count; ++k) e.body.report.words[k] = words[offset + k];
    std::vector<uint8_t> frame(wire::kMaxFrameBytes);
    const Result<size_t> n = wire::encode_frame(e, MutableByteSpan(frame.data(), frame.size()));
    if (!n.ok()) throw std::runtime_error(n.status().message());
    frame.resize(n.value());
    frames.push_back(std::move(frame));
  }
  return frames;
}

// The length prefix's size: the one p with varint_bytes(size − p) == p.
size_t prefix_bytes(const std::vector<uint8_t>& frame) {
  for (size_t p = 1; p <= wire::kMaxFramePrefixBytes; ++p) {
    if (wire::varint_bytes(frame.size() - p) == p) return p;
  }
  throw std::runtime_error("not a frame");
}

// Device i of `w` (id i + 1), reporting to `endpoint`.
host::DeviceSetup device_setup(const Workload& w, size_t i, const std::string& endpoint) {
  host::DeviceSetup setup;
  setup.id = i + 1;
  setup.endpoint = endpoint;
  setup.psk = net::derive_device_psk(w.secret, setup.id);
  setup.seed = kDeviceSeed;
  setup.memory_bytes = w.client_memory;
  // Kind 0 is a trust "none" task: its devices opt in to it (sdk/client/task_policy.h).
  setup.accepted_trust = client::kAcceptAll;
  return setup;
}

// Runs one emulated device; an exception is its outcome "error".
host::DeviceReport run_device(const host::DeviceSetup& setup, host::EmulatedClient& data) {
  try {
    return host::run_emulated_device(setup, data);
  } catch (const std::exception& e) {
    host::DeviceReport failed;
    failed.outcome = "error";
    failed.detail = e.what();
    return failed;
  }
}

// The first device that did not complete, described; empty when all did.
std::string first_incomplete(const std::vector<host::DeviceReport>& reports) {
  for (const host::DeviceReport& r : reports) {
    if (r.outcome != "completed") return "a device did not complete: " + r.outcome + " " + r.detail;
  }
  return "";
}

void BM_DecodeAndInsert(benchmark::State& state) {
  Workload w(state.range(0), state.range(1));
  const uint32_t count = static_cast<uint32_t>(state.range(1));
  const bool per_report = state.range(2) != 0;
  std::vector<std::vector<std::vector<uint8_t>>> frames;
  for (uint32_t i = 0; i < count; ++i) frames.push_back(report_frames(w, i));
  int run = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const fs::path path = w.dir / ("floor-" + std::to_string(run++) + ".db");
    std::unique_ptr<host::Store> store = host::open_sqlite_store(path.string());
    store->put_task(w.plan.task.task_id, w.task.dump());
    host::TrustedSum sum(w.plan.task.vector_length, w.plan.task.bits);
    wire::Envelope e;
    state.ResumeTiming();
    std::vector<host::NewEvent> report;
    for (uint32_t i = 0; i < count; ++i) {
      report.clear();
      for (const std::vector<uint8_t>& frame : frames[i]) {
        const Result<wire::FrameResult> r =
            wire::decode_frame(ByteSpan(frame.data(), frame.size()), e);
        if (!r.ok() || !r.value().complete) {
          state.SkipWithError("a frame did not decode");
          return;
        }
        if (sum.check(i + 1, e.body.report)) {
          state.SkipWithError("a chunk was refused");
          return;
        }
        sum.add(i + 1, e.body.report);
        host::NewEvent event;
        event.task_id = w.plan.task.task_id;
        event.client_id = i + 1;
        event.payload.assign(frame.begin() + static_cast<std::ptrdiff_t>(prefix_bytes(frame)),
                             frame.end());  // the Envelope's bytes, as the server stores them
        if (per_report) {
          report.push_back(std::move(event));
        } else {
          store->append_event(event);
        }
      }
      if (per_report) store->append_events(report);
    }
    benchmark::DoNotOptimize(sum.sum().data());
    state.PauseTiming();
    if (sum.contributors() != count) state.SkipWithError("not every report was complete");
    store.reset();
    fs::remove(path);
    state.ResumeTiming();
  }
  state.counters["reports/s"] =
      benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_DecodeAndInsert)
    ->ArgsProduct({{0, 1}, {10, 100, 1000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()  // reports per second of elapsed time, as the server's: SQLite's fsyncs count
    ->Iterations(3);

using testing::ServerProcess;

void BM_ServerIngest(benchmark::State& state) {
  Workload w(state.range(0), state.range(1));
  const bool returning = state.range(2) != 0;
  const uint8_t window = static_cast<uint8_t>(state.range(3));
  testing::raise_descriptor_limit(static_cast<rlim_t>(state.range(1)) + 256);
  const uint32_t count = static_cast<uint32_t>(state.range(1));
  int run = 0;
  double server_cpu_seconds = 0;  // in the timed part of every run
  double device_cpu_seconds = 0;  // the same for this process: the devices
  for (auto _ : state) {
    const fs::path here = w.dir / ("run-" + std::to_string(run++));
    // The devices' ledgers and round markers (fsynced blobs) on tmpfs when there is one: the
    // devices' own disk writes are not the server's ingest.
    const fs::path device_state =
        fs::is_directory("/dev/shm")
            ? fs::path("/dev/shm") / (w.dir.filename().string() + "-" + std::to_string(run))
            : here / "state";
    fs::create_directories(here);
    fs::create_directories(device_state);
    const json config{{"listen", "127.0.0.1:0"},
                      {"store", (here / "server.db").string()},
                      {"fleet_secret", host::encode_hex(w.secret.data(), w.secret.size())},
                      {"idle_timeout_ms", 900000},
                      {"tasks", json::array({w.task})}};
    std::ofstream(w.dir / "server.json") << config.dump();
    ServerProcess server(w.dir / "server.json", here / "port", here / "server.log");
    if (!platform::posix::set_storage_directory(device_state.c_str()).ok()) {
      state.SkipWithError("the devices' state directory");
      return;
    }
    std::vector<host::DeviceReport> reports(count);
    std::vector<std::unique_ptr<tls::TlsPskChannel>> channels(count);
    for (auto& channel : channels) channel = std::make_unique<tls::TlsPskChannel>();
    const std::string endpoint = "127.0.0.1:" + std::to_string(server.port());
    std::vector<std::string> warm_errors(count);
    if (returning) {  // not timed: each device's first connection, which the round resumes
      host::DeviceThreads warm;
      warm.start(count, [&](size_t i) {
        const std::string identity = std::to_string(i + 1);
        const net::DevicePsk psk = net::derive_device_psk(w.secret, i + 1);
        const Status connected = channels[i]->connect(
            endpoint.c_str(),
            ByteSpan(reinterpret_cast<const uint8_t*>(identity.data()), identity.size()),
            ByteSpan(psk.data(), psk.size()), 10000);
        if (!connected.ok()) warm_errors[i] = connected.message();
        channels[i]->close();
      });
      warm.join();
      for (const std::string& error : warm_errors) {
        if (!error.empty()) {
          state.SkipWithError(("a device's first connection failed: " + error).c_str());
          return;
        }
      }
    }
    host::DeviceThreads threads;
    const double server_cpu_at_start = server.cpu_seconds();
    if (server_cpu_at_start < 0) {
      state.SkipWithError("the server's CPU clock cannot be read");
      return;
    }
    const double device_cpu_at_start = testing::own_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    threads.start(count, [&](size_t i) {
      host::DeviceSetup setup = device_setup(w, i, endpoint);
      setup.channel = channels[i].get();
      setup.report_window = window;
      reports[i] = run_device(setup, *w.devices[i]);
    });
    threads.join();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    server_cpu_seconds += server.cpu_seconds() - server_cpu_at_start;
    device_cpu_seconds += testing::own_cpu_seconds() - device_cpu_at_start;
    server.stop();
    fs::remove_all(device_state);
    if (const std::string failed = first_incomplete(reports); !failed.empty()) {
      state.SkipWithError(failed.c_str());
      return;
    }
    for (const host::DeviceReport& r : reports) {
      if (r.resumed != (returning ? r.sessions : 0)) {
        state.SkipWithError(returning ? "a returning device did not resume its TLS session"
                                      : "a new device resumed a TLS session");
        return;
      }
    }
  }
  // CPU time per report in the timed part: the server's (all its threads), and this process's
  // (the devices' threads: the Client, TLS, their thread start).
  const double reports_run = static_cast<double>(state.iterations()) * count;
  state.counters["server_us/report"] = 1e6 * server_cpu_seconds / reports_run;
  state.counters["devices_us/report"] = 1e6 * device_cpu_seconds / reports_run;
  state.counters["reports/s"] =
      benchmark::Counter(static_cast<double>(count), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ServerIngest)
    ->ArgsProduct({{0, 1}, {10, 100, 1000}, {0, 1}, {1, 8}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(3);

void BM_ReportOverLatency(benchmark::State& state) {
  constexpr uint32_t kDevices = 2;  // a round's least
  Workload w(0, kDevices);
  const int rtt_ms = static_cast<int>(state.range(1));
  int run = 0;
  for (auto _ : state) {
    const fs::path here = w.dir / ("latency-" + std::to_string(run++));
    fs::create_directories(here / "state");
    const json config{{"listen", "127.0.0.1:0"},
                      {"store", (here / "server.db").string()},
                      {"fleet_secret", host::encode_hex(w.secret.data(), w.secret.size())},
                      {"tasks", json::array({w.task})}};
    std::ofstream(w.dir / "server.json") << config.dump();  // beside reference.txt
    ServerProcess server(w.dir / "server.json", here / "port", here / "server.log");
    bench::DelayProxy link(server.port(), rtt_ms / 2);
    if (!platform::posix::set_storage_directory((here / "state").c_str()).ok()) {
      state.SkipWithError("the devices' state directory");
      return;
    }
    std::vector<host::DeviceReport> reports(kDevices);
    host::DeviceThreads threads;
    const auto start = std::chrono::steady_clock::now();
    threads.start(kDevices, [&](size_t i) {
      host::DeviceSetup setup = device_setup(w, i, "127.0.0.1:" + std::to_string(link.port()));
      setup.report_window = static_cast<uint8_t>(state.range(0));
      reports[i] = run_device(setup, *w.devices[i]);
    });
    threads.join();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (const std::string failed = first_incomplete(reports); !failed.empty()) {
      state.SkipWithError(failed.c_str());
      return;
    }
  }
}
BENCHMARK(BM_ReportOverLatency)
    ->ArgsProduct({{1, 8}, {20, 100}})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime()
    ->Iterations(2);

class IngestReporter : public bench::SameRunReporter {
 public:
  IngestReporter()
      : SameRunReporter(
            "Server ingest ÷ decode-and-insert into SQLite (same run, same reports); a report "
            "upload over a delayed link, window 1 ÷ window W:") {}

 protected:
  std::string describe(const Run& run) override {
    const std::string name = run.benchmark_name();
    if (name.rfind("BM_ReportOverLatency", 0) == 0 && !run.error_occurred) {
      // "BM_ReportOverLatency/<window>/<rtt>/iterations:2/manual_time"
      const std::string args = bench::argument_of(name);
      const int window = std::stoi(args);
      const std::string rtt =
          args.substr(args.find('/') + 1, args.find('/', args.find('/') + 1) - args.find('/') - 1);
      const double seconds = run.GetAdjustedRealTime() / 1e3;  // the unit is ms
      if (window == 1) upload_[rtt] = seconds;
      if (window == 1 || upload_.count(rtt) == 0) return "";
      char line[200];
      std::snprintf(line, sizeof(line),
                    "  data_shift report over a %3s ms round trip: window 1 %.3f s, window %d "
                    "%.3f s, speed-up %.2f\n",
                    rtt.c_str(), upload_.at(rtt), window, seconds, upload_.at(rtt) / seconds);
      return line;
    }
    const auto rate = run.counters.find("reports/s");
    if (rate == run.counters.end() || run.error_occurred) return "";
    if (run.run_type == Run::RT_Aggregate) return "";  // --benchmark_repetitions: mean, stddev
    // "BM_DecodeAndInsert/<kind>/<devices>/<grouping>/iterations:3/real_time" or
    // "BM_ServerIngest/<kind>/<devices>/<returning>/<window>/iterations:3/manual_time"
    const std::string args = bench::argument_of(name);
    int kind = 0, devices = 0, third = 0, window = 1;
    if (std::sscanf(args.c_str(), "%d/%d/%d/%d", &kind, &devices, &third, &window) < 3) return "";
    const std::string key = std::to_string(kind) + "/" + std::to_string(devices);
    if (name.rfind("BM_DecodeAndInsert", 0) == 0) {
      // /0: one transaction a message, /1: one a report. The floor runs on this thread alone:
      // its CPU time is the benchmark's (unit ms).
      Floor& floor = third == 1 ? floors_[key].per_report : floors_[key].per_message;
      floor.reports_per_second = rate->second.value;
      floor.cpu_us = 1e3 * run.GetAdjustedCPUTime() / static_cast<double>(devices);
    }
    const auto found = floors_.find(key);
    if (name.rfind("BM_ServerIngest", 0) != 0 || found == floors_.end() ||
        found->second.per_message.reports_per_second == 0) {
      return "";
    }
    const Floor& base = found->second.per_message;
    const Floor& per_report = found->second.per_report;
    char against_per_report[80] = "";
    if (per_report.reports_per_second != 0) {
      std::snprintf(against_per_report, sizeof(against_per_report),
                    " (one transaction a report: %.1f, ratio %.3f)", per_report.reports_per_second,
                    rate->second.value / per_report.reports_per_second);
    }
    char line[320];
    std::snprintf(line, sizeof(line),
                  "  %-16s %4d devices, %-9s window %d: server %8.1f reports/s, decode+insert "
                  "%9.1f reports/s, ratio %.3f%s\n",
                  kind_name(kind), devices, third == 1 ? "returning" : "new", window,
                  rate->second.value, base.reports_per_second,
                  rate->second.value / base.reports_per_second, against_per_report);
    // Where the cores went: a rate of r reports/s on c cores needs at most c / r CPU seconds a
    // report, the server's and the devices' together.
    const auto server_cpu = run.counters.find("server_us/report");
    const auto device_cpu = run.counters.find("devices_us/report");
    if (server_cpu == run.counters.end() || device_cpu == run.counters.end()) return line;
    char cpu[320];
    std::snprintf(cpu, sizeof(cpu),
                  "  %-16s %4s %-28s CPU a report: server %6.0f us, devices %6.0f us; "
                  "decode+insert %5.0f us (one transaction a report: %5.0f us)\n",
                  "", "", "", server_cpu->second.value, device_cpu->second.value, base.cpu_us,
                  per_report.cpu_us);
    return std::string(line) + cpu;
  }

 private:
  struct Floor {  // one BM_DecodeAndInsert run (0: not run)
    double reports_per_second = 0;
    double cpu_us = 0;  // CPU µs a report
  };
  struct Floors {
    Floor per_message;  // one transaction a message
    Floor per_report;   // one transaction a report
  };
  std::map<std::string, Floors> floors_;  // by "<kind>/<devices>"
  std::map<std::string, double> upload_;  // window 1's seconds per round-trip time
};

}  // namespace
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::IngestReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
