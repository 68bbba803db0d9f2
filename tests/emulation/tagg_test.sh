#!/usr/bin/env bash
# Emulation of the TAGG trust model: a collector (the fedstat-server devices talk to) and a
# trusted aggregator (a second fedstat-server, role "tagg"), and a fleet of emulated devices
# (fedstat-sim: real Clients over real TLS-PSK) answering one kl task declared trust "tagg".
#  1. The TAgg is down when the round completes: the collector says it is unreachable, publishes
#     nothing ("awaiting tagg") and is stopped.
#  2. The TAgg starts; the restarted collector replays its store, forwards the same aggregate and
#     publishes the TAgg's answer.
# Checks: the published result is the TAgg's own stored result, byte for byte; it is the tagg
# model's release (no sum_sha256, no exact field); it is within the noise of the in-process
# estimate over the same sums (fedstat-sim's "expected", drawn with other noise) and near the
# exact D_KL; no collector log line names the aggregate.
#   tagg_test.sh SERVER SIM WORKDIR CLIENTS
set -euo pipefail
source "$(dirname "$0")/common.sh"
server=$1 sim=$2 work=$3 clients=${4:-30}
rm -rf "$work" && mkdir -p "$work/data" "$work/state"
cd "$work"
python3 - "$clients" <<'PY'
import json, os, socket, sys
clients = int(sys.argv[1])
with open('data/items.txt', 'w') as f:      # the fleet: a flatter law on supp Π (D_KL finite)
    for i in range(320): f.write(f"{i} {max(1, 100000 // (i + 6))}\n")
with open('reference.txt', 'w') as f:       # Π
    for i in range(320): f.write(f"{i} {max(1, 100000 // (i + 1))}\n")
task = {"id": 5, "kind": "kl", "trust": "tagg", "epsilon": 8.0, "delta": 1e-6,
        "min_clients": clients, "max_clients": clients, "deadline_seconds": 600,
        "admission_seconds": 120, "phase_timeout_seconds": 600, "seed": "00" * 31 + "51",
        "kl": {"reference": "reference.txt", "rounds": 300, "lambda": 0.1}}
json.dump(task, open('task.json', 'w'))
s = socket.socket(); s.bind(('127.0.0.1', 0)); tagg_port = s.getsockname()[1]; s.close()
psk = '3c' * 32
json.dump({"role": "tagg", "listen": f"127.0.0.1:{tagg_port}", "store": "tagg.db",
           "collectors": {"collector-1": psk}, "tasks": [task]}, open('tagg.json', 'w'))
json.dump({"listen": "127.0.0.1:0", "store": "collector.db", "fleet_secret": os.environ["FLEET_SECRET"],
           "idle_timeout_ms": 900000,
           "tagg": {"endpoint": f"127.0.0.1:{tagg_port}", "identity": "collector-1", "psk": psk,
                    "attempts": 2, "timeout_ms": 5000},
           "tasks": [task]}, open('collector.json', 'w'))
PY
pid= tagg_pid=
trap 'kill $pid $tagg_pid 2>/dev/null || true' EXIT
# wait_for_log FILE TEXT: until FILE holds TEXT, at most 30 s.
wait_for_log() {
  for _ in $(seq 300); do
    grep -q "$2" "$1" && return 0
    sleep 0.1
  done
  echo "no '$2' in $1 within 30 s"; cat "$1"; exit 1
}

# 1. The round completes while the TAgg is down.
"$server" --config collector.json --port-file port 2>collector1.log &
pid=$!
wait_for_port $pid collector1.log
"$sim" --server 127.0.0.1:$(cat port) --clients "$clients" --task task.json --data data \
  --fleet-secret "$FLEET_SECRET" --seed 17 --state state --json >sim.json
wait_for_log collector1.log '"outcome":"unreachable"'
if "$server" results 5 --config collector.json --json >/dev/null 2>awaiting.txt; then
  echo "a result was published without the TAgg"; exit 1
fi
grep -q 'awaiting tagg' awaiting.txt || { cat awaiting.txt; exit 1; }
kill -TERM $pid && wait $pid || true
pid=

# 2. The TAgg starts; the restarted collector forwards the same aggregate and publishes.
rm -f port
"$server" --config tagg.json --port-file tagg.port 2>tagg.log &
tagg_pid=$!
for _ in $(seq 300); do [ -s tagg.port ] && break; sleep 0.1; done
[ -s tagg.port ] || { echo "the TAgg did not listen"; cat tagg.log; exit 1; }
"$server" --config collector.json --port-file port 2>collector2.log &
pid=$!
wait_for_port $pid collector2.log
wait_for_log collector2.log '"outcome":"released"'
"$server" results 5 --config collector.json --json >published.json
"$server" results 5 --config tagg.json --json >tagg_result.json
kill -TERM $pid $tagg_pid && wait $pid $tagg_pid || true
trap - EXIT
cmp published.json tagg_result.json || { echo "the collector published something else"; exit 1; }
python3 - <<'PY'
import json, math
sim, result = json.load(open('sim.json')), json.load(open('published.json'))
expected, exact = sim['expected'], sim['exact']
print('outcomes', sim['outcomes'], 'contributors', sim['contributors'])
print('published', result)
print('in-process (other noise)', expected['estimate'], 'exact', exact)
assert result['model'] == 'tagg' and result['kind'] == 'kl', result
assert set(result) <= {'kind', 'model', 'contributors', 'items', 'estimate', 'estimate_sd'}, result
assert 'sum_sha256' not in result
assert result['contributors'] == sim['contributors'] == expected['contributors'], result
assert result['items'] == expected['items'], (result['items'], expected['items'])
sd = result['estimate_sd']
assert sd > 0 and sd == expected['estimate_sd'], (sd, expected['estimate_sd'])
# Two independent draws of the same noise around the same sums: within 5 σ·√2 of each other.
assert abs(result['estimate'] - expected['estimate']) <= 5 * sd * math.sqrt(2), (result, expected)
# And the Monte Carlo estimate of D_KL over 300 points, noised: near the exact value.
assert exact is not None and abs(result['estimate'] - exact) <= 5 * sd + 0.2 * exact, (result, exact)
print('published = the TAgg\'s result, the tagg release, within the noise of the in-process estimate')
PY
for log in collector1.log collector2.log; do
  if grep -q 'sum_sha256\|"sum"\|"words"' $log; then echo "$log names the aggregate"; exit 1; fi
  grep -q '"event":"stopped"' $log || { echo "$log: no clean stop"; cat $log; exit 1; }
done
grep -q 'collector collector-1: task 5 released' tagg.log || { cat tagg.log; exit 1; }
grep -q '"integrity":"ok"' tagg.log
