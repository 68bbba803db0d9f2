#!/usr/bin/env python3
"""Writes the example pair used in docs/benchmarks.md and the closing measurements of PRIEST-KLD:
Π = 200,000 draws from Zipf(1.1) over 2,000 items; P = 1,000,000 draws from Zipf(1.0) over the
same items with the 50 most frequent ranks shuffled (a distribution shift). Fixed seed 7.

usage: /usr/bin/python3 scripts/make_kl_example.py OUT_DIR   (needs python3-numpy)
"""
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.default_rng(7)
n = 2000
ranks = np.arange(1, n + 1)
pi = ranks ** -1.1
pi /= pi.sum()
perm = np.arange(n)
rng.shuffle(perm[:50])
p = ranks[perm] ** -1.0
p /= p.sum()
for name, probabilities, total in (("pi.txt", pi, 200000), ("p.txt", p, 1000000)):
    counts = rng.multinomial(total, probabilities)
    with open(f"{out}/{name}", "w") as f:
        for item, count in enumerate(counts):
            if count > 0:
                f.write(f"{item} {count}\n")
