"""examples/python/tv_walkthrough.py runs from start to end, as an analyst would run it, and its
estimates are docs/benchmarks.md's (within 0.03 of the exact D_TV 0.224 on the Zipf pair)."""
import os
import re
import subprocess
import sys

from conftest import SOURCE_DIR


def test_tv_walkthrough_runs(zipf_pair):
    data = zipf_pair[0].parent
    done = subprocess.run([sys.executable, str(SOURCE_DIR / "examples/python/tv_walkthrough.py"),
                           str(data)], capture_output=True, text=True, env=os.environ.copy(),
                          check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    exact = float(re.search(r"exact D_TV\s+([0-9.]+)", out).group(1))
    assert abs(exact - 0.224) < 0.001
    for name in ("top-k", "HH"):
        error = float(re.search(name + r" estimate\s+[0-9.]+\s+\(error ([-+0-9.]+)\)", out).group(1))
        assert abs(error) < 0.03, out
    assert re.search(r"gives epsilon 0\.9\d\d|gives epsilon 1\.000", out), out
