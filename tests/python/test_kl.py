"""PRIEST-KLD through the module: fedstat-kl's JSON reproduced from Python on the example data
of docs/benchmarks.md (scripts/make_kl_example.py), the sums round-tripped through arrays, the
exact divergence against an independent numpy computation, and refusals."""
import numpy as np
import pytest

import fedstat
from conftest import run_tool_json

KEYS = ("sensitivity", "sigma", "grid", "estimate_sd", "dist_lambda", "clamped", "clamped_above")


CLIENTS, ROUNDS, SEED, NOISE_SEED = 5, 300, 3, 11


@pytest.fixture(scope="module")
def setup(kl_example):
    """What fedstat-kl --T 300 --clients 5 --seed 3 builds before any noise: the reference, P,
    P split across the clients (SeededBits(S, 0)) and the plan (SeededBits(S, 2^32))."""
    pi_path, p_path = kl_example
    pi = fedstat.read_item_counts(str(pi_path))
    p = fedstat.read_item_counts(str(p_path))
    emulated = fedstat.split_across_clients(p, CLIENTS, fedstat.SeededBits(SEED, 0))
    plan = fedstat.plan_kl(pi, ROUNDS, CLIENTS, 1.0, fedstat.SeededBits(SEED, 2**32))
    return pi, p, emulated, plan


@pytest.mark.parametrize("model", [
    {"model": "none"},
    {"model": "trusted", "epsilon": 2.0},
    {"model": "tagg", "epsilon": 2.0, "delta": 1e-7},
    {"model": "dist", "epsilon": 1.0},
])
def test_python_reproduces_fedstat_kl_json(kl_example, setup, model):
    pi_path, p_path = kl_example
    args = ["--pi", pi_path, "--p", p_path, "--T", ROUNDS, "--clients", CLIENTS, "--seed", SEED,
            "--model", model["model"], "--evaluate", "--noise-seed", NOISE_SEED, "--json"]
    if "epsilon" in model:
        args += ["--epsilon", model["epsilon"]]
    if "delta" in model:
        args += ["--delta", model["delta"]]
    cli = run_tool_json("fedstat-kl", *args)
    pi, p, emulated, plan = setup
    sums = fedstat.collect_kl_sums(plan, emulated, noise_seed=NOISE_SEED, **model)
    e = fedstat.estimate_kl(plan, sums, noise_seed=NOISE_SEED, **model)
    assert e.estimate == cli["estimate"]
    for key in KEYS:
        assert getattr(e, key) == cli[key], key
    assert fedstat.exact_kl(pi, p).divergence == cli["exact"]
    if model["model"] in ("trusted", "tagg"):
        assert e.estimate_sd > 0 and e.estimate != e.noiseless  # the host added noise
    if model["model"] == "dist":
        assert e.dist_lambda > 0  # the clients did
    # Not vacuous: this fixed-seed run lands near the exact divergence (a sanity check; the
    # estimators' error is measured by tests/host and docs/benchmarks.md, not here).
    assert abs(e.estimate - cli["exact"]) < 1.0


def test_sums_from_arrays_and_exact_value(setup):
    pi, p, emulated, plan = setup
    assert len(plan) == ROUNDS and plan.round_clients is None
    assert np.all(np.isin(plan.points, pi.ids))
    sums = fedstat.collect_kl_sums(plan, emulated, model="none")
    # Without noise every A_t is P's count at x_t and N_t is P's total.
    assert np.array_equal(sums.counts, [p.count(int(x)) for x in plan.points])
    assert np.all(sums.totals == p.total)
    a = fedstat.estimate_kl(plan, sums, model="none")
    b = fedstat.estimate_kl(plan, fedstat.KlSums(sums.counts, sums.totals), model="none")
    assert a.estimate == b.estimate
    # Independent check of the exact divergence: sum pi log(pi/p) over supp pi, in numpy.
    pi_prob = pi.counts / pi.total
    p_prob = np.array([p.count(int(i)) for i in pi.ids]) / p.total
    exact = fedstat.exact_kl(pi, p)
    assert exact.covered
    assert exact.divergence == pytest.approx(float(np.sum(pi_prob * np.log(pi_prob / p_prob))),
                                             rel=1e-12)
    # A sub-sampled plan: each round asks a subset of the clients.
    sampled = fedstat.plan_kl(pi, 50, CLIENTS, 0.5, fedstat.SeededBits(1, 2**32))
    assert len(sampled.round_clients) == 50
    assert all(0 < len(r) <= CLIENTS for r in sampled.round_clients)
    sub = fedstat.collect_kl_sums(sampled, emulated, model="none")
    assert np.all(sub.totals <= p.total) and np.any(sub.totals < p.total)


