#!/usr/bin/env python3
"""A data-shift walk-through for analysts, notebook style (each `# %%` is a cell).

Two populations of devices each hold word or item counts; we want the total variation distance
D_TV(P, Q) between the populations without collecting anyone's raw counts. Every device sends a
fixed-size sketch report; the host merges the reports and estimates D_TV from the sketches. Here
the devices are emulated (the real SDK code, in this process) on docs/benchmarks.md's Zipf pair.

usage: PYTHONPATH=build/host-release/python /usr/bin/python3 examples/python/tv_walkthrough.py [DIR]
       (DIR: where the example data are written; default a temporary directory)
"""
# %% Setup: the module and the example data (scripts/make_tv_examples.py zipf)
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

import fedstat

data = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "make_tv_examples.py"
if not (data / "zipf_q.txt").exists():
    subprocess.run([sys.executable, str(script), str(data), "zipf"], check=True)
print(f"fedstat {fedstat.__version__}, data in {data}")

# %% The two distributions (evaluation only: in deployment nobody holds these)
p = fedstat.read_item_counts(str(data / "zipf_p.txt"))
q = fedstat.read_item_counts(str(data / "zipf_q.txt"))
exact = fedstat.exact_tv(p, q)
print(f"P: {len(p)} items, {p.total} events; Q: {len(q)} items, {q.total} events")
print(f"exact D_TV        {exact:.4f}")

# %% Sketch parameters for 48 KiB of device memory, from a task seed every device shares
params = fedstat.params_for_budget(48 * 1024, seed=2024)
print(f"sketch            {params} uses {params.memory_bytes()} bytes per device")

# %% Five devices per population sketch their own counts; the server receives only reports
p_devices = fedstat.split_across_clients(p, 5, fedstat.SeededBits(1, 7))
q_devices = fedstat.split_across_clients(q, 5, fedstat.SeededBits(2, 7))
p_reports = fedstat.sketch_clients(p_devices, params)
q_reports = fedstat.sketch_clients(q_devices, params)
first = fedstat.SketchReport(p_reports[0])
print(f"one report        {len(first)} bytes, {first.total} events, "
      f"{len(first.heap_items)} heavy items named")

# %% The host: merge each population's reports, estimate D_TV
estimate = fedstat.estimate_tv(fedstat.merge_reports(p_reports), fedstat.merge_reports(q_reports))
print(f"top-k estimate    {estimate.topk:.4f}  (error {estimate.topk - exact:+.4f})")
print(f"HH estimate       {estimate.hh:.4f}  (error {estimate.hh - exact:+.4f})")

# %% With local differential privacy: every device noises its histogram first (epsilon 3 each)
noisy = fedstat.estimate_tv(
    fedstat.merge_reports(fedstat.sketch_clients(p_devices, params, epsilon=3.0)),
    fedstat.merge_reports(fedstat.sketch_clients(q_devices, params, epsilon=3.0)))
print(f"local DP, eps 3   top-k {noisy.topk:.4f}, HH {noisy.hh:.4f} "
      "(items a device holds rarely are dropped: biased low on a long tail)")

# %% Accounting for a release under secure aggregation instead: 10 devices each add a Skellam
# share to a count (sensitivity 1), so that the sum the server sees is (1, 1e-6)-DP
lam = fedstat.skellam_lambda(epsilon=1.0, delta=1e-6, l1=1, l2=1, clients=10)
spent = fedstat.skellam_epsilon(lam, 10, 1, 1, 1e-6)
share = fedstat.rational_at_least(lam)  # the sampler's exact parameter, never below lam
noise = sum(fedstat.skellam(share, 5, seed=7, stream=device) for device in range(10))
print(f"Skellam           lambda {lam:.2f} per device gives epsilon {spent.epsilon:.3f} "
      f"(order {spent.best_order}); the sum of 10 shares, 5 draws: {noise.tolist()}")
