#include "host_server/estimate/client_emulation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "host_server/estimate/host_common.h"
#include "host_server/secagg/secagg_simulation.h"
#include "sdk/base/item_hash.h"
#include "sdk/noise/rational.h"
#include "sdk/sketch/stability_histogram.h"
#include "sdk/tasks/kl_answer_task.h"

namespace fedstat {
namespace host {
namespace {

size_t capacity_for(size_t distinct) {
  size_t capacity = 2;
  while (capacity < 2 * distinct) capacity *= 2;
  return capacity;
}

// A Skellam share sampler per number of clients in a sum (μ/k rounded up), built on demand.
class ShareSamplers {
 public:
  explicit ShareSamplers(double sum_lambda) : sum_lambda_(sum_lambda) {}
  const noise::NoiseSampler& for_clients(size_t k) {
    auto it = samplers_.find(k);
    if (it != samplers_.end()) return *it->second;
    const noise::Rational share = value_or_throw(
        noise::rational_at_least(sum_lambda_ / static_cast<double>(k)), "skellam share");
    auto sampler = std::make_unique<noise::NoiseSampler>();
    check(sampler->init(noise::NoiseSpec{noise::NoiseKind::kSkellam, share, 1}), "skellam share");
    return *(samplers_[k] = std::move(sampler));
  }

