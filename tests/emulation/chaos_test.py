#!/usr/bin/env python3
"""Chaos (label `chaos`, issue 13 item 4): the server is killed with SIGKILL at KILLS seeded
random points of one round of a task kind and restarted on the same port each time.

A real fedstat-server and a fleet of emulated devices (fedstat-sim: real Clients over real
TLS-PSK on loopback) run the task twice from the same inputs and seeds:
  1. uninterrupted: its published results and the number E of events its store holds at the end;
  2. under fire: KILLS kill points are drawn (random.Random(SEED)) without replacement from
     [1, 0.95 E]; once the store holds that many events (read by a separate read-only SQLite
     reader, the server's store being in WAL mode) the server gets SIGKILL — no shut-down of any
     kind — and a new process is started over the same store. A point the store had already
     passed when the server came back kills it again as soon as it listens (right after its
     recovery by replay).
After every kill:
  * the store passes PRAGMA integrity_check;
  * every event the store held at any earlier kill is still there, byte for byte (events are
    stored before they are acknowledged — persist, then Ack — so no acknowledged report is lost).
At the end the store holds at most one kind of share about each device (never both its
self-mask seed's and its key's), every device has completed with the outcome it had in the uninterrupted run (the
Client resumes across each restart by itself: sdk/client/client.h), and every published result
equals the uninterrupted run's, field for field (sum_sha256: the aggregate bit for bit).

  chaos_test.py SERVER SIM WORKDIR KIND CLIENTS [--kills 20] [--seed 1] [--dropout 0]
KIND: data_shift (trust none), kl (dist), model_update (dist), heterogeneity (dist, two chained
secure-aggregation rounds: both stages' results are compared).
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'common'))
from protobuf_fields import protobuf_fields  # noqa: E402  (tests/common)

FLEET_SECRET = '5a' * 32  # as tests/emulation/common.sh
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts')
sys.path.insert(0, SCRIPTS)


def declare(kind, clients, dropout):
    """Writes data/, task.json and server.json in the current directory; returns the task ids
    whose results the round publishes."""
    os.makedirs('data', exist_ok=True)
    task = {"id": 7, "kind": kind, "trust": "dist", "epsilon": 1.0, "delta": 1e-6,
            "min_clients": clients, "max_clients": clients, "deadline_seconds": 1800,
            "admission_seconds": 600, "phase_timeout_seconds": 1200, "reconnect_grace_seconds": 4,
            "threshold": (2 * clients + 2) // 3, "seed": "00" * 31 + "37"}
    if dropout > 0:  # a round may close without the devices that dropped out before replying
        task["min_clients"] = (clients * 3) // 4
    ids = [7]
    if kind in ('data_shift', 'kl'):
        with open('data/items.txt', 'w') as f:      # a Zipf law shifted by 15 ids
            for i in range(300):
                f.write(f"{i + 15} {max(1, 100000 // (i + 1))}\n")
        with open('reference.txt', 'w') as f:
            for i in range(320):
                f.write(f"{i} {max(1, 100000 // (i + 1))}\n")
    if kind == 'data_shift':
        task.update({"trust": "none", "epsilon": 0, "delta": 0})
        del task["threshold"]
        task["data_shift"] = {"rows": 5, "width": 256, "heap_capacity": 64, "k": 1024,
                              "domain": 400, "local_epsilon": 0, "reference": "reference.txt"}
    elif kind == 'kl':
        task["kl"] = {"reference": "reference.txt", "rounds": 300, "lambda": 0.1}
    elif kind == 'model_update':
        import logistic_data  # scripts/logistic_data.py
        rng, d, per_client = random.Random(20261127), 8, 64
        w = logistic_data.true_weights(rng, d)
        logistic_data.write_rows('data/examples.csv', clients * per_client, w, rng)
        logistic_data.write_rows('evaluation.csv', 500, w, rng)
        task["model_update"] = {"dimension": d, "epochs": 20, "batches": 4,
                                "averaging_interval": 20, "eta0": 4.0, "mu": 0.001,
                                "clip_norm": 10.0, "rotate": True, "gamma": 4096.0,
                                "beta": 0.6065306597, "bits": 32,
                                "examples_per_client": per_client,
                                "evaluation": "evaluation.csv"}
    elif kind == 'heterogeneity':
        rng = random.Random(5)
        with open('data/vectors.csv', 'w') as f:   # Dirichlet(0.6) label distributions, d = 3
            for _ in range(clients):
                g = [rng.gammavariate(0.6, 1) for _ in range(3)]
                f.write(','.join(f'{v / sum(g):.3f}' for v in g) + '\n')
        task.update({"epsilon": 8.0, "delta": 1e-5})
        task["heterogeneity"] = {"dimension": 3, "p": 2, "max_weight": 8, "stage2_id": 8}
        ids = [7, 8]
    else:
        sys.exit(f'unknown kind {kind!r}: data_shift, kl, model_update or heterogeneity')
    json.dump(task, open('task.json', 'w'))
    json.dump({"listen": "127.0.0.1:0", "store": "server.db", "fleet_secret": FLEET_SECRET,
               "tasks": [task]}, open('server.json', 'w'))
    return ids


class Server:
    """One fedstat-server process after another over the same store and port."""

    def __init__(self, binary):
        self.binary, self.port, self.proc, self.starts = binary, None, None, 0

    def start(self):
        self.starts += 1
        if os.path.exists('port'):
            os.remove('port')
        args = [self.binary, '--config', 'server.json', '--port-file', 'port']
        if self.port is not None:
            args += ['--listen', f'127.0.0.1:{self.port}']
        log = open(f'server{self.starts}.log', 'w')
        self.proc = subprocess.Popen(args, stderr=log)
        deadline = time.monotonic() + 120
        while not (os.path.exists('port') and os.path.getsize('port') > 0):
            if self.proc.poll() is not None:
                sys.exit(f'server start {self.starts} exited with {self.proc.returncode}:\n' +
                         open(f'server{self.starts}.log').read())
            if time.monotonic() > deadline:
                sys.exit(f'server start {self.starts} did not listen within 120 s')
            time.sleep(0.01)  # polling the port file, bounded above
        self.port = int(open('port').read())

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.proc.terminate()
        if self.proc.wait(timeout=60) != 0:
            sys.exit(f'server exited with {self.proc.returncode} on SIGTERM')
        log = open(f'server{self.starts}.log').read()
        assert '"event":"stopped"' in log, 'the server did not stop cleanly'
        assert '"integrity":"ok"' in log, 'the last server did not check its store'

    def results(self, ids):
        out = {}
        for task in ids:
            text = subprocess.run([self.binary, 'results', str(task), '--config', 'server.json',
                                   '--json'], check=True, capture_output=True, text=True).stdout
            out[task] = json.loads(text)
        return out


def event_count():
    """Events in the store, from a read-only connection; None while it cannot be read."""
    try:
        db = sqlite3.connect('file:server.db?mode=ro', uri=True, timeout=5)
        try:
            return db.execute('SELECT COUNT(*) FROM events').fetchone()[0]
        finally:
            db.close()
    except sqlite3.OperationalError:
        return None


def stored_events():
    """{sequence: sha256 of the whole row} of every stored event, after an integrity check."""
    db = sqlite3.connect('server.db')
    try:
        check = db.execute('PRAGMA integrity_check').fetchall()
        assert check == [('ok',)], f'integrity_check after a kill: {check}'
        rows = db.execute('SELECT sequence, task_id, client_id, kind, payload FROM events')
        return {r[0]: hashlib.sha256(repr(r[1:4]).encode() + r[4]).hexdigest() for r in rows}
    finally:
        db.close()


def stored_reveal_kinds():
    """{(task, about_id): {self_mask, ...}} over every SecAggReveal the store holds, from any
    sender (proto/fedstat/v1/envelope.proto: Envelope.secagg_reveal = 10; SecAggReveal.about_id =
    3, self_mask = 4)."""
    db = sqlite3.connect('server.db')
    try:
        rows = db.execute('SELECT task_id, payload FROM events WHERE kind = 1').fetchall()
    finally:
        db.close()
    kinds = {}
    for task, payload in rows:
        for field, wire, body in protobuf_fields(payload):
            if field == 10 and wire == 2:
                reveal = {f: v for f, w, v in protobuf_fields(body) if w == 0}
                kinds.setdefault((task, reveal.get(3, 0)), set()).add(bool(reveal.get(4, 0)))
    return kinds


def run_fleet(server_binary, sim, kind, clients, dropout, kill_points):
    """Runs one round in the current directory; returns (sim JSON, results, events, kills)."""
    ids = declare(kind, clients, dropout)
    server = Server(server_binary)
    server.start()
    sim_args = [sim, '--server', f'127.0.0.1:{server.port}', '--clients', str(clients),
                '--task', 'task.json', '--data', 'data', '--fleet-secret', FLEET_SECRET,
                '--dropout', str(dropout), '--seed', '17', '--noise-seed', '9', '--state',
                'state', '--max-sessions', '5000', '--json',
                # data_shift is declared trust none: the fleet opts in to it.
                '--accept-trust', 'none,dist']
    os.makedirs('state', exist_ok=True)
    fleet = subprocess.Popen(sim_args, stdout=open('sim.json', 'w'), stderr=open('sim.err', 'w'))
    held = {}  # every event seen stored at some kill: {sequence: row hash}
    kills = []
    try:
        for point in kill_points:
            deadline = time.monotonic() + 600
            while True:
                n = event_count()
                if n is not None and n >= point:
                    break
                if fleet.poll() is not None:
                    sys.exit(f'the fleet finished (exit {fleet.returncode}) with {n} events, '
                             f'before kill point {point} (kill {len(kills) + 1})')
                if time.monotonic() > deadline:
                    sys.exit(f'the store did not reach {point} events in 600 s')
                time.sleep(0.005)  # polling the store, bounded above
            server.kill()
            now = stored_events()
            lost = [s for s, h in held.items() if now.get(s) != h]
            assert not lost, f'kill {len(kills) + 1}: events {lost[:5]} lost or changed'
            held = now
            kills.append({'point': point, 'stored': len(now)})
            server.start()
        # Exit 0: every device completed or dropped out where told. Under fire, exit 1 is right
        # when its only reason is devices whose report went out but whose RoundOutcome died with a
        # killed server ("unconfirmed"; main() checks each one against the uninterrupted run).
        code = fleet.wait(timeout=1800)
        shortfall = open('sim.err').read().splitlines()
        unconfirmed_only = shortfall and all('lost their connection after reporting' in line
                                             for line in shortfall)
        if code != 0 and not (kill_points and code == 1 and unconfirmed_only):
            sys.exit(f'fedstat-sim exited with {code}: ' + '\n'.join(shortfall))
        results = server.results(ids)
        server.stop()
    finally:
        if fleet.poll() is None:
            fleet.kill()
        if server.proc.poll() is None:
            server.proc.kill()
    final = stored_events()
    lost = [s for s, h in held.items() if final.get(s) != h]
    assert not lost, f'events {lost[:5]} stored at the last kill are lost or changed'
    # What protects a device's input under secure aggregation: the server never holds both kinds
    # of share about it (its self-mask seed and its key), whoever sent them.
    kinds = stored_reveal_kinds()
    both = [k for k, v in kinds.items() if len(v) > 1]
    assert not both, f'both kinds of share stored about (task, device) {both[:5]}'
    if kind != 'data_shift':
        assert kinds, 'no reveal stored in a secure-aggregation round'
    return json.load(open('sim.json')), results, len(final), kills


def outcomes(sim):
    """Each device's outcome per task."""
    return {d['id']: [t['outcome'] for t in d.get('tasks', [d])] for d in sim['devices']}


