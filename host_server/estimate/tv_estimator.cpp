#include "host_server/estimate/tv_estimator.h"

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "sdk/sketch/sampling_weight.h"

namespace fedstat {
namespace host {
namespace {

struct Candidate {
  uint32_t item = 0;
  double value = 0;   // estimate of v_j = W_j·x_j
  double weight = 1;  // W_j
};

// count(y) of the header.
double count_at(const std::vector<Candidate>& c, double y, double k) {
  double count = 0;
  for (const Candidate& j : c) {
    const double magnitude = std::fabs(j.value);
    if (magnitude < y) continue;
    double q = j.weight > 1 ? (magnitude / y - 1) / (j.weight - 1) : 1;
    if (q > 1) q = 1;
    count += 1 + (k - 1) * q;
  }
  return count;
}

// The y with count(y) = r (count decreases in y), by bisection on log y.
double solve_rank(const std::vector<Candidate>& c, double r, double k) {
  double hi = 0;
  for (const Candidate& j : c) hi = std::max(hi, std::fabs(j.value));
  if (hi <= 0) return 0;
  double lo = hi * 1e-12;
  if (count_at(c, lo, k) < r) return lo;  // fewer samples than r anywhere: L ≈ 0
  for (int i = 0; i < 200; ++i) {
    const double mid = std::sqrt(lo * hi);
    (count_at(c, mid, k) >= r ? lo : hi) = mid;
    if (hi / lo < 1 + 1e-12) break;
  }
  return std::sqrt(lo * hi);
}

}  // namespace

std::vector<sketch::SketchReport> parse_reports(const std::vector<std::vector<uint8_t>>& bytes) {
  std::vector<sketch::SketchReport> parsed(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i) {
    const Status status =
        sketch::parse_sketch_report(ByteSpan(bytes[i].data(), bytes[i].size()), parsed[i]);
    if (!status.ok()) {
      throw std::runtime_error("client " + std::to_string(i) + "'s sketch: " + status.message());
    }
  }
  return parsed;
}

double exact_tv(const ItemCounts& p, const ItemCounts& q) {
  std::map<uint32_t, double> difference;
  for (const ItemCount& i : p.items) {
    difference[i.id] += static_cast<double>(i.count) / static_cast<double>(p.total);
  }
  for (const ItemCount& i : q.items) {
    difference[i.id] -= static_cast<double>(i.count) / static_cast<double>(q.total);
  }
  double l1 = 0;
  for (const auto& entry : difference) l1 += std::fabs(entry.second);
  return 0.5 * l1;
}

MergedSketch merge_reports(const std::vector<sketch::SketchReport>& reports) {
  if (reports.empty()) throw std::invalid_argument("no sketches to merge");
  MergedSketch merged;
  merged.params = reports[0].params;
  const size_t cells = size_t{merged.params.rows} * merged.params.width;
  std::vector<uint64_t> sum(cells, 0);
  uint64_t total = 0;
  for (const auto& r : reports) {
    if (!sketch::same_params(r.params, merged.params)) {
      throw std::invalid_argument("sketches with different parameters or seeds cannot merge");
    }
    for (size_t i = 0; i < cells; ++i) sum[i] += static_cast<uint64_t>(r.counter(i));
    total += static_cast<uint64_t>(r.total);
    for (size_t i = 0; i < r.heap_count; ++i) merged.heap_items.push_back(r.heap_item(i));
  }
  merged.counters.resize(cells);
  for (size_t i = 0; i < cells; ++i) merged.counters[i] = static_cast<int64_t>(sum[i]);
  merged.total = static_cast<int64_t>(total);
  std::sort(merged.heap_items.begin(), merged.heap_items.end());
  merged.heap_items.erase(std::unique(merged.heap_items.begin(), merged.heap_items.end()),
                          merged.heap_items.end());
  return merged;
}

void validate_tv_options(const TvOptions& options) {
  constexpr size_t kMaxCandidates = size_t{1} << 24;
  if (!(options.tau >= 0) || !std::isfinite(options.tau)) {
    throw std::invalid_argument("the HH threshold tau must be finite and >= 0 (0: the default)");
  }
  if (!(options.noise_margin > 0) || !std::isfinite(options.noise_margin)) {
    throw std::invalid_argument("the noise margin must be finite and above 0");
  }
  if (options.domain > kMaxCandidates || options.max_candidates > kMaxCandidates) {
    throw std::invalid_argument("the domain and max_candidates are at most 2^24");
  }
}

TvEstimate estimate_tv(const MergedSketch& p, const MergedSketch& q, const TvOptions& options) {
  validate_tv_options(options);
  if (!sketch::same_params(p.params, q.params)) {
    throw std::invalid_argument("P and Q were sketched with different parameters or seeds");
  }
  if (p.total <= 0 || q.total <= 0) throw std::invalid_argument("an empty distribution");
  if (p.total >= sketch::kMaxSketchTotal || q.total >= sketch::kMaxSketchTotal) {
    throw std::invalid_argument(
        "a summed sketch holds 2^28 items or more: its counters may have wrapped (scale the "
        "counts down or compare smaller samples)");
  }
  const sketch::ShiftSketchParams& params = p.params;
  const uint32_t rows = params.rows, width = params.width;
  const double k = params.k;
  const double scale = std::ldexp(1.0, sketch::kWeightFractionBits);
  std::vector<double> v(size_t{rows} * width);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = static_cast<double>(p.counters[i]) / (scale * static_cast<double>(p.total)) -
           static_cast<double>(q.counters[i]) / (scale * static_cast<double>(q.total));
  }
  const sketch::SketchHashes hashes(params);
  auto median_in = [&](const std::vector<double>& cells, uint32_t item) {
    double values[sketch::kMaxRows] = {};
    const uint64_t h = hashes.item_hash(item);  // one SipHash; the rows derive from it
    for (uint32_t r = 0; r < rows; ++r) {
      uint32_t bucket = 0;
      int sign = 1;
      hashes.locate_hash(h, r, bucket, sign);
      values[r] = sign * cells[size_t{r} * width + bucket];
    }
    std::sort(values, values + rows);
    return values[(rows - 1) / 2];
  };
  auto median_of = [&](uint32_t item) { return median_in(v, item); };
  // A heap can only vouch for items above its H-th largest value: below that, items of the
  // distribution may exist that no heap kept. Counts are non-negative, so |v_P − v_Q| ≤
  // max(v_P, v_Q), and a threshold at or above both heaps' floors misses no item.
  auto heap_floor = [&](const MergedSketch& m) {
    if (options.domain > 0 || m.heap_items.size() < params.heap_capacity) return 0.0;
    std::vector<double> cells(m.counters.size());
    for (size_t i = 0; i < cells.size(); ++i) {
      cells[i] = static_cast<double>(m.counters[i]) / (scale * static_cast<double>(m.total));
    }
    std::vector<double> values;
    for (uint32_t item : m.heap_items) values.push_back(std::fabs(median_in(cells, item)));
    std::nth_element(values.begin(), values.begin() + (params.heap_capacity - 1), values.end(),
                     std::greater<double>());
    return values[params.heap_capacity - 1];
  };
  const double heap_floor_value = std::max(heap_floor(p), heap_floor(q));

