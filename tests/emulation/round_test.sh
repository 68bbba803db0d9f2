#!/usr/bin/env bash
# Emulation: a real fedstat-server and a fleet of emulated devices (fedstat-sim: real Clients
# over real TLS-PSK on loopback) run one task; the published result must equal the in-process
# computation over the devices whose input was summed, bit for bit (sum_sha256) and in its
# estimate (model_update: and in its model). Also: a device with a key the server does not hold
# is refused at the handshake, and (trust none) a device left with the SDK's default task policy
# declines the task (declined-policy), saying so on stderr: the fleet opts in with --accept-trust.
#   round_test.sh SERVER SIM WORKDIR KIND TRUST CLIENTS DROPOUT [GRAPH [SIGNED [MTLS]]]
# GRAPH (trust dist): "sparse" declares the SecAgg+ graph and leaves the threshold to the task
# plan (the (k, t) bound); default: the complete graph with threshold ⌈(2n + 2)/3⌉.
# SIGNED (trust dist): "signed" runs signed secure aggregation (issue 42): fedstat-ca (beside
# SERVER) makes a seeded CA and issues the fleet's credentials, the server gets ca_public_key and
# fedstat-sim --credentials; the devices' dropouts then include the consistency stage.
# MTLS (with SIGNED): "mtls": every device connects with mutual TLS (issue 42 item 1): fedstat-ca
# also writes the server's certificate, the server takes certificates only
# (device_authentication "certificate") and holds no fleet_secret, and the refused device is one
# whose certificate another CA issued.
# FEDSTAT_ROUND_STORE=postgresql (environment): the server's store is PostgreSQL (common.sh,
# use_round_store: a throw-away cluster, stopped and removed however the test ends; the URI's
# password never logged); the result must still be the in-process one, bit for bit, and so the
# SQLite run's.
set -euo pipefail
source "$(dirname "$0")/common.sh"
server=$1 sim=$2 work=$3 kind=$4 trust=$5 clients=$6 dropout=$7 graph=${8:-complete}
signed=${9:-} mtls=${10:-}
scripts=$(cd "$(dirname "$0")/../../scripts" && pwd)
rm -rf "$work" && mkdir -p "$work/data" "$work/state"
cd "$work"
use_round_store
sim_credentials=()
if [ "$signed" = signed ]; then
  issue_signed_fleet "$server" "$clients"
  if [ "$mtls" = mtls ]; then issue_mtls_fleet "$server"; fi
