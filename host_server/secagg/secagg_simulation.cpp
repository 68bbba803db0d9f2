#include "host_server/secagg/secagg_simulation.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "host_server/estimate/host_common.h"
#include "host_server/secagg/secagg_server.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/wire/envelope_codec.h"

namespace fedstat {
namespace host {
namespace {

using Clock = std::chrono::steady_clock;

// The seeded stream the public session id is drawn from: data uses stream 0, client i stream i.
constexpr uint64_t kSessionIdStream = ~uint64_t{0};

// Encodes `envelope` as a frame and decodes it again, as a transport would carry it; returns the
// decoded envelope and adds the frame's size to *bytes.
wire::Envelope carry(const wire::Envelope& envelope, double* bytes) {
  static uint8_t buffer[wire::kMaxFrameBytes];
  auto size = wire::encode_frame(envelope, MutableByteSpan(buffer, sizeof(buffer)));
  check(size.status(), "encode");
  if (bytes != nullptr) *bytes += static_cast<double>(size.value());
  wire::Envelope out;
  auto frame = wire::decode_frame(ByteSpan(buffer, size.value()), out);
  check(frame.status(), "decode");
  if (!frame->complete) throw std::runtime_error("decode: incomplete frame");
  return out;
}

struct SimClient {
  uint32_t id = 0;
  int drops_at = 4;  // 1: before sharing, 2: before masking, 3: before unmasking, 4: never
  std::unique_ptr<SeededStream> random;
  std::vector<secagg::SecAggPeer> peers;
  secagg::SecAggClient client;
  std::vector<uint64_t> input;
  double bytes[4] = {0, 0, 0, 0};
  double seconds[4] = {0, 0, 0, 0};
  bool alive(int round) const { return drops_at > round; }
};

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

SecAggSimResult run_secagg_simulation(const SecAggSimConfig& config) {
  const uint32_t n = config.clients;
  if (n < 2 || config.threshold < 2 || config.threshold > n) {
    throw std::invalid_argument("need 2 <= threshold <= clients");
  }
  if (n > kMaxSimClients) {
    throw std::invalid_argument("at most " + std::to_string(kMaxSimClients) +
                                " clients (a roster names at most that many)");
  }
  if (config.bits == 0 || config.bits > 64 || config.length == 0) {
    throw std::invalid_argument("bits must lie in 1..64 and the length be >= 1");
  }
  if (config.length > kMaxSimLength) {
    throw std::invalid_argument("the length must be at most " + std::to_string(kMaxSimLength) +
                                " words (2^20); split the vector");
  }
  if (uint64_t{n} * config.length > kMaxSimWords) {
    throw std::invalid_argument("clients x length must be at most " + std::to_string(kMaxSimWords) +
                                " words (2^26); use fewer clients or a shorter vector");
  }
  if (2 * uint64_t{config.threshold} <= n) {  // after the bounds: they are named first
    throw std::invalid_argument(
        "the threshold must exceed half of the clients (2 * threshold > clients): the clients "
        "refuse a smaller one");
  }
  if (!config.inputs.empty() && config.inputs.size() != n) {
    throw std::invalid_argument("one input vector per client");
  }
  if (uint64_t{config.drop_before_sharing} + config.drop_before_masking +
          config.drop_before_unmasking >
      n) {
    throw std::invalid_argument("more droppers than clients");
  }
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
  SecAggServer server(server_config);

  // Clients, inputs and who drops when.
  SeededStream data_stream(seed_from_u64(config.seed), 0);
  RandomBits data(data_stream);
  const uint64_t limit = config.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << config.bits) - 1;
  std::vector<std::unique_ptr<SimClient>> clients;
  for (uint32_t i = 0; i < n; ++i) {
    auto c = std::make_unique<SimClient>();
    c->id = i + 1;
    c->random = std::make_unique<SeededStream>(seed_from_u64(config.seed), c->id);
    c->peers.resize(n);
    check(c->client.init(c->id, Span<secagg::SecAggPeer>(c->peers.data(), n), *c->random),
          "client init");
    if (!config.inputs.empty()) {
      c->input = config.inputs[i];
      if (c->input.size() != config.length) throw std::invalid_argument("input of wrong length");
      for (uint64_t& w : c->input) w &= limit;
    }
    for (uint32_t k = 0; config.inputs.empty() && k < config.length; ++k) {
      auto word = data.bits(config.bits);
      check(word.status(), "input");
      c->input.push_back(config.zero_inputs ? 0 : word.value() & limit);
    }
    clients.push_back(std::move(c));
  }
  std::vector<uint32_t> order(n);
  for (uint32_t i = 0; i < n; ++i) order[i] = i;
  for (uint32_t i = n - 1; i > 0; --i) {  // Fisher–Yates with the seeded stream
    auto j = data.uniform_below(i + 1);
    check(j.status(), "shuffle");
    std::swap(order[i], order[static_cast<uint32_t>(j.value())]);
  }
  uint32_t k = 0;
  for (uint32_t a = 0; a < config.drop_before_sharing; ++a) clients[order[k++]]->drops_at = 1;
  for (uint32_t b = 0; b < config.drop_before_masking; ++b) clients[order[k++]]->drops_at = 2;
  for (uint32_t c = 0; c < config.drop_before_unmasking; ++c) clients[order[k++]]->drops_at = 3;

