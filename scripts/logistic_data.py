"""Synthetic logistic-regression data for the fleet demo and the emulation tests.

Rows are 'label,x1,...,xd': d − 1 Gaussian features and a bias of 1, scaled to just under unit
norm (the SDK refuses rows of norm > 1); labels ±1 drawn from sigmoid(w*·x) with ‖w*‖ = 12, so
the Bayes classifier is right on about 88 % of rows. Deterministic in the random.Random given.
"""
import math


def true_weights(rng, d=8):
    w = [rng.gauss(0, 1) for _ in range(d)]
    return [v * 12 / math.sqrt(sum(u * u for u in w)) for v in w]


def write_rows(path, n, w, rng):
    with open(path, "w") as f:
        for _ in range(n):
            x = [rng.gauss(0, 1) for _ in range(len(w) - 1)] + [1.0]
            norm = math.sqrt(sum(v * v for v in x)) * 1.000001
            x = [v / norm for v in x]
            logit = sum(a * b for a, b in zip(w, x))
            y = 1 if rng.random() < 1 / (1 + math.exp(-logit)) else -1
            f.write(f"{y}," + ",".join(repr(v) for v in x) + "\n")
