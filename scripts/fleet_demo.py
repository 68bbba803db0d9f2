#!/usr/bin/env python3
"""The main job's fleet: fedstat-server on the embedded defaults, one fleet of emulated devices
per task, and one table.

Starts one fedstat-server (TLS-PSK on loopback, SQLite store) serving every task of
examples/fleet/tasks.json — and, for the tagg task, a second fedstat-server in the TAgg role that
the first hands the exact aggregate to and that answers only the noised result — then, task after
task, runs fedstat-sim: N emulated devices, each a
real SDK Client over real TLS, some dropping out (in DIST, before one of the four secure-
aggregation messages chosen at random; otherwise before their report). For every task it prints
what the server published beside the non-private truth over the same data, and checks the
published aggregate against the in-process computation (bit for bit, where the result names it).

The devices are provisioned through the fleet CA (issue 42): fedstat-ca makes a CA from --seed and
issues each device its credential; the server holds only the CA's public key, so every DIST task
runs signed secure aggregation (certified keys, the consistency stage before the reveals), and the
table's "signed" column says the server's log shows that stage for the task. --unsigned runs
without credentials (the PSK fleet alone), as before issue 42.

The data are synthetic and made here, from --seed: a Zipf law of 500 items for the fleet and a
reference in which the 40 most frequent ranks are permuted (data_shift, kl), and labelled
logistic examples, 64 per device, with a held-out set (model_update), and one label
distribution per device (heterogeneity; see make_data).

usage: fleet_demo.py --build DIR [--sim PATH] [--clients N] [--dropout R] [--seed S] [--work DIR]
                     [--unsigned] [--json]
exit codes: 0 every task published a result and every bit-for-bit check held; 1 otherwise;
2 usage.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time

import logistic_data  # scripts/logistic_data.py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLEET_SECRET = "5a" * 32  # the demo fleet's HKDF secret: demo only, never a deployment's


def make_data(work, seed, clients):
    """items.txt (the fleet's item counts) and reference.txt, deterministic in `seed`."""
    rng = random.Random(seed)
    os.makedirs(os.path.join(work, "data"), exist_ok=True)
    fleet = {i: max(1, int(4e6 / (i + 1) ** 1.1)) for i in range(500)}
    ranks = list(range(40))
    rng.shuffle(ranks)
    reference = {i: fleet[ranks[i]] if i < 40 else fleet[i] for i in range(400)}
    with open(os.path.join(work, "data", "items.txt"), "w") as f:
        f.writelines(f"{i} {c}\n" for i, c in fleet.items())
    with open(os.path.join(work, "reference.txt"), "w") as f:
        f.writelines(f"{i} {c}\n" for i, c in reference.items())
    # model_update: logistic data, 7 Gaussian features and a bias at unit norm, labels from
    # sigmoid(w*.x) with |w*| = 12 (the Bayes classifier is right on ~88 % of rows); 64 rows per
    # device in data/examples.csv and 2000 held-out rows in evaluation.csv (the server's own).
    w = logistic_data.true_weights(rng)
    logistic_data.write_rows(os.path.join(work, "data", "examples.csv"), 1024 * 64, w, rng)
    logistic_data.write_rows(os.path.join(work, "evaluation.csv"), 2000, w, rng)
    # heterogeneity: each device's label distribution over 3 classes, Dirichlet(0.6), one row per
    # device (data/vectors.csv; --clients rows, so "exact" is over exactly the fleet).
    with open(os.path.join(work, "data", "vectors.csv"), "w") as f:
        for _ in range(clients):
            g = [rng.gammavariate(0.6, 1) for _ in range(3)]
            f.write(",".join(f"{v / sum(g):.3f}" for v in g) + "\n")


def load_tasks(clients):
    with open(os.path.join(ROOT, "examples", "fleet", "tasks.json")) as f:
        tasks = json.load(f)
    for t in tasks:
        # Every device is admitted (max); the round publishes with at least 3/4 of them
        # (min_clients) once dropouts are counted out. DIST reveals need the server's default
        # threshold (host_server/tasks/task_plan.h): 2/3 of min, and more than half of max.
        t["max_clients"] = clients
        t["min_clients"] = max(2, (3 * clients) // 4)
    return tasks


def start(build, work, name, config):
    """fedstat-server on WORK/NAME.json; returns the process and the port it listens on."""
    with open(os.path.join(work, name + ".json"), "w") as f:
        json.dump(config, f)
    port_file = os.path.join(work, name + ".port")
    log = open(os.path.join(work, name + ".log"), "w")
    server = subprocess.Popen([os.path.join(build, "host_server", "fedstat-server"), "--config",
                               name + ".json", "--port-file", name + ".port"], cwd=work,
                              stderr=log)
    deadline = time.monotonic() + 60
    while not (os.path.exists(port_file) and os.path.getsize(port_file) > 0):
        if server.poll() is not None or time.monotonic() > deadline:
            sys.exit("fleet_demo: fedstat-server did not start (see %s/%s.log)" % (work, name))
        time.sleep(0.05)  # polling for the port file the server writes once it listens
    with open(port_file) as f:
        return server, int(f.read())


def fedstat_ca(build, work, *args):
    """Runs fedstat-ca (the fleet's offline CA) in WORK; exits the demo if it fails."""
    ca = subprocess.run([os.path.join(build, "host_server", "fedstat-ca")] + list(args), cwd=work,
                        capture_output=True, text=True)
    if ca.returncode != 0:
        sys.exit("fleet_demo: fedstat-ca %s failed: %s" % (args[0], ca.stderr))


def start_servers(build, work, tasks, signed):
    """The TAgg (when a task is trust tagg), then the collector the devices talk to; signed: the
    collector holds the fleet CA's public key (ca.pub) and runs signed DIST sessions."""
    servers = []
    config = {"listen": "127.0.0.1:0", "store": "server.db", "fleet_secret": FLEET_SECRET,
              "tasks": tasks}
    if signed:
        config["ca_public_key"] = "ca.pub"  # the CA's private key stays with fedstat-ca
    tagg_tasks = [t for t in tasks if t["trust"] == "tagg"]
    if tagg_tasks:
        psk = "c0" * 32  # the demo collector's key at the TAgg: demo only
        tagg, tagg_port = start(build, work, "tagg", {
            "role": "tagg", "listen": "127.0.0.1:0", "store": "tagg.db",
            "collectors": {"collector-1": psk}, "tasks": tagg_tasks})
        servers.append(tagg)
        config["tagg"] = {"endpoint": "127.0.0.1:%d" % tagg_port, "identity": "collector-1",
                          "psk": psk}
    try:
        server, port = start(build, work, "server", config)
    except SystemExit:  # a TAgg left running would hold the caller's pipes open
        for other in servers:
            other.kill()
            other.wait()
        raise
    return [server] + servers, port


def run_fleet(build, sim_path, work, task, port, clients, dropout, seed, first_id, signed):
    task_file = os.path.join(work, "task-%d.json" % task["id"])
    with open(task_file, "w") as f:
        json.dump(task, f)
    credentials = []
    if signed:  # this fleet's credentials, issued by the CA (seeded: the demo is reproducible)
        creds = "fleet-%d.creds" % task["id"]
        fedstat_ca(build, work, "issue", "--ca-key", "ca.key", "--first-id", str(first_id),
                   "--count", str(clients), "--seed", str(seed + first_id), "--out", creds)
        credentials = ["--credentials", creds, "--ca-public-key", "ca.pub"]
    # The devices' task policy (sdk/client/task_policy.h) takes trusted, tagg and dist tasks by
    # default; the trust-none row (a baseline without privacy) opts in to none explicitly.
    accept = ["--accept-trust", "none"] if task["trust"] == "none" else []
    sim = subprocess.run(
        [sim_path, "--server", "127.0.0.1:%d" % port,
         "--clients", str(clients), "--task", task_file, "--data", os.path.join(work, "data"),
         "--fleet-secret", FLEET_SECRET, "--dropout", str(dropout), "--seed", str(seed),
         "--first-id", str(first_id), "--state", os.path.join(work, "state"), "--json"] + accept +
        credentials,
        cwd=work, capture_output=True, text=True)
    if sim.returncode != 0:
        sys.exit("fleet_demo: fedstat-sim failed for task %d: %s" % (task["id"], sim.stderr))
    # A chained task (heterogeneity) publishes its estimate with its last stage.
    last = task.get("heterogeneity", {}).get("stage2_id", task["id"])
    results = [os.path.join(build, "host_server", "fedstat-server"), "results", str(last),
               "--config", "server.json", "--json"]
    published = subprocess.run(results, cwd=work, capture_output=True, text=True)
    deadline = time.monotonic() + 60  # a TAgg's answer comes back after the round: up to 60 s
    while published.returncode != 0 and "awaiting tagg" in published.stderr and \
            time.monotonic() < deadline:
        time.sleep(0.1)  # polling the collector's store for the TAgg's answer
        published = subprocess.run(results, cwd=work, capture_output=True, text=True)
    result = json.loads(published.stdout) if published.returncode == 0 else None
    return json.loads(sim.stdout), result


def consistency_logged(work, task_id):
    """Whether the collector's log shows a closed consistency stage for TASK_ID (signed)."""
    needle = "task %d: secagg_closed (consistency, " % task_id
    with open(os.path.join(work, "server.log")) as f:
        return any(needle in line for line in f)


def row(task, sim, result, signed):
    if "stages" in sim:  # a chained task: dropouts over its stages, the last stage's recomputation
        dropped = sum(s["outcomes"].get("dropped", 0) for s in sim["stages"])
        sim = dict(sim, expected=sim["stages"][-1].get("expected", {}))
    else:
        dropped = sim["outcomes"].get("dropped", 0)
    estimate = result.get("estimate") if result else None
    exact = sim.get("exact")
    error = abs(estimate - exact) if estimate is not None and exact is not None else None
    expected = sim.get("expected", {})
    if task["trust"] in ("trusted", "tagg"):
        bit_exact = "n/a (%s: exact aggregate never published)" % task["trust"]
    else:  # none and dist results must name their aggregate, and it must be the in-process one
        published = result.get("sum_sha256") if result else None
        bit_exact = "yes" if published and published == expected.get("sum_sha256") else "NO"
    return {"task": "%d %s" % (task["id"], task["kind"]), "trust": task["trust"],
            "epsilon": task["epsilon"] if task["trust"] != "none" else None,
            "clients": sim["clients"], "dropouts": dropped,
            "contributors": result.get("contributors") if result else 0,
            "estimate": estimate, "exact": exact, "error": error,
            "bytes_per_device": sim["bytes_per_completed_device"], "seconds": sim["seconds"],
            "bit_exact": bit_exact, "published": result,
            "signed": signed if task["trust"] == "dist" else None}


def fmt(value, digits=4):
    if value is None:
        return "-"
    if isinstance(value, float):
        return "%.*f" % (digits, value)
    return str(value)


def print_table(rows):
    header = ["task", "trust", "signed", "epsilon", "clients", "dropouts", "estimate", "exact",
              "error", "bytes/device", "seconds"]
    yes_no = {True: "yes", False: "no", None: "-"}
    lines = [[r["task"], r["trust"], yes_no[r["signed"]], fmt(r["epsilon"], 2),
              fmt(r["clients"]), fmt(r["dropouts"]),
              fmt(r["estimate"]), fmt(r["exact"]), fmt(r["error"]),
              fmt(r["bytes_per_device"], 0), fmt(r["seconds"], 1)] for r in rows]
    widths = [max(len(h), *(len(l[i]) for l in lines)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for l in lines:
        print("  ".join(v.ljust(w) for v, w in zip(l, widths)))
    for r in rows:
        print("task %s: published aggregate equals the in-process one bit for bit: %s"
              % (r["task"], r["bit_exact"]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", required=True, help="the host build directory")
    parser.add_argument("--sim", default=None,
                        help="the fleet's fedstat-sim (default BUILD/host_server/fedstat-sim; the "
                        "test command passes a Release one to its sanitized server)")
    parser.add_argument("--clients", type=int, default=200, help="devices per task (2..1024)")
    parser.add_argument("--dropout", type=float, default=0.05, help="dropout probability")
    parser.add_argument("--seed", type=int, default=7, help="data and device randomness")
    parser.add_argument("--work", default=None, help="scratch directory (default BUILD/fleet-demo)")
    parser.add_argument("--unsigned", action="store_true",
                        help="devices without credentials: DIST tasks run unsigned sessions")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines")
    args = parser.parse_args()
    if not 2 <= args.clients <= 1024 or not 0 <= args.dropout < 1:
        parser.error("--clients must be in [2, 1024] and --dropout in [0, 1)")
    build = os.path.abspath(args.build)
    sim_path = os.path.abspath(args.sim or os.path.join(build, "host_server", "fedstat-sim"))
    if not os.access(sim_path, os.X_OK):
        parser.error("--sim: %s is not an executable fedstat-sim (build it first)" % sim_path)
    work = os.path.abspath(args.work or os.path.join(build, "fleet-demo"))
    subprocess.run(["rm", "-rf", work], check=True)
    os.makedirs(os.path.join(work, "state"))
    make_data(work, args.seed, args.clients)
    tasks = load_tasks(args.clients)
    signed = not args.unsigned
    if signed:  # the fleet CA: its key pair, made once, offline (here: seeded, for the demo)
        fedstat_ca(build, work, "init", "--out-key", "ca.key", "--out-public", "ca.pub",
                   "--seed", str(args.seed))
    servers, port = start_servers(build, work, tasks, signed)
    rows = []
    try:
        for k, task in enumerate(tasks):
            print("fleet_demo: task %d (%s, %s): %d devices..." % (task["id"], task["kind"],
                  task["trust"], args.clients), file=sys.stderr, flush=True)
            sim, result = run_fleet(build, sim_path, work, task, port, args.clients, args.dropout,
                                    args.seed, 1 + 1000 * (k + 1), signed)
            rows.append(row(task, sim, result, consistency_logged(work, task["id"])))
    finally:
        for server in servers:
            server.send_signal(signal.SIGTERM)
        for server in servers:
            server.wait(timeout=60)
    if args.json:
        for r in rows:
            print(json.dumps(r))
    else:
        print_table(rows)
    # Signed: every DIST task ran its consistency stage; unsigned: none did.
    ok = all(r["published"] and r["bit_exact"] != "NO" and r["signed"] in (None, signed)
             for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