  auto abort_with = [&](const Status& status) {
    result.aborted = true;
    result.abort_reason = server.aborted() ? server.abort_reason() : status.message();
    return result;
  };

  // Round 0: AdvertiseKeys.
  wire::Envelope start = wire::make_envelope();
  start.which_body = fedstat_v1_Envelope_secagg_start_tag;
  start.body.secagg_start = server.start();
  for (auto& c : clients) {
    const wire::Envelope received = carry(start, nullptr);
    const auto t0 = Clock::now();
    wire::Envelope keys = wire::make_envelope();
    keys.which_body = fedstat_v1_Envelope_secagg_keys_tag;
    check(c->client.on_start(received.body.secagg_start, keys.body.secagg_keys), "keys");
    c->seconds[0] += since(t0);
    const wire::Envelope at_server = carry(keys, &c->bytes[0]);
    const auto s0 = Clock::now();
    check(server.on_keys(at_server.body.secagg_keys), "server keys");
    result.server_seconds[0] += since(s0);
  }
  auto s0 = Clock::now();
  auto roster = server.close_advertising();
  result.server_seconds[0] += since(s0);
  if (!roster.ok()) return abort_with(roster.status());

  // Round 1: ShareKeys.
  for (auto& c : clients) {
    auto t0 = Clock::now();
    for (const auto& entry : roster.value()) {
      wire::Envelope e = wire::make_envelope();
      e.which_body = fedstat_v1_Envelope_secagg_peer_keys_tag;
      e.body.secagg_peer_keys = entry;
      const wire::Envelope received = carry(e, nullptr);
      check(c->client.on_peer_keys(received.body.secagg_peer_keys), "roster");
    }
    c->seconds[1] += since(t0);
    if (!c->alive(1)) continue;
    while (true) {
      t0 = Clock::now();
      wire::Envelope e = wire::make_envelope();
      e.which_body = fedstat_v1_Envelope_secagg_share_tag;
      auto more = c->client.next_share(e.body.secagg_share);
      c->seconds[1] += since(t0);
      check(more.status(), "share");
      if (!more.value()) break;
      const wire::Envelope at_server = carry(e, &c->bytes[1]);
      s0 = Clock::now();
      check(server.on_share(c->id, at_server.body.secagg_share), "server share");
      result.server_seconds[1] += since(s0);
    }
  }
  s0 = Clock::now();
  auto u2 = server.close_sharing();
  result.server_seconds[1] += since(s0);
  if (!u2.ok()) return abort_with(u2.status());

