#!/usr/bin/env python3
"""The design study of issue 41 (docs/data_shift_dp.md): data shift (top-k D_TV) under distributed
differential privacy, emulated in numpy. Reproduces every number of the document's tables.

usage: /usr/bin/python3 scripts/data_shift_dp_study.py DATA_DIR [--seeds 5] [--clients 20,1000,10000]
                                                    [--only a|b|c|all] [--check-shares]
  DATA_DIR holds the example pairs of scripts/make_tv_examples.py (`zipf man` groups):
  zipf_p/zipf_q, man1/man8, man1a/man1b, man1/man3. Prints Markdown tables on stdout.
  --seeds      noise seeds per cell (0 .. N-1); the split into clients uses seed 7
  --clients    clients per side
  --only       a: the CountSketch-with-noise design only; b: the hashed histogram only;
               c: the local-DP frequency oracle (Apple's count-mean sketch) only
  --check-shares  at 20 clients also sum the 20 devices' Pólya shares one by one and compare with
               the direct draw of their sum (the equivalence the emulation relies on)

What is emulated (both sides of every pair are fleets; the error is estimate − exact D_TV of the
two files, mean |error| and max |error| over the 4 pairs × seeds):

(b) hashed-domain histogram, distributed discrete Laplace (sdk/sketch/hashed_histogram.h,
    host_server/estimate/hashed_tv.h). Items go to B buckets by a 64-bit mix of (id, task key)
    and a multiply-shift (the SDK uses SipHash: any good hash gives the same statistics). Item
    level: each device's counts are its share of the file's; the summed bucket counts are the
    file's bucket counts exactly (addition is linear, and the per-device clamp to
    ⌊(2^31 − 1)/clients⌋ never binds on these files). User level (m events per device): every
    unit of count goes to a uniformly random client (as fedstat-tv's split), each device applies
    the SDK's bound c → ⌊c·m/N⌋ when it holds N > m events, and the bounded counts are summed.
    Noise: every device adds NB(1/s, ρ) − NB(1/s, ρ) per bucket, ρ = e^{−1/T}, s = the
    secure-aggregation threshold ⌊n/2⌋ + 1 of a complete graph of n clients; the sum of the n
    shares is NB(n/s, ρ) − NB(n/s, ρ) EXACTLY in distribution (the negative binomial is additive
    in its first parameter), which is what is drawn (--check-shares verifies it at n = 20).
    T = Δ/ε: Δ = 1 (item level), Δ = 2m (user level: substitution, the server knows who took part). Estimators: `clamp` (the landed
    estimate_hashed_tv: negatives to 0, totals from the clamped counts) and `thr` (the same after
    zeroing every bucket below τ = ⌈T·ln B⌉, a post-processing after which only a handful of
    empty buckets keep their noise).

(a) noise shares on the CountSketch counters: R = 5 rows, width w = 4,096 64-bit counters
    (160 KiB), each update c of item i adds c·ω_i·s_r(i) to counter (r, h_r(i)), with ω_i the
    paper's fixed-point L1-sampling weight round(16/(1 − u_i^{1/k})) capped at 2^35 (k = 4·H =
    16,384 at 160 KiB), or with ω_i capped at `cap`, or ω = 1 (no weights). One event moves R
    counters by ω_max: L2 sensitivity √R·ω_max (user level: m·√R·ω_max). Noise: the analytic
    Gaussian σ for that L2 at (ε = 3, δ = 1e-6) with s honest shares, times √(n/s) for the n
    shares the sum really holds (Gaussian: the favourable stand-in for Skellam shares, whose ε
    at the same variance is a little larger). The server queries the summed sketch for the
    reference's (P's) items (median of R rows divided by ω_i), both sides, and estimates
    D_TV = ½·Σ_{i∈C} |p̂_i − q̂_i| + ½·max(0, 1 − Σ_{i∈C} q̂_i) (Q's mass off P's items), over
    C = all of P's items or P's top 1,024 (a side whose clamped estimates sum above 1 is
    renormalised, so every estimate is a distance in [0, 1]).

(c) a local-DP frequency oracle (Apple's Hadamard count-mean sketch): see run_local_oracle.

All seeds are fixed; the full grid takes about a minute on one core and 1 GB of memory.
"""
import argparse
import math
import sys

