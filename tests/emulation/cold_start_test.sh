#!/usr/bin/env bash
# Emulation: three fedstat-server processes started at once on one empty PostgreSQL database
# (docs/scale_out.md, failure case 10). Each creates or checks the schema and declares the same
# task with its own clock; all three must start and declare one definition between them. Started
# just before a second boundary, so that their clocks' seconds differ: before, the servers whose
# opening time differed from the stored one were refused by the store ("a task id names one task
# forever") and exited. Several serving nodes are not built yet, so exactly one serves (it holds
# the store's serving lock) and the other two wait as standbys ("store_standby"), alive and not
# listening — before the lock, all three opened the round, and the three "open" transitions they
# stored made every later replay of the task fail. The one serving serves a round to CLIENTS
# devices (the result equals the in-process one), is killed with kill -9, and a standby takes over:
# it listens, its replay of the stored round succeeds, it publishes the same result, and the store
# holds one "open".
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

# serving_and_standbys: the index of the one server that listens once each of the live servers
# either listens or said store_standby (polled, bounded above by 60 s); fails otherwise.
serving_and_standbys() {
  local i ready listening
  for _ in $(seq 600); do
    ready=0 listening=()
    for i in 1 2 3; do
      [ -n "${pids[$((i - 1))]}" ] || continue
      kill -0 ${pids[$((i - 1))]} 2>/dev/null ||
        { echo "server $i exited" >&2; cat server$i.log >&2; return 1; }
      if [ -s port$i ]; then
        ready=$((ready + 1)) listening+=($i)
      elif grep -q '"event":"store_standby"' server$i.log; then
        ready=$((ready + 1))
      fi
    done
    if [ "$ready" = "$live" ] && [ ${#listening[@]} -ge 1 ]; then
      [ ${#listening[@]} = 1 ] || { echo "servers ${listening[*]} all listen" >&2; return 1; }
      echo "${listening[0]}"
      return 0
    fi
    sleep 0.1  # polling the port files and logs, bounded above
  done
  echo "not one server listening and the others standing by within 60 s" >&2
  tail -n 3 server1.log server2.log server3.log >&2
  return 1
}
live=3
active=$(serving_and_standbys)
echo "server $active serves; the other two stand by"
store_query "SELECT task_id, definition FROM tasks" >tasks.txt
[ "$(wc -l <tasks.txt)" = 1 ] || { echo "not one task stored:"; cat tasks.txt; exit 1; }

"$sim" --server 127.0.0.1:$(cat port$active) --clients "$clients" --task task.json --data data \
  --accept-trust none --fleet-secret "$FLEET_SECRET" --seed 23 --noise-seed 9 --state state \
  --json >sim.json &
sim_pid=$!
wait $sim_pid
"$server" results 5 --config server.json --json >result.json

# The serving one dies; a standby takes the lock, replays the stored round and serves.
kill -9 ${pids[$((active - 1))]}
wait ${pids[$((active - 1))]} 2>/dev/null || true
pids[$((active - 1))]=""
live=2
successor=$(serving_and_standbys)
echo "server $successor took over"
grep -q '"event":"listening"' server$successor.log
"$server" results 5 --config server.json --json >result_after.json
cmp result.json result_after.json || { echo "the result changed after the take-over"; exit 1; }
opens=$(store_query "SELECT count(*) FROM events WHERE kind = 2 AND convert_from(payload, 'UTF8') LIKE 'open %'")
[ "$opens" = 1 ] || { echo "the store holds $opens \"open\" transitions, not 1"; exit 1; }
remaining=()
for p in "${pids[@]}"; do [ -n "$p" ] && remaining+=("$p"); done
kill -TERM "${remaining[@]}" && wait "${remaining[@]}" || true
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
print('three servers started at once on one empty database: one served, two stood by; after '
      'kill -9 a standby took over and replayed the round; the result equals the in-process one')
PY
grep -q '"event":"stopped"' server$successor.log
