#!/usr/bin/env python3
"""How the DIST data-shift estimate behaves when a round's sum carries more than one discrete
Laplace per bucket (docs/data_shift_dp.md, "A real round's noise"): every device adds
NB(1/s) − NB(1/s) with s = the round's threshold, so n devices' sum is NB(n/s) − NB(n/s), n/s
Laplaces — about 1.5 on a complete graph, n/t on a SecAgg+ graph (23 at 10^3, 196 at 10^4).

usage: /usr/bin/python3 scripts/data_shift_dp_laplaces.py DATA_DIR
  DATA_DIR holds the example pairs of scripts/make_tv_examples.py (`zipf man`). Item level,
  ε = 3 (T = 1/3), B = 40,960; for n/s in 1, 1.5, 23.3, 196 prints the mean and max |error| over
  the 4 pairs × 2 noise seeds of the clamp estimator and of a threshold at σ·√(2 ln B).
  Buckets: splitmix64's finaliser and a multiply-shift (the SDK uses SipHash). Seeds fixed.
"""
import math
import sys

import numpy as np

data = sys.argv[1] if len(sys.argv) > 1 else "."


def load(name):
    a = np.loadtxt(f"{data}/{name}.txt", dtype=np.int64)
    return a[:, 0], a[:, 1]


def exact_tv(pi, pc, qi, qc):
    d = {}
    for i, c in zip(pi, pc / pc.sum()):
        d[i] = d.get(i, 0) + c
    for i, c in zip(qi, qc / qc.sum()):
        d[i] = d.get(i, 0) - c
    return 0.5 * sum(abs(v) for v in d.values())


def bucket(ids, buckets):
    h = ids.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(7)
    h ^= h >> np.uint64(29)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(32)
    return (h % np.uint64(buckets)).astype(np.int64)


B, T = 40960, 1 / 3
rho = math.exp(-1 / T)
rng = np.random.default_rng(5)
pairs = [("zipf_p", "zipf_q"), ("man1", "man8"), ("man1a", "man1b"), ("man1", "man3")]
loaded = [(load(a), load(b)) for a, b in pairs]
print("| Laplaces per bucket (n/s) | clamp: mean (max) | threshold σ√(2 ln B): mean (max) |")
print("|---|---|---|")
for laplaces in (1.0, 1.5, 23.3, 196.0):
    cells = []
    for estimator in ("clamp", "threshold"):
        errors = []
        for (pi, pc), (qi, qc) in loaded:
            exact = exact_tv(pi, pc, qi, qc)
            hp = np.bincount(bucket(pi, B), weights=pc, minlength=B)
            hq = np.bincount(bucket(qi, B), weights=qc, minlength=B)
            for _ in range(2):
                def noise():
                    return (rng.negative_binomial(laplaces, 1 - rho, B) -
                            rng.negative_binomial(laplaces, 1 - rho, B))
                p, q = hp + noise(), hq + noise()
                floor = 1
                if estimator == "threshold":
                    sigma = math.sqrt(laplaces * 2 * rho) / (1 - rho)
                    floor = max(1, math.ceil(sigma * math.sqrt(2 * math.log(B))))
                xp, xq = np.where(p >= floor, p, 0), np.where(q >= floor, q, 0)
                errors.append(abs(0.5 * np.abs(xp / xp.sum() - xq / xq.sum()).sum() - exact))
        cells.append(f"{np.mean(errors):.4f} ({np.max(errors):.4f})")
    print(f"| {laplaces:g} | {cells[0]} | {cells[1]} |", flush=True)
