// federated_logreg: Sk-RSGD-AR end to end on a CSV data set (002 Algorithm 1, one round).
//
//   federated_logreg --data FILE.csv --clients N --epsilon E --delta D [--gamma G] [--beta B]
//                    [--bits b] [--seed S] [--epochs T] [--batches m] [--json]
//
// Each CSV row is "label,feature1,...,featureK", label in {−1, 1} or {0, 1}, every field a finite
// decimal number read strictly (host_server/estimate/csv_fields.h: no empty field, hex, inf/nan
// or trailing text; errors name the file, line and field). The rows are shuffled
// (seeded) and split 80/20 into train/test; features are standardised with the training
// statistics (a column whose statistics or standardised values overflow a double is refused,
// named), a constant 1 is appended, and each row is scaled to unit L2 norm (the trainer's
// assumption). The training rows are dealt round-robin to N clients. Printed: test accuracy of
// non-private centralised LR, non-private federated LR (one round, no noise), and Sk-RSGD-AR at
// (ε, δ), plus the per-client λ. This is a MEASUREMENT of the method, not a release: it prints
// non-private baselines, standardises with statistics of the whole training set (a deployment
// would use public ones: here one record moves every client's features), and seeds all its
// randomness, the noise included, for reproducibility (a device draws its noise from the CSPRNG;
// anyone who knows a seed can recompute seeded noise).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "host_server/estimate/csv_fields.h"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/cli_numbers.h"
#include "host_server/tools/progress.h"
#include "sdk/base/random_bits.h"
#include "sdk/base/seeded_stream.h"
#include "sdk/noise/tabulated_poisson.h"
#include "sdk/tasks/model_update_task.h"

using namespace fedstat;  // NOLINT: an example program
namespace tools = fedstat::tools;

namespace {

struct Table {
  std::vector<std::vector<double>> rows;
  std::vector<int8_t> labels;
};

bool read_csv(const std::string& path, Table& table, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot open " + path;
    return false;
  }
  std::string line;
  size_t width = 0, number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::vector<double> values;
    try {
      values = host::parse_decimal_row(line, path, number);  // strict: csv_fields.h
    } catch (const std::runtime_error& e) {
      error = e.what();
      return false;
    }
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (values.size() < 2) {
      error = where + "needs a label and at least one feature";
      return false;
    }
    if (width == 0) width = values.size();
    if (values.size() != width) {
      error = where + std::to_string(values.size()) + " fields; the first row has " +
              std::to_string(width);
      return false;
    }
    const double label = values[0];
    if (label != 1 && label != -1 && label != 0) {
      error = where + "field 1: the label must be -1, 0 or 1";
      return false;
    }
    table.labels.push_back(static_cast<int8_t>(label == 1 ? 1 : -1));
    table.rows.emplace_back(values.begin() + 1, values.end());
  }
  if (in.bad()) {
    error = path + ": read error";
    return false;
  }
  if (table.rows.size() < 10) {
    error = "need at least 10 rows";
    return false;
  }
  return true;
}

// Per-feature mean and standard deviation over the training rows. A column whose statistics
// overflow a double (values near ±1e308 make (x − mean)² infinite) would turn every feature of
// every row into 0 after standardisation; it is refused, naming the column (its CSV field).
bool standardisation(const Table& table, const std::vector<size_t>& order, size_t train_count,
                     std::vector<double>& mean, std::vector<double>& scale, std::string& error) {
  const size_t width = table.rows[0].size();
  mean.assign(width, 0);
  scale.assign(width, 0);
  for (size_t i = 0; i < train_count; ++i) {
    for (size_t k = 0; k < width; ++k) mean[k] += table.rows[order[i]][k] / train_count;
  }
  for (size_t i = 0; i < train_count; ++i) {
    for (size_t k = 0; k < width; ++k) {
      const double d = table.rows[order[i]][k] - mean[k];
      scale[k] += d * d / train_count;
    }
  }
  for (size_t k = 0; k < width; ++k) {
    if (!std::isfinite(mean[k]) || !std::isfinite(scale[k])) {
      error = "feature column " + std::to_string(k + 1) + " (CSV field " + std::to_string(k + 2) +
              "): its mean or variance overflows a double; rescale that column";
      return false;
    }
    scale[k] = scale[k] > 0 ? std::sqrt(scale[k]) : 1;
  }
  return true;
}

// Row-major unit-norm features (standardised with `mean`/`scale`, bias appended).
struct Dataset {
  std::vector<float> features;
  std::vector<int8_t> labels;
  size_t dimension = 0;
  tasks::Examples view() const {
    return tasks::Examples{Span<const float>(features.data(), features.size()),
                           Span<const int8_t>(labels.data(), labels.size()), dimension};
  }
};

