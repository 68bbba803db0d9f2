"""The module's contract with its users beyond the numbers (issue 44): typed signatures (no
`handle`), an ImportError naming numpy when numpy is missing, defaults that are the CLIs', error
messages that never repeat their prefix, and the version of the build.

The CLIs' defaults are read from their --help (CLI11 prints `--name TYPE=default`), the module's
from its signatures, so a default changed on one side only fails here; the defaults the signature
shows as None (epsilon, delta: refused under the non-private model) are compared by running both
sides with defaults and the same noise seed."""
import ast
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import fedstat
from conftest import run_tool, run_tool_json

SIGNATURE = re.compile(r"^(?:\d+\. )?(\w*)\((.*)\) -> (.+)$")  # a property's getter: no name


def signatures():
    """(qualified name, signature line) of every function, method and property getter."""
    found = []

    def visit(owner, prefix):
        for name, value in vars(owner).items():
            if name.startswith("__") and name != "__init__":
                continue
            if isinstance(value, property):
                value = value.fget
            if isinstance(value, type) and value.__module__ == "fedstat":
                visit(value, prefix + name + ".")
                continue
            for line in (getattr(value, "__doc__", None) or "").splitlines():
                if SIGNATURE.match(line.strip()):
                    found.append((prefix + name, line.strip()))

    visit(fedstat, "")
    return found


def test_every_signature_names_real_types():
    found = signatures()
    assert len(found) > 100  # every binding, not a few
    untyped = [(name, line) for name, line in found
               if re.search(r"\bhandle\b|: object\b|-> object\b", line)]
    assert untyped == []
    by_name = dict(found)
    assert by_name["skellam"].startswith(
        "skellam(lam: int | fractions.Fraction | str | float, size: int, seed: int | None = None,")
    assert "counts: numpy.typing.ArrayLike" in by_name["ItemCounts.__init__"]
    assert by_name["rational_at_least"].endswith("-> fractions.Fraction")
    assert by_name["TaskPolicy.check"].endswith("-> str | None")


def test_import_without_numpy_fails_naming_numpy():
    # -S: no site packages, so Debian's numpy (/usr/lib/python3/dist-packages) is not on the path:
    # an interpreter without numpy. PYTHONPATH (the module) still is.
    probe = subprocess.run([sys.executable, "-S", "-c", "import numpy"], capture_output=True,
                           text=True, check=False)
    assert probe.returncode != 0, "numpy is importable without site packages: no test"
    done = subprocess.run([sys.executable, "-S", "-c", "import fedstat"], capture_output=True,
                          text=True, check=False)
    assert done.returncode != 0
    assert ("ImportError: fedstat needs numpy: apt-get install python3-numpy or pip install "
            "numpy") in done.stderr, done.stderr


def signature_defaults(line):
    """{parameter: default} of a pybind11 signature line, parsed as Python."""
    name, params, _ = SIGNATURE.match(line).groups()
    tree = ast.parse(f"def {name or 'getter'}({params}): pass")
    args = tree.body[0].args
    out = {}
    positional = args.posonlyargs + args.args
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        out[arg.arg] = ast.literal_eval(default)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            out[arg.arg] = ast.literal_eval(default)
    return out


def cli_defaults(tool, *command):
    """{option: default text} of `tool [command] --help`."""
    text = run_tool(tool, *command, "--help")
    return dict(re.findall(r"^\s+--([\w-]+) [^=\n]*?=(\S+)", text, re.MULTILINE))


# (CLI, its subcommand, option) -> [(function, parameter)]: every default the two sides share.
SHARED_DEFAULTS = {
    # estimate_kl's model=None is the sums' own (collect_kl_sums': this default); see
    # test_kl.py::test_estimate_refuses_to_misread_the_sums.
    ("fedstat-kl", (), "model"): [("collect_kl_sums", "model")],
    ("fedstat-kl", (), "lambda"): [("estimate_kl", "lam"), ("collect_kl_sums", "lam")],
    ("fedstat-kl", (), "tau"): [("estimate_kl", "tau"), ("collect_kl_sums", "tau")],
    ("fedstat-kl", (), "calibration"): [("estimate_kl", "calibration"),
                                        ("collect_kl_sums", "calibration")],
    ("fedstat-heterogeneity", (), "mechanism"): [("estimate_heterogeneity", "mechanism")],
    ("fedstat-heterogeneity", (), "p"): [("estimate_heterogeneity", "p"),
                                         ("exact_heterogeneity", "p")],
    ("fedstat-heterogeneity", (), "max-weight"): [("estimate_heterogeneity", "max_weight"),
                                                  ("exact_heterogeneity", "max_weight")],
    ("fedstat-tv", (), "noise-margin"): [("estimate_tv", "noise_margin")],
    ("fedstat-tv", (), "heap-fraction"): [("params_for_budget", "heap_fraction")],
    ("fedstat-noise", ("skellam",), "method"): [("skellam", "method")],
    ("fedstat-noise", ("poisson",), "method"): [("poisson", "method")],
}


