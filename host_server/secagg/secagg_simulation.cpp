#include "host_server/secagg/secagg_simulation.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "host_server/estimate/host_common.h"
#include "host_server/secagg/secagg_server.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/credential/device_credential.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/secagg/signed_keys.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace host {
namespace {

// The calling thread's CPU time: what a client's (or the server's) work costs, without the time
// other threads or processes held the core — the figures stay honest on a shared machine. Each
// client's part of a round runs on one thread (parallel_for), the server's on the caller's.
struct ThreadCpuClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<ThreadCpuClock>;
  static constexpr bool is_steady = true;
  static time_point now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(duration(int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec));
  }
};
using Clock = ThreadCpuClock;

// The seeded stream the public session id is drawn from: data uses stream 0, client i stream i.
constexpr uint64_t kSessionIdStream = ~uint64_t{0};

// Encodes `envelope` as a frame and decodes it again, as a transport would carry it; returns the
// decoded envelope and adds the frame's size to *bytes.
wire::Envelope carry(const wire::Envelope& envelope, double* bytes) {
  thread_local uint8_t buffer[wire::kMaxFrameBytes];
  auto size = wire::encode_frame(envelope, MutableByteSpan(buffer, sizeof(buffer)));
  check(size.status(), "encode");
  if (bytes != nullptr) *bytes += static_cast<double>(size.value());
  wire::Envelope out;
  auto frame = wire::decode_frame(ByteSpan(buffer, size.value()), out);
  check(frame.status(), "decode");
  if (!frame->complete) throw std::runtime_error("decode: incomplete frame");
  return out;
}

wire::Envelope envelope_of(pb_size_t tag) {
  wire::Envelope e = wire::make_envelope();
  e.which_body = tag;
  return e;
}

// The stream of client inputs: one per client, apart from every key stream.
constexpr uint64_t kInputStreams = uint64_t{1} << 63;
// The ring seed's stream (sparse graph).
constexpr uint64_t kGraphSeedStream = ~uint64_t{0} - 1;
// Signed sessions: the CA's key pair, and each client's credential key pair (2^62 + id).
constexpr uint64_t kCaStream = ~uint64_t{0} - 2;
constexpr uint64_t kCredentialStreams = uint64_t{1} << 62;
// Clients computing between two turns of the server: bounds the messages held at once.
constexpr size_t kBatch = 512;

