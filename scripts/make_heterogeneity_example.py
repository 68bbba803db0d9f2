#!/usr/bin/env python3
"""Writes the example client vectors used in docs/benchmarks.md and the closing measurements of
the heterogeneity statistics: 500 clients, each a label distribution over 10 labels drawn from
Dirichlet(0.5, ..., 0.5) (non-IID clients, as in federated benchmarks). Fixed seed 3.

usage: /usr/bin/python3 scripts/make_heterogeneity_example.py OUT_DIR   (needs python3-numpy)
"""
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "."
rng = np.random.default_rng(3)
vectors = rng.dirichlet(np.full(10, 0.5), size=500)
np.savetxt(f"{out}/vectors.csv", vectors, delimiter=",", fmt="%.6f")
