#!/usr/bin/env bash
# Emulation: the server is killed with SIGKILL mid-round and restarted on the same port; the
# round completes with nothing lost. CLIENTS emulated devices (real Clients over real TLS-PSK) run
# one task:
#   data_shift: a data-shift report of 21 chunks each, in the clear (trust none);
#   kl_dist:    KL answers under secure aggregation (trust dist, threshold 2/3);
#   kl_dist_signed: the same in signed sessions (issue 42: fedstat-ca beside SERVER issues the
#               fleet's credentials, the server holds ca_public_key), with their consistency
#               stage between the masked input and the reveals.
# Once the store holds KILL_AT events (or, KILL_AT = T:M, once it holds T round transitions and
# M events after the last of them: the kill then lands inside the stage the T-th opened, and the
# test checks it did) the server is killed — SIGKILL: no shutdown of any kind;
# SIGNAL=TERM: the graceful stop, whose closing of every connection must not count as the
# members' departures (Coordinator::begin_shutdown) — the store must pass PRAGMA
# integrity_check, and a new server process replays it. Devices that lost their
# connection check in again and the Client resumes its round (sdk/client/client.h): the rest of
# its report from the words the server acknowledged, or its secure-aggregation round from the
# messages the server holds (SecAggResume). The published result must equal the in-process
# computation over all CLIENTS devices, bit for bit (sum_sha256), and every device completes.
# FEDSTAT_ROUND_STORE=postgresql: the store is a throw-away PostgreSQL (common.sh,
# use_round_store), read by the watcher with psql; the restarted server replays from it.
#   kill_restart_test.sh SERVER SIM WORKDIR [KIND [CLIENTS [KILL_AT [SIGNAL]]]]
set -euo pipefail
source "$(dirname "$0")/common.sh"
server=$1 sim=$2 work=$3 kind=${4:-data_shift} clients=${5:-200} kill_at=${6:-1500}
stop_signal=${7:-KILL}
rm -rf "$work" && mkdir -p "$work/data" "$work/state"
cd "$work"
use_round_store
sim_credentials=()
if [ "$kind" = kl_dist_signed ]; then
  issue_signed_fleet "$server" "$clients"
fi
python3 - "$kind" "$clients" <<'PY'
import json, os, sys
kind, clients = sys.argv[1], int(sys.argv[2])
with open('data/items.txt', 'w') as f:
    for i in range(300): f.write(f"{i + 15} {max(1, 100000 // (i + 1))}\n")
with open('reference.txt', 'w') as f:
    for i in range(320): f.write(f"{i} {max(1, 100000 // (i + 1))}\n")
task = {"id": 5, "kind": "data_shift", "trust": "none", "epsilon": 0, "delta": 0,
        "min_clients": clients, "max_clients": clients, "deadline_seconds": 900,
        "admission_seconds": 300, "phase_timeout_seconds": 600, "seed": "00" * 31 + "35",
        "data_shift": {"rows": 5, "width": 256, "heap_capacity": 64, "k": 1024, "domain": 400,
                       "local_epsilon": 0, "reference": "reference.txt"}}
if kind in ("kl_dist", "kl_dist_signed"):
    del task["data_shift"]
    task.update({"kind": "kl", "trust": "dist", "epsilon": 1.0, "delta": 1e-6,
                 "threshold": (2 * clients + 2) // 3,
                 "kl": {"reference": "reference.txt", "rounds": 300, "lambda": 0.1}})
json.dump(task, open('task.json', 'w'))
config = {"listen": "127.0.0.1:0", "store": os.environ["STORE_SPEC"],
          "fleet_secret": os.environ["FLEET_SECRET"], "tasks": [task]}
if kind == "kl_dist_signed":
    config["ca_public_key"] = "ca.pub"
json.dump(config, open('server.json', 'w'))
PY

"$server" --config server.json --port-file port 2>server1.log &
pid=$!
sim_pid= watcher=
trap 'kill -9 $pid $sim_pid $watcher 2>/dev/null || true; stop_round_store' EXIT
wait_for_port $pid server1.log
port=$(cat port)

# The watcher signals the server (SIGNAL, KILL by default) once the store holds kill_at
# events (data_shift: n hellos + n replies, then report chunks, 21n of them in all; kl_dist:
# hellos, replies, keys, then n(n−1) shares, ...), read from the WAL database by a separate
# reader. It starts before the fleet and says when it reads the store: a round can finish in
# less time than a Python interpreter takes to start.
python3 - "$kill_at" "$pid" "$stop_signal" <<'PY' &
import os, signal, sqlite3, subprocess, sys, time
pg = os.environ.get('PG_DIR')
def query(sql):  # the store's rows, from a separate reader (SQLite read-only, or psql)
    if pg:
        out = subprocess.run(['bash', os.environ['PG_SCRIPT'], 'psql', pg, sql], check=True,
                             capture_output=True, text=True).stdout
        return [tuple(int(v) for v in line.split('|')) for line in out.splitlines() if line]
    db = sqlite3.connect('file:server.db?mode=ro', uri=True, timeout=5)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()