import numpy as np

PAIRS = [("zipf_p", "zipf_q"), ("man1", "man8"), ("man1a", "man1b"), ("man1", "man3")]
EPSILON = 3.0
DELTA = 1e-6
MAX_EVENTS = 100
MASK = (1 << 64) - 1


def load(data_dir, name):
    a = np.loadtxt(f"{data_dir}/{name}.txt", dtype=np.int64, ndmin=2)
    return a[:, 0].astype(np.uint64), a[:, 1]


def exact_tv(p, q):
    ids = np.union1d(p[0], q[0])
    pv = np.zeros(len(ids))
    qv = np.zeros(len(ids))
    pv[np.searchsorted(ids, p[0])] = p[1]
    qv[np.searchsorted(ids, q[0])] = q[1]
    return 0.5 * np.abs(pv / pv.sum() - qv / qv.sum()).sum()


def mix64(x, key):
    """splitmix64's finaliser of (x + key): a good 64-bit hash of an id under a key."""
    with np.errstate(over="ignore"):
        z = (x + np.uint64(key)) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def bucket_of(ids, buckets, key=0x5EED):
    """Multiply-shift of the high 32 bits: uniform over [0, B)."""
    h = mix64(ids, key) >> np.uint64(32)
    return ((h * np.uint64(buckets)) >> np.uint64(32)).astype(np.int64)


# ---- splitting into clients and the user-level bound ---------------------------------------------