struct SimClient {
  uint32_t id = 0;
  int drops_at = 4;  // 1: before sharing, 2: before masking, 3: before unmasking, 4: never
  bool drops_after_consistency = false;     // signed: signs U3, then vanishes
  bool masked = false, revealed = false;    // its input sent; its reveals sent
  credential::DeviceCredential credential;  // signed sessions
  double received_consistency = 0;          // bytes of the signatures forwarded to it
  std::unique_ptr<SeededStream> random;
  std::vector<secagg::SecAggPeer> peers;
  secagg::SecAggClient client;
  std::vector<fedstat_v1_Envelope> outbox;  // this round's messages, until the server takes them
  double bytes[5] = {0, 0, 0, 0, 0};        // rounds 0..3, and 4: the consistency round
  double seconds[5] = {0, 0, 0, 0, 0};
  bool alive(int round) const { return drops_at > round; }
};

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs work(i) for i in [begin, end) on `threads` threads; the first exception is rethrown.
void parallel_for(size_t begin, size_t end, uint32_t threads,
                  const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{begin};
  std::exception_ptr failure;
  std::mutex failure_lock;
  auto run = [&]() {
    for (size_t i = next++; i < end; i = next++) {
      try {
        work(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_lock);
        if (!failure) failure = std::current_exception();
        next = end;
      }
    }
  };
  std::vector<std::thread> pool;
  for (uint32_t t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

void check_config(const SecAggSimConfig& config) {
  const uint32_t n = config.clients;
  if (n < 2 || config.threshold < 2 || config.threshold > n) {
    throw std::invalid_argument("need 2 <= threshold <= clients");
  }
  if (config.degree == 0 && n > kMaxSimClients) {
    throw std::invalid_argument("at most " + std::to_string(kMaxSimClients) +
                                " clients with the complete graph (a roster names at most that "
                                "many); use the sparse graph");
  }
  if (config.degree != 0 && n > kMaxSimSparseClients) {
    throw std::invalid_argument("at most " + std::to_string(kMaxSimSparseClients) +
                                " clients with the sparse graph");
  }
  if (config.degree != 0 && (config.degree % 2 != 0 || config.degree > secagg::kMaxGraphDegree)) {
    throw std::invalid_argument("the sparse graph's degree is even, in 2..1022");
  }
  if (config.bits == 0 || config.bits > 64 || config.length == 0) {
    throw std::invalid_argument("bits must lie in 1..64 and the length be >= 1");
  }
  if (config.length > kMaxSimLength) {
    throw std::invalid_argument("the length must be at most " + std::to_string(kMaxSimLength) +
                                " words (2^20); split the vector");
  }
  const uint64_t roster = secagg::neighbourhood_size(n, config.degree);
  if (uint64_t{n} * roster > kMaxSimShares) {
    throw std::invalid_argument("clients x roster entries must be at most " +
                                std::to_string(kMaxSimShares) +
                                " (2^27 shares held); use fewer clients or the sparse graph");
  }
  const uint64_t holders = config.degree == 0 ? n : uint64_t{config.degree} + 1;
  if (2 * uint64_t{config.threshold} <= holders) {  // after the bounds: they are named first
    throw std::invalid_argument(
        config.degree == 0
            ? "the threshold must exceed half of the clients (2 * threshold > clients): the "
              "clients refuse a smaller one"
            : "the threshold must exceed half of degree + 1: the clients refuse a smaller one");
  }
  if (config.signed_keys && config.degree == 0 &&
      !secagg::signed_complete_threshold_holds(config.threshold, n,
                                               secagg::kDefaultCorruptFloorPpm)) {
    throw std::invalid_argument(
        "a signed complete-graph session needs 2 * threshold > clients + ceil(5% of clients): the "
        "clients refuse a smaller one (colluders could sign two U3 views)");
  }
  if (config.signed_keys && config.degree != 0 &&
      !secagg::signed_sparse_threshold_holds(config.threshold, config.degree, n,
                                             secagg::kDefaultCorruptFloorPpm)) {
    throw std::invalid_argument(
        "a signed sparse session needs 2 * threshold > degree + ceil(5% of clients): the clients "
        "refuse a smaller one (the server can place every colluder next to one client); "
        "secagg::choose_signed_sparse_graph gives the smallest passing degree and threshold");
  }
  if (config.degree != 0 && config.threshold > holders) {
    throw std::invalid_argument("the threshold must be at most degree + 1");
  }
  if (!config.inputs.empty() && config.inputs.size() != n) {
    throw std::invalid_argument("one input vector per client");
  }
  if (config.drop_after_consistency != 0 && !config.signed_keys) {
    throw std::invalid_argument("dropouts after the consistency round need a signed session");
  }
  if (config.signed_keys && config.degree > secagg::kMaxSignedSparseDegree) {
    throw std::invalid_argument(
        "a signed sparse session's degree is at most 126 (a consistency view names at most 127 "
        "ids)");
  }
  if (uint64_t{config.drop_before_sharing} + config.drop_before_masking +
          config.drop_before_unmasking + config.drop_after_consistency >
      n) {
    throw std::invalid_argument("more droppers than clients");
  }
  if (config.threads < 1 || config.threads > 64) {
    throw std::invalid_argument("threads must lie in 1..64");
  }
}

}  // namespace

SecAggSimResult run_secagg_simulation(const SecAggSimConfig& config) {
  check_config(config);
  const uint32_t n = config.clients;
  SecAggSimResult result;
  SecAggServerConfig server_config;
  // The session id is public (every message carries it), the seed is the clients' secret: draw
  // the id from the seed's PRF on a stream no client uses, never by an invertible map of the seed
  // (from which anyone holding the transcript would rebuild every client's keys and unmask it).
  SeededStream session_stream(seed_from_u64(config.seed), kSessionIdStream);
  RandomBits session_bits(session_stream);
  server_config.session = value_or_throw(session_bits.bits(64), "secagg session id");
  server_config.threshold = config.threshold;
  server_config.vector_length = config.length;
  server_config.bits = config.bits;
  server_config.max_clients = n;
  server_config.degree = config.degree;
  SeededStream graph_stream(seed_from_u64(config.seed), kGraphSeedStream);
  check(graph_stream.fill(MutableByteSpan(server_config.graph_seed, 32)), "ring seed");
  uint8_t ca_private[credential::kPrivateKeyBytes] = {};
  if (config.signed_keys) {
    SeededStream ca_stream(seed_from_u64(config.seed), kCaStream);
    check(credential::generate_key_pair(ca_stream, MutableByteSpan(ca_private, 32),
                                        MutableByteSpan(server_config.ca_public_key, 65)),
          "CA key");
    server_config.signed_keys = true;
  }
  SecAggServer server(server_config);
  const uint32_t roster_entries = secagg::neighbourhood_size(n, config.degree);
  result.roster_entries = roster_entries;

  // Clients and who drops when.
  SeededStream order_stream(seed_from_u64(config.seed), 0);
  RandomBits order_bits(order_stream);
  const uint64_t limit = config.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << config.bits) - 1;
  std::vector<std::unique_ptr<SimClient>> clients;
  for (uint32_t i = 0; i < n; ++i) {
    auto c = std::make_unique<SimClient>();
    c->id = i + 1;
    c->random = std::make_unique<SeededStream>(seed_from_u64(config.seed), c->id);
    c->peers.resize(roster_entries);
    check(c->client.init(c->id, Span<secagg::SecAggPeer>(c->peers.data(), c->peers.size()),
                         *c->random),
          "client init");
    if (!config.inputs.empty() && config.inputs[i].size() != config.length) {
      throw std::invalid_argument("input of wrong length");
    }
    if (config.signed_keys) c->client.set_credential(&c->credential);
    clients.push_back(std::move(c));
  }
  if (config.signed_keys) {  // provisioning (fedstat-ca's part): not timed
    parallel_for(0, n, config.threads, [&](size_t i) {
      SimClient& c = *clients[i];
      SeededStream stream(seed_from_u64(config.seed), kCredentialStreams + c.id);
      check(credential::generate_key_pair(stream, MutableByteSpan(c.credential.private_key, 32),
                                          MutableByteSpan(c.credential.certificate.public_key, 65)),
            "device key");
      check(credential::issue_certificate(ByteSpan(ca_private, 32), c.id,
                                          ByteSpan(c.credential.certificate.public_key, 65),
                                          c.credential.certificate),
            "certificate");
      std::memcpy(c.credential.ca_public_key, server_config.ca_public_key, 65);
    });
  }
  auto input_of = [&](const SimClient& c) {
    std::vector<uint64_t> input;
    if (!config.inputs.empty()) {
      input = config.inputs[c.id - 1];
      for (uint64_t& w : input) w &= limit;
      return input;
    }
    SeededStream stream(seed_from_u64(config.seed), kInputStreams + c.id);
    RandomBits bits(stream);
    for (uint32_t k = 0; k < config.length; ++k) {
      auto word = bits.bits(config.bits);
      check(word.status(), "input");
      input.push_back(config.zero_inputs ? 0 : word.value() & limit);
    }
    return input;
  };
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  for (uint32_t i = n - 1; i > 0; --i) {  // Fisher–Yates with the seeded stream
    auto j = order_bits.uniform_below(i + 1);
    check(j.status(), "shuffle");
    std::swap(order[i], order[static_cast<uint32_t>(j.value())]);
  }
  uint32_t k = 0;
  for (uint32_t a = 0; a < config.drop_before_sharing; ++a) clients[order[k++]]->drops_at = 1;
  for (uint32_t b = 0; b < config.drop_before_masking; ++b) clients[order[k++]]->drops_at = 2;
  for (uint32_t c = 0; c < config.drop_before_unmasking; ++c) clients[order[k++]]->drops_at = 3;
  for (uint32_t d = 0; d < config.drop_after_consistency; ++d) {
    clients[order[k++]]->drops_after_consistency = true;
  }
  double server_seconds[5] = {0, 0, 0, 0, 0};
  auto abort_with = [&](const Status& status) {
    result.aborted = true;
    result.abort_reason = server.aborted() ? server.abort_reason() : status.message();
    for (int number = 0; number < 4; ++number)
      result.server_seconds[number] = server_seconds[number];
    result.consistency_server_seconds = server_seconds[4];
    return result;
  };
  // One round: every client's part (`client_part`, in parallel, batch by batch, filling its
  // outbox), then the server takes each outbox in client order (`server_part`, timed).
  auto round = [&](const std::function<void(SimClient&)>& client_part,
                   const std::function<Status(SimClient&, const fedstat_v1_Envelope&)>& server_part,
                   int number) {
    for (size_t from = 0; from < clients.size(); from += kBatch) {
      const size_t to = std::min(clients.size(), from + kBatch);
      parallel_for(from, to, config.threads, [&](size_t i) { client_part(*clients[i]); });
      for (size_t i = from; i < to; ++i) {
        SimClient& c = *clients[i];
        for (const fedstat_v1_Envelope& e : c.outbox) {
          const auto s0 = Clock::now();
          check(server_part(c, e), "server");
          server_seconds[number] += since(s0);
        }
        std::vector<fedstat_v1_Envelope>().swap(c.outbox);
      }
    }
  };
  auto send = [](SimClient& c, const wire::Envelope& e, int number) {
    c.outbox.push_back(carry(e, &c.bytes[number]));
  };
  // `c`'s messages of round `number` (body `tag`), one per call of next(envelope) until it says
  // there are none left; its time is the client's.
  auto drain = [&](SimClient& c, int number, pb_size_t tag, const char* what, const auto& next) {
    while (true) {
      wire::Envelope e = envelope_of(tag);
      const auto t0 = Clock::now();
      const Result<bool> more = next(e);
      c.seconds[number] += since(t0);
      check(more.status(), what);
      if (!more.value()) return;
      send(c, e, number);
    }
  };

  // Round 0: AdvertiseKeys.
  wire::Envelope start = envelope_of(fedstat_v1_Envelope_secagg_start_tag);
  start.body.secagg_start = server.start();
  round(
      [&](SimClient& c) {
        const wire::Envelope received = carry(start, nullptr);
        const auto t0 = Clock::now();
        wire::Envelope keys = envelope_of(fedstat_v1_Envelope_secagg_keys_tag);
        check(c.client.on_start(received.body.secagg_start, keys.body.secagg_keys), "keys");
        c.seconds[0] += since(t0);
        send(c, keys, 0);
      },
      [&](SimClient&, const fedstat_v1_Envelope& e) { return server.on_keys(e.body.secagg_keys); },
      0);
  auto s0 = Clock::now();
  auto roster = server.close_advertising();
  server_seconds[0] += since(s0);
  if (!roster.ok()) return abort_with(roster.status());

  // Round 1: ShareKeys.
  round(
      [&](SimClient& c) {
        auto t0 = Clock::now();
        for (const auto& entry : server.roster_for(c.id)) {
          wire::Envelope e = envelope_of(fedstat_v1_Envelope_secagg_peer_keys_tag);
          e.body.secagg_peer_keys = entry;
          const wire::Envelope received = carry(e, nullptr);
          check(c.client.on_peer_keys(received.body.secagg_peer_keys), "roster");
        }
        c.seconds[1] += since(t0);
        if (!c.alive(1)) return;
        drain(c, 1, fedstat_v1_Envelope_secagg_share_tag, "share",
              [&](wire::Envelope& e) { return c.client.next_share(e.body.secagg_share); });
      },
      [&](SimClient& c, const fedstat_v1_Envelope& e) {
        return server.on_share(c.id, e.body.secagg_share);
      },
      1);
  s0 = Clock::now();
  auto u2 = server.close_sharing();
  server_seconds[1] += since(s0);
  if (!u2.ok()) return abort_with(u2.status());

  // Round 2: MaskedInputCollection.
  std::vector<uint64_t> expected(config.length, 0);
  std::mutex expected_lock;
  uint32_t kept_id = UINT32_MAX;
  round(
      [&](SimClient& c) {
        if (!c.alive(1)) return;
        auto t0 = Clock::now();
        for (const auto& share : server.shares_for(c.id)) {
          wire::Envelope e = envelope_of(fedstat_v1_Envelope_secagg_share_tag);
          e.body.secagg_share = share;
          const wire::Envelope received = carry(e, nullptr);
          check(c.client.on_share(received.body.secagg_share), "receive share");
        }
        wire::Envelope r = envelope_of(fedstat_v1_Envelope_secagg_roster_tag);
        r.body.secagg_roster = server.u2_for(c.id);
        // Fewer than t of its neighbourhood left: the client aborts itself (a dropout to the
        // server), revealing nothing.
        const Status in_u2 = c.client.on_roster(carry(r, nullptr).body.secagg_roster);
        if (in_u2.code() == StatusCode::kAborted) return;
        check(in_u2, "U2");
        c.seconds[2] += since(t0);
        if (!c.alive(2)) return;
        const std::vector<uint64_t> input = input_of(c);
        t0 = Clock::now();
        std::vector<uint64_t> masked = input;
        check(c.client.mask(Span<uint64_t>(masked.data(), masked.size())), "mask");
        c.seconds[2] += since(t0);
        c.masked = true;
        {
          std::lock_guard<std::mutex> lock(expected_lock);
          for (uint32_t i = 0; i < config.length; ++i) {
            expected[i] = (expected[i] + input[i]) & limit;
          }
          if (config.keep_masked && c.alive(3) && c.id < kept_id) {  // the first survivor's
            result.masked_example = masked;
            result.input_example = input;
            kept_id = c.id;
          }
        }
        drain(c, 2, fedstat_v1_Envelope_secagg_masked_chunk_tag, "chunk", [&](wire::Envelope& e) {
          return c.client.next_chunk(Span<const uint64_t>(masked.data(), masked.size()),
                                     e.body.secagg_masked_chunk);
        });
        if (config.signed_keys && config.degree != 0) {
          // Rule D8 (protocol 6): the signed U2 view follows the masked input.
          wire::Envelope view = envelope_of(fedstat_v1_Envelope_secagg_consistency_tag);
          t0 = Clock::now();
          check(c.client.masked_view_message(view.body.secagg_consistency), "U2 view");
          c.seconds[2] += since(t0);
          send(c, view, 2);
        }
      },
      [&](SimClient& c, const fedstat_v1_Envelope& e) {
        if (e.which_body == fedstat_v1_Envelope_secagg_consistency_tag) {
          return server.on_consistency(c.id, e.body.secagg_consistency);
        }
        return server.on_chunk(c.id, e.body.secagg_masked_chunk);
      },
      2);
  s0 = Clock::now();
  auto u3 = server.close_masking();
  server_seconds[2] += since(s0);
  if (!u3.ok()) return abort_with(u3.status());

  // Signed sessions: the consistency round between U3 and the reveals.
  if (config.signed_keys) {
    round(
        [&](SimClient& c) {
          if (!c.alive(3)) return;
          const auto t0 = Clock::now();
          wire::Envelope r = envelope_of(fedstat_v1_Envelope_secagg_roster_tag);
          r.body.secagg_roster = server.u3_for(c.id);
          const Status in_u3 = c.client.on_roster(carry(r, nullptr).body.secagg_roster);
          if (in_u3.code() == StatusCode::kAborted) return;
          check(in_u3, "U3");
          wire::Envelope signature = envelope_of(fedstat_v1_Envelope_secagg_consistency_tag);
          check(c.client.consistency_message(signature.body.secagg_consistency), "consistency");
          c.seconds[4] += since(t0);
          send(c, signature, 4);
        },
        [&](SimClient& c, const fedstat_v1_Envelope& e) {
          return server.on_consistency(c.id, e.body.secagg_consistency);
        },
        4);
    s0 = Clock::now();
    const Status closed = server.close_consistency();
    server_seconds[4] += since(s0);
    result.consistency_signers = static_cast<uint32_t>(server.consistency_signers().size());
    if (!closed.ok()) return abort_with(closed);
  }

  // Round 3: Unmasking.
  std::atomic<uint32_t> reveals{0};
  round(
      [&](SimClient& c) {
        if (!c.alive(3)) return;
        auto t0 = Clock::now();
        if (config.signed_keys) {
          if (c.drops_after_consistency) return;
          if (c.client.stage() != secagg::SecAggStage::kConsistency) return;  // aborted at U3
          for (const auto& message : server.consistency_for(c.id)) {
            wire::Envelope e = envelope_of(fedstat_v1_Envelope_secagg_consistency_tag);
            e.body.secagg_consistency = message;
            const wire::Envelope received = carry(e, &c.received_consistency);
            t0 = Clock::now();
            check(c.client.on_consistency(received.body.secagg_consistency), "consistency check");
            c.seconds[4] += since(t0);
          }
          // Fewer than t signatures of its roster: it reveals nothing (a dropout to the server).
          if (c.client.stage() != secagg::SecAggStage::kUnmasking) return;
        } else {
          wire::Envelope r = envelope_of(fedstat_v1_Envelope_secagg_roster_tag);
          r.body.secagg_roster = server.u3_for(c.id);
          const Status in_u3 = c.client.on_roster(carry(r, nullptr).body.secagg_roster);
          if (in_u3.code() == StatusCode::kAborted) return;
          check(in_u3, "U3");
          c.seconds[3] += since(t0);
        }
        drain(c, 3, fedstat_v1_Envelope_secagg_reveal_tag, "reveal", [&](wire::Envelope& e) {
          const Result<bool> more = c.client.next_reveal(e.body.secagg_reveal);
          if (more.ok() && more.value()) ++reveals;
          return more;
        });
        c.revealed = true;
      },
      [&](SimClient& c, const fedstat_v1_Envelope& e) {
        return server.on_reveal(c.id, e.body.secagg_reveal);
      },
      3);
  result.reveals_sent = reveals;
  SeededStream blinding_stream(seed_from_u64(config.seed), 0xB11D);
  s0 = Clock::now();
  auto sum = server.finish(blinding_stream);
  server_seconds[3] += since(s0);
  if (!sum.ok()) return abort_with(sum.status());

  result.sum = sum.value();
  result.expected = expected;
  double surviving = 0;
  for (auto& c : clients) {
    if (!c->masked) continue;  // its masked input reached the server: it is in U3
    ++result.survivors;
    if (!c->revealed) continue;  // bytes and times: clients that took part in every round
    surviving += 1;
    for (int number = 0; number < 4; ++number) {
      result.bytes_per_round[number] += c->bytes[number];
      result.client_seconds[number] += c->seconds[number];
    }
  }
  for (auto& c : clients) {
    if (!c->revealed) continue;
    result.consistency_bytes += c->bytes[4];
    result.consistency_received_bytes += c->received_consistency;
    result.consistency_client_seconds += c->seconds[4];
  }
  for (int number = 0; number < 4; ++number) {
    result.bytes_per_round[number] /= surviving;
    result.client_seconds[number] /= surviving;
    result.bytes_per_client += result.bytes_per_round[number];
    result.server_seconds[number] = server_seconds[number];
  }
  result.consistency_bytes /= surviving;
  result.consistency_received_bytes /= surviving;
  result.consistency_client_seconds /= surviving;
  result.consistency_server_seconds = server_seconds[4];
  result.bytes_per_client += result.consistency_bytes;
  result.ok = result.sum == result.expected;
  return result;
}

std::vector<uint64_t> secure_sum(const std::vector<std::vector<uint64_t>>& inputs, uint32_t bits,
                                 uint64_t seed) {
  if (inputs.size() < 2) throw std::invalid_argument("secure aggregation needs two clients");
  SecAggSimConfig config;
  config.clients = static_cast<uint32_t>(inputs.size());
  config.threshold = std::max<uint32_t>(2, (2 * config.clients + 2) / 3);
  config.length = static_cast<uint32_t>(inputs[0].size());
  config.bits = bits;
  config.seed = seed;
  config.inputs = inputs;
  const SecAggSimResult r = run_secagg_simulation(config);
  if (!r.ok) throw std::runtime_error("secure aggregation failed: " + r.abort_reason);
  return r.sum;
}

}  // namespace host
}  // namespace fedstat