  // Candidates: the heaps' union, or a whole known domain.
  std::vector<Candidate> candidates;
  auto consider = [&](uint32_t item) { candidates.push_back(Candidate{item, median_of(item), 1}); };
  if (options.domain > 0) {
    for (uint32_t item = 0; item < options.domain; ++item) consider(item);
  } else {
    std::vector<uint32_t> items = p.heap_items;
    items.insert(items.end(), q.heap_items.begin(), q.heap_items.end());
    std::sort(items.begin(), items.end());
    items.erase(std::unique(items.begin(), items.end()), items.end());
    for (uint32_t item : items) consider(item);
  }
  const size_t limit = options.max_candidates > 0
                           ? options.max_candidates
                           : static_cast<size_t>(1.25 * static_cast<double>(width));
  if (candidates.size() > limit) {
    std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(limit),
                     candidates.end(), [](const Candidate& a, const Candidate& b) {
                       return std::fabs(a.value) > std::fabs(b.value);
                     });
    candidates.resize(limit);
  }
  for (Candidate& c : candidates) {
    c.weight = static_cast<double>(hashes.weight(c.item)) / scale;
  }

  double noise = 0;  // r.m.s. of what the candidates leave unexplained, per counter
  if (options.least_squares && !candidates.empty()) {
    const Eigen::Index m = static_cast<Eigen::Index>(candidates.size());
    Eigen::SparseMatrix<double> a(static_cast<Eigen::Index>(v.size()), m);
    std::vector<Eigen::Triplet<double>> entries;
    entries.reserve(candidates.size() * rows);
    for (Eigen::Index j = 0; j < m; ++j) {
      const uint64_t h = hashes.item_hash(candidates[static_cast<size_t>(j)].item);
      for (uint32_t r = 0; r < rows; ++r) {
        uint32_t bucket = 0;
        int sign = 1;
        hashes.locate_hash(h, r, bucket, sign);
        entries.emplace_back(static_cast<Eigen::Index>(size_t{r} * width + bucket), j, sign);
      }
    }
    a.setFromTriplets(entries.begin(), entries.end());
    Eigen::VectorXd b =
        Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
    Eigen::VectorXd guess(m);
    for (Eigen::Index j = 0; j < m; ++j) guess[j] = candidates[static_cast<size_t>(j)].value;
    Eigen::LeastSquaresConjugateGradient<Eigen::SparseMatrix<double>> solver;
    solver.setTolerance(1e-10);
    solver.setMaxIterations(500);
    solver.compute(a);
    const Eigen::VectorXd z = solver.solveWithGuess(b, guess);
    for (Eigen::Index j = 0; j < m; ++j) candidates[static_cast<size_t>(j)].value = z[j];
    const Eigen::VectorXd residual = b - a * z;
    noise = std::sqrt(residual.squaredNorm() / static_cast<double>(residual.size()));
  } else {
    double squares = 0;
    for (double c : v) squares += c * c;
    noise = std::sqrt(squares / static_cast<double>(v.size()));
  }