fi
PYTHONPATH="$scripts" python3 - "$kind" "$trust" "$clients" "$dropout" "$graph" "$signed" "$mtls" <<'PY'
import json, os, random, sys
import logistic_data  # scripts/logistic_data.py
kind, trust, clients, dropout = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
graph, signed, mtls = sys.argv[5], sys.argv[6] == "signed", sys.argv[7] == "mtls"
# Time-outs for the CI's fleets (≤ 2,000 devices); a larger measured fleet (docs/benchmarks.md:
# 10,000) gets 0.3 s of deadline and 50 ms of admission per device.
task = {"id": 3, "kind": kind, "trust": trust, "epsilon": 0, "delta": 0,
        "min_clients": clients, "max_clients": clients,
        "deadline_seconds": max(600, 3 * clients // 10),
        "admission_seconds": max(120, clients // 20), "phase_timeout_seconds": 600,
        "seed": "00" * 31 + "31"}
if dropout > 0:
    # Every device accepts, then some drop out; min_clients binds each secure-aggregation stage
    # that decides the sum (and the clear path's reports), not only admission (issue 39 item 4):
    # 3/4 of the fleet leaves room for the dropouts.
    task["min_clients"] = (3 * clients) // 4
if kind == "model_update":
    # Logistic data, fixed seed: 7 Gaussian features and a bias at unit norm, labels drawn from
    # sigmoid(w*·x) with ‖w*‖ = 12 (the Bayes classifier is right on ~88 % of rows); 64 rows per
    # device (data/examples.csv, device i: rows 64i..64i+63) and 2000 held-out rows.
    rng, d, per_client = random.Random(20261123), 8, 64
    w = logistic_data.true_weights(rng, d)
    logistic_data.write_rows('data/examples.csv', clients * per_client, w, rng)
    logistic_data.write_rows('evaluation.csv', 2000, w, rng)
    if trust != "none":
        task.update({"epsilon": 1.0, "delta": 1e-6, "threshold": (2 * clients + 2) // 3})
    task["model_update"] = {"dimension": d, "epochs": 20, "batches": 4, "averaging_interval": 20,
                            "eta0": 4.0, "mu": 0.001, "clip_norm": 10.0, "rotate": True,
                            "gamma": 4096.0, "beta": 0.6065306597, "bits": 32,
                            "examples_per_client": per_client, "evaluation": "evaluation.csv"}
else:
    with open('data/items.txt', 'w') as f:      # the fleet: a Zipf law shifted by 15 ids
        for i in range(300): f.write(f"{i + 15} {max(1, 100000 // (i + 1))}\n")
    with open('reference.txt', 'w') as f:       # the reference (also Π for kl)
        for i in range(320): f.write(f"{i} {max(1, 100000 // (i + 1))}\n")
if kind == "data_shift":
    task["data_shift"] = {"rows": 5, "width": 256, "heap_capacity": 64, "k": 1024, "domain": 400,
                          "local_epsilon": 0, "reference": "reference.txt"}
elif kind == "kl":
    task.update({"epsilon": 1.0, "delta": 1e-6, "threshold": (2 * clients + 2) // 3})
    if graph == "sparse":
        del task["threshold"]  # the plan's (k, t) from the bound at max_clients
        task["graph"] = "sparse"
        # The graph is chosen for the dropouts it must survive: the fleet's own rate.
        task["dropout_rate"] = max(0.05, dropout)
    task["kl"] = {"reference": "reference.txt", "rounds": 300, "lambda": 0.1}
json.dump(task, open('task.json', 'w'))
config = {"listen": "127.0.0.1:0", "store": os.environ["STORE_SPEC"],
          "fleet_secret": os.environ["FLEET_SECRET"], "tasks": [task]}
if signed:
    config["ca_public_key"] = "ca.pub"  # the server holds the CA's public key only
if mtls:
    # Certificates only: the PSK suite is not offered, and the server holds no device secret.
    del config["fleet_secret"]
    config.update({"tls_certificate": "server.crt", "tls_private_key": "server.key",
                   "tls_client_ca": "ca.crt", "device_authentication": "certificate",
                   "tls_revoked_devices": "revoked.txt"})
    open('revoked.txt', 'w').write("# no device revoked yet\n")
if clients + 64 > 4096:  # each device holds one connection for the round (default cap 4,096)
    config["max_connections"] = clients + 64
json.dump(config, open('server.json', 'w'))
PY
"$server" --config server.json --port-file port 2>server.log &
pid=$!
trap 'kill $pid 2>/dev/null || true; stop_round_store' EXIT
wait_for_port $pid server.log
endpoint=127.0.0.1:$(cat port)

if [ "$mtls" = mtls ]; then
  # A device whose certificate another CA issued: refused at the TLS handshake.
  grep -q '"device_authentication":"certificate"' server.log ||
    { echo "the server does not take certificates only"; cat server.log; exit 1; }
  ca_tool=$(dirname "$server")/fedstat-ca
  mkdir -p stranger
  "$ca_tool" init --out-key stranger/ca.key --out-public stranger/ca.pub --seed 8 >/dev/null
  "$ca_tool" issue --ca-key stranger/ca.key --first-id 900 --count 1 --seed 9 \
    --out stranger/fleet.creds >/dev/null
  refused_options=(--credentials stranger/fleet.creds --ca-public-key stranger/ca.pub
                   --tls-certificates stranger/fleet.crt --tls-ca ca.crt)
  refused_reason="refused this device's certificate"
else
  # A device whose key the server does not hold: refused at the TLS handshake, before any task
  # data (fedstat-sim exits 1: its one device did not complete, the reason on stderr).
  refused_options=(--fleet-secret "$(printf '77%.0s' $(seq 32))")
  refused_reason="refused the pre-shared key"
fi
rc=0
"$sim" --server "$endpoint" --clients 1 --first-id 900 --task task.json --data data \
  "${refused_options[@]}" --state state --json >refused.json 2>refused.err || rc=$?
[ $rc -eq 1 ] && grep -q "1 of 1 devices failed: .*$refused_reason" refused.err ||
  { echo "the refused device: fedstat-sim exit $rc (want 1)"; cat refused.err; exit 1; }
REFUSED_REASON="$refused_reason" python3 - <<'PY'
import json, os
d = json.load(open('refused.json'))['devices'][0]
assert d['outcome'] == 'error' and os.environ['REFUSED_REASON'] in d['detail'], d
print('unauthenticated device refused:', d['detail'])
PY

if [ "$trust" = none ]; then
  # The SDK's default task policy takes no trust-none task: a device that did not opt in declines
  # it (TaskReply reason POLICY), and fedstat-sim says so on stderr.
  "$sim" --server "$endpoint" --clients 1 --first-id 901 --task task.json --data data \
    --fleet-secret "$FLEET_SECRET" --max-sessions 20 --state state --json >default_policy.json \
    2>default_policy.err || true
  python3 - <<'PY'
import json
d = json.load(open('default_policy.json'))
assert d['outcomes'] == {'declined-policy': 1}, d['outcomes']
assert 'trust model' in d['devices'][0]['detail'], d['devices'][0]
err = open('default_policy.err').read()
assert 'declined it under their task policy' in err and '--accept-trust' in err, err
print('a device with the default task policy declined the trust-none task:', d['devices'][0]['detail'])
PY
fi

# The fleet accepts the task's trust model (a trust-none task: it opts in to none).
fleet_secret=(--fleet-secret "$FLEET_SECRET")
if [ "$mtls" = mtls ]; then fleet_secret=(); fi  # certificates only: no device holds a PSK
"$sim" --server "$endpoint" --clients "$clients" --task task.json --data data --accept-trust "$trust" \
  "${fleet_secret[@]}" --dropout "$dropout" --seed 17 --noise-seed 9 --state state \
  "${sim_credentials[@]}" --json >sim.json
"$server" results 3 --config server.json --json >result.json
if [ "$mtls" = mtls ]; then
  # Revocation: device 1 listed in tls_revoked_devices (replaced atomically), SIGHUP: the reload
  # is logged and device 1's certificate then fails its handshake.
  printf '1  # revoked by the test\n' >revoked.tmp && mv revoked.tmp revoked.txt
  kill -HUP $pid
  for _ in $(seq 100); do grep -q '"event":"revocations_reloaded"' server.log && break; sleep 0.1; done
  grep -q '"event":"revocations_reloaded".*"newly_revoked_ids":\[1\]' server.log ||
    { echo "the revocation was not reloaded"; cat server.log; exit 1; }
  rc=0
  "$sim" --server "$endpoint" --clients 1 --first-id 1 --task task.json --data data \
    "${sim_credentials[@]}" --state state --json >revoked.json 2>revoked.err || rc=$?
  [ $rc -eq 1 ] && grep -q "revoked this device's certificate" revoked.err ||
    { echo "the revoked device: fedstat-sim exit $rc (want 1)"; cat revoked.err; exit 1; }
  echo "revoked device refused: $(grep -o "revoked this device's certificate[^)]*)" revoked.err | head -1)"
fi
kill -TERM $pid && wait $pid || true
trap stop_round_store EXIT
python3 - <<'PY'
import json
sim, result = json.load(open('sim.json')), json.load(open('result.json'))
expected = sim['expected']
print('outcomes', sim['outcomes'], 'contributors', sim['contributors'])
print('published', result)
assert result['contributors'] == sim['contributors'], (result, sim['contributors'])
assert result['sum_sha256'] == expected['sum_sha256'], 'aggregate differs from the in-process sum'
assert result['estimate'] == expected['estimate'], (result['estimate'], expected['estimate'])
if result['kind'] == 'model_update':
    assert result['model'] == expected['model'], (result['model'], expected['model'])
    # One private round from zero: near the Bayes classifier's ~0.88 on the held-out rows.
    assert result['accuracy'] >= 0.85, result
    print('model_update: accuracy', result['accuracy'], 'loss', result['loss'],
          'lambda', result.get('device_noise_lambda'))
print('published result equals the in-process computation, bit for bit')
PY
grep -q '"event":"stopped"' server.log || { echo "server did not stop cleanly"; cat server.log; exit 1; }
grep -q '"integrity":"ok"' server.log
# A signed session runs the consistency stage between the masked input and the reveals (the
# server logs each secure-aggregation stage it closes); an unsigned one has none.
if [ "$trust" = dist ]; then
  if [ "$signed" = signed ]; then
    grep -q 'secagg_closed (consistency, ' server.log ||
      { echo "signed: the server closed no consistency stage"; grep secagg_closed server.log; exit 1; }
  elif grep -q 'secagg_closed (consistency, ' server.log; then
    echo "unsigned: the server ran a consistency stage"; exit 1
  fi
  grep -q 'secagg_closed (masking, ' server.log ||
    { echo "the server logged no closed masking stage"; cat server.log; exit 1; }
fi
check_store_password_not_logged server.log result.json
