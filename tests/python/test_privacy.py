"""The accountants through the module: equal to fedstat-privacy (which prints %.17g, so the
doubles compare exactly), the defining properties of each calibration, and refusals."""
import math

import numpy as np
import pytest

import fedstat
from conftest import run_tool_json


def test_equal_to_fedstat_privacy():
    cli = run_tool_json("fedstat-privacy", "--json", "skellam-epsilon", "--lambda", 10,
                        "--clients", 100, "--l1", 1, "--l2", 1, "--delta", 1e-5)
    ours = fedstat.skellam_epsilon(10, 100, 1, 1, 1e-5)
    assert (ours.epsilon, ours.best_order) == (cli["epsilon"], cli["best_order"])
    cli = run_tool_json("fedstat-privacy", "--json", "skellam-lambda", "--epsilon", 1.28,
                        "--delta", 1e-8, "--l1", 100, "--l2", 10, "--clients", 50)
    assert fedstat.skellam_lambda(1.28, 1e-8, 100, 10, 50) == cli["lambda"]
    cli = run_tool_json("fedstat-privacy", "--json", "agm-sigma", "--epsilon", 1, "--delta",
                        1e-5, "--sensitivity", 1)
    assert fedstat.agm_sigma(1, 1e-5, 1) == cli["sigma"]
    cli = run_tool_json("fedstat-privacy", "--json", "gauss-sigma", "--epsilon", 0.5, "--delta",
                        1e-5, "--sensitivity", 2)
    assert fedstat.gauss_sigma(0.5, 1e-5, 2) == cli["sigma"]


def test_calibrations_are_the_smallest_that_meet_the_target():
    # Analytic Gaussian: sigma meets delta; 0.1% less noise does not.
    for eps, delta, sens in ((1, 1e-5, 1), (0.25, 1e-6, 3), (4, 1e-3, 0.5)):
        sigma = fedstat.agm_sigma(eps, delta, sens)
        assert fedstat.gaussian_delta(eps, sigma, sens) <= delta
        assert fedstat.gaussian_delta(eps, sigma * 0.999, sens) > delta
    # Classical: sigma = sens * sqrt(2 ln(1.25/delta)) / eps (Dwork & Roth), and never below AGM.
    sigma = fedstat.gauss_sigma(0.5, 1e-5, 2)
    assert sigma == pytest.approx(2 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5, rel=1e-12)
    assert sigma >= fedstat.agm_sigma(0.5, 1e-5, 2)
    # Skellam: the smallest lambda meets epsilon; 0.1% less does not.
    lam = fedstat.skellam_lambda(1.0, 1e-6, 4, 2, 20)
    assert fedstat.skellam_epsilon(lam, 20, 4, 2, 1e-6).epsilon <= 1.0
    assert fedstat.skellam_epsilon(lam * 0.999, 20, 4, 2, 1e-6).epsilon > 1.0
    # More clients at the same lambda each: a larger total mean, a smaller epsilon.
    assert (fedstat.skellam_epsilon(5, 200, 1, 1, 1e-6).epsilon
            < fedstat.skellam_epsilon(5, 100, 1, 1, 1e-6).epsilon)


def test_mixture_and_composition_reduce_to_one_release():
    one = fedstat.skellam_epsilon(3, 50, 2, 1.5, 1e-6)
    for f in (fedstat.skellam_epsilon_mixture, fedstat.skellam_epsilon_composed):
        e = f(3, 50, np.array([[2, 1.5]]), 1e-6)
        assert e.epsilon == pytest.approx(one.epsilon, rel=1e-12)
        assert e.best_order == one.best_order
    # Two identical releases compose to twice the RDP at every order.
    assert fedstat.skellam_rdp(8, 2, 1.5, 150) > 0
    two = fedstat.skellam_epsilon_composed(3, 50, [[2, 1.5], [2, 1.5]], 1e-6)
    assert two.epsilon > one.epsilon
    rdp = 2 * fedstat.skellam_rdp(two.best_order, 2, 1.5, 150)
    assert two.epsilon == pytest.approx(fedstat.rdp_to_dp(two.best_order, rdp, 1e-6), rel=1e-12)
    # A mixture over a harmless batch and this one costs less than this one alone.
    mixed = fedstat.skellam_epsilon_mixture(3, 50, [[2, 1.5], [0, 0]], 1e-6)
    assert mixed.epsilon < one.epsilon
    lam = fedstat.skellam_lambda_composed(1.0, 1e-6, [[2, 1.5], [2, 1.5]], 50)
    assert fedstat.skellam_epsilon_composed(lam, 50, [[2, 1.5], [2, 1.5]], 1e-6).epsilon <= 1.0