def outcome_counts(sim):
    """{outcome: devices} per stage."""
    return [s['outcomes'] for s in sim.get('stages', [sim])]


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('server')
    p.add_argument('sim')
    p.add_argument('work')
    p.add_argument('kind')
    p.add_argument('clients', type=int)
    p.add_argument('--kills', type=int, default=20)
    p.add_argument('--seed', type=int, default=1)
    p.add_argument('--dropout', type=float, default=0.0)
    a = p.parse_args()
    server, sim = os.path.abspath(a.server), os.path.abspath(a.sim)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(os.path.join(a.work, 'uninterrupted'))
    os.makedirs(os.path.join(a.work, 'chaos'))

    started = time.monotonic()
    os.chdir(os.path.join(a.work, 'uninterrupted'))
    sim0, results0, events0, _ = run_fleet(server, sim, a.kind, a.clients, a.dropout, [])
    print(f'uninterrupted: {events0} events, outcomes {outcome_counts(sim0)} '
          f'({time.monotonic() - started:.1f} s)')
    assert a.kills <= int(0.95 * events0), 'fewer events than kills'
    points = sorted(random.Random(a.seed).sample(range(1, int(0.95 * events0) + 1), a.kills))

    started = time.monotonic()
    os.chdir(os.path.join(a.work, 'chaos'))
    sim1, results1, events1, kills = run_fleet(server, sim, a.kind, a.clients, a.dropout, points)
    reconnects = sum(d['reconnects'] for d in sim1['devices'])
    print(f'under fire: {len(kills)} kills at events {points}; {events1} events, '
          f'{reconnects} reconnects, outcomes {outcome_counts(sim1)} '
          f'({time.monotonic() - started:.1f} s)')
    assert len(kills) == a.kills
    assert reconnects > 0, 'no device lost its connection'
    # A device whose RoundOutcome died with a server learns on its resume only that the task is
    # over: "unconfirmed" (host_server/sim/emulated_device.cpp). Its report was summed all the
    # same — the results, contributors included, are compared below.
    unconfirmed = 0
    for device, ends in outcomes(sim1).items():
        for under_fire, calm in zip(ends, outcomes(sim0)[device]):
            unconfirmed += under_fire == 'unconfirmed' and calm == 'completed'
            assert under_fire == calm or (under_fire, calm) == ('unconfirmed', 'completed'), \
                f'device {device} ended {under_fire} under fire, {calm} uninterrupted'
    threshold = json.load(open('task.json')).get('threshold', 0)
    for task, result in results0.items():
        assert results1[task] == result, (task, results1[task], result)
        assert result['contributors'] >= threshold, (task, result['contributors'], threshold)
        print(f'task {task}: {result["contributors"]} contributors, sum_sha256 '
              f'{result["sum_sha256"][:16]}…, the same as uninterrupted')
    # The uninterrupted run is itself the in-process computation (fedstat-sim's expected).
    stages = sim0.get('stages') or [sim0]
    for stage, task in zip(stages, results0):
        assert results0[task]['sum_sha256'] == stage['expected']['sum_sha256'], task
    print(f'{a.kind}: {a.kills} kills, every round completed as uninterrupted ({unconfirmed} '
          f'devices unconfirmed), no stored event lost, integrity ok after every kill')


if __name__ == '__main__':
    main()