def test_refusals(setup):
    pi, p, emulated, _ = setup
    plan = fedstat.plan_kl(pi, 20, CLIENTS, 1.0, fedstat.SeededBits(1, 2**32))
    sums = fedstat.collect_kl_sums(plan, emulated, model="none")
    with pytest.raises(ValueError, match="adds no noise"):
        fedstat.estimate_kl(plan, sums, model="none", epsilon=1.0)
    with pytest.raises(ValueError, match="model"):
        fedstat.estimate_kl(plan, sums, model="central")
    with pytest.raises(ValueError, match="epsilon"):
        fedstat.estimate_kl(plan, sums, model="trusted", epsilon=float("nan"))
    with pytest.raises(ValueError, match="delta"):
        fedstat.estimate_kl(plan, sums, model="trusted", epsilon=1.0, delta=2.0)
    with pytest.raises(ValueError, match="rounds must be a whole number"):
        fedstat.plan_kl(pi, 0, 2, 1.0, fedstat.SeededBits(1))
    with pytest.raises(ValueError, match="rate"):
        fedstat.plan_kl(pi, 10, 2, float("nan"), fedstat.SeededBits(1))
    with pytest.raises(ValueError, match="the sums have 3 rounds"):
        fedstat.estimate_kl(plan, fedstat.KlSums([1, 2, 3], [9, 9, 9]))
    with pytest.raises(ValueError, match="totals"):
        fedstat.KlSums([1], [-5])
    # A round whose clients hold nothing (N_t = 0) is the estimator's refusal: RuntimeError.
    with pytest.raises(RuntimeError):
        fedstat.estimate_kl(plan, fedstat.KlSums(np.zeros(20, np.int64), np.zeros(20, np.int64)),
                            model="none")
    with pytest.raises(ValueError, match="the plan is for 5 clients, not 2"):
        fedstat.collect_kl_sums(plan, fedstat.split_across_clients(p, 2, fedstat.SeededBits(1)))


def test_estimate_refuses_to_misread_the_sums(setup):
    """Sums remember how collect_kl_sums made them: estimate_kl's default model is theirs, and a
    model that would misread them is refused (issue 44's review: exact sums estimated under the
    default 'dist' came back exact, labelled private)."""
    _, _, emulated, plan = setup
    exact = fedstat.collect_kl_sums(plan, emulated, model="none")
    noised = fedstat.collect_kl_sums(plan, emulated, epsilon=1.0, noise_seed=NOISE_SEED)
    assert (exact.model, noised.model) == ("none", "dist")
    with pytest.raises(ValueError, match="carry no client noise"):
        fedstat.estimate_kl(plan, exact, model="dist")
    with pytest.raises(ValueError, match="would add noise again"):
        fedstat.estimate_kl(plan, noised, model="trusted")
    with pytest.raises(ValueError, match="collected under dist at epsilon 1"):
        fedstat.estimate_kl(plan, noised, epsilon=2.0)
    arrays = fedstat.KlSums(exact.counts, exact.totals)
    assert arrays.model is None
    with pytest.raises(ValueError, match="built from arrays: name the model"):
        fedstat.estimate_kl(plan, arrays)
    # Left out, the model, epsilon and delta are the sums': the same release as naming them.
    a = fedstat.estimate_kl(plan, noised, noise_seed=NOISE_SEED)
    b = fedstat.estimate_kl(plan, noised, model="dist", epsilon=1.0, delta=1e-6,
                            noise_seed=NOISE_SEED)
    assert a.estimate == b.estimate and a.dist_lambda == b.dist_lambda > 0
    # Exact sums may be noised centrally (trusted) or read as they are (none).
    plain = fedstat.estimate_kl(plan, exact)
    assert plain.estimate_sd == 0 and plain.dist_lambda == 0  # read as none, not as dist
    assert fedstat.estimate_kl(plan, exact, model="trusted", epsilon=1.0).estimate_sd > 0
    # Collected as trusted at epsilon 0.5: the estimate takes that epsilon, not the default 2.
    trusted = fedstat.collect_kl_sums(plan, emulated, model="trusted", epsilon=0.5)
    assert (fedstat.estimate_kl(plan, trusted).sigma ==
            fedstat.estimate_kl(plan, trusted, model="trusted", epsilon=0.5).sigma !=
            fedstat.estimate_kl(plan, trusted, model="trusted", epsilon=2.0).sigma)

