"""Dispersion, Q and I^2 through the module: fedstat-heterogeneity's JSON reproduced from Python
on docs/benchmarks.md's example vectors (scripts/make_heterogeneity_example.py), the exact
statistics against numpy, and refusals of bad vectors (NaN, out of [0, 1], too few clients)."""
import numpy as np
import pytest

import fedstat
from conftest import run_tool_json


@pytest.mark.parametrize("mechanism, extra, rows", [
    ("agm", ["--epsilon", 0.25, "--delta", 0.1], 500),
    ("classical", ["--epsilon", 2, "--delta", 0.05], 500),
    # Every client adds integer noise to every entry: under ASan 500 clients take 3 s a side,
    # so the skellam case reads the first 100 rows of the same file.
    ("skellam", ["--epsilon", 1, "--delta", 0.1], 100),
    ("none", [], 500),
])
def test_python_reproduces_fedstat_heterogeneity_json(vectors_csv, tmp_path, mechanism, extra,
                                                      rows):
    path = vectors_csv
    if rows < 500:
        path = tmp_path / "vectors.csv"
        path.write_text("".join(vectors_csv.read_text().splitlines(keepends=True)[:rows]))
    cli = run_tool_json("fedstat-heterogeneity", "--vectors", path, "--mechanism",
                        mechanism, *extra, "--evaluate", "--noise-seed", 4, "--json")
    x = fedstat.read_client_vectors(str(path))
    kwargs = {}
    if extra:
        kwargs = {"epsilon": float(extra[1]), "delta": float(extra[3])}
    e = fedstat.estimate_heterogeneity(x, mechanism=mechanism, noise_seed=4, **kwargs)
    exact = fedstat.exact_heterogeneity(x)
    for name in ("dispersion", "q", "i2"):
        ours = getattr(e, name)
        assert ours.estimate == cli[name]["estimate"], name
        assert list(ours.ci) == cli[name]["ci"], name
        assert ours.noise_sd == cli[name]["noise_sd"], name
        assert getattr(exact, name) == cli[name]["exact"], name
    assert e.sigma.tolist() == cli["sigma"] and e.grid.tolist() == cli["grid"]
    assert exact.clipped == cli["clipped_weights"]
    assert (len(x), x.shape[1]) == (cli["n"], cli["d"]) == (rows, 10)


def test_exact_statistics_and_reader(vectors_csv):
    x = fedstat.read_client_vectors(str(vectors_csv))
    assert x.dtype == np.float64
    assert np.array_equal(x, np.loadtxt(vectors_csv, delimiter=","))
    exact = fedstat.exact_heterogeneity(x)
    # mu and D = (1/n) sum ||x - mu||_p^p (p = 2), computed independently in numpy.
    mu = x.mean(axis=0)
    assert np.allclose(exact.mean, mu, rtol=1e-12, atol=0)
    assert exact.dispersion == pytest.approx(np.mean(np.sum((x - mu) ** 2, axis=1)), rel=1e-12)
    assert 0 <= exact.i2 <= 1
    # Without noise the release equals the exact values.
    e = fedstat.estimate_heterogeneity(x, mechanism="none")
    assert e.dispersion.estimate == pytest.approx(exact.dispersion, rel=1e-12)
    assert e.q.estimate == pytest.approx(exact.q, rel=1e-12)
    assert e.i2.estimate == pytest.approx(exact.i2, rel=1e-12)


def test_bad_vectors_are_refused(tmp_path):
    good = np.full((3, 2), 0.5)
    for bad, message in ((np.nan, "client vector 2"), (1.5, "client vector 2"),
                         (-0.1, "client vector 2"), (np.inf, "client vector 2")):
        x = good.copy()
        x[1, 0] = bad
        with pytest.raises(ValueError, match=message):
            fedstat.estimate_heterogeneity(x, mechanism="none")
    with pytest.raises(ValueError, match="at least 2"):
        fedstat.estimate_heterogeneity(good[:1], mechanism="none")
    with pytest.raises(ValueError, match="two-dimensional"):
        fedstat.estimate_heterogeneity(good[0], mechanism="none")
    with pytest.raises(ValueError, match="adds no noise"):
        fedstat.estimate_heterogeneity(good, mechanism="none", epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon"):
        fedstat.estimate_heterogeneity(good, epsilon=-1.0)
    with pytest.raises(ValueError, match="mechanism"):
        fedstat.estimate_heterogeneity(good, mechanism="laplace", epsilon=1.0)
    with pytest.raises(TypeError, match="numbers"):
        fedstat.estimate_heterogeneity([["a", "b"], ["c", "d"]], mechanism="none")
    bad_csv = tmp_path / "bad.csv"
    bad_csv.write_text("0.1,0.2\n0.3,nan\n")
    with pytest.raises(ValueError, match="bad.csv:2"):
        fedstat.read_client_vectors(str(bad_csv))
    with pytest.raises(FileNotFoundError):
        fedstat.read_client_vectors(str(tmp_path / "missing.csv"))