def test_defaults_are_the_clis():
    by_name = dict(signatures())
    for (tool, command, option), uses in SHARED_DEFAULTS.items():
        cli = cli_defaults(tool, *command)
        assert option in cli, f"{tool} {' '.join(command)} --help shows no default for --{option}"
        for function, parameter in uses:
            ours = signature_defaults(by_name[function])[parameter]
            if isinstance(ours, str):
                assert ours == cli[option], (tool, option, function, parameter)
            else:
                assert float(ours) == float(cli[option]), (tool, option, function, parameter)


def write_counts(path, counts):
    path.write_text("".join(f"{i} {c}\n" for i, c in counts.items()))
    return str(path)


def test_kl_defaults_run_as_fedstat_kl(tmp_path):
    """fedstat-kl with only its required options (model dist, epsilon 2, delta 1e-6, T 1000,
    10 clients, seed 1) and estimate_kl / collect_kl_sums with their defaults: the same release."""
    pi_path = write_counts(tmp_path / "pi.txt", {1: 40, 2: 30, 3: 15, 4: 10, 5: 5})
    p_path = write_counts(tmp_path / "p.txt", {1: 2000, 2: 3000, 3: 2500, 4: 1500, 5: 1000})
    cli = run_tool_json("fedstat-kl", "--pi", pi_path, "--p", p_path, "--evaluate",
                        "--noise-seed", 5, "--json")
    pi, p = fedstat.read_item_counts(pi_path), fedstat.read_item_counts(p_path)
    emulated = fedstat.split_across_clients(p, 10, fedstat.SeededBits(1, 0))
    plan = fedstat.plan_kl(pi, 1000, 10, 1.0, fedstat.SeededBits(1, 2**32))
    sums = fedstat.collect_kl_sums(plan, emulated, noise_seed=5)
    e = fedstat.estimate_kl(plan, sums, noise_seed=5)
    assert cli["model"] == "dist"
    assert (e.estimate, e.sigma, e.dist_lambda) == (cli["estimate"], cli["sigma"],
                                                    cli["dist_lambda"])
    assert sums.model == "dist"
    # Not vacuous: another epsilon gives another release.
    other_sums = fedstat.collect_kl_sums(plan, emulated, epsilon=2 * cli["epsilon"], noise_seed=5)
    other = fedstat.estimate_kl(plan, other_sums, noise_seed=5)
    assert other.dist_lambda != e.dist_lambda


def test_heterogeneity_defaults_run_as_fedstat_heterogeneity(tmp_path):
    rows = np.random.default_rng(3).dirichlet([0.5] * 4, size=40)
    path = tmp_path / "v.csv"
    np.savetxt(path, rows, delimiter=",", fmt="%.6f")
    cli = run_tool_json("fedstat-heterogeneity", "--vectors", path, "--evaluate", "--noise-seed",
                        5, "--json")
    x = fedstat.read_client_vectors(str(path))
    e = fedstat.estimate_heterogeneity(x, noise_seed=5)
    assert (cli["mechanism"], cli["epsilon"], cli["delta"]) == ("agm", 0.25, 0.1)
    for name in ("dispersion", "q", "i2"):
        assert getattr(e, name).estimate == cli[name]["estimate"], name
    assert e.sigma.tolist() == cli["sigma"]
    other = fedstat.estimate_heterogeneity(x, epsilon=2 * cli["epsilon"], noise_seed=5)
    assert other.sigma.tolist() != e.sigma.tolist()


REPEATED_PREFIX = re.compile(r"(?:^|: )([^:]+): \1:")


def test_no_message_repeats_its_prefix():
    counts = fedstat.ItemCounts([1, 2, 3], [5, 6, 7])
    clients = fedstat.split_across_clients(counts, 1, fedstat.SeededBits(1, 7))
    params = fedstat.SketchParams(rows=2, width=16, heap_capacity=4, k=4)
    report = bytearray(fedstat.sketch_clients(clients, params)[0])
    flipped = bytearray(report)
    flipped[len(flipped) // 2] ^= 0x01
    with pytest.raises(ValueError) as caught:
        fedstat.SketchReport(bytes(flipped))
    assert str(caught.value) == "sketch report: CRC mismatch (corrupted)"
    bad_version = bytearray(report)
    bad_version[4] ^= 0xFF
    cases = [bytes(flipped), bytes(report[:-1]), b"XXXX" + bytes(report[4:]), bytes(bad_version)]
    messages = []
    for data in cases:
        for call in (fedstat.SketchReport, lambda d: fedstat.merge_reports([d])):
            with pytest.raises((ValueError, NotImplementedError)) as caught:
                call(data)
            messages.append(str(caught.value))
    assert len(set(messages)) >= 4  # four different refusals, each checked
    assert [m for m in messages if REPEATED_PREFIX.search(m)] == []
    assert REPEATED_PREFIX.search("sketch report: sketch report: CRC mismatch")  # the pattern


def test_version_is_the_builds():
    assert fedstat.__version__ == os.environ["FEDSTAT_VERSION"]
