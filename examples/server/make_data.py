#!/usr/bin/env python3
"""Writes the small, synthetic files examples/server/server.json needs (run from anywhere; the
committed files are its output with the default seed, so running it again changes nothing).

The server's own files (read by fedstat-server, paths relative to server.json):
  reference.txt   item counts, "<item> <count>" lines (data_shift and kl tasks): 60 items,
                  a Zipf-like law 2000/(rank + 1), the 10 most frequent ranks shuffled
  evaluation.csv  120 held-out labelled rows "label,x1,x2,x3,1" (model_update's accuracy)
The fleet's data (read by fedstat-sim --data examples/server/fleet, never by the server):
  fleet/items.txt     the fleet's item counts (split across the devices by fedstat-sim): the
                      same law without the shuffle, so D_TV and D_KL to the reference are > 0
  fleet/examples.csv  160 labelled rows: 20 devices x examples_per_client 8 (model_update)
  fleet/vectors.csv   20 rows of 3 class frequencies, one per device (heterogeneity)
Everything is made here from --seed; nothing comes from a real data set.

usage: make_data.py [--seed S] [--out DIR]  (default: the directory of this script)
"""
import argparse
import math
import os
import random

DEVICES = 20  # the fleet size the README's fedstat-sim commands use (max_clients in server.json)


def logistic_rows(n, w, rng):
    """n rows: 3 Gaussian features and a bias, scaled under unit norm (the SDK refuses > 1),
    label +-1 from sigmoid(w . x); 4 decimals."""
    rows = []
    for _ in range(n):
        x = [rng.gauss(0, 1) for _ in range(3)] + [1.0]
        norm = math.sqrt(sum(v * v for v in x)) / 0.999  # still <= 1 after rounding
        x = [v / norm for v in x]
        logit = sum(a * b for a, b in zip(w, x))
        y = 1 if rng.random() < 1 / (1 + math.exp(-logit)) else -1
        rows.append(f"{y}," + ",".join(f"{v:.4f}" for v in x) + "\n")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(os.path.join(args.out, "fleet"), exist_ok=True)

    fleet = [2000 // (i + 1) for i in range(60)]
    ranks = list(range(10))
    rng.shuffle(ranks)
    reference = [fleet[ranks[i]] if i < 10 else fleet[i] for i in range(60)]
    with open(os.path.join(args.out, "reference.txt"), "w") as f:
        f.write("# examples/server: synthetic reference item counts (make_data.py)\n")
        f.writelines(f"{i} {c}\n" for i, c in enumerate(reference))
    with open(os.path.join(args.out, "fleet", "items.txt"), "w") as f:
        f.write("# examples/server: the fleet's synthetic item counts (make_data.py)\n")
        f.writelines(f"{i} {c}\n" for i, c in enumerate(fleet))

    w = [rng.gauss(0, 1) for _ in range(4)]
    w = [v * 6 / math.sqrt(sum(u * u for u in w)) for v in w]
    with open(os.path.join(args.out, "fleet", "examples.csv"), "w") as f:
        f.writelines(logistic_rows(DEVICES * 8, w, rng))
    with open(os.path.join(args.out, "evaluation.csv"), "w") as f:
        f.writelines(logistic_rows(120, w, rng))

    with open(os.path.join(args.out, "fleet", "vectors.csv"), "w") as f:
        for _ in range(DEVICES):
            g = [rng.gammavariate(0.6, 1) for _ in range(3)]
            f.write(",".join(f"{v / sum(g):.3f}" for v in g) + "\n")


if __name__ == "__main__":
    main()