// Appends `row` standardised, with the bias, at unit norm. False (naming the column) when a
// standardised value overflows, as a test row far outside the training range can.
bool append(Dataset& data, const std::vector<double>& row, int8_t label,
            const std::vector<double>& mean, const std::vector<double>& scale, std::string& error) {
  std::vector<double> x(row.size() + 1);
  double norm2 = 0;
  for (size_t k = 0; k < row.size(); ++k) {
    x[k] = (row[k] - mean[k]) / scale[k];
    norm2 += x[k] * x[k];
    if (!std::isfinite(norm2)) {
      error = "feature column " + std::to_string(k + 1) + " (CSV field " + std::to_string(k + 2) +
              "): a standardised value overflows a double; rescale that column";
      return false;
    }
  }
  x.back() = 1;
  norm2 += 1;
  for (double v : x) data.features.push_back(static_cast<float>(v / std::sqrt(norm2)));
  data.labels.push_back(label);
  data.dimension = x.size();
  return true;
}

int fail(const char* what, const Status& s) {
  std::fprintf(stderr, "federated_logreg: %s: %s\n", what, s.message());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"federated_logreg: Sk-RSGD-AR federated logistic regression (002) on a CSV file"};
  fedstat::tools::apply_conventions(app, "federated_logreg",
                                    {"federated_logreg --data breast_cancer.csv --clients 10 "
                                     "--epsilon 1.28 --delta 1e-8 --seed 1",
                                     "federated_logreg --data data.csv --clients 100 "
                                     "--epsilon 2 --delta 1e-6 --bits 20 --json"});
  std::string path;
  uint32_t clients = 10;
  double epsilon = 1.28, delta = 1e-8, gamma = 4096, beta = std::exp(-0.5);
  unsigned bits = 32;
  uint64_t seed = 1;
  uint32_t epochs = 20, batches = 4;
  bool json = false;
  app.add_option("--data", path, "CSV: label,feature1,...")->required();
  app.add_option("--clients", clients, "number of clients N")
      ->required()
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--epsilon", epsilon, "target epsilon")
      ->required()
      ->check(tools::positive_number());
  app.add_option("--delta", delta, "target delta, in (0, 1)")
      ->required()
      ->check(tools::open_unit_interval());
  app.add_option("--gamma", gamma, "quantisation scale")
      ->check(tools::positive_number())
      ->capture_default_str();
  app.add_option("--beta", beta, "conditional rounding bound, in [1/2, 1]")
      ->check(tools::finite_number(tools::NumberRange{0.5, 1, false, false, "[0.5, 1]"}))
      ->capture_default_str();
  app.add_option("--bits", bits, "modulus bits (32 or up to 64)")
      ->check(tools::whole_number(1, 64))
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of the split, the shuffles and the noise")
      ->capture_default_str();
  app.add_option("--epochs", epochs, "local epochs T")
      ->check(tools::whole_number(1, tasks::kMaxEpochs))
      ->capture_default_str();
  app.add_option("--batches", batches, "mini-batches m")
      ->check(tools::whole_number(1, 256))
      ->capture_default_str();
  app.add_flag("--json", json, "print a JSON object");
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;

  Table table;
  std::string error;
  if (!read_csv(path, table, error)) {
    std::fprintf(stderr, "federated_logreg: %s\n", error.c_str());
    return 1;
  }
  Seed256 key;
  for (int i = 0; i < 8; ++i) key.bytes[i] = static_cast<uint8_t>(seed >> (8 * i));
  SeededStream stream(key, 0);
  RandomBits random(stream);
  // 80/20 split of a seeded permutation.
  std::vector<size_t> order(table.rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[random.uniform_below(i).value()]);
  const size_t train_count = order.size() * 8 / 10;
  std::vector<double> mean, scale;
  if (!standardisation(table, order, train_count, mean, scale, error)) {
    std::fprintf(stderr, "federated_logreg: %s: %s\n", path.c_str(), error.c_str());
    return 1;
  }
  Dataset train, test;
  std::vector<Dataset> local(clients);
  for (size_t i = 0; i < order.size(); ++i) {
    const size_t row = order[i];
    const bool ok =
        i < train_count
            ? append(train, table.rows[row], table.labels[row], mean, scale, error) &&
                  append(local[i % clients], table.rows[row], table.labels[row], mean, scale, error)
            : append(test, table.rows[row], table.labels[row], mean, scale, error);
    if (!ok) {
      std::fprintf(stderr, "federated_logreg: %s: %s\n", path.c_str(), error.c_str());
      return 1;
    }
  }
  const size_t d = train.dimension;
  const size_t per_client = train_count / clients;
  if (per_client < batches) {
    std::fprintf(stderr, "federated_logreg: %zu training rows per client, fewer than %u batches\n",
                 per_client, batches);
    return 1;
  }

  tasks::ModelUpdateConfig config;
  config.trainer.epochs = epochs;
  config.trainer.batches = batches;
  config.trainer.averaging_interval = epochs;
  config.quantise.gamma = gamma;
  config.quantise.beta = beta;
  config.quantise.modulus_bits = bits;
  config.quantise.clip_norm = 10;
  config.quantise.rotation_seed = key;
  config.quantise.rotation_stream = 1;

  std::vector<uint8_t> memory(tasks::model_update_memory_bytes(train_count, d));
  Arena arena{MutableByteSpan(memory.data(), memory.size())};
  const std::vector<double> zero(d, 0);
  const Span<const double> zero_span(zero.data(), d);

  // Non-private centralised LR.
  std::vector<double> central(d);
  if (Status s = tasks::train_logistic(train.view(), zero_span, config.trainer, random, arena,
                                       Span<double>(central.data(), d));
      !s.ok()) {
    return fail("central training", s);
  }

  // One round of federated learning, without and with Skellam noise.
  config.examples_per_client = per_client;
  auto lambda = tasks::model_update_lambda(config, d, clients, epsilon, delta);
  if (!lambda.ok()) return fail("lambda", lambda.status());
  auto lambda_at_least = noise::rational_at_least(lambda.value());
  if (!lambda_at_least.ok()) return fail("lambda as a rational", lambda_at_least.status());
  const noise::Rational lambda_rational = lambda_at_least.value();
  noise::NoiseSampler skellam;
  if (Status s = skellam.init({noise::NoiseKind::kSkellam, lambda_rational, 1}); !s.ok()) {
    return fail("Skellam sampler", s);
  }
  const size_t length = quantise::encoded_length(d, config.quantise);
  tools::Progress progress("federated_logreg", "client update", 2 * uint64_t{clients});
  uint64_t updates_done = 0;
  auto federate = [&](const noise::NoiseSampler* noise, std::vector<double>& model) -> Status {
    std::vector<uint64_t> sum(length, 0);
    std::vector<uint32_t> report(length);
    std::vector<uint64_t> words(length);
    for (uint32_t c = 0; c < clients; ++c) {
      progress.update(updates_done++);
      if (bits <= 32) {  // 32-bit words on the wire, as a device would send them
        FEDSTAT_RETURN_IF_ERROR(tasks::model_update_report(local[c].view(), zero_span, config,
                                                           noise, random, arena,
                                                           Span<uint32_t>(report.data(), length)));
        words.assign(report.begin(), report.end());
      } else {
        FEDSTAT_RETURN_IF_ERROR(tasks::model_update_report(local[c].view(), zero_span, config,
                                                           noise, random, arena,
                                                           Span<uint64_t>(words.data(), length)));
      }
      FEDSTAT_RETURN_IF_ERROR(quantise::add_mod(Span<uint64_t>(sum.data(), length),
                                                Span<const uint64_t>(words.data(), length), bits));
    }
    model.assign(d, 0);
    std::vector<double> work(length), change(d);
    return tasks::apply_aggregate(Span<const uint64_t>(sum.data(), length), clients, config,
                                  Span<double>(work.data(), length), Span<double>(change.data(), d),
                                  Span<double>(model.data(), d));
  };
  std::vector<double> federated, private_model;
  if (Status s = federate(nullptr, federated); !s.ok()) return fail("federated round", s);
  if (Status s = federate(&skellam, private_model); !s.ok()) return fail("private round", s);
  progress.finish();

  const auto test_view = test.view();
  const double acc_central = tasks::accuracy(test_view, Span<const double>(central.data(), d));
  const double acc_federated = tasks::accuracy(test_view, Span<const double>(federated.data(), d));
  const double acc_private =
      tasks::accuracy(test_view, Span<const double>(private_model.data(), d));
  if (json) {
    std::printf(
        "{\"central\": %.6f, \"federated\": %.6f, \"private\": %.6f, \"epsilon\": %g, "
        "\"delta\": %g, \"lambda\": %.6f, \"clients\": %u, \"gamma\": %g, \"test_rows\": %zu}\n",
        acc_central, acc_federated, acc_private, epsilon, delta, lambda_rational.to_double(),
        clients, gamma, test.labels.size());
  } else {
    std::printf("rows: %zu train (%zu per client, %u clients), %zu test; d = %zu (+ bias)\n",
                train_count, per_client, clients, test.labels.size(), d - 1);
    std::printf(
        "test accuracy: central %.4f, federated %.4f, Sk-RSGD-AR %.4f at eps %g, delta %g "
        "(per-client Skellam lambda %.3f, gamma %g)\n",
        acc_central, acc_federated, acc_private, epsilon, delta, lambda_rational.to_double(),
        gamma);
  }
  return 0;
}