def bounded_counts(side, clients, max_events, rng):
    """Each unit to a uniformly random client; then two bounds per device, summed over the
    devices for every item of `side`: `floor`, the SDK's c → ⌊c·m/N⌋ when the device holds N > m
    events (sketch::add_bucket_counts), and `sample`, m of the device's events drawn uniformly
    without replacement (unbiased: an alternative the study measures)."""
    ids, counts = side
    units = np.repeat(np.arange(len(ids), dtype=np.int64), counts)
    client = rng.integers(0, clients, size=len(units), dtype=np.int64)
    key = client * len(ids) + units
    ukey, c = np.unique(key, return_counts=True)
    dev, item = ukey // len(ids), ukey % len(ids)
    held = np.bincount(dev, weights=c, minlength=clients)
    n_dev = held[dev]
    kept = np.where(n_dev > max_events, (c * max_events) // n_dev, c).astype(np.int64)
    floor = np.bincount(item, weights=kept, minlength=len(ids)).astype(np.int64)
    # Sampling: a random order of the units, stably sorted by client; a unit is kept when its
    # rank within its client is below m.
    order = rng.permutation(len(units))
    order = order[np.argsort(client[order], kind="stable")]
    by_client = client[order]
    first = np.searchsorted(by_client, np.arange(clients))
    rank = np.arange(len(units)) - first[by_client]
    chosen = units[order[rank < max_events]]
    sample = np.bincount(chosen, minlength=len(ids)).astype(np.int64)
    return {"floor": floor, "sample": sample}


# ---- (b) the hashed-domain histogram with distributed discrete Laplace --------------------------


def honest_threshold(clients):
    return clients // 2 + 1


def summed_polya(buckets, scale, clients, shares, rng):
    """The sum of `clients` devices' shares NB(1/s) − NB(1/s): NB(n/s) − NB(n/s) exactly."""
    rho = math.exp(-1.0 / scale)
    r = clients / shares
    return rng.negative_binomial(r, 1 - rho, buckets) - rng.negative_binomial(r, 1 - rho, buckets)


def device_by_device_polya(buckets, scale, clients, shares, rng):
    rho = math.exp(-1.0 / scale)
    total = np.zeros(buckets, dtype=np.int64)
    for _ in range(clients):
        total += rng.negative_binomial(1 / shares, 1 - rho, buckets)
        total -= rng.negative_binomial(1 / shares, 1 - rho, buckets)
    return total


def hashed_tv(p, q, threshold=0):
    p = np.maximum(p, 0).astype(np.float64)
    q = np.maximum(q, 0).astype(np.float64)
    if threshold > 0:
        p[p < threshold] = 0
        q[q < threshold] = 0
    if p.sum() == 0 or q.sum() == 0:
        return 1.0
    return 0.5 * np.abs(p / p.sum() - q / q.sum()).sum()


# ---- (a) the CountSketch with noise on its counters ---------------------------------------------

ROWS, WIDTH, K = 5, 4096, 16384
MAX_WEIGHT = float(1 << 35)


def weights(ids, cap):
    """The paper's ω = min(round(16/(1 − u^{1/k})), 2^35, cap); cap 0: ω = 1 (no weights)."""
    if cap == 0:
        return np.ones(len(ids))
    u = ((mix64(ids, 0xA11CE) >> np.uint64(12)).astype(np.float64) + 0.5) / 2.0**52
    w = np.round(16.0 / -np.expm1(np.log(u) / K))
    return np.minimum(w, min(MAX_WEIGHT, float(cap)))


def sketch_of(ids, counts, omega):
    table = np.zeros((ROWS, WIDTH))
    for r in range(ROWS):
        h = mix64(ids, 0xC0DE + 97 * r)
        col = ((h >> np.uint64(32)) * np.uint64(WIDTH)) >> np.uint64(32)
        sign = np.where((h >> np.uint64(7)) & np.uint64(1), 1.0, -1.0)
        np.add.at(table[r], col.astype(np.int64), sign * counts * omega)
    return table


def query(table, ids, omega):
    est = np.empty((ROWS, len(ids)))
    for r in range(ROWS):
        h = mix64(ids, 0xC0DE + 97 * r)
        col = ((h >> np.uint64(32)) * np.uint64(WIDTH)) >> np.uint64(32)
        sign = np.where((h >> np.uint64(7)) & np.uint64(1), 1.0, -1.0)
        est[r] = sign * table[r][col.astype(np.int64)]
    return np.median(est, axis=0) / omega


def gaussian_delta(sigma, sens, eps):
    def phi(x):
        return 0.5 * math.erfc(-x / math.sqrt(2))

    a, b = sens / (2 * sigma), eps * sigma / sens
    return phi(a - b) - math.exp(eps) * phi(-a - b)


def analytic_sigma(sens, eps, delta):
    """The analytic Gaussian mechanism's σ (Balle & Wang 2018), by bisection."""
    lo, hi = 1e-6 * sens, 1e3 * sens
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        if gaussian_delta(mid, sens, eps) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def sketch_tv(p_est, q_est, n_p, n_q):
    """Estimates clamped at 0 and divided by the total; a side whose estimates sum above 1
    (noise) is renormalised to 1, so the result is a distance in [0, 1]."""
    p_hat = np.maximum(p_est, 0) / n_p
    q_hat = np.maximum(q_est, 0) / n_q
    p_hat /= max(1.0, p_hat.sum())
    q_hat /= max(1.0, q_hat.sum())
    return 0.5 * np.abs(p_hat - q_hat).sum() + 0.5 * max(0.0, 1 - q_hat.sum())


# ---- the runs -----------------------------------------------------------------------------------


def summarise(errors):
    e = np.abs(np.array(errors))
    return f"{e.mean():.3f} (max {e.max():.3f})"


def run(args):
    data = {}
    for pair in PAIRS:
        for name in pair:
            if name not in data:
                data[name] = load(args.data_dir, name)
    truth = {pair: exact_tv(data[pair[0]], data[pair[1]]) for pair in PAIRS}
    clients_list = [int(c) for c in args.clients.split(",")]
    seeds = range(args.seeds)
    split_rng = np.random.default_rng(7)
    # The user-level bounded counts per (file, clients): one split per file and client count.
    bounded = {}
    for n in clients_list:
        for name in data:
            bounded[(name, n)] = bounded_counts(data[name], n, MAX_EVENTS, split_rng)
    print("# data_shift_dp_study: exact D_TV " +
          ", ".join(f"{a}/{b} {truth[(a, b)]:.4f}" for a, b in PAIRS))
    print(f"# user level: events kept of the files' totals after the bound m = {MAX_EVENTS}")
    for n in clients_list:
        kept = {name: bounded[(name, n)]["floor"].sum() / data[name][1].sum() for name in data}
        print(f"#   {n} clients: " + ", ".join(f"{k} {v:.3f}" for k, v in kept.items()))

    if args.only in ("b", "all"):
        print("\n## (b) hashed-domain histogram, distributed discrete Laplace\n")
        print("| B | level | estimator | " + " | ".join(f"{n} clients" for n in clients_list) + " |")
        print("|---|---|---|" + "---|" * len(clients_list))
        for buckets in (2048, 40960):
            maps = {name: bucket_of(data[name][0], buckets) for name in data}
            for level in ("item", "user", "user, sampled m"):
                scale = 1 / EPSILON if level == "item" else 2 * MAX_EVENTS / EPSILON  # Δ = 2m: two bounded histograms of a device are 2m apart
                tau = math.ceil(scale * math.log(buckets))

                def side(name, n):
                    bound = "sample" if level == "user, sampled m" else "floor"
                    counts = data[name][1] if level == "item" else bounded[(name, n)][bound]
                    return np.bincount(maps[name], weights=counts, minlength=buckets).astype(np.int64)

                rows = {"no noise": [], "clamp": [], f"thr τ={tau}": []}
                for n in clients_list:
                    s = honest_threshold(n)
                    errors = {k: [] for k in rows}
                    for a, b in PAIRS:
                        pb, qb = side(a, n), side(b, n)
                        errors["no noise"].append(hashed_tv(pb, qb) - truth[(a, b)])
                        for seed in seeds:
                            rng = np.random.default_rng(1000 * seed + n)
                            zp = summed_polya(buckets, scale, n, s, rng)
                            zq = summed_polya(buckets, scale, n, s, rng)
                            errors["clamp"].append(hashed_tv(pb + zp, qb + zq) - truth[(a, b)])
                            errors[f"thr τ={tau}"].append(
                                hashed_tv(pb + zp, qb + zq, tau) - truth[(a, b)])
                    for k in rows:
                        rows[k].append(summarise(errors[k]))
                for k, cells in rows.items():
                    print(f"| {buckets} | {level} | {k} | " + " | ".join(cells) + " |")
        if args.check_shares:
            rng = np.random.default_rng(99)
            n, s = 20, honest_threshold(20)
            direct = summed_polya(200000, 1 / EPSILON, n, s, rng)
            one_by_one = device_by_device_polya(200000, 1 / EPSILON, n, s, rng)
            print(f"\n# 20 devices' shares (s = {s}), T = 1/3, 2e5 buckets: direct draw var "
                  f"{direct.var():.4f} P0 {np.mean(direct == 0):.4f}; device by device var "
                  f"{one_by_one.var():.4f} P0 {np.mean(one_by_one == 0):.4f}")

    if args.only in ("c", "all"):
        run_local_oracle(data, truth, seeds)

    if args.only in ("a", "all"):
        print("\n## (a) CountSketch (R = 5, w = 4,096, 160 KiB) with Gaussian noise on its counters\n")
        caps = (("paper weights (ω ≤ 2^35)", int(MAX_WEIGHT)), ("ω capped at 2^18", 1 << 18),
                ("no weights (ω = 1)", 0))
        print("| weights | level | σ per counter (s shares) | candidates | " +
              " | ".join(f"{n} clients" for n in clients_list) + " |")
        print("|---|---|---|---|" + "---|" * len(clients_list))
        for label, cap in caps:
            omega = {name: weights(data[name][0], cap) for name in data}
            omega_max = MAX_WEIGHT if cap == int(MAX_WEIGHT) else max(float(cap), 1.0)
            for level in ("item", "user"):
                delta_events = 1 if level == "item" else MAX_EVENTS
                sigma = analytic_sigma(math.sqrt(ROWS) * omega_max * delta_events, EPSILON, DELTA)

                def side(name, n):
                    counts = data[name][1] if level == "item" else bounded[(name, n)]["floor"]
                    return counts.astype(np.float64)

                for top in (1024, 0):
                    rows = {"no noise": [], "noised": []}
                    for n in clients_list:
                        s = honest_threshold(n)
                        errors = {k: [] for k in rows}
                        for a, b in PAIRS:
                            cp, cq = side(a, n), side(b, n)
                            tp = sketch_of(data[a][0], cp, omega[a])
                            tq = sketch_of(data[b][0], cq, omega[b])
                            cand = np.argsort(-data[a][1], kind="stable")
                            if top:
                                cand = cand[:top]
                            ids = data[a][0][cand]
                            w_c = omega[a][cand]
                            n_p, n_q = cp.sum(), cq.sum()
                            errors["no noise"].append(
                                sketch_tv(query(tp, ids, w_c), query(tq, ids, w_c), n_p, n_q)
                                - truth[(a, b)])
                            for seed in seeds:
                                rng = np.random.default_rng(5000 + 1000 * seed + n)
                                scale = sigma * math.sqrt(n / s)
                                zp = rng.normal(0, scale, tp.shape)
                                zq = rng.normal(0, scale, tq.shape)
                                # The totals: one more word each, sensitivity Δ, its noise
                                # negligible next to N (not modelled).
                                errors["noised"].append(sketch_tv(query(tp + zp, ids, w_c),
                                                                  query(tq + zq, ids, w_c), n_p,
                                                                  n_q) - truth[(a, b)])
                        for k in rows:
                            rows[k].append(summarise(errors[k]))
                    cand_label = f"P's top {top}" if top else "all of P's items"
                    for k, cells in rows.items():
                        sig = f"{sigma:.3g}" if k == "noised" else "0"
                        print(f"| {label} | {level} | {sig} | {cand_label} | " + " | ".join(cells)
                              + " |")


def run_local_oracle(data, truth, seeds):
    """(c) Apple's Hadamard count-mean sketch, local DP per event: its debiased frequency
    estimates have variance ≈ c_ε²/N, c_ε = (e^ε + 1)/(e^ε − 1), per item; emulated as Gaussian
    errors on the exact frequencies of P's top 1,024 items (hash collisions of the sketch
    ignored: favourable to it). Item level: ε per event. User level: each of a device's m events
    gets ε/m. Independent of the number of clients (the noise is per event)."""
    print("\n## (c) local-DP frequency oracle (HCMS-like), P's top 1,024 items\n")
    print("| level | c_eps | mean abs error (max) |")
    print("|---|---|---|")
    for level, eps in (("item", EPSILON), ("user", EPSILON / MAX_EVENTS)):
        c = (math.exp(eps) + 1) / (math.exp(eps) - 1)
        errors = []
        for a, b in PAIRS:
            p, q = data[a], data[b]
            cand = np.argsort(-p[1], kind="stable")[:1024]
            ids = p[0][cand]
            n_p, n_q = p[1].sum(), q[1].sum()
            pf = p[1][cand] / n_p
            qmap = dict(zip(q[0].tolist(), q[1].tolist()))
            qf = np.array([qmap.get(int(i), 0) for i in ids]) / n_q
            for seed in seeds:
                rng = np.random.default_rng(9000 + seed)
                pe = (pf + rng.normal(0, c / math.sqrt(n_p), len(pf))) * n_p
                qe = (qf + rng.normal(0, c / math.sqrt(n_q), len(qf))) * n_q
                errors.append(sketch_tv(pe, qe, n_p, n_q) - truth[(a, b)])
        print(f"| {level} (ε = {eps:g} per event) | {c:.3g} | {summarise(errors)} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data_dir")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--clients", default="20,1000,10000")
    parser.add_argument("--only", choices=("a", "b", "c", "all"), default="all")
    parser.add_argument("--check-shares", action="store_true")
    args = parser.parse_args()
    if args.seeds < 1:
        sys.exit("data_shift_dp_study: --seeds must be at least 1")
    run(args)


if __name__ == "__main__":
    main()
