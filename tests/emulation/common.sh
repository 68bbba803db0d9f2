# Shared by the emulation scripts (sourced): the demo fleet's secret, the wait for a server and
# a small round's files.

# The emulation fleets' HKDF secret; the scripts' Python writes it into the server configs.
export FLEET_SECRET=$(printf '5a%.0s' $(seq 32))

# use_round_store: the server's store for this test in STORE_SPEC (exported): "server.db", or
# with FEDSTAT_ROUND_STORE=postgresql a throw-away PostgreSQL cluster (tests/store/
# postgres_cluster.sh, in PG_DIR) and "postgresql://fedstat:<password>@/fedstat?host=PG_DIR&…"
# (trust auth ignores the password; the server's log must never show it). stop_round_store
# stops and removes the cluster: call it from the script's EXIT trap (use_round_store sets one);
# a script killed outright (a ctest time-out) leaves ./postgres_cluster_dir for its ctest
# FIXTURES_CLEANUP (tests/emulation/CMakeLists.txt, fedstat_postgres_cleanup).
# store_query SQL: one query's rows (psql -tA, '|' between columns), PostgreSQL only.
use_round_store() {
  STORE_SPEC=server.db PG_DIR=""
  if [ "${FEDSTAT_ROUND_STORE:-sqlite}" = postgresql ]; then
    PG_DIR=$(mktemp -d /tmp/fedstat-pg-round-XXXXXX)
    trap stop_round_store EXIT
    echo "$PG_DIR" >postgres_cluster_dir  # for the ctest cleanup, should this script be killed
    bash "$PG_SCRIPT" start "$PG_DIR"
    STORE_SPEC="postgresql://fedstat:hunter2-not-logged@/fedstat?host=$PG_DIR&port=$(cat "$PG_DIR/port")"
  fi
  export STORE_SPEC PG_DIR
}
stop_round_store() {
  if [ -n "${PG_DIR:-}" ]; then bash "$PG_SCRIPT" stop "$PG_DIR"; PG_DIR=""; fi
}
store_query() { bash "$PG_SCRIPT" psql "$PG_DIR" "$1"; }
PG_SCRIPT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../store" && pwd)/postgres_cluster.sh
export PG_SCRIPT
# check_store_password_not_logged LOG...: with a PostgreSQL store, the logs name it with its
# password redacted and never show the password.
check_store_password_not_logged() {
  [ -n "${PG_DIR:-}" ] || return 0
  grep -q '"store":"postgresql://fedstat:\*\*\*@/fedstat' "$1" ||
    { echo "the server did not log its PostgreSQL store (password redacted)"; cat "$1"; exit 1; }
  if grep -q hunter2 "$@"; then echo "the store's password was logged"; exit 1; fi
  echo "served from PostgreSQL; the password never logged"
}

# wait_for_port PID LOG: until the server PID has written ./port (atomically, once it listens);
# fails — printing LOG — if it exits first or does not listen within 60 s.
wait_for_port() {
  for _ in $(seq 600); do
    [ -s port ] && return 0
    kill -0 "$1" 2>/dev/null || { echo "the server exited before listening"; cat "$2"; exit 1; }
    sleep 0.1  # polling the file, bounded above
  done
  echo "the server did not listen within 60 s"; cat "$2"; exit 1
}

# write_small_data_shift_round MAX_CLIENTS: in the current directory, a device's data
# (data/items.txt, 50 items), the reference, and task 7 (a data-shift round of trust none, at
# least 2 devices) in task.json and in server.json (a server on an ephemeral loopback port,
# store server.db, FLEET_SECRET).
write_small_data_shift_round() {
  MAX_CLIENTS=$1 python3 - <<'PY'
import json, os
with open('data/items.txt', 'w') as f:
    for i in range(50): f.write(f"{i} {1000 // (i + 1)}\n")
with open('reference.txt', 'w') as f:
    for i in range(50): f.write(f"{i} {1000 // (i + 2)}\n")
task = {"id": 7, "kind": "data_shift", "trust": "none", "epsilon": 0, "delta": 0,
        "min_clients": 2, "max_clients": int(os.environ["MAX_CLIENTS"]), "deadline_seconds": 600,
        "admission_seconds": 120, "phase_timeout_seconds": 120, "seed": "00" * 31 + "37",
        "data_shift": {"rows": 3, "width": 64, "heap_capacity": 16, "k": 256, "domain": 60,
                       "local_epsilon": 0, "reference": "reference.txt"}}
json.dump(task, open('task.json', 'w'))
json.dump({"listen": "127.0.0.1:0", "store": "server.db", "fleet_secret": os.environ["FLEET_SECRET"],
           "tasks": [task]}, open('server.json', 'w'))
PY
}

# issue_signed_fleet SERVER CLIENTS: in the current directory, a seeded fleet CA (ca.key, ca.pub)
# made by fedstat-ca (beside SERVER) and credentials for devices 1..CLIENTS (fleet.creds); sets
# sim_credentials to fedstat-sim's options for them (signed secure aggregation, issue 42).
issue_signed_fleet() {
  local ca
  ca=$(dirname "$1")/fedstat-ca
  "$ca" init --out-key ca.key --out-public ca.pub --seed 5
  "$ca" issue --ca-key ca.key --first-id 1 --count "$2" --seed 6 --out fleet.creds
  sim_credentials=(--credentials fleet.creds --ca-public-key ca.pub)
}

# issue_mtls_fleet SERVER: after issue_signed_fleet, the server's certificate for 127.0.0.1
# (server.crt, server.key) under the same CA; adds to sim_credentials the devices' X.509
# certificates (fleet.crt, written by issue) and the CA certificate (ca.crt, written by init):
# every device connects with mutual TLS (issue 42 item 1).
issue_mtls_fleet() {
  "$(dirname "$1")/fedstat-ca" server-cert --ca-key ca.key --name 127.0.0.1 \
    --out-certificate server.crt --out-key server.key --seed 5
  sim_credentials+=(--tls-certificates fleet.crt --tls-ca ca.crt --tls-server-name 127.0.0.1)
}
