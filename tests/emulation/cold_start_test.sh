#!/usr/bin/env bash
# Emulation: three fedstat-server processes started at once on one empty PostgreSQL database
# (docs/scale_out.md, failure case 10). Each creates or checks the schema and declares the same
# task with its own clock; all three must start, declare one definition between them, and stay up.
# Started just before a second boundary, so that their clocks' seconds differ: before, the
# servers whose opening time differed from the stored one were refused by the store ("a task id
# names one task forever") and exited. Then one of them serves a round to CLIENTS devices (the
# multi-node round protocol is later work: the other two only hold the task open) and the result
# equals the in-process one; the other two are still up.
#   cold_start_test.sh SERVER SIM WORKDIR [CLIENTS]
set -euo pipefail
source "$(dirname "$0")/common.sh"
server=$1 sim=$2 work=$3 clients=${4:-10}
rm -rf "$work" && mkdir -p "$work/data" "$work/state"
cd "$work"
export FEDSTAT_ROUND_STORE=postgresql
use_round_store
python3 - "$clients" <<'PY'
import json, os, sys
clients = int(sys.argv[1])
with open('data/items.txt', 'w') as f:
    for i in range(300): f.write(f"{i + 15} {max(1, 100000 // (i + 1))}\n")
with open('reference.txt', 'w') as f:
    for i in range(320): f.write(f"{i} {max(1, 100000 // (i + 1))}\n")
task = {"id": 5, "kind": "data_shift", "trust": "none", "epsilon": 0, "delta": 0,
        "min_clients": clients, "max_clients": clients, "deadline_seconds": 900,
        "admission_seconds": 300, "phase_timeout_seconds": 600, "seed": "00" * 31 + "35",
        "data_shift": {"rows": 5, "width": 256, "heap_capacity": 64, "k": 1024, "domain": 400,
                       "local_epsilon": 0, "reference": "reference.txt"}}
json.dump(task, open('task.json', 'w'))
json.dump({"listen": "127.0.0.1:0", "store": os.environ["STORE_SPEC"],
           "fleet_secret": os.environ["FLEET_SECRET"], "tasks": [task]},
          open('server.json', 'w'))
PY

# Just before a second boundary (a bounded wait on the clock, not a synchronisation).
python3 -c 'import time; time.sleep((0.97 - time.time() % 1) % 1)'
pids=()
for i in 1 2 3; do
  "$server" --config server.json --port-file port$i 2>server$i.log &
  pids+=($!)
  sleep 0.02
done
sim_pid=
trap 'kill -9 ${pids[*]} $sim_pid 2>/dev/null || true; stop_round_store' EXIT
for i in 1 2 3; do
  for _ in $(seq 600); do
    [ -s port$i ] && break
    kill -0 ${pids[$((i - 1))]} 2>/dev/null ||
      { echo "server $i exited at start"; cat server$i.log; exit 1; }
    sleep 0.1  # polling the port file, bounded above
  done
  [ -s port$i ] || { echo "server $i did not listen within 60 s"; cat server$i.log; exit 1; }
done
echo "all three servers listen"
store_query "SELECT task_id, definition FROM tasks" >tasks.txt
[ "$(wc -l <tasks.txt)" = 1 ] || { echo "not one task stored:"; cat tasks.txt; exit 1; }
grep -h '"event":"listening"' server1.log server2.log server3.log | wc -l | grep -qx 3

"$sim" --server 127.0.0.1:$(cat port1) --clients "$clients" --task task.json --data data \
  --accept-trust none --fleet-secret "$FLEET_SECRET" --seed 23 --noise-seed 9 --state state \
  --json >sim.json &
sim_pid=$!
wait $sim_pid
for i in 1 2 3; do
  kill -0 ${pids[$((i - 1))]} 2>/dev/null || { echo "server $i exited"; cat server$i.log; exit 1; }
done
"$server" results 5 --config server.json --json >result.json
kill -TERM ${pids[*]} && wait ${pids[*]} || true
trap stop_round_store EXIT
python3 - "$clients" <<'PY'
import json, sys
clients = int(sys.argv[1])
sim, result = json.load(open('sim.json')), json.load(open('result.json'))
definition = json.loads(open('tasks.txt').read().split('|', 1)[1])
print('stored opening time', definition['opened_unix_seconds'], 'outcomes', sim['outcomes'])
assert sim['outcomes'] == {'completed': clients}, sim['outcomes']
assert result['contributors'] == clients, result
assert result['sum_sha256'] == sim['expected']['sum_sha256'], 'aggregate differs'
print('three servers started at once on one empty database: all started and stayed up; '
      'the round served by one equals the in-process result')
PY
for i in 1 2 3; do grep -q '"event":"stopped"' server$i.log; done