  // An item's value is W_j·(P(j) − Q(j)) with both shares in [0, 1]: no larger than W_j. A
  // value beyond it (noise, collisions, a forged sketch) is taken at W_j.
  for (Candidate& c : candidates) c.value = std::clamp(c.value, -c.weight, c.weight);

  TvEstimate result;
  result.candidates = candidates.size();
  const uint32_t heap = params.heap_capacity;
  // The recovery floor: the (m/2)-th largest |ẑ| and noise_margin × the per-counter residual
  // noise. An item whose value can reach a threshold at or above it is inside the recovered
  // candidates and well above the estimates' noise.
  std::vector<double> magnitudes;
  for (const Candidate& c : candidates) magnitudes.push_back(std::fabs(c.value));
  std::sort(magnitudes.begin(), magnitudes.end(), std::greater<double>());
  const double floor_value =
      std::max({magnitudes.empty() ? 0 : magnitudes[(magnitudes.size() - 1) / 2],
                options.noise_margin * noise, heap_floor_value});
  // HH: τ = 2k/H, raised to the floor when the candidates cannot support it.
  result.tau = options.tau > 0 ? options.tau : std::max(2 * k / heap, floor_value);
  result.hh = std::min(1.0, 0.5 * (result.tau / k) * count_at(candidates, result.tau, k));
  if (options.rank > 0) {
    result.rank = options.rank;
  } else {
    // Top-k: the largest rank (≤ k/2) whose threshold y_r stays at or above the floor.
    const double reachable = floor_value > 0 ? count_at(candidates, floor_value, k) : 1;
    result.rank = static_cast<uint32_t>(std::max(1.0, std::min(reachable, k / 2)));
  }
  result.window = options.window > 0 ? options.window : std::max<uint32_t>(1, result.rank / 4);
  if (result.window > result.rank) result.window = result.rank;
  // The window's ranks rank − window + 1 … rank, at most 16 of them evenly spaced.
  const uint32_t points = std::min<uint32_t>(result.window, 16);
  double sum = 0;
  for (uint32_t i = 0; i < points; ++i) {
    const double r = result.rank - std::floor(i * (result.window - 1.0) / std::max(1u, points - 1));
    sum += (r / k) * solve_rank(candidates, r, k);
  }
  result.topk = std::min(1.0, 0.5 * sum / points);  // a distance in [0, 1]
  result.noise = noise;
  return result;
}

}  // namespace host
}  // namespace fedstat
