// Secure-aggregation costs: mask expansion (bytes/s) as a ratio against raw AES-256-CTR in the
// same run; whole sessions (n = 10, 100; L = 10^3, 10^5) through real encoded messages with the
// client's seconds and bytes per round; and one client's rounds at n = 1000 (its real share
// round through SecAggClient, its masking work as SecAggClient::mask performs it: n − 1 X25519
// agreements and mask expansions; bytes from encoding the messages it sends); the server's
// finish() at n = 1024; and the sparse graph (SecAgg+, sdk/secagg/graph.h) against the complete
// one: one client's cost in a whole session at n = 100 and 300, and the server's finish() with
// 10 % dropped at n = 1024 (BM_SparseFinish against BM_FinishAtThousand/3), with the heap the
// server holds before finish().
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <time.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "host_server/secagg/secagg_simulation.h"
#include "sdk/base/crypto.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/secagg/graph_parameters.h"
#include "sdk/secagg/mask.h"
#include "sdk/secagg/secagg_client.h"
#include "sdk/wire/envelope_codec.h"
#include "tests/bench/same_run_reporter.h"

namespace fedstat {
namespace {

void BM_RawAesCtr(benchmark::State& state) {
  const size_t bytes = 8 * static_cast<size_t>(state.range(0));
  std::vector<uint8_t> out(bytes);
  const uint8_t key[32] = {1}, block[16] = {};
  crypto::Aes256Ctr cipher;
  for (auto _ : state) {
    (void)cipher.start(ByteSpan(key, 32), ByteSpan(block, 16));
    (void)cipher.keystream(MutableByteSpan(out.data(), bytes));
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}
BENCHMARK(BM_RawAesCtr)->Arg(1000)->Arg(100000);

void BM_MaskExpansion(benchmark::State& state) {
  const size_t length = static_cast<size_t>(state.range(0));
  std::vector<uint64_t> v(length, 0);
  const uint8_t session[32] = {2}, seed[32] = {3};
  for (auto _ : state) {
    const Status s =
        secagg::apply_mask(ByteSpan(session, 32), ByteSpan(seed, 32), secagg::MaskKind::kPairwise,
                           false, 64, Span<uint64_t>(v.data(), length));
    if (!s.ok()) state.SkipWithError(s.message());
    benchmark::DoNotOptimize(v.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(8 * length));
}
BENCHMARK(BM_MaskExpansion)->Arg(1000)->Arg(100000);

// One X25519 public-key derivation: what finish() pays per trial rebuild of a masking key
// (host_server/secagg/secagg_server.h, kMaxKeyTrials).
void BM_X25519PublicKey(benchmark::State& state) {
  SeededStream random(Seed256{}, 8);
  uint8_t secret[32], public_key[32];
  (void)random.fill(MutableByteSpan(secret, 32));
  crypto::x25519_clamp(Span<uint8_t>(secret, 32));
  for (auto _ : state) {
    (void)crypto::x25519_public_key(ByteSpan(secret, 32), Span<uint8_t>(public_key, 32),
                                    fill_from_random_source, &random);
    benchmark::DoNotOptimize(public_key);
  }
}
BENCHMARK(BM_X25519PublicKey)->Unit(benchmark::kMicrosecond);

void BM_Session(benchmark::State& state) {
  host::SecAggSimConfig config;
  config.clients = static_cast<uint32_t>(state.range(0));
  config.threshold = config.clients * 6 / 10;
  config.length = static_cast<uint32_t>(state.range(1));
  host::SecAggSimResult r;
  for (auto _ : state) r = host::run_secagg_simulation(config);
  if (!r.ok) state.SkipWithError("the session did not sum correctly");
  for (int k = 0; k < 4; ++k) {
    state.counters["r" + std::to_string(k) + "_s"] = r.client_seconds[k];
    state.counters["r" + std::to_string(k) + "_B"] = r.bytes_per_round[k];
  }
}
BENCHMARK(BM_Session)
    ->Args({10, 1000})
    ->Args({10, 100000})
    ->Args({100, 1000})
    ->Args({100, 100000})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

size_t frame_bytes(const wire::Envelope& e) {
  static uint8_t buffer[wire::kMaxFrameBytes];
  return wire::encode_frame(e, MutableByteSpan(buffer, sizeof(buffer))).value();
}

// The calling thread's CPU seconds: the rounds and finish() timed without the time other processes
// held the core.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

void BM_OneClientOfThousand(benchmark::State& state) {
  const uint32_t n = 1000, t = 600;
  const uint32_t length = static_cast<uint32_t>(state.range(0));
  fedstat_v1_SecAggStart start = fedstat_v1_SecAggStart_init_zero;
  start.session = 5;
  start.threshold = t;
  start.vector_length = length;
  start.bits = 32;
  start.max_clients = n;
  SeededStream random(Seed256{}, 1);
  std::vector<secagg::SecAggPeer> peers(n);
  // The other 999 clients' public keys.
  std::vector<fedstat_v1_SecAggPeerKeys> roster(n);
  std::vector<std::vector<uint8_t>> masking_keys(n, std::vector<uint8_t>(32));
  double seconds[4] = {0, 0, 0, 0}, bytes[4] = {0, 0, 0, 0};
  for (auto _ : state) {
    secagg::SecAggClient client;
    (void)client.init(1, Span<secagg::SecAggPeer>(peers.data(), n), random);
    wire::Envelope keys = wire::make_envelope();
    keys.which_body = fedstat_v1_Envelope_secagg_keys_tag;
    double t0 = thread_cpu_seconds();
    (void)client.on_start(start, keys.body.secagg_keys);
    seconds[0] = thread_cpu_seconds() - t0;
    bytes[0] = static_cast<double>(frame_bytes(keys));
    for (uint32_t i = 0; i < n; ++i) {
      fedstat_v1_SecAggPeerKeys& entry = roster[i];
      entry = fedstat_v1_SecAggPeerKeys_init_zero;
      entry.index = i;
      entry.count = n;
      entry.has_keys = true;
      if (i == 0) {
        entry.keys = keys.body.secagg_keys;
        continue;
      }
      entry.keys.session = 5;
      entry.keys.client_id = i + 1;
      entry.keys.encryption_key.size = 32;
      entry.keys.masking_key.size = 32;
      entry.keys.commitment.size = secagg::kCommitmentBytes;  // the client refuses keys without
      (void)random.fill(MutableByteSpan(entry.keys.commitment.bytes, secagg::kCommitmentBytes));
      uint8_t secret[32];
      for (uint8_t* out : {entry.keys.encryption_key.bytes, entry.keys.masking_key.bytes}) {
        (void)random.fill(MutableByteSpan(secret, 32));
        crypto::x25519_clamp(Span<uint8_t>(secret, 32));
        (void)crypto::x25519_public_key(ByteSpan(secret, 32), Span<uint8_t>(out, 32),
                                        fill_from_random_source, &random);
      }
      std::copy(entry.keys.masking_key.bytes, entry.keys.masking_key.bytes + 32,
                masking_keys[i].begin());
    }
    t0 = thread_cpu_seconds();
    for (const auto& entry : roster) {
      const Status held = client.on_peer_keys(entry);
      if (!held.ok()) state.SkipWithError(held.message());
    }
    wire::Envelope share = wire::make_envelope();
    share.which_body = fedstat_v1_Envelope_secagg_share_tag;
    bytes[1] = 0;
    while (client.next_share(share.body.secagg_share).value()) {
      bytes[1] += static_cast<double>(frame_bytes(share));
    }
    seconds[1] = thread_cpu_seconds() - t0;
    // Round 2 as SecAggClient::mask does it: self mask + n − 1 agreements and pairwise masks.
    std::vector<uint64_t> v(length, 7);
    uint8_t masking_secret[32], shared[32];
    (void)random.fill(MutableByteSpan(masking_secret, 32));
    crypto::x25519_clamp(Span<uint8_t>(masking_secret, 32));
    t0 = thread_cpu_seconds();
    (void)secagg::apply_mask(client.session_hash(), ByteSpan(masking_secret, 32),
                             secagg::MaskKind::kSelf, false, 32, Span<uint64_t>(v.data(), length));
    for (uint32_t i = 1; i < n; ++i) {
      (void)crypto::x25519_shared_secret(
          ByteSpan(masking_secret, 32), ByteSpan(masking_keys[i].data(), 32),
          Span<uint8_t>(shared, 32), fill_from_random_source, &random);
      (void)secagg::apply_mask(client.session_hash(), ByteSpan(shared, 32),
                               secagg::MaskKind::kPairwise, i + 1 > 1, 32,
                               Span<uint64_t>(v.data(), length));
    }
    seconds[2] = thread_cpu_seconds() - t0;
    wire::Envelope chunk = wire::make_envelope();
    chunk.which_body = fedstat_v1_Envelope_secagg_masked_chunk_tag;
    chunk.body.secagg_masked_chunk.session = 5;
    chunk.body.secagg_masked_chunk.client_id = 1;
    bytes[2] = 0;
    for (uint32_t offset = 0; offset < length; offset += secagg::kChunkWords) {
      const uint32_t words = std::min<uint32_t>(secagg::kChunkWords, length - offset);
      chunk.body.secagg_masked_chunk.offset = offset;
      chunk.body.secagg_masked_chunk.words_count = static_cast<pb_size_t>(words);
      for (uint32_t k = 0; k < words; ++k) chunk.body.secagg_masked_chunk.words[k] = v[offset + k];
      bytes[2] += static_cast<double>(frame_bytes(chunk));
    }
    // Round 3: one 36-byte share per member of U2 (no cryptography on the client).
    wire::Envelope reveal = wire::make_envelope();
    reveal.which_body = fedstat_v1_Envelope_secagg_reveal_tag;
    reveal.body.secagg_reveal.session = 5;
    reveal.body.secagg_reveal.from_id = 1;
    reveal.body.secagg_reveal.about_id = 1000;
    reveal.body.secagg_reveal.self_mask = true;
    reveal.body.secagg_reveal.share.size = secagg::kShareBytes;
    bytes[3] = static_cast<double>(n) * static_cast<double>(frame_bytes(reveal));
  }
  for (int k = 0; k < 4; ++k) {
    state.counters["r" + std::to_string(k) + "_s"] = seconds[k];
    state.counters["r" + std::to_string(k) + "_B"] = bytes[k];
  }
}
BENCHMARK(BM_OneClientOfThousand)->Arg(1000)->Arg(100000)->Iterations(1)->Unit(benchmark::kSecond);

// The masking key pairs of the clients above `survivors` (they drop after sharing; the server
// refuses a public key advertised twice, so each is its own), indexed by client id.
struct DroppedKeys {
  std::vector<std::array<uint8_t, 32>> secret, public_key;
};
DroppedKeys dropped_keys(uint32_t n, uint32_t survivors, SeededStream& random,
                         benchmark::State& state) {
  DroppedKeys keys;
  keys.secret.resize(n + 1);
  keys.public_key.resize(n + 1);
  for (uint32_t id = survivors + 1; id <= n; ++id) {
    std::array<uint8_t, 32>& key = keys.secret[id];
    key.fill(0);
    key[2] = static_cast<uint8_t>(id);  // bytes the clamp keeps
    key[3] = static_cast<uint8_t>(id >> 8);
    key[4] = static_cast<uint8_t>(id >> 16);
    crypto::x25519_clamp(Span<uint8_t>(key.data(), 32));
    if (!crypto::x25519_public_key(ByteSpan(key.data(), 32),
                                   Span<uint8_t>(keys.public_key[id].data(), 32),
                                   fill_from_random_source, &random)
             .ok()) {
      state.SkipWithError("x25519");
    }
  }
  return keys;
}

// Clients 1..n advertise keys to `server` (session 9): random canonical keys, a dropped client's
// masking key from `dropped`, every commitment to `secret` (the self-mask seed all share).
void advertise_keys(host::SecAggServer& server, uint32_t n, uint32_t survivors,
                    const DroppedKeys& dropped, const uint8_t secret[32], SeededStream& random,
                    benchmark::State& state) {
  for (uint32_t id = 1; id <= n; ++id) {
    fedstat_v1_SecAggKeys keys = fedstat_v1_SecAggKeys_init_zero;
    keys.session = 9;
    keys.client_id = id;
    keys.encryption_key.size = keys.masking_key.size = 32;
    (void)random.fill(MutableByteSpan(keys.encryption_key.bytes, 32));
    (void)random.fill(MutableByteSpan(keys.masking_key.bytes, 32));
    keys.encryption_key.bytes[31] &= 0x3f;  // canonical, and not of low order
    keys.masking_key.bytes[31] &= 0x3f;
    if (id > survivors) std::memcpy(keys.masking_key.bytes, dropped.public_key[id].data(), 32);
    keys.commitment.size = secagg::kCommitmentBytes;
    (void)secagg::self_mask_commitment(9, id, ByteSpan(secret, 32),
                                       MutableByteSpan(keys.commitment.bytes, 32));
    const Status accepted = server.on_keys(keys);
    if (!accepted.ok()) state.SkipWithError(accepted.message());
  }
}

// The server's unmasking at the largest session: n = 1024 clients, t = 513, no dropouts, so
// finish() rebuilds and verifies 1024 self-mask seeds from up to 1024 reveals each (one 64-word
// chunk per client; the masks' PRG is a small part). Only finish() is timed (counter finish_s,
// CPU); the session before it is built directly on SecAggServer with random canonical keys,
// placeholder ciphertexts and reveals that are shares of one secret, each client committed to it
// (what finish() costs does not depend on the values). Three cases (the argument):
//   0  every reveal honest;
//   1  10 colluding holders send an empty reveal about secret v whenever bit k of v's index is
//      set (holder k): up to 2^10 = 1024 holder sets, one per secret — the precomputation a
//      holder set needs is paid per secret (review finding F5);
//   2  one holder adds 1 to every reveal it sends: every secret fails its first verification
//      and is decoded (the check, the located share, a second verification);
//   3  102 clients (10 %) drop after sharing (in U2, not in U3): their masking keys are rebuilt
//      from key shares, verified (one X25519 each), and each pairwise mask with every one of
//      the 922 survivors is recomputed — |U3| X25519 multiplications per dropped client, on
//      the thread that calls finish() (second review of issue 39, A3).
void BM_FinishAtThousand(benchmark::State& state) {
  const uint32_t n = 1024, t = 513, length = 64;
  const int attack = static_cast<int>(state.range(0));
  const uint32_t survivors = attack == 3 ? n - n / 10 : n;  // ids above it drop after sharing
  double finish_seconds = 0, server_heap = 0;
  for (auto _ : state) {
    const size_t heap_before = mallinfo2().uordblks;
    host::SecAggServerConfig config;
    config.session = 9;
    config.threshold = t;
    config.vector_length = length;
    config.bits = 32;
    config.max_clients = n;
    host::SecAggServer server(config);
    SeededStream random(Seed256{}, 3);
    uint8_t secret[32] = {}, seed[32] = {4};
    const DroppedKeys dropped = dropped_keys(n, survivors, random, state);
    advertise_keys(server, n, survivors, dropped, secret, random, state);
    (void)server.close_advertising();
    fedstat_v1_SecAggShare share = fedstat_v1_SecAggShare_init_zero;
    share.session = 9;
    share.ciphertext.size = secagg::kShareCipherBytes;
    for (uint32_t from = 1; from <= n; ++from) {
      for (uint32_t to = 1; to <= n; ++to) {
        if (to == from) continue;
        share.from_id = from;
        share.to_id = to;
        (void)server.on_share(from, share);
      }
    }
    (void)server.close_sharing();
    fedstat_v1_SecAggMaskedChunk chunk = fedstat_v1_SecAggMaskedChunk_init_zero;
    chunk.session = 9;
    chunk.words_count = length;
    for (uint32_t id = 1; id <= survivors; ++id) {
      chunk.client_id = id;
      (void)server.on_chunk(id, chunk);
    }
    if (!server.close_masking().ok()) state.SkipWithError("masking did not close");
    // Every survivor's share of the (one) self-mask seed; a dropped client's key shares are dealt
    // per dropped client, below.
    secagg::ShamirDealer dealer;
    (void)dealer.init(ByteSpan(secret, 32), t, ByteSpan(seed, 32));
    std::vector<secagg::ShamirShare> mine(survivors + 1);
    for (uint32_t from = 1; from <= survivors; ++from) {
      (void)dealer.share_for(from, mine[from]);
      if (attack == 2 && from == 7) mine[from].y[0] = (mine[from].y[0] + 1) % secagg::kShamirPrime;
    }
    fedstat_v1_SecAggReveal reveal = fedstat_v1_SecAggReveal_init_zero;
    reveal.session = 9;
    for (uint32_t about = 1; about <= n; ++about) {
      reveal.about_id = about;
      reveal.self_mask = about <= survivors;  // U3: its self-mask seed; U2 \ U3: its key
      secagg::ShamirDealer key_dealer;
      if (!reveal.self_mask) {
        (void)key_dealer.init(ByteSpan(dropped.secret[about].data(), 32), t, ByteSpan(seed, 32));
      }
      for (uint32_t from = 1; from <= survivors; ++from) {
        reveal.from_id = from;
        const bool withheld = attack == 1 && from <= 10 && ((about - 1) >> (from - 1)) & 1u;
        reveal.share.size = withheld ? 0 : secagg::kShareBytes;
        if (!withheld) {
          secagg::ShamirShare key_share;
          if (!reveal.self_mask) (void)key_dealer.share_for(from, key_share);
          secagg::share_to_bytes(reveal.self_mask ? mine[from] : key_share,
                                 MutableByteSpan(reveal.share.bytes, secagg::kShareBytes));
        }
        if (!server.on_reveal(from, reveal).ok()) state.SkipWithError("reveal refused");
      }
    }
    server_heap = static_cast<double>(mallinfo2().uordblks - heap_before);
    const double t0 = thread_cpu_seconds();
    const auto sum = server.finish(random);
    finish_seconds = thread_cpu_seconds() - t0;
    if (!sum.ok()) state.SkipWithError(server.abort_reason().c_str());
    if (attack == 2 && server.disputes().size() != n) state.SkipWithError("disputes");
  }
  state.counters["finish_s"] = finish_seconds;
  state.counters["server_heap_B"] = server_heap;
}
BENCHMARK(BM_FinishAtThousand)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(3)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

// One client's cost in a whole session (fedstat-secagg-sim's figures): L = 1000, 5 % of the
// clients dropping before each of rounds 1, 2 and 3, one thread; the complete graph with
// t = ⌈2n/3⌉ (argument 0) or the sparse graph with (k, t) chosen for n at δ = γ = 5 % (argument
// 1). Counters: the client's seconds in all rounds and in the share round (round 1), the bytes it
// sends, the server's seconds, and k. The reporter prints sparse / complete per n.
void BM_SessionPerClient(benchmark::State& state) {
  const bool sparse = state.range(0) == 1;
  host::SecAggSimConfig config;
  config.clients = static_cast<uint32_t>(state.range(1));
  config.length = 1000;
  config.drop_before_sharing = config.drop_before_masking = config.drop_before_unmasking =
      config.clients / 20;
  config.threads = 1;
  config.threshold = (2 * config.clients + 2) / 3;
  if (sparse) {
    const auto graph = secagg::choose_sparse_graph(config.clients, secagg::SecAggThreatModel{});
    if (!graph.ok()) {
      state.SkipWithError(graph.status().message());
      return;
    }
    config.degree = graph.value().degree;
    config.threshold = graph.value().threshold;
  }
  host::SecAggSimResult r;
  for (auto _ : state) r = host::run_secagg_simulation(config);
  if (!r.ok) state.SkipWithError("the session did not sum correctly");
  double client = 0, server = 0;
  for (int k = 0; k < 4; ++k) {
    client += r.client_seconds[k];
    server += r.server_seconds[k];
  }
  state.counters["client_s"] = client;
  state.counters["share_s"] = r.client_seconds[1];
  state.counters["bytes"] = r.bytes_per_client;
  state.counters["server_s"] = server;
  state.counters["degree"] = config.degree;
}
BENCHMARK(BM_SessionPerClient)
    ->Args({0, 100})
    ->Args({1, 100})
    ->Args({0, 300})
    ->Args({1, 300})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

// BM_FinishAtThousand/3 on the sparse graph: n clients (the argument: 1024, as there; 10,000),
// (k, t) chosen for n at δ = γ = 5 % (k = 62, t = 43 at 1024), 10 % dropped after sharing, each
// client sharing with and revealing about its k neighbours only (roster_for), one 64-word chunk
// per survivor. A dropped client's pairwise masks are recomputed only with its neighbours in U3
// (about 0.9·k X25519 multiplications, not |U3|), so finish() should cost about k/n of the
// complete graph's. Counters: finish_s; server_heap_B, the heap the server holds (mallinfo2)
// after every reveal is in, before finish() — O(n·k) shares and reveals (the bench's own vectors,
// about 0.1 KB per client, included).
void BM_SparseFinish(benchmark::State& state) {
  const uint32_t n = static_cast<uint32_t>(state.range(0)), length = 64;
  const auto graph = secagg::choose_sparse_graph(n, secagg::SecAggThreatModel{});
  if (!graph.ok()) {
    state.SkipWithError(graph.status().message());
    return;
  }
  const uint32_t k = graph.value().degree, t = graph.value().threshold;
  const uint32_t survivors = n - n / 10;  // ids above it drop after sharing
  double finish_seconds = 0, server_heap = 0;
  for (auto _ : state) {
    SeededStream random(Seed256{}, 3);
    uint8_t secret[32] = {}, seed[32] = {4};
    const DroppedKeys dropped = dropped_keys(n, survivors, random, state);
    secagg::ShamirDealer dealer;
    (void)dealer.init(ByteSpan(secret, 32), t, ByteSpan(seed, 32));
    std::vector<secagg::ShamirShare> mine(survivors + 1);
    for (uint32_t from = 1; from <= survivors; ++from) (void)dealer.share_for(from, mine[from]);
    const size_t heap_before = mallinfo2().uordblks;
    host::SecAggServerConfig config;
    config.session = 9;
    config.threshold = t;
    config.vector_length = length;
    config.bits = 32;
    config.max_clients = n;
    config.degree = k;
    config.graph_seed[0] = 5;
    config.dropout_ppm = config.corrupt_ppm = 50000;
    host::SecAggServer server(config);
    advertise_keys(server, n, survivors, dropped, secret, random, state);
    if (!server.close_advertising().ok()) state.SkipWithError("advertising did not close");
    // Each client's neighbourhood (itself included), as its roster names it.
    std::vector<std::vector<uint32_t>> neighbourhood(n + 1);
    for (uint32_t id = 1; id <= n; ++id) {
      for (const auto& entry : server.roster_for(id)) {
        neighbourhood[id].push_back(entry.keys.client_id);
      }
    }
    fedstat_v1_SecAggShare share = fedstat_v1_SecAggShare_init_zero;
    share.session = 9;
    share.ciphertext.size = secagg::kShareCipherBytes;
    for (uint32_t from = 1; from <= n; ++from) {
      for (uint32_t to : neighbourhood[from]) {
        if (to == from) continue;
        share.from_id = from;
        share.to_id = to;
        if (!server.on_share(from, share).ok()) state.SkipWithError("share refused");
      }
    }
    if (!server.close_sharing().ok()) state.SkipWithError("sharing did not close");
    fedstat_v1_SecAggMaskedChunk chunk = fedstat_v1_SecAggMaskedChunk_init_zero;
    chunk.session = 9;
    chunk.words_count = length;
    for (uint32_t id = 1; id <= survivors; ++id) {
      chunk.client_id = id;
      (void)server.on_chunk(id, chunk);
    }
    if (!server.close_masking().ok()) state.SkipWithError(server.abort_reason().c_str());
    fedstat_v1_SecAggReveal reveal = fedstat_v1_SecAggReveal_init_zero;
    reveal.session = 9;
    reveal.share.size = secagg::kShareBytes;
    for (uint32_t about = 1; about <= n; ++about) {
      reveal.about_id = about;
      reveal.self_mask = about <= survivors;  // U3: its self-mask seed; U2 \ U3: its key
      secagg::ShamirDealer key_dealer;
      if (!reveal.self_mask) {
        (void)key_dealer.init(ByteSpan(dropped.secret[about].data(), 32), t, ByteSpan(seed, 32));
      }
      for (uint32_t from : neighbourhood[about]) {
        if (from > survivors) continue;
        reveal.from_id = from;
        secagg::ShamirShare key_share;
        if (!reveal.self_mask) (void)key_dealer.share_for(from, key_share);
        secagg::share_to_bytes(reveal.self_mask ? mine[from] : key_share,
                               MutableByteSpan(reveal.share.bytes, secagg::kShareBytes));
        if (!server.on_reveal(from, reveal).ok()) state.SkipWithError("reveal refused");
      }
    }
    server_heap = static_cast<double>(mallinfo2().uordblks - heap_before);
    const double t0 = thread_cpu_seconds();
    const auto sum = server.finish(random);
    finish_seconds = thread_cpu_seconds() - t0;
    if (!sum.ok()) state.SkipWithError(server.abort_reason().c_str());
  }
  state.counters["finish_s"] = finish_seconds;
  state.counters["server_heap_B"] = server_heap;
  state.counters["degree"] = k;
}
BENCHMARK(BM_SparseFinish)->Arg(1024)->Arg(10000)->Iterations(1)->Unit(benchmark::kSecond);

class RatioReporter : public bench::SameRunReporter {
 public:
  RatioReporter() : SameRunReporter("same run:") {}

 protected:
  std::string describe(const Run& run) override {
    const std::string name = run.benchmark_name();
    const std::string arg = bench::argument_of(name);
    const double ns = run.GetAdjustedRealTime();
    if (name.rfind("BM_RawAesCtr", 0) == 0) aes_ns_[arg] = ns;
    if (name.rfind("BM_MaskExpansion", 0) == 0 && aes_ns_.count(arg)) {
      char line[200];
      std::snprintf(line, sizeof(line),
                    "mask expansion L=%s (64-bit words): %.2f x raw AES-CTR time, %.0f MB/s\n",
                    arg.c_str(), ns / aes_ns_[arg], 8 * std::stod(arg) * 1e3 / ns);
      return line;
    }
    if (name.rfind("BM_SessionPerClient/", 0) == 0) return per_client(name, run);
    if (name.rfind("BM_FinishAtThousand/3", 0) == 0) {
      complete_finish_s_ = run.counters.at("finish_s").value;
      complete_heap_ = run.counters.at("server_heap_B").value;
    }
    if (name.rfind("BM_SparseFinish/", 0) == 0) return sparse_finish(arg, run);
    if (name.rfind("BM_Session", 0) != 0 && name.rfind("BM_OneClientOfThousand", 0) != 0) {
      return "";
    }
    std::string line = name + ": client s/B per round";
    for (int k = 0; k < 4; ++k) {
      char part[64];
      std::snprintf(part, sizeof(part), "  r%d %.4f s %.0f B", k,
                    run.counters.at("r" + std::to_string(k) + "_s").value,
                    run.counters.at("r" + std::to_string(k) + "_B").value);
      line += part;
    }
    return line + "\n";
  }

  // "BM_SessionPerClient/<graph>/<n>/...": the complete graph's run is kept, the sparse one
  // printed against it.
  std::string per_client(const std::string& name, const Run& run) {
    unsigned sparse = 0, n = 0;
    if (std::sscanf(name.c_str(), "BM_SessionPerClient/%u/%u", &sparse, &n) != 2) return "";
    auto value = [&](const char* counter) { return run.counters.at(counter).value; };
    char line[400];
    if (sparse == 0) {
      complete_[n] = {value("client_s"), value("share_s"), value("bytes"), value("server_s")};
      std::snprintf(line, sizeof(line),
                    "n=%u complete: a client %.4f s (share round %.4f s), %.0f B; server %.3f s\n",
                    n, value("client_s"), value("share_s"), value("bytes"), value("server_s"));
      return line;
    }
    std::snprintf(line, sizeof(line),
                  "n=%u sparse k=%.0f: a client %.4f s (share round %.4f s), %.0f B; server %.3f "
                  "s\n",
                  n, value("degree"), value("client_s"), value("share_s"), value("bytes"),
                  value("server_s"));
    std::string out = line;
    auto it = complete_.find(n);
    if (it != complete_.end()) {
      std::snprintf(line, sizeof(line),
                    "n=%u sparse / complete: client CPU %.3f, share round %.3f, bytes %.3f, "
                    "server %.3f (k/n = %.3f)\n",
                    n, value("client_s") / it->second[0], value("share_s") / it->second[1],
                    value("bytes") / it->second[2], value("server_s") / it->second[3],
                    value("degree") / n);
      out += line;
    }
    return out;
  }
  std::string sparse_finish(const std::string& arg, const Run& run) {
    const double n = std::stod(arg), k = run.counters.at("degree").value;
    const double s = run.counters.at("finish_s").value;
    const double heap = run.counters.at("server_heap_B").value;
    char line[400];
    std::snprintf(line, sizeof(line),
                  "finish() sparse n=%s k=%.0f, 10%% dropped: %.3f s; server heap %.1f MB (%.0f B "
                  "per client, %.0f B per client per neighbour)\n",
                  arg.substr(0, arg.find('/')).c_str(), k, s, heap / 1e6, heap / n, heap / (n * k));
    std::string out = line;
    if (n == 1024 && complete_finish_s_ > 0) {
      std::snprintf(line, sizeof(line),
                    "finish() n=1024, 10%% dropped, sparse / complete: %.4f (k/n = %.4f); server "
                    "heap sparse / complete %.4f (complete %.1f MB)\n",
                    s / complete_finish_s_, k / n, heap / complete_heap_, complete_heap_ / 1e6);
      out += line;
    }
    return out;
  }

 private:
  std::map<std::string, double> aes_ns_;
  std::map<unsigned, std::array<double, 4>> complete_;
  double complete_finish_s_ = 0, complete_heap_ = 0;
};

}  // namespace
}  // namespace fedstat

int main(int argc, char** argv) {
  fedstat::RatioReporter reporter;
  return fedstat::bench::run_benchmarks(argc, argv, reporter);
}
