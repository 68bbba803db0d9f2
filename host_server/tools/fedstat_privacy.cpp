// fedstat-privacy: the SDK's privacy accountants from the command line. Prints one number, or a
// JSON object with --json.
//
//   fedstat-privacy skellam-epsilon --lambda L --clients N --l1 D1 --l2 D2 --delta D
//       ε of n clients each adding Sk(L) (the sum carries Sk(N·L)); integer Rényi orders 2..512
//   fedstat-privacy skellam-lambda --epsilon E --delta D --l1 D1 --l2 D2 --clients N
//       the smallest per-client L that achieves (E, D)
//   fedstat-privacy agm-sigma   --epsilon E --delta D --sensitivity S   (Balle & Wang 2018)
//   fedstat-privacy gauss-sigma --epsilon E --delta D --sensitivity S   (classical, E < 1)
//
// Allowed values, checked while the command line is parsed (a refused value exits non-zero with
// a message saying what is allowed): finite decimals with --epsilon in (0, 100] (beyond that a
// guarantee promises nothing), --delta in (0, 1), --lambda, --l1, --l2 and --sensitivity in
// (0, 1e15] (a zero sensitivity or λ means no noise; larger values overflow the formulas), and
// --clients a whole number from 1 to 2^32 − 1. NaN, ±inf and hexadecimal are refused.
#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "host_server/tools/cli_conventions.h"
#include "host_server/tools/cli_numbers.h"
#include "sdk/privacy/accountants.h"

namespace {

int fail(const fedstat::Status& status) {
  std::fprintf(stderr, "fedstat-privacy: %s\n", status.message());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fedstat::privacy;  // NOLINT: a small tool
  CLI::App app{"fedstat-privacy: privacy accountants (Skellam RDP, analytic/classical Gaussian)"};
  fedstat::tools::apply_conventions(
      app, "fedstat-privacy",
      {"fedstat-privacy skellam-epsilon --lambda 10 --clients 100 --l1 1 --l2 1 --delta 1e-5",
       "fedstat-privacy skellam-lambda --epsilon 1 --delta 1e-5 --l1 1 --l2 1 --clients 200",
       "fedstat-privacy --json agm-sigma --epsilon 1 --delta 1e-5 --sensitivity 1"});
  app.require_subcommand(1);
  bool json = false;
  app.add_flag("--json", json, "print a JSON object instead of one number");
  double lambda = 0, epsilon = 0, delta = 0, l1 = 0, l2 = 0, sensitivity = 0;
  uint32_t clients = 1;
  using fedstat::tools::finite_number;
  using fedstat::tools::NumberRange;
  const CLI::Validator epsilon_range = finite_number(NumberRange{0, 100, true, false, "(0, 100]"});
  const CLI::Validator delta_range = finite_number(NumberRange{0, 1, true, true, "(0, 1)"});
  const CLI::Validator magnitude = finite_number(NumberRange{0, 1e15, true, false, "(0, 1e15]"});
  const CLI::Validator client_count = fedstat::tools::whole_number(1, UINT32_MAX);

  auto* skellam_eps = app.add_subcommand("skellam-epsilon", "epsilon of distributed Skellam noise");
  skellam_eps->add_option("--lambda", lambda, "per-client Poisson mean L")
      ->required()
      ->check(magnitude);
  skellam_eps->add_option("--clients", clients, "number of clients N")
      ->required()
      ->check(client_count);
  skellam_eps->add_option("--l1", l1, "L1 sensitivity")->required()->check(magnitude);
  skellam_eps->add_option("--l2", l2, "L2 sensitivity")->required()->check(magnitude);
  skellam_eps->add_option("--delta", delta, "target delta")->required()->check(delta_range);

  auto* skellam_lam = app.add_subcommand("skellam-lambda", "smallest per-client Skellam lambda");
  skellam_lam->add_option("--epsilon", epsilon, "target epsilon")->required()->check(epsilon_range);
  skellam_lam->add_option("--delta", delta, "target delta")->required()->check(delta_range);
  skellam_lam->add_option("--l1", l1, "L1 sensitivity")->required()->check(magnitude);
  skellam_lam->add_option("--l2", l2, "L2 sensitivity")->required()->check(magnitude);
  skellam_lam->add_option("--clients", clients, "number of clients N")
      ->required()
      ->check(client_count);

  auto* agm = app.add_subcommand("agm-sigma", "analytic Gaussian mechanism sigma");
  auto* gauss = app.add_subcommand("gauss-sigma", "classical Gaussian mechanism sigma (eps < 1)");
  for (auto* sub : {agm, gauss}) {
    sub->add_option("--epsilon", epsilon, "target epsilon")->required()->check(epsilon_range);
    sub->add_option("--delta", delta, "target delta")->required()->check(delta_range);
    sub->add_option("--sensitivity", sensitivity, "L2 sensitivity")->required()->check(magnitude);
  }
  if (auto code = fedstat::tools::parse_command_line(app, argc, argv)) return *code;

  if (skellam_eps->parsed()) {
    auto r = skellam_epsilon(lambda, clients, Sensitivity{l1, l2}, delta);
    if (!r.ok()) return fail(r.status());
    if (json) {
      std::printf(
          "{\"epsilon\": %.17g, \"best_order\": %u, \"lambda\": %.17g, \"clients\": %u, "
          "\"delta\": %.17g}\n",
          r->epsilon, r->best_order, lambda, clients, delta);
    } else {
      std::printf("%.17g\n", r->epsilon);
    }
    return 0;
  }
  if (skellam_lam->parsed()) {
    auto r = skellam_lambda(epsilon, delta, Sensitivity{l1, l2}, clients);
    if (!r.ok()) return fail(r.status());
    if (json) {
      std::printf("{\"lambda\": %.17g, \"epsilon\": %.17g, \"delta\": %.17g, \"clients\": %u}\n",
                  r.value(), epsilon, delta, clients);
    } else {
      std::printf("%.17g\n", r.value());
    }
    return 0;
  }
  auto r = agm->parsed() ? gaussian_sigma_analytic(epsilon, delta, sensitivity)
                         : gaussian_sigma_classical(epsilon, delta, sensitivity);
  if (!r.ok()) return fail(r.status());
  if (json) {
    std::printf(
        "{\"sigma\": %.17g, \"epsilon\": %.17g, \"delta\": %.17g, \"sensitivity\": %.17g, "
        "\"calibration\": \"%s\"}\n",
        r.value(), epsilon, delta, sensitivity, agm->parsed() ? "analytic" : "classical");
  } else {
    std::printf("%.17g\n", r.value());
  }
  return 0;
}