  // Round 2: MaskedInputCollection.
  for (auto& c : clients) {
    if (!c->alive(1)) continue;
    auto t0 = Clock::now();
    for (const auto& share : server.shares_for(c->id)) {
      wire::Envelope e = wire::make_envelope();
      e.which_body = fedstat_v1_Envelope_secagg_share_tag;
      e.body.secagg_share = share;
      const wire::Envelope received = carry(e, nullptr);
      check(c->client.on_share(received.body.secagg_share), "receive share");
    }
    wire::Envelope r = wire::make_envelope();
    r.which_body = fedstat_v1_Envelope_secagg_roster_tag;
    r.body.secagg_roster = u2.value();
    check(c->client.on_roster(carry(r, nullptr).body.secagg_roster), "U2");
    c->seconds[2] += since(t0);
    if (!c->alive(2)) continue;
    t0 = Clock::now();
    std::vector<uint64_t> masked = c->input;
    check(c->client.mask(Span<uint64_t>(masked.data(), masked.size())), "mask");
    if (config.keep_masked && result.masked_example.empty() && c->alive(3)) {
      result.masked_example = masked;
      result.input_example = c->input;
    }
    c->seconds[2] += since(t0);
    while (true) {
      wire::Envelope e = wire::make_envelope();
      e.which_body = fedstat_v1_Envelope_secagg_masked_chunk_tag;
      auto more = c->client.next_chunk(Span<const uint64_t>(masked.data(), masked.size()),
                                       e.body.secagg_masked_chunk);
      check(more.status(), "chunk");
      if (!more.value()) break;
      const wire::Envelope at_server = carry(e, &c->bytes[2]);
      s0 = Clock::now();
      check(server.on_chunk(c->id, at_server.body.secagg_masked_chunk), "server chunk");
      result.server_seconds[2] += since(s0);
    }
  }
  s0 = Clock::now();
  auto u3 = server.close_masking();
  result.server_seconds[2] += since(s0);
  if (!u3.ok()) return abort_with(u3.status());

  // Round 3: Unmasking.
  for (auto& c : clients) {
    if (!c->alive(3)) continue;
    auto t0 = Clock::now();
    wire::Envelope r = wire::make_envelope();
    r.which_body = fedstat_v1_Envelope_secagg_roster_tag;
    r.body.secagg_roster = u3.value();
    check(c->client.on_roster(carry(r, nullptr).body.secagg_roster), "U3");
    while (true) {
      wire::Envelope e = wire::make_envelope();
      e.which_body = fedstat_v1_Envelope_secagg_reveal_tag;
      auto more = c->client.next_reveal(e.body.secagg_reveal);
      check(more.status(), "reveal");
      if (!more.value()) break;
      ++result.reveals_sent;
      const wire::Envelope at_server = carry(e, &c->bytes[3]);
      s0 = Clock::now();
      check(server.on_reveal(c->id, at_server.body.secagg_reveal), "server reveal");
      result.server_seconds[3] += since(s0);
    }
    c->seconds[3] += since(t0);
  }
  SeededStream blinding_stream(seed_from_u64(config.seed), 0xB11D);
  s0 = Clock::now();
  auto sum = server.finish(blinding_stream);
  result.server_seconds[3] += since(s0);
  if (!sum.ok()) return abort_with(sum.status());

  result.sum = sum.value();
  result.expected.assign(config.length, 0);
  double surviving = 0;
  for (auto& c : clients) {
    if (!c->alive(2)) continue;  // its masked input reached the server: it is in U3
    ++result.survivors;
    for (uint32_t i = 0; i < config.length; ++i) {
      result.expected[i] = (result.expected[i] + c->input[i]) & limit;
    }
    if (!c->alive(3)) continue;  // bytes and times: clients that took part in every round
    surviving += 1;
    for (int round = 0; round < 4; ++round) {
      result.bytes_per_round[round] += c->bytes[round];
      result.client_seconds[round] += c->seconds[round];
    }
  }
  for (int round = 0; round < 4; ++round) {
    result.bytes_per_round[round] /= surviving;
    result.client_seconds[round] /= surviving;
    result.bytes_per_client += result.bytes_per_round[round];
  }
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