 private:
  double sum_lambda_;
  std::map<size_t, std::unique_ptr<noise::NoiseSampler>> samplers_;
};

}  // namespace

EmulatedClients split_across_clients(const ItemCounts& data, uint32_t clients, RandomBits& bits) {
  if (clients == 0) throw std::invalid_argument("there must be at least one client");
  // Unit u of item i goes to client ⌊hash(i, u)·clients/2^32⌋ under a key from `bits`: a
  // function of (i, u) alone, so changing one item of the file moves one unit, not the split of
  // every later unit.
  const ItemHasher hasher(value_or_throw(bits.bits(64), "splitting"),
                          value_or_throw(bits.bits(64), "splitting"));
  auto client_of = [&](uint32_t id, uint64_t unit) {
    const uint64_t h = hasher.hash_id((uint64_t{id} << 32) ^ unit);
    return static_cast<size_t>(((h >> 32) * clients) >> 32);
  };
  std::vector<std::unordered_map<uint32_t, uint64_t>> held(clients);
  const bool per_unit = data.total <= (uint64_t{1} << 26);
  for (const ItemCount& item : data.items) {
    if (clients == 1) {
      // Every unit goes to the one client: the same counts, their ids inserted in the same order
      // as unit by unit (an id at its first unit), without hashing each unit (a server plans
      // each data_shift task's reference this way).
      if (item.count > 0) held[0][item.id] += item.count;
      continue;
    }
    uint64_t remainder = item.count;
    if (!per_unit) {
      const uint64_t share = item.count / clients;
      if (share > 0) {
        for (auto& client : held) client[item.id] += share;
      }
      remainder = item.count % clients;
    }
    for (uint64_t unit = 0; unit < remainder; ++unit) held[client_of(item.id, unit)][item.id] += 1;
  }
  EmulatedClients result;
  for (auto& items : held) {
    auto client = std::make_unique<EmulatedClient>();
    client->table.resize(capacity_for(items.size()));
    check(client->histogram.init(
              Span<histogram::SparseEntry>(client->table.data(), client->table.size())),
          "client histogram");
    for (const auto& [id, count] : items) {
      // As on a device, a count stops at the 32-bit counter's top (a device refuses the add
      // that would overflow it): never a refusal that depends on the data. The table has room.
      check(client->histogram.add(id, static_cast<uint32_t>(std::min<uint64_t>(count, 0xFFFFFFFF))),
            "client histogram");
    }
    result.push_back(std::move(client));
  }
  return result;
}

EmulatedClients split_examples(const LabelledExamples& data, uint32_t clients, size_t per_client) {
  if (clients == 0 || per_client == 0) {
    throw std::invalid_argument("examples: at least one client and one example per client");
  }
  if (data.count() / clients < per_client) {
    throw std::invalid_argument("examples: " + std::to_string(data.count()) + " rows, fewer than " +
                                std::to_string(clients) + " clients x " +
                                std::to_string(per_client) + " examples per client");
  }
  EmulatedClients result;
  for (uint32_t c = 0; c < clients; ++c) {
    auto client = std::make_unique<EmulatedClient>();
    client->examples = data.slice(size_t{c} * per_client, per_client);
    result.push_back(std::move(client));
  }
  return result;
}

KlSums collect_kl_sums(const KlPlan& plan, const EmulatedClients& clients, const KlOptions& options,
                       NoiseBits& noise, bool secure) {
  if (clients.size() != plan.clients) {
    throw std::invalid_argument("the plan was made for a different number of clients");
  }
  if (secure && (options.model != KlModel::kDist || !plan.every_client_every_round)) {
    throw std::invalid_argument(
        "secure aggregation applies to the dist model with every client answering (--rate 1)");
  }
  const size_t rounds = plan.points.size();
  KlSums sums;
  sums.counts.assign(rounds, 0);
  sums.totals.assign(rounds, 0);
  const bool dist = options.model == KlModel::kDist;
  ShareSamplers shares(dist ? kl_dist_noise(plan, options).sum_lambda : 0);

  if (plan.every_client_every_round) {
    // Each client answers every distinct point once; every round reads the point's sum.
    std::map<uint32_t, size_t> index_of;
    std::vector<uint32_t> distinct;
    for (uint32_t x : plan.points) {
      if (index_of.emplace(x, distinct.size()).second) distinct.push_back(x);
    }
    std::vector<int64_t> point_sums(distinct.size(), 0), answer(distinct.size());
    std::vector<std::vector<uint64_t>> words;  // secure: each client's answers mod 2^64
    uint64_t all_totals = 0;
    for (size_t c = 0; c < clients.size(); ++c) {
      uint64_t total = 0;
      const Span<const uint32_t> points(distinct.data(), distinct.size());
      const Span<int64_t> out(answer.data(), answer.size());
      if (dist) {
        check(tasks::answer_kl_points_noised(clients[c]->histogram, points,
                                             shares.for_clients(clients.size()),
                                             noise.stream(1 + c), out, &total),
              "client answer");
      } else {
        check(tasks::answer_kl_points(clients[c]->histogram, points, out, &total), "client answer");
      }
      if (secure) {
        words.emplace_back(answer.begin(), answer.end());  // two's complement, mod 2^64
      } else {
        for (size_t i = 0; i < distinct.size(); ++i) point_sums[i] += answer[i];
      }
      all_totals += total;
    }
    if (secure) {
      const std::vector<uint64_t> sum = secure_sum(words, 64, noise.session_seed());
      for (size_t i = 0; i < distinct.size(); ++i) point_sums[i] = static_cast<int64_t>(sum[i]);
    }
    for (size_t t = 0; t < rounds; ++t) {
      sums.counts[t] = point_sums[index_of[plan.points[t]]];
      sums.totals[t] = all_totals;
    }
    return sums;
  }

  // Per-round client samples: a client answers each round it is in, freshly noised.
  for (size_t t = 0; t < rounds; ++t) {
    const uint32_t point = plan.points[t];
    for (uint32_t c : plan.round_clients[t]) {
      int64_t answer = 0;
      uint64_t total = 0;
      const Span<const uint32_t> points(&point, 1);
      if (dist) {
        check(tasks::answer_kl_points_noised(
                  clients[c]->histogram, points, shares.for_clients(plan.round_clients[t].size()),
                  noise.stream(1 + c), Span<int64_t>(&answer, 1), &total),
              "client answer");
      } else {
        check(tasks::answer_kl_points(clients[c]->histogram, points, Span<int64_t>(&answer, 1),
                                      &total),
              "client answer");
      }
      sums.counts[t] += answer;
      sums.totals[t] += total;
    }
  }
  return sums;
}

std::vector<std::vector<uint8_t>> sketch_clients(const EmulatedClients& clients,
                                                 const sketch::ShiftSketchParams& params,
                                                 double epsilon, NoiseBits& noise) {
  std::vector<uint64_t> memory((sketch::shift_sketch_memory_bytes(params) + 7) / 8);
  std::vector<std::vector<uint8_t>> reports;
  if (!(epsilon >= 0) || !std::isfinite(epsilon)) {
    throw std::invalid_argument("local DP epsilon must be finite and > 0 (0: no local DP)");
  }
  sketch::StabilityParams stability;
  if (epsilon > 0) stability = value_or_throw(sketch::stability_params(epsilon, 1e-6), "ldp");
  for (size_t c = 0; c < clients.size(); ++c) {
    sketch::ShiftSketch sk;
    check(sk.init(params, MutableByteSpan(reinterpret_cast<uint8_t*>(memory.data()),
                                          sketch::shift_sketch_memory_bytes(params))),
          "sketch");
    const histogram::SparseHistogram* source = &clients[c]->histogram;
    std::vector<histogram::SparseEntry> noisy_table;
    histogram::SparseHistogram noisy;
    if (epsilon > 0) {
      noisy_table.resize(clients[c]->table.size());
      check(noisy.init(Span<histogram::SparseEntry>(noisy_table.data(), noisy_table.size())),
            "ldp histogram");
      check(sketch::stability_histogram(*source, stability, noise.stream(1 + c), noisy), "ldp");
      source = &noisy;
    }
    const Span<const histogram::SparseEntry> slots = source->slots();
    for (size_t i = 0; i < slots.size(); ++i) {
      if (slots[i].count > 0) check(sk.add(slots[i].id, slots[i].count), "sketch add");
    }
    std::vector<uint8_t> report(sketch::shift_sketch_report_bytes(params, sk.heap_size()));
    check(sk.serialize(MutableByteSpan(report.data(), report.size())).status(), "serialize");
    reports.push_back(std::move(report));
  }
  return reports;
}

}  // namespace host
}  // namespace fedstat
