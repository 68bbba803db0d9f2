// Task plans: declaration → Task message, task data and estimator (task_plan.h).
#include "host_server/tasks/task_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>

#include "host_server/estimate/client_emulation.h"
#include "host_server/estimate/dist_shift.h"
#include "host_server/estimate/hashed_tv.h"
#include "host_server/estimate/host_common.h"
#include "host_server/estimate/item_counts.h"
#include "host_server/estimate/kl_estimator.h"
#include "host_server/estimate/noise_bits.h"
#include "host_server/estimate/tv_estimator.h"
#include "host_server/hex.h"
#include "host_server/secagg/secagg_server.h"
#include "host_server/tasks/declaration_fields.h"
#include "host_server/tasks/heterogeneity_plan.h"
#include "host_server/tasks/model_update_plan.h"
#include "sdk/base/bytes.h"
#include "sdk/base/crypto.h"
#include "sdk/client/task_policy.h"
#include "sdk/noise/polya.h"
#include "sdk/secagg/graph.h"
#include "sdk/secagg/graph_parameters.h"
#include "sdk/secagg/signed_keys.h"
#include "sdk/sketch/shift_sketch.h"

namespace fedstat {
namespace host {
namespace {

using nlohmann::json;
using namespace declaration;  // NOLINT: the field readers every plan shares

Seed256 parse_seed(const std::string& hex) {
  const auto bytes = decode_hex32(hex);
  if (!bytes) refuse("seed", "must be 64 hex digits (256 bits)");
  Seed256 seed;
  std::memcpy(seed.bytes, bytes->data(), 32);
  return seed;
}

// data_shift with trust "dist" (issue 41, dist_shift.h): no sketch; each device sends its counts
// folded into B public buckets, clamped, plus one Pólya share of discrete Laplace(T) per bucket,
// s = threshold shares to one Laplace. T = Δ/ε (Δ = 1, or 2·max_events at user level:
// dist_shift_sensitivity): with the threshold's shares honest, a released sum costs a device
// exactly the declared ε (pure DP).
void plan_data_shift_dist(const json& p, const std::string& base_dir, const Seed256& seed,
                          TaskPlan& plan) {
  const std::string where = "data_shift";
  for (const char* sketch_field :
       {"rows", "width", "heap_capacity", "k", "domain", "local_epsilon"}) {
    if (p.contains(sketch_field)) {
      refuse(where + "." + sketch_field,
             "is a sketch field: a trust \"dist\" data_shift task has no sketch (its block is "
             "buckets, max_events, reference); for local DP on each device declare trust "
             "\"trusted\" (or \"none\") with local_epsilon");
    }
  }
  only_fields(p, {"buckets", "max_events", "reference"}, where);
  fedstat_v1_Task& task = plan.task;
  DistShiftConfig config;
  config.buckets = static_cast<uint32_t>(
      whole_number_or(p, "buckets", where, 1, sketch::kMaxHashedBuckets, kDefaultDistShiftBuckets));
  config.max_events =
      static_cast<uint32_t>(whole_number_or(p, "max_events", where, 0, 1u << 30, 0));
  config.bits = 32;
  config.max_clients = task.max_clients;
  config.shares = task.threshold;  // ≥ threshold shares in every released sum, or it aborts
  config.noise_scale = dist_shift_noise_scale(task.epsilon, config.max_events);
  if (config.noise_scale > static_cast<double>(noise::kMaxPolyaScale)) {
    refuse(where + ".max_events",
           "over epsilon is the noise scale T = " + std::to_string(config.noise_scale) +
               ", above the devices' largest (" + std::to_string(noise::kMaxPolyaScale) +
               "): lower max_events or raise epsilon");
  }
  check_dist_shift(config);  // the clamp ≥ 1 for every max_clients the plan takes (≤ 10^7)
  const sketch::BucketMap map(seed, config.buckets);
  const auto reference = std::make_shared<ItemCounts>(
      read_item_counts(resolve(base_dir, text(p, "reference", where))));
  if (reference->total == 0) refuse("data_shift.reference", "holds no item: nothing to compare");
  const auto reference_buckets =
      std::make_shared<std::vector<int64_t>>(bucket_counts(*reference, map));

  set_dist_shift_parameters(config, task);
  plan.exact = [reference](const std::string& data_dir) {
    return exact_tv(read_item_counts(data_dir + "/items.txt"), *reference);
  };
  plan.estimate_with = [config, reference_buckets](const std::vector<uint64_t>& sum,
                                                   uint32_t contributors, RandomBits&) {
    if (sum.size() != config.buckets) throw std::invalid_argument("data_shift: sum length");
    json result{{"kind", "data_shift"},
                {"model", "dist"},
                {"contributors", contributors},
                {"buckets", config.buckets},
                {"noise_scale", config.noise_scale},
                {"max_events", config.max_events}};
    try {
      const HashedTvEstimate e =
          estimate_hashed_tv(signed_sum(sum, config.bits), *reference_buckets, config.noise_scale,
                             std::max(1.0, static_cast<double>(contributors) / config.shares));
      result["estimate"] = e.tv;
      result["items"] = e.total_p;  // the clamped noised counts' sum (post-processing)
      result["negative_buckets"] = e.negative_p;
      result["threshold"] = e.threshold;  // τ when the noise called for it (hashed_tv.h), else 0
    } catch (const std::invalid_argument& refusal) {  // the fleet's side holds nothing positive
      result["estimate"] = nullptr;
      result["refused"] = refusal.what();
    }
    return result;
  };
}

// data_shift: the fleet's summed sketch against the reference's, candidates [0, domain).
void plan_data_shift(const json& d, const std::string& base_dir, const Seed256& seed,
                     TaskPlan& plan) {
  const std::string where = "data_shift";
  const json& p = member(d, where, "task");
  if (plan.task.trust == fedstat_v1_TrustModel_DIST) {
    plan_data_shift_dist(p, base_dir, seed, plan);
    return;
  }
  only_fields(p, {"rows", "width", "heap_capacity", "k", "domain", "local_epsilon", "reference"},
              where);
  sketch::ShiftSketchParams params;
  params.rows = static_cast<uint32_t>(whole_number(p, "rows", where, 1, 15));
  params.width = static_cast<uint32_t>(whole_number(p, "width", where, 1, 1u << 20));
  params.heap_capacity =
      static_cast<uint32_t>(whole_number(p, "heap_capacity", where, 1, 1u << 20));
  params.k = static_cast<uint32_t>(whole_number(p, "k", where, 1, 1u << 30));
  params.seed = seed;
  check(sketch::validate_params(params), "task declaration: data_shift");
  const uint32_t domain = static_cast<uint32_t>(whole_number(p, "domain", where, 1, 1u << 24));
  const double local_epsilon = real_number(p, "local_epsilon", where, 0, 100);
  const fedstat_v1_TrustModel trust = plan.task.trust;
  if (local_epsilon == 0 && trust != fedstat_v1_TrustModel_NONE) {
    refuse("data_shift.local_epsilon",
           "is 0 (no local privacy): declare the task with trust \"none\", or give "
           "local_epsilon > 0");
  }
  if (local_epsilon > 0 && (plan.task.epsilon != local_epsilon || plan.task.delta != 1e-6)) {
    refuse("epsilon/delta",
           "of a data_shift task must equal (local_epsilon, 1e-6): the stability histogram is "
           "what the devices' ledgers pay for");
  }
  const uint64_t words = uint64_t{params.rows} * params.width + 1;
  if (words > (1u << 22)) refuse("data_shift.rows x width", "is at most 2^22 counters");

  // The reference sketched with the same parameters and seed, as one device would: its items in
  // [0, domain) in the counters, every item in the total (client::build_data_shift), each count
  // at most 2^32 − 1 as a device's counter (split_across_clients).
  const auto reference = std::make_shared<ItemCounts>(
      read_item_counts(resolve(base_dir, text(p, "reference", where))));
  ItemCounts candidates;
  uint64_t reference_total = 0;
  for (const ItemCount& item : reference->items) {
    reference_total += std::min<uint64_t>(item.count, UINT32_MAX);
    if (item.id >= domain) continue;
    candidates.items.push_back(item);
    candidates.total += item.count;
  }
  if (candidates.items.empty()) {
    refuse("data_shift.reference", "holds no item in [0, domain): nothing to compare");
  }
  SeededBits split(1, 7);
  const EmulatedClients one = split_across_clients(candidates, 1, split.bits());
  NoiseBits no_noise = NoiseBits::seeded(1);
  const auto bytes =
      std::make_shared<std::vector<std::vector<uint8_t>>>(sketch_clients(one, params, 0, no_noise));
  const auto reference_sketch =
      std::make_shared<MergedSketch>(merge_reports(parse_reports(*bytes)));
  reference_sketch->total = static_cast<int64_t>(reference_total);

  fedstat_v1_DataShiftParameters& out = plan.task.parameters.data_shift;
  plan.task.which_parameters = fedstat_v1_Task_data_shift_tag;
  out.rows = params.rows;
  out.width = params.width;
  out.heap_capacity = params.heap_capacity;
  out.k = params.k;
  out.domain = domain;
  out.local_epsilon = local_epsilon;
  plan.task.vector_length = static_cast<uint32_t>(words);
  plan.task.bits = 64;
  plan.task.device_noise_lambda = 0;
  plan.exact = [reference](const std::string& data_dir) {
    return exact_tv(read_item_counts(data_dir + "/items.txt"), *reference);
  };
  plan.estimate_with = [params, domain, reference_sketch](const std::vector<uint64_t>& sum,
                                                          uint32_t contributors, RandomBits&) {
    const size_t counters = size_t{params.rows} * params.width;
    if (sum.size() != counters + 1) throw std::invalid_argument("data_shift: sum length");
    MergedSketch fleet;
    fleet.params = params;
    fleet.counters.resize(counters);
    for (size_t i = 0; i < counters; ++i) fleet.counters[i] = static_cast<int64_t>(sum[i]);
    fleet.total = static_cast<int64_t>(sum[counters]);
    TvOptions options;
    options.domain = domain;
    const TvEstimate e = estimate_tv(fleet, *reference_sketch, options);
    return json{{"kind", "data_shift"},
                {"estimate", e.topk},
                {"tv_topk", e.topk},
                {"tv_hh", e.hh},
                {"contributors", contributors},
                {"items", fleet.total},
                {"candidates", e.candidates}};
  };
}

// kl: PRIEST-KLD over T points drawn from Π; each device answers every distinct point once.
void plan_kl(const json& d, const std::string& base_dir, const Seed256& seed, TaskPlan& plan) {
  const std::string where = "kl";
  const json& p = member(d, where, "task");
  only_fields(p, {"reference", "rounds", "lambda", "tau"}, where);
  KlOptions options;
  switch (plan.task.trust) {
    case fedstat_v1_TrustModel_NONE:
      options.model = KlModel::kNone;
      break;
    case fedstat_v1_TrustModel_TRUSTED:
      options.model = KlModel::kTrusted;
      break;
    case fedstat_v1_TrustModel_TAGG:  // the TAgg runs this estimator, the collector never does
      options.model = KlModel::kTagg;
      break;
    case fedstat_v1_TrustModel_DIST:
      options.model = KlModel::kDist;
      break;
    default:
      refuse("trust", "of a kl task must be none, trusted, tagg or dist");
  }
  options.lambda = real_number(p, "lambda", where, -1e6, 1e6);
  options.tau = p.contains("tau") ? real_number(p, "tau", where, 1e-300, 1) : 1e-6;
  options.epsilon = plan.task.epsilon;
  options.delta = plan.task.delta;
  if (options.model == KlModel::kNone) {
    options.epsilon = 1;  // unused; validate_kl_options wants a value
    options.delta = 1e-6;
  }
  validate_kl_options(options);
  const uint32_t rounds = static_cast<uint32_t>(whole_number(p, "rounds", where, 1, 100000));
  const auto reference = std::make_shared<ItemCounts>(
      read_item_counts(resolve(base_dir, text(p, "reference", where))));
  SeededStream plan_stream(seed, 1);
  RandomBits plan_bits(plan_stream);
  auto kl_plan =
      std::make_shared<KlPlan>(plan_kl(*reference, rounds, plan.task.max_clients, 1.0, plan_bits));
  // The distinct points, ascending (docs/protocol.md), and where each round reads its sum.
  std::map<uint32_t, uint32_t> index_of;
  for (uint32_t x : kl_plan->points) index_of.emplace(x, 0);
  for (auto& entry : index_of) {
    entry.second = static_cast<uint32_t>(plan.data.size());
    plan.data.push_back(entry.first);
  }
  plan.task.which_parameters = fedstat_v1_Task_kl_tag;
  plan.task.parameters.kl.points = static_cast<uint32_t>(plan.data.size());
  plan.task.data_words = static_cast<uint32_t>(plan.data.size());
  plan.task.vector_length = static_cast<uint32_t>(plan.data.size() + 1);
  plan.task.bits = 64;
  if (options.model == KlModel::kDist) {
    // ≥ threshold shares in every released sum, or secure aggregation aborts.
    plan.task.device_noise_lambda =
        kl_dist_noise(*kl_plan, options).sum_lambda / plan.task.threshold;
  }
  plan.exact = [reference](const std::string& data_dir) {
    return exact_kl(*reference, read_item_counts(data_dir + "/items.txt")).divergence;
  };
  plan.estimate_with = [kl_plan, options, index_of](const std::vector<uint64_t>& sum,
                                                    uint32_t contributors, RandomBits& noise) {
    if (sum.size() != index_of.size() + 1) throw std::invalid_argument("kl: sum length");
    KlPlan round_plan = *kl_plan;
    round_plan.clients = contributors;
    KlSums sums;
    for (uint32_t x : round_plan.points) {
      sums.counts.push_back(static_cast<int64_t>(sum[index_of.at(x)]));
      sums.totals.push_back(sum.back());
    }
    json result{{"kind", "kl"},
                {"model", kl_model_name(options.model)},
                {"contributors", contributors},
                {"items", sum.back()}};
    try {
      const KlEstimate e = estimate_kl(round_plan, sums, options, noise);
      result["estimate"] = e.estimate;
      result["estimate_sd"] = e.estimate_sd;
      if (options.model == KlModel::kDist) {
        result["sum_lambda"] = e.dist_lambda;
        result["clamped_rounds"] = e.clamped;
        result["clamped_above_rounds"] = e.clamped_above;
      }
    } catch (const std::runtime_error& refusal) {
      result["estimate"] = nullptr;
      result["refused"] = refusal.what();
    }
    return result;
  };
}

fedstat_v1_TrustModel parse_trust(const std::string& name) {
  if (name == "none") return fedstat_v1_TrustModel_NONE;
  if (name == "trusted") return fedstat_v1_TrustModel_TRUSTED;
  if (name == "dist") return fedstat_v1_TrustModel_DIST;
  if (name == "tagg") return fedstat_v1_TrustModel_TAGG;
  refuse("trust", "must be none, trusted, tagg or dist (not \"" + name + "\")");
}

// A rate of the DIST threat model ("dropout_rate", "corrupt_fraction"), in ppm: default 5 %,
// never below the device's default floor (the device judges the graph at max(declared, floor),
// task_policy.h: a graph chosen for less would be declined by every device of default policy).
uint32_t threat_rate_ppm(const json& declaration, const char* name, const std::string& where,
                         uint32_t device_floor_ppm, const char* floor_field) {
  const double floor = device_floor_ppm / 1e6;
  if (!declaration.contains(name)) return device_floor_ppm;
  const double rate = real_number(declaration, name, where, 0, 1);
  if (rate >= 1) refuse(where + "." + name, "must be below 1 (a fraction of max_clients)");
  const uint32_t ppm = static_cast<uint32_t>(std::llround(rate * 1e6));
  if (ppm < device_floor_ppm) {
    refuse(where + "." + name,
           "is " + std::to_string(rate) + ", below " + std::to_string(floor) +
               ", the least a device with the SDK's default task policy assumes (TaskPolicy::" +
               floor_field +
               "): devices would judge the graph at that rate and decline one chosen for less; "
               "declare at least " +
               std::to_string(floor));
  }
  return ppm;
}

// "threshold", "graph", "dropout_rate", "corrupt_fraction" of a DIST task: the secure-aggregation
// graph and its threshold (task_plan.h), into Task.threshold and secagg_*.
// `signed_sessions`: the server signs its sessions (ServerConfig::ca_public_key), so a sparse
// graph must also meet the devices' signed rule (secagg::choose_signed_sparse_graph).
void plan_graph(const json& declaration, const std::string& where, fedstat_v1_Task& task,
                bool signed_sessions) {
  const client::TaskPolicy device_defaults;
  secagg::SecAggThreatModel model;
  model.dropout_ppm =
      threat_rate_ppm(declaration, "dropout_rate", where, device_defaults.min_assumed_dropout_ppm,
                      "min_assumed_dropout_ppm");
  model.corrupt_ppm =
      threat_rate_ppm(declaration, "corrupt_fraction", where,
                      device_defaults.min_assumed_corrupt_ppm, "min_assumed_corrupt_ppm");
  const Status usable = secagg::check_threat_model(model);
  if (!usable.ok()) {
    refuse(where + ".dropout_rate/corrupt_fraction",
           std::string("make no sparse graph possible: ") + usable.message() +
               " (corrupt_fraction + 2 * dropout_rate must be at most 0.9)");
  }
  std::string graph;
  if (declaration.contains("graph")) {
    graph = text(declaration, "graph", where);
    if (graph != "complete" && graph != "sparse") {
      refuse(where + ".graph", "must be \"complete\" or \"sparse\" (not \"" + graph + "\")");
    }
  }
  // The sparse graph's (k, t), searched only where the graph may be sparse.
  const Result<secagg::SecAggGraph> chosen =
      graph == "complete" ? Result<secagg::SecAggGraph>(not_found("the complete graph declared"))
      : signed_sessions   ? secagg::choose_signed_sparse_graph(task.max_clients, model)
                          : secagg::choose_sparse_graph(task.max_clients, model);
  if (graph.empty()) {
    // The default (task_plan.h says why): sparse when it cuts a device's roster at least
    // eightfold, and always where the complete graph cannot go (above 1024).
    const bool eighth =
        chosen.ok() && 8 * (uint64_t{chosen.value().degree} + 1) <= task.max_clients;
    graph = task.max_clients > kMaxSecAggClients || eighth ? "sparse" : "complete";
  }
  if (graph == "complete") {
    if (task.max_clients > kMaxSecAggClients) {
      refuse(where + ".max_clients",
             "is " + std::to_string(task.max_clients) +
                 ": the complete graph allows at most 1024 (every device holds every other's "
                 "keys); use \"graph\": \"sparse\" or lower max_clients");
    }
    // More than half of max_clients. A server that sends two disjoint groups of `threshold`
    // members different survivor sets (U3) could collect, from one, the self-mask shares of a
    // device and, from the other, its key's shares, and unmask its input; two disjoint groups
    // of t cannot fit among max_clients < 2t devices. Signed sessions (a server with
    // ca_public_key: the consistency round of Bonawitz et al. 2017 §4) need more, 2t > max +
    // ⌈γ·max⌉ at the devices' corrupt floor γ (secagg::signed_complete_threshold_holds): the
    // default meets it too, so a declaration that leaves the threshold out runs signed or not.
    uint32_t signed_least = task.max_clients / 2 + 1;  // at most ~max/40 steps (max ≤ 1024)
    while (!secagg::signed_complete_threshold_holds(signed_least, task.max_clients,
                                                    secagg::kDefaultCorruptFloorPpm)) {
      ++signed_least;
    }
    const uint32_t default_threshold = std::min<uint32_t>(
        task.min_clients, std::max<uint32_t>({2, (2 * task.min_clients + 2) / 3,
                                              task.max_clients / 2 + 1, signed_least}));
    task.threshold = static_cast<uint32_t>(
        whole_number_or(declaration, "threshold", where, 2, task.min_clients, default_threshold));
    if (2 * task.threshold <= task.max_clients) {
      refuse("threshold", "is " + std::to_string(task.threshold) +
                              ": a DIST task needs more than "
                              "half of max_clients (" +
                              std::to_string(task.max_clients) +
                              "), so that no two disjoint groups of threshold devices exist; "
                              "raise threshold (at most min_clients) or lower max_clients");
    }
    return;  // secagg_degree and the rates stay 0: the Task a protocol-3 device knows
  }
  if (!chosen.ok() && signed_sessions) {
    // The server fixes U1 knowing every ring position, so it can make every colluder of the
    // round one device's neighbour: devices require 2t > k + ceil(gamma * max_clients)
    // (secagg::signed_sparse_threshold_holds), which no k <= 126 meets above 1,420 devices at 5 %.
    refuse(where + ".graph",
           std::string("is \"sparse\" in a signed session (ca_public_key), but no signed sparse "
                       "graph fits max_clients ") +
               std::to_string(task.max_clients) + ": " + chosen.status().message() +
               " (devices require 2 * threshold > degree + ceil(corrupt fraction * max_clients), "
               "degree <= 126: at 5% corrupt that allows at most 1,420 devices; declare \"graph\": "
               "\"complete\" (max_clients <= 1024) or lower max_clients)");
  }
  if (!chosen.ok()) {
    refuse(where + ".graph", std::string("is \"sparse\", but no sparse graph fits max_clients ") +
                                 std::to_string(task.max_clients) + ": " +
                                 chosen.status().message() +
                                 " (use \"graph\": \"complete\" for a round this small)");
  }
  task.secagg_degree = chosen.value().degree;
  task.secagg_dropout_ppm = model.dropout_ppm;
  task.secagg_corrupt_ppm = model.corrupt_ppm;
  task.threshold = chosen.value().threshold;
  if (declaration.contains("threshold")) {
    task.threshold = static_cast<uint32_t>(
        whole_number(declaration, "threshold", where, 2, task.secagg_degree + 1));
    const Status bound =
        secagg::check_sparse_graph(task.max_clients, task.secagg_degree, task.threshold, model);
    if (!bound.ok()) {
      const Result<secagg::SecAggThresholdRange> range =
          secagg::sparse_threshold_range(task.max_clients, task.secagg_degree, model);
      std::string passing;
      if (range.ok()) {
        passing = "; thresholds " + std::to_string(range.value().min_threshold) + ".." +
                  std::to_string(range.value().max_threshold) + " pass at degree " +
                  std::to_string(task.secagg_degree);
      }
      refuse(where + ".threshold", "is " + std::to_string(task.threshold) +
                                       ", which the sparse graph's bound refuses for max_clients " +
                                       std::to_string(task.max_clients) + ": " + bound.message() +
                                       passing + " (or leave threshold out: it is chosen)");
    }
    const uint32_t ppm = std::max<uint32_t>(model.corrupt_ppm, secagg::kDefaultCorruptFloorPpm);
    if (signed_sessions && !secagg::signed_sparse_threshold_holds(
                               task.threshold, task.secagg_degree, task.max_clients, ppm)) {
      refuse(where + ".threshold",
             "is " + std::to_string(task.threshold) +
                 ", too low for a signed sparse session "
                 "(ca_public_key) at degree " +
                 std::to_string(task.secagg_degree) +
                 ": devices require 2 * threshold > degree + ceil(corrupt fraction * "
                 "max_clients), since the server can place every colluder next to one device; "
                 "leave threshold out (" +
                 std::to_string(chosen.value().threshold) +
                 " is chosen), declare \"graph\": \"complete\", or lower max_clients");
    }
  }
  // Secure aggregation releases no sum of fewer than `threshold` members: min_clients below it
  // would open a round that can only abort.
  if (task.min_clients < task.threshold) {
    refuse(where + ".min_clients", "is " + std::to_string(task.min_clients) +
                                       ", below the sparse graph's threshold " +
                                       std::to_string(task.threshold) + " (degree " +
                                       std::to_string(task.secagg_degree) + "): raise min_clients");
  }
}

}  // namespace

std::string sum_digest(const std::vector<uint64_t>& sum) {
  std::vector<uint8_t> bytes(8 * sum.size());
  for (size_t i = 0; i < sum.size(); ++i) store_le64(bytes.data() + 8 * i, sum[i]);
  uint8_t digest[32];
  check(crypto::sha256(ByteSpan(bytes.data(), bytes.size()), Span<uint8_t>(digest, 32)),
        "sum_sha256");
  return encode_hex(digest, sizeof(digest));
}

NoisedEstimator with_sum_digest(NoisedEstimator estimate, fedstat_v1_TrustModel trust) {
  // A trusted task's aggregate is exact: its hash would let anyone who knows all records but one
  // test every candidate for the last one, so it is never published.
  if (trust == fedstat_v1_TrustModel_TRUSTED || trust == fedstat_v1_TrustModel_TAGG) {
    return estimate;
  }
  return [estimate](const std::vector<uint64_t>& sum, uint32_t contributors, RandomBits& noise) {
    json result = estimate(sum, contributors, noise);
    result["sum_sha256"] = sum_digest(sum);
    return result;
  };
}

TaskEstimator with_plan_noise(NoisedEstimator estimate, uint64_t noise_seed) {
  const auto noise =
      std::make_shared<NoiseBits>(noise_seed ? NoiseBits::seeded(noise_seed) : NoiseBits::csprng());
  return [estimate, noise](const std::vector<uint64_t>& sum, uint32_t contributors) {
    return estimate(sum, contributors, noise->stream(0));
  };
}

uint32_t default_dist_threshold(uint32_t clients) {
  if (clients < 2) return 1;
  fedstat_v1_Task task = fedstat_v1_Task_init_zero;
  task.min_clients = task.max_clients = clients;
  plan_graph(json::object(), "task", task, /*signed_sessions=*/false);
  return task.threshold;
}

TaskPlan plan_task(const json& declaration, const std::string& base_dir,
                   uint64_t opened_unix_seconds, uint64_t noise_seed, bool signed_sessions) {
  TaskPlan plan;
  plan.signed_sessions = signed_sessions;
  fedstat_v1_Task& task = plan.task;
  const std::string where = "task";
  // A misspelt field (say "phase_timout_seconds") would otherwise leave its default in force;
  // the kind's block is checked the same way by its plan.
  only_fields(declaration,
              {"id",
               "kind",
               "trust",
               "epsilon",
               "delta",
               "min_clients",
               "max_clients",
               "threshold",
               "graph",
               "dropout_rate",
               "corrupt_fraction",
               "seed",
               "deadline_seconds",
               "admission_seconds",
               "phase_timeout_seconds",
               "reconnect_grace_seconds",
               "data_shift",
               "kl",
               "model_update",
               "heterogeneity"},
              where);
  task.task_id = static_cast<uint32_t>(whole_number(declaration, "id", where, 1, 1u << 31));
  const std::string kind = text(declaration, "kind", where);
  task.trust = parse_trust(text(declaration, "trust", where));
  task.epsilon = real_number(declaration, "epsilon", where, 0, 100);
  task.delta = real_number(declaration, "delta", where, 0, 1);
  if (task.trust != fedstat_v1_TrustModel_NONE && (task.epsilon <= 0 || task.delta >= 1)) {
    refuse("epsilon/delta", "must be > 0 and < 1 for a private task");
  }
  const bool dist = task.trust == fedstat_v1_TrustModel_DIST;
  // Up to the sparse graph's limit for DIST (plan_graph then holds the complete graph to 1024);
  // 1024 for the other trust models, as before.
  const uint64_t most_clients = dist ? secagg::kMaxSparseClients : kMaxSecAggClients;
  task.min_clients =
      static_cast<uint32_t>(whole_number(declaration, "min_clients", where, 2, most_clients));
  task.max_clients = static_cast<uint32_t>(
      whole_number(declaration, "max_clients", where, task.min_clients, most_clients));
  if (dist) {
    plan_graph(declaration, where, task, signed_sessions);
  } else {
    for (const char* field : {"graph", "dropout_rate", "corrupt_fraction"}) {
      if (declaration.contains(field)) {
        refuse(where + "." + field, "is the secure-aggregation graph's: only for trust \"dist\"");
      }
    }
    task.threshold = static_cast<uint32_t>(
        whole_number_or(declaration, "threshold", where, 2, task.min_clients,
                        std::min<uint32_t>(task.min_clients,
                                           std::max<uint32_t>(2, (2 * task.min_clients + 2) / 3))));
  }
  const uint64_t deadline = whole_number(declaration, "deadline_seconds", where, 1, 86400 * 365);
  task.deadline_unix_seconds = opened_unix_seconds + deadline;
  plan.admission_seconds = static_cast<uint32_t>(
      whole_number_or(declaration, "admission_seconds", where, 1, deadline, 30));
  plan.phase_timeout_seconds = static_cast<uint32_t>(
      whole_number_or(declaration, "phase_timeout_seconds", where, 1, deadline, 30));
  plan.reconnect_grace_seconds = static_cast<uint32_t>(
      whole_number_or(declaration, "reconnect_grace_seconds", where, 1, plan.phase_timeout_seconds,
                      std::min<uint32_t>(30, plan.phase_timeout_seconds)));
  const Seed256 seed = parse_seed(text(declaration, "seed", where));
  task.seed.size = 32;
  std::memcpy(task.seed.bytes, seed.bytes, 32);
  // The session id is public: derived from the task seed by a PRF, never the seed itself.
  SeededStream session_stream(seed, ~uint64_t{0});
  task.secagg_session = value_or_throw(session_stream.next_u64(), "secure aggregation session id");
  if (task.trust == fedstat_v1_TrustModel_TAGG && kind != "kl") {
    // The TAgg noises a kind's aggregate with that kind's central mechanism; only kl has one
    // written for two servers (kl_estimator.h's tagg model).
    refuse("trust", "\"tagg\" is served for kl tasks only (not \"" + kind + "\")");
  }
  // Only the kind's own block: another kind's (left over from an edit of "kind") is never read.
  for (const char* block : {"data_shift", "kl", "model_update", "heterogeneity"}) {
    if (kind != block && declaration.contains(block)) {
      refuse(block, "is the block of a " + std::string(block) + " task; this task's kind is \"" +
                        kind + "\" (remove the block, or fix the kind)");
    }
  }
  if (kind == "data_shift") {
    task.kind = fedstat_v1_TaskKind_DATA_SHIFT;
    plan_data_shift(declaration, base_dir, seed, plan);
  } else if (kind == "kl") {
    task.kind = fedstat_v1_TaskKind_KL_ANSWERS;
    plan_kl(declaration, base_dir, seed, plan);
  } else if (kind == "model_update") {
    task.kind = fedstat_v1_TaskKind_MODEL_UPDATE;
    plan_model_update(declaration, base_dir, plan);
  } else if (kind == "heterogeneity") {
    task.kind = fedstat_v1_TaskKind_HETEROGENEITY;
    plan_heterogeneity(declaration, base_dir, noise_seed, plan);
  } else {
    refuse("kind", "must be data_shift, kl, model_update or heterogeneity (not \"" + kind + "\")");
  }
  plan.estimate_with = with_sum_digest(std::move(plan.estimate_with), task.trust);
  plan.estimate = with_plan_noise(plan.estimate_with, noise_seed);
  return plan;
}

}  // namespace host
}  // namespace fedstat
