"""The exact samplers through the module.

1. Seeded draws equal `fedstat-noise` (the same seed convention and stream), number for number.
2. Distribution checks with fixed seeds, each failing with probability below 1e-6 if the sampler
   is right (so a failure means a wrong sampler, not bad luck):
   - chi-square goodness of fit against the exact pmf, cells with expected count >= 5 (the
     outer ones lumped into two tail cells), critical value scipy.stats.chi2.isf(1e-6, cells-1);
   - the sample mean within 5 standard errors (two-sided normal tail 5.7e-7) and the sample
     variance within 5 of its standard errors, sqrt((mu4 - sigma^4)/n), from the distribution's
     own fourth moment.
"""
from fractions import Fraction
import math

import numpy as np
import pytest
from scipy import stats

import fedstat
from conftest import run_tool

P_FAIL = 1e-6


def chi_square_ok(samples, pmf, lo, hi):
    """Chi-square of integer `samples` against `pmf`, which must hold all but 1e-9 of its mass
    in [lo, hi]: cells of expected count >= 5, everything below (above) them lumped into the
    first (last). Returns (p >= P_FAIL, the statistic)."""
    n = len(samples)
    ks = np.arange(lo, hi + 1)
    probs = np.array([pmf(k) for k in ks])
    assert abs(probs.sum() - 1) < 1e-9, "the range must hold the distribution"
    big = np.nonzero(probs * n >= 5)[0]
    first, last = ks[big[0]], ks[big[-1]]
    middle = (ks > first) & (ks < last)
    expected = [probs[ks <= first].sum(), *probs[middle], probs[ks >= last].sum()]
    observed = [np.count_nonzero(samples <= first),
                *(np.count_nonzero(samples == k) for k in ks[middle]),
                np.count_nonzero(samples >= last)]
    expected = np.array(expected) * n
    chi2 = float((((np.array(observed) - expected) ** 2) / expected).sum())
    return chi2 < stats.chi2.isf(P_FAIL, len(expected) - 1), chi2


def moments_ok(samples, mean, variance, mu4):
    n = len(samples)
    z_mean = abs(samples.mean() - mean) / math.sqrt(variance / n)
    z_var = abs(samples.var() - variance) / math.sqrt((mu4 - variance**2) / n)
    return z_mean < 5 and z_var < 5, (z_mean, z_var)


@pytest.mark.parametrize("args, draw", [
    (["skellam", "--lambda", "10"], lambda s: fedstat.skellam("10", 300, seed=s)),
    (["skellam", "--lambda", "7/3", "--method", "integer"],
     lambda s: fedstat.skellam(Fraction(7, 3), 300, seed=s, method="integer")),
    (["poisson", "--lambda", "1000"], lambda s: fedstat.poisson(1000, 300, seed=s)),
    (["poisson", "--lambda", "2.5", "--method", "integer"],
     lambda s: fedstat.poisson(2.5, 300, seed=s, method="integer")),
    (["dlaplace", "--t", "3/2"], lambda s: fedstat.discrete_laplace("3/2", 300, seed=s)),
    (["dgauss", "--sigma2", "7/3"], lambda s: fedstat.discrete_gaussian("7/3", 300, seed=s)),
    (["polya", "--t", "2", "--clients", "10"],
     lambda s: fedstat.polya_share(2, 10, 300, seed=s)),
])
def test_seeded_draws_equal_fedstat_noise(args, draw):
    cli = np.array(run_tool("fedstat-noise", *args, "--n", 300, "--seed", 42).split(),
                   dtype=np.int64)
    ours = draw(42)
    assert ours.dtype == np.int64 and np.array_equal(ours, cli)
    assert not np.array_equal(draw(43), cli)  # the seed matters


def test_skellam_matches_its_pmf_and_moments():
    lam = 10
    x = fedstat.skellam(lam, 200000, seed=1)
    ok, chi2 = chi_square_ok(x, lambda k: stats.skellam.pmf(k, lam, lam), -40, 40)
    assert ok, chi2
    # Sk(lam): cumulants k2 = k4 = 2*lam, so mu4 = 2*lam + 3*(2*lam)^2.
    ok, z = moments_ok(x, 0, 2 * lam, 2 * lam + 12 * lam**2)
    assert ok, z


