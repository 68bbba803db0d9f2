#!/usr/bin/env bash
# Emulation: PostgreSQL is restarted mid-round (pg_ctl stop -m immediate — a crash — then started
# again: crash recovery) under a running server; the server rides the outage out
# (store/postgres_store.h: reconnect with backoff up to store_outage_seconds, a COMMIT in doubt
# resolved by its transaction's status) and the round completes with the in-process result bit
# for bit. The server process never exits: it is the same process from the first message to the
# published result, and its log says the store went away and came back.
# CLIENTS emulated devices (real Clients over real TLS-PSK) run one task:
#   data_shift: a data-shift report of 21 chunks each, in the clear (trust none);
#   kl_dist:    KL answers under secure aggregation (trust dist, threshold 2/3).
# RESTARTS: comma-separated points, each N (once the store holds N events) or T:M (once it holds
# M events after the T-th round transition); at each, PostgreSQL is halted, kept down OUTAGE
# seconds (devices keep sending meanwhile; nothing is acknowledged), and started. FIRST_STAGE:
# how the server's last round line before it first found PostgreSQL gone begins ("secagg_closed
# (keys": the outage hit the secure-aggregation shares stage — "secagg_closed (keys|secagg_closed
# (shares": the shares or, when the fleet sent every share before PostgreSQL went down, the
# masking stage; "open|admission_closed": amid the
# reports, which a clear round takes during admission too, so which of the two depends on timing),
# checked; alternatives separated by '|'.
#   postgres_restart_test.sh SERVER SIM WORKDIR KIND CLIENTS RESTARTS FIRST_STAGE [OUTAGE]
set -euo pipefail
source "$(dirname "$0")/common.sh"
server=$1 sim=$2 work=$3 kind=$4 clients=$5 restarts=$6 first_stage=$7 outage=${8:-2}
rm -rf "$work" && mkdir -p "$work/data" "$work/state"
cd "$work"
export FEDSTAT_ROUND_STORE=postgresql
use_round_store
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
if kind == "kl_dist":
    del task["data_shift"]
    task.update({"kind": "kl", "trust": "dist", "epsilon": 1.0, "delta": 1e-6,
                 "threshold": (2 * clients + 2) // 3,
                 "kl": {"reference": "reference.txt", "rounds": 300, "lambda": 0.1}})
json.dump(task, open('task.json', 'w'))
config = {"listen": "127.0.0.1:0", "store": os.environ["STORE_SPEC"],
          "fleet_secret": os.environ["FLEET_SECRET"], "store_outage_seconds": 120,
          "tasks": [task]}
json.dump(config, open('server.json', 'w'))
PY

"$server" --config server.json --port-file port 2>server.log &
pid=$!
sim_pid= watcher=
trap 'kill -9 $pid $sim_pid $watcher 2>/dev/null || true; stop_round_store' EXIT
wait_for_port $pid server.log
port=$(cat port)

# The watcher restarts PostgreSQL at each event count (read with psql, a separate reader). It
# starts before the fleet and says when it reads the store.
python3 - "$restarts" "$outage" <<'PY' &
import glob, os, subprocess, sys, time
pg, script = os.environ['PG_DIR'], os.environ['PG_SCRIPT']
psql = [os.path.join(sorted(glob.glob('/usr/lib/postgresql/*/bin'))[-1], 'psql'), '-h', pg,
        '-p', open(os.path.join(pg, 'port')).read().strip(), '-U', 'fedstat', '-d', 'fedstat',
        '-X', '-q', '-t', '-A', '-c']
def query(sql):  # psql itself, not the cluster script: polled often
    out = subprocess.run(psql + [sql], check=True, capture_output=True, text=True).stdout
    return [tuple(int(v) for v in line.split('|')) for line in out.splitlines() if line]