def test_other_accountants():
    assert fedstat.discrete_laplace_epsilon(2.0, 3) == pytest.approx(1.5)
    # Truncation at B adds the mass of the Delta outermost outputs a neighbour cannot reach.
    q = math.exp(-1 / 2.0)
    ks = np.arange(-10, 11)
    expected = sum(q**k for k in (10,)) / sum(q ** abs(ks))
    assert fedstat.truncated_discrete_laplace_delta(2.0, 10, 1) == pytest.approx(expected)
    s = fedstat.rsgd_ar_sensitivities(0.01, 1.0, 5, 0.5, 32, 1.0, 10)
    assert s.shape == (10,) and s.dtype == np.float64 and np.all(s > 0)
    t = fedstat.rsgd_ar_schedule_sensitivities(0.01, 1.0, 5, 10, 0.5, 32, 1.0, 10)
    assert t.shape == (10,) and np.all(t > 0)
    l1, l2 = fedstat.discretised_sensitivity(1.0, 100.0, 0.5, 16)
    assert l2 == pytest.approx(100 + 2 * 0.5 * 4) and l1 == pytest.approx(min(4 * l2, l2**2))


@pytest.mark.parametrize("call, message", [
    (lambda: fedstat.skellam_epsilon(10, 100, 1, 1, float("nan")), "delta must lie"),
    (lambda: fedstat.skellam_epsilon(10, 100, 1, 1, 1.0), "delta must lie"),
    (lambda: fedstat.skellam_epsilon(-10, 100, 1, 1, 1e-5), "lambda per client must be positive"),
    (lambda: fedstat.skellam_epsilon(10, 0, 1, 1, 1e-5), "at least one client"),
    (lambda: fedstat.skellam_epsilon(10, -3, 1, 1, 1e-5), "clients must be a whole number"),
    (lambda: fedstat.skellam_epsilon(10, 2**40, 1, 1, 1e-5), "clients must be a whole number"),
    (lambda: fedstat.skellam_epsilon(10, 5, float("inf"), 1, 1e-5), "sensitivities must be finite"),
    (lambda: fedstat.skellam_lambda(1e-300, 1e-9, 1e15, 1e15, 1), "no per-client lambda"),
    (lambda: fedstat.agm_sigma(float("nan"), 1e-5, 1), "agm_sigma"),
    (lambda: fedstat.agm_sigma(1, 1e-5, -1), "agm_sigma"),
    (lambda: fedstat.gauss_sigma(2, 1e-5, 1), "gauss_sigma"),
    (lambda: fedstat.skellam_rdp(1, 1, 1, 10), "alpha"),
    (lambda: fedstat.skellam_epsilon_mixture(3, 5, np.zeros((0, 2)), 1e-6), "no batches"),
    (lambda: fedstat.skellam_epsilon_mixture(3, 5, [[1, 2, 3]], 1e-6), "two columns"),
    (lambda: fedstat.rsgd_ar_sensitivities(0.01, 1.0, 5, 0.5, 32, 1.0, 0), "batches"),
    (lambda: fedstat.discretised_sensitivity(1.0, 100.0, -0.5, 16), "beta must be finite"),
    (lambda: fedstat.discretised_sensitivity(float("nan"), 100.0, 0.5, 16), "l2 and beta"),
    (lambda: fedstat.discretised_sensitivity(1.0, 0.0, 0.5, 16), "gamma finite and > 0"),
    (lambda: fedstat.truncated_discrete_laplace_delta(2.0, 2**64 - 1, 1), "bound"),
])
def test_refusals_are_value_errors_with_the_sdks_message(call, message):
    with pytest.raises(ValueError, match=message):
        call()