def test_discrete_laplace_matches_its_pmf_and_moments():
    t = 2.0
    q = math.exp(-1 / t)
    pmf = lambda k: (1 - q) / (1 + q) * q ** abs(k)  # noqa: E731
    x = fedstat.discrete_laplace(2, 200000, seed=2)
    ok, chi2 = chi_square_ok(x, pmf, -60, 60)
    assert ok, chi2
    ks = np.arange(-200, 201)
    w = np.array([pmf(k) for k in ks])
    var, mu4 = (w * ks**2).sum(), (w * ks**4).sum()
    ok, z = moments_ok(x, 0, var, mu4)
    assert ok, z


def test_discrete_gaussian_matches_its_pmf():
    sigma2 = 7 / 3
    ks = np.arange(-60, 61)
    weights = np.exp(-(ks**2) / (2 * sigma2))
    norm = weights.sum()
    x = fedstat.discrete_gaussian("7/3", 200000, seed=3)
    ok, chi2 = chi_square_ok(x, lambda k: math.exp(-k * k / (2 * sigma2)) / norm, -60, 60)
    assert ok, chi2
    w = weights / norm
    ok, z = moments_ok(x, 0, (w * ks**2).sum(), (w * ks**4).sum())
    assert ok, z


def test_poisson_moments_both_methods():
    lam = 50
    for method, seed in (("tabulated", 4), ("integer", 5)):
        x = fedstat.poisson(lam, 100000, seed=seed, method=method)
        # Poisson: variance lam, mu4 = lam + 3 lam^2.
        ok, z = moments_ok(x, lam, lam, lam + 3 * lam**2)
        assert ok, (method, z)


def test_parameter_forms_and_streams():
    a = fedstat.skellam("1/10", 1000, seed=9)
    assert np.array_equal(a, fedstat.skellam(0.1, 1000, seed=9))  # a float is its decimal
    assert np.array_equal(a, fedstat.skellam(Fraction(1, 10), 1000, seed=9))
    assert np.array_equal(fedstat.skellam(3, 50, seed=9), fedstat.skellam("3", 50, seed=9))
    assert not np.array_equal(a, fedstat.skellam(0.1, 1000, seed=9, stream=1))
    assert len(fedstat.skellam(5, 0, seed=1)) == 0
    # No seed: the CSPRNG. Two calls of 100 draws at lam = 1000 are equal with probability
    # below (P(Sk = mode))^100 < 0.01^100.
    c, d = fedstat.skellam(1000, 100), fedstat.skellam(1000, 100)
    assert len(c) == 100 and not np.array_equal(c, d)


@pytest.mark.parametrize("call, error, message", [
    (lambda: fedstat.skellam(0, 10, seed=1), ValueError, "adds no noise|must be > 0|positive"),
    (lambda: fedstat.skellam(-1, 10, seed=1), ValueError, "lam must be positive"),
    (lambda: fedstat.skellam(float("nan"), 10, seed=1), ValueError, "finite"),
    (lambda: fedstat.skellam(float("inf"), 10, seed=1), ValueError, "finite"),
    (lambda: fedstat.skellam(2**40, 10, seed=1), ValueError, "skellam"),
    (lambda: fedstat.skellam("1e5", 10, seed=1), ValueError, "lam '1e5'"),
    (lambda: fedstat.skellam(5, -1, seed=1), ValueError, "size must be a whole number"),
    (lambda: fedstat.skellam(5, 10**12, seed=1), ValueError, "size must be a whole number"),
    (lambda: fedstat.skellam(5, 2.5, seed=1), TypeError, "size must be an integer"),
    (lambda: fedstat.skellam(5, 10, seed=-1), ValueError, "seed must be a whole number"),
    (lambda: fedstat.skellam(5, 10, seed=2**64), ValueError, "seed must be a whole number"),
    (lambda: fedstat.skellam(5, 10, stream=3), ValueError, "give a seed"),
    (lambda: fedstat.skellam(5, 10, method="fast"), ValueError, "method must be"),
    (lambda: fedstat.discrete_gaussian(0, 10, seed=1), ValueError, "discrete_gaussian"),
    (lambda: fedstat.polya_share(2, 0, 10, seed=1), ValueError, "clients must be"),
    (lambda: fedstat.polya_share(10**5, 3, 10, seed=1), ValueError, "polya_share"),
])
def test_bad_parameters_raise(call, error, message):
    with pytest.raises(error, match=message):
        call()