points, outage = sys.argv[1].split(','), float(sys.argv[2])
deadline = time.monotonic() + 300
ready = False
with open('restarts.txt', 'w') as log:
    for point in points:
        # N: once N events are stored; T:M: once M events are stored after the T-th transition.
        transitions, need = map(int, point.split(':')) if ':' in point else (None, int(point))
        while True:
            assert time.monotonic() < deadline, f'the store did not reach {point} in 300 s'
            if os.path.exists('sim.pid'):
                os.kill(int(open('sim.pid').read()), 0)  # raises (the test fails) if the fleet is gone
            try:
                if transitions is None:
                    n = query('SELECT COUNT(*) FROM events')[0][0]
                else:  # one query: polled as often as it can be
                    n = query('SELECT COUNT(*) FROM events WHERE sequence > (SELECT sequence '
                              'FROM events WHERE kind = 2 ORDER BY sequence LIMIT 1 OFFSET '
                              f'{transitions - 1})')[0][0]
            except subprocess.CalledProcessError:
                n = -1  # the store is not made yet
            if not ready:
                open('watcher_ready', 'w').close()
                ready = True
            if n >= need:
                subprocess.run(['bash', script, 'halt', pg], check=True)
                time.sleep(outage)  # PostgreSQL stays down this long: the outage itself
                subprocess.run(['bash', script, 'resume', pg], check=True)
                log.write(f'{point}\n')
                log.flush()
                print(f'PostgreSQL restarted at {point}')
                break
            time.sleep(0.005)
PY
watcher=$!
until [ -e watcher_ready ]; do
  kill -0 $watcher 2>/dev/null || { echo "the watcher failed before reading the store"; exit 1; }
  sleep 0.01
done

"$sim" --server 127.0.0.1:$port --clients "$clients" --task task.json --data data \
  --accept-trust none,dist --fleet-secret "$FLEET_SECRET" --seed 23 --noise-seed 9 --state state \
  --json >sim.json &
sim_pid=$!
echo $sim_pid >sim.pid.tmp && mv sim.pid.tmp sim.pid

wait $watcher
wait $sim_pid
kill -0 $pid 2>/dev/null || { echo "the server exited during the outage"; cat server.log; exit 1; }
"$server" results 5 --config server.json --json >result.json
kill -TERM $pid && wait $pid || true
trap stop_round_store EXIT
python3 - "$clients" "$restarts" "$first_stage" <<'PY'
import json, sys
clients, restarts, first_stage = int(sys.argv[1]), sys.argv[2].split(','), sys.argv[3]
sim, result = json.load(open('sim.json')), json.load(open('result.json'))
log = [json.loads(line) for line in open('server.log') if line.startswith('{')]
events = [line['event'] for line in log]
print('outcomes', sim['outcomes'], 'reconnects', sum(d['reconnects'] for d in sim['devices']),
      'store_unreachable', events.count('store_unreachable'),
      'store_reachable', events.count('store_reachable'))
assert len(open('restarts.txt').read().splitlines()) == len(restarts), 'a restart did not happen'
# The stage the server was in when it first found PostgreSQL gone: its last round line before.
seen = [line for line in log if line['event'] in ('round', 'store_unreachable')]
first = next(k for k, line in enumerate(seen) if line['event'] == 'store_unreachable')
stage = seen[first - 1]['detail'].split(': ', 1)[1] if first > 0 else 'none'
print('the first outage came after:', stage)
assert any(stage.startswith(s) for s in first_stage.split('|')), \
    f'the first outage came after "{stage}", not "{first_stage}"'
assert events.count('store_unreachable') >= len(restarts), 'the server saw no outage'
assert events.count('store_reachable') >= len(restarts), 'the store did not come back'
assert sim['outcomes'] == {'completed': clients}, sim['outcomes']
assert result['contributors'] == clients, result
assert result['sum_sha256'] == sim['expected']['sum_sha256'], 'aggregate differs'
assert result['estimate'] == sim['expected']['estimate']
print('PostgreSQL restarted mid-round: one server process throughout, the result equals the '
      'uninterrupted one')
PY
grep -q '"event":"stopped"' server.log
grep -q '"integrity":"ok"' server.log
check_store_password_not_logged server.log result.json