server, stop = int(sys.argv[2]), getattr(signal, 'SIG' + sys.argv[3])
transitions, need = map(int, sys.argv[1].split(':')) if ':' in sys.argv[1] else (None, int(sys.argv[1]))
deadline = time.monotonic() + 300
ready = False
while True:
    assert time.monotonic() < deadline, 'the store did not reach the kill point in 300 s'
    if os.path.exists('sim.pid'):
        os.kill(int(open('sim.pid').read()), 0)  # raises (the test fails) if the fleet is gone
    try:
        if transitions is None:
            n = query('SELECT COUNT(*) FROM events')[0][0]
        else:  # events after the T-th transition (kind 2, EventKind::kTransition)
            rows = query('SELECT sequence FROM events WHERE kind = 2 ORDER BY sequence '
                         f'LIMIT 1 OFFSET {transitions - 1}')
            n = query(f'SELECT COUNT(*) FROM events WHERE sequence > {rows[0][0]}')[0][0] \
                if rows else -1
        if not ready:
            open('watcher_ready', 'w').close()
            ready = True
        if n >= need:
            os.kill(server, stop)
            break
    except (sqlite3.OperationalError, subprocess.CalledProcessError):
        pass  # the store is not made yet
    time.sleep(0.005)
print('events stored before the', sys.argv[3], '>=', sys.argv[1])
PY
watcher=$!
until [ -e watcher_ready ]; do
  kill -0 $watcher 2>/dev/null || { echo "the watcher failed before reading the store"; exit 1; }
  sleep 0.01
done

"$sim" --server 127.0.0.1:$port --clients "$clients" --task task.json --data data \
  --accept-trust none,dist --fleet-secret "$FLEET_SECRET" --seed 23 --noise-seed 9 --state state \
  "${sim_credentials[@]}" --json >sim.json &
sim_pid=$!
echo $sim_pid >sim.pid.tmp && mv sim.pid.tmp sim.pid

wait $watcher
wait $pid 2>/dev/null || true
python3 - "$stop_signal" "$kill_at" <<'PY'
import os, sqlite3, subprocess, sys
pg = os.environ.get('PG_DIR')
def query(sql):
    if pg:
        out = subprocess.run(['bash', os.environ['PG_SCRIPT'], 'psql', pg, sql], check=True,
                             capture_output=True, text=True).stdout
        return [tuple(line.split('|')) for line in out.splitlines() if line]
    return sqlite3.connect('server.db').execute(sql).fetchall()
if ':' in sys.argv[2]:  # the kill landed inside the stage the T-th transition opened
    t = int(query('SELECT COUNT(*) FROM events WHERE kind = 2')[0][0])
    assert t == int(sys.argv[2].split(':')[0]), f'{t} transitions at the kill: move KILL_AT'
if not pg:  # PostgreSQL: the restarted server's integrity check at its stop (below)
    assert query('PRAGMA integrity_check')[0][0] == 'ok'
n = int(query('SELECT COUNT(*) FROM events')[0][0])
r = int(query('SELECT COUNT(*) FROM results')[0][0])
assert r == 0, 'the round finished before the kill: raise KILL_AT'
states = [row[0] for row in query('SELECT state FROM tasks')]
assert 'aborted' not in states, f'the stop aborted the round: {states}'
integrity = 'checked at the restarted server\'s stop' if pg else 'integrity ok'
print('after SIG' + sys.argv[1] + ':', integrity + ',', n, 'events, round not finished, not aborted')
open('events_at_kill', 'w').write(str(n))
PY

rm -f port
"$server" --config server.json --listen 127.0.0.1:$port --port-file port 2>server2.log &
pid=$!
wait_for_port $pid server2.log
wait $sim_pid
"$server" results 5 --config server.json --json >result.json
kill -TERM $pid && wait $pid || true
trap stop_round_store EXIT
python3 - "$clients" <<'PY'
import json, sys
clients = int(sys.argv[1])
sim, result = json.load(open('sim.json')), json.load(open('result.json'))
print('outcomes', sim['outcomes'], 'reconnects',
      sum(d['reconnects'] for d in sim['devices']))
assert sim['outcomes'] == {'completed': clients}, sim['outcomes']
assert sum(d['reconnects'] for d in sim['devices']) > 0, 'no device lost its connection'
assert result['contributors'] == clients, result
assert result['sum_sha256'] == sim['expected']['sum_sha256'], 'aggregate differs'
assert result['estimate'] == sim['expected']['estimate']
print('killed and restarted mid-round: the published result equals the uninterrupted one')
PY
grep -q '"event":"stopped"' server2.log
grep -q '"integrity":"ok"' server2.log
check_store_password_not_logged server1.log server2.log result.json
