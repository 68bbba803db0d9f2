#!/usr/bin/env bash
# Emulation: a real fedstat-server and a fleet of emulated devices (fedstat-sim: real Clients
# over real TLS-PSK on loopback) run one task; the published result must equal the in-process
# computation over the devices whose input was summed, bit for bit (sum_sha256) and in its
# estimate. Also: a device with a key the server does not hold is refused at the handshake.
#   round_test.sh SERVER SIM WORKDIR KIND TRUST CLIENTS DROPOUT
set -euo pipefail
server=$1 sim=$2 work=$3 kind=$4 trust=$5 clients=$6 dropout=$7
rm -rf "$work" && mkdir -p "$work/data" "$work/state"
cd "$work"
secret=$(printf '5a%.0s' $(seq 32))
python3 - "$kind" "$trust" "$clients" <<'PY'
import json, sys
kind, trust, clients = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open('data/items.txt', 'w') as f:          # the fleet: a Zipf law shifted by 15 ids
    for i in range(300): f.write(f"{i + 15} {max(1, 100000 // (i + 1))}\n")
with open('reference.txt', 'w') as f:           # the reference (also Π for kl)
    for i in range(320): f.write(f"{i} {max(1, 100000 // (i + 1))}\n")
task = {"id": 3, "kind": kind, "trust": trust, "epsilon": 0, "delta": 0,
        "min_clients": clients, "max_clients": clients, "deadline_seconds": 600,
        "admission_seconds": 120, "phase_timeout_seconds": 600, "seed": "00" * 31 + "31"}
if kind == "data_shift":
    task["data_shift"] = {"rows": 5, "width": 256, "heap_capacity": 64, "k": 1024, "domain": 400,
                          "local_epsilon": 0, "reference": "reference.txt"}
else:
    task.update({"epsilon": 1.0, "delta": 1e-6, "threshold": (2 * clients + 2) // 3})
    task["kl"] = {"reference": "reference.txt", "rounds": 300, "lambda": 0.1}
json.dump(task, open('task.json', 'w'))
json.dump({"listen": "127.0.0.1:0", "store": "server.db", "fleet_secret": "5a" * 32,
           "idle_timeout_ms": 900000, "noise_seed": 9, "tasks": [task]}, open('server.json', 'w'))
PY
"$server" --config server.json --port-file port 2>server.log &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
# The server writes the port file (atomically) once it listens; wait for the file, not a time.
for _ in $(seq 600); do [ -s port ] && break; kill -0 $pid || { cat server.log; exit 1; }; sleep 0.1; done
endpoint=127.0.0.1:$(cat port)

# A device whose key the server does not hold: refused at the TLS handshake, before any task data.
wrong=$(printf '77%.0s' $(seq 32))
"$sim" --server "$endpoint" --clients 1 --first-id 900 --task task.json --data data \
  --fleet-secret "$wrong" --state state --json >refused.json
python3 - <<'PY'
import json
d = json.load(open('refused.json'))['devices'][0]
assert d['outcome'] == 'error' and 'refused the pre-shared key' in d['detail'], d
print('unauthenticated device refused:', d['detail'])
PY

"$sim" --server "$endpoint" --clients "$clients" --task task.json --data data \
  --fleet-secret "$secret" --dropout "$dropout" --seed 17 --noise-seed 9 --state state --json >sim.json
"$server" results 3 --config server.json --json >result.json
kill -TERM $pid && wait $pid || true
trap - EXIT
python3 - <<'PY'
import json
sim, result = json.load(open('sim.json')), json.load(open('result.json'))
expected = sim['expected']
print('outcomes', sim['outcomes'], 'contributors', sim['contributors'])
print('published', result)
assert result['contributors'] == sim['contributors'], (result, sim['contributors'])
assert result['sum_sha256'] == expected['sum_sha256'], 'aggregate differs from the in-process sum'
assert result['estimate'] == expected['estimate'], (result['estimate'], expected['estimate'])
print('published result equals the in-process computation, bit for bit')
PY
grep -q '"event":"stopped"' server.log || { echo "server did not stop cleanly"; cat server.log; exit 1; }
grep -q '"integrity":"ok"' server.log
