"""Shared fixtures of the fedstat module's tests (run by ctest, label `python`; see
tests/python/CMakeLists.txt for the environment: PYTHONPATH, FEDSTAT_TOOLS, FEDSTAT_SOURCE_DIR).

The example data are the repository's own: scripts/make_tv_examples.py (the Zipf pair),
scripts/make_kl_example.py and scripts/make_heterogeneity_example.py, written once per test run
into a temporary directory.
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

SOURCE_DIR = pathlib.Path(
    os.environ.get("FEDSTAT_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))


def tool_path(name):
    tools = os.environ.get("FEDSTAT_TOOLS")
    if not tools:
        pytest.fail("FEDSTAT_TOOLS (the build's host_server directory) is not set: run via ctest")
    return pathlib.Path(tools) / name


def run_tool(name, *args):
    """Runs a fedstat CLI and returns its stdout (it must exit 0)."""
    done = subprocess.run([str(tool_path(name)), *map(str, args)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, f"{name} {args} failed: {done.stderr}"
    return done.stdout


def run_tool_json(name, *args):
    return json.loads(run_tool(name, *args))


def _make(tmp_path_factory, script, *groups):
    out = tmp_path_factory.mktemp(script.replace(".py", ""))
    subprocess.run([sys.executable, str(SOURCE_DIR / "scripts" / script), str(out), *groups],
                   check=True)
    return out


@pytest.fixture(scope="session")
def zipf_pair(tmp_path_factory):
    """docs/benchmarks.md's Zipf(1.2) / Zipf(1.4) pair: 10^6 draws each over 350,000 items."""
    out = _make(tmp_path_factory, "make_tv_examples.py", "zipf")
    return out / "zipf_p.txt", out / "zipf_q.txt"


@pytest.fixture(scope="session")
def kl_example(tmp_path_factory):
    """docs/benchmarks.md's PRIEST-KLD pair: reference pi.txt and the clients' p.txt."""
    out = _make(tmp_path_factory, "make_kl_example.py")
    return out / "pi.txt", out / "p.txt"


@pytest.fixture(scope="session")
def vectors_csv(tmp_path_factory):
    """docs/benchmarks.md's heterogeneity example: 500 Dirichlet(0.5) label distributions."""
    return _make(tmp_path_factory, "make_heterogeneity_example.py") / "vectors.csv"
