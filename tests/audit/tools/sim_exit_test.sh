#!/usr/bin/env bash
# Issue 39 item 11: fedstat-sim exits non-zero, with the reason on stderr, whenever fewer devices
# completed than asked, unless --dropout explains it — it exited 0 with nothing on stderr when
# every device failed. Against no server, with a wrong fleet secret (a real server refuses the
# handshake), with a missing state directory: exit 1 (2 for the directory, a command-line value)
# and one grouped line naming the cause. --dropout 1 explains a fleet that dropped out where told
# (exit 0, nothing on stderr), not one that never reached the server (exit 1). A few seconds.
#   sim_exit_test.sh SERVER SIM WORKDIR
set -euo pipefail
source "$(dirname "$0")/../../emulation/common.sh"  # the fleet secret, the round, the wait
server=$1 sim=$2 work=$3
rm -rf "$work" && mkdir -p "$work/data" "$work/state"
cd "$work"
write_small_data_shift_round 4
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run NAME ARGS...: fedstat-sim with the task and data, stdout in NAME.json, stderr in NAME.err,
# its exit status in $rc.
run() {
  local name=$1
  shift
  rc=0
  # The task is trust "none": the devices opt in (their task policy refuses it by default).
  "$sim" --task task.json --data data --seed 3 --accept-trust none --json "$@" >"$name.json" \
    2>"$name.err" || rc=$?
}
# expect NAME CODE PATTERN: exit CODE and a stderr line matching PATTERN (grep -E).
expect() {
  if [ "$rc" -ne "$2" ] || ! grep -Eq "$3" "$1.err"; then
    fail "$1: exit $rc (want $2), stderr '$(cat "$1.err")' (want a line matching '$3')"
  fi
}

# 1. No server listening (port 1 on loopback: refused at once): every device fails.
run no_server --server 127.0.0.1:1 --clients 3 --fleet-secret "$FLEET_SECRET" --state state \
  --max-sessions 2
expect no_server 1 '^fedstat-sim: task 7: 3 of 3 devices failed: could not connect to 127\.0\.0\.1:1: .*(refused|unreachable)'
python3 -c "import json,sys; d=json.load(open('no_server.json')); sys.exit(not d['shortfall'])" \
  2>/dev/null || fail "no_server: no JSON with a non-empty \"shortfall\" on stdout"

# 2. --dropout 1 does not explain devices that never got as far as dropping out.
run dropout_no_server --server 127.0.0.1:1 --clients 2 --fleet-secret "$FLEET_SECRET" \
  --state state --max-sessions 2 --dropout 1
expect dropout_no_server 1 '2 of 2 devices failed: could not connect'

# 3. A state directory that does not exist: refused before any device runs, naming it.
run no_state --server 127.0.0.1:1 --clients 2 --fleet-secret "$FLEET_SECRET" \
  --state "$work/no-such-dir" --max-sessions 2
[ "$rc" -ne 0 ] && grep -q -- "--state" no_state.err && grep -q "no-such-dir" no_state.err ||
  fail "no_state: exit $rc (want non-zero), stderr '$(cat no_state.err)' (want --state and the path)"

"$server" --config server.json --port-file port 2>server.log &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
wait_for_port $pid server.log
endpoint=127.0.0.1:$(cat port)

# 4. A wrong fleet secret: the server refuses every device's handshake.
wrong=$(printf '77%.0s' $(seq 32))
run wrong_secret --server "$endpoint" --clients 2 --fleet-secret "$wrong" --state state
expect wrong_secret 1 "^fedstat-sim: task 7: 2 of 2 devices failed: could not connect to $endpoint: TLS: "

# 5. Every device told to drop out before its report, and each does: --dropout explains it.
run dropout --server "$endpoint" --clients 2 --fleet-secret "$FLEET_SECRET" --state state \
  --dropout 1
if [ "$rc" -ne 0 ] || [ -s dropout.err ]; then
  fail "dropout: exit $rc (want 0), stderr '$(cat dropout.err)' (want none)"
fi
python3 -c "import json,sys; d=json.load(open('dropout.json')); sys.exit(d['outcomes'] != {'dropped': 2})" ||
  fail "dropout: outcomes $(cat dropout.json | head -c 300) (want {\"dropped\": 2})"

kill -TERM $pid && wait $pid || true
trap - EXIT
[ "$failures" -eq 0 ] || { echo "$failures checks failed"; exit 1; }
echo "fedstat-sim: every shortfall reported and exit 1; a dropout it was told to, exit 0"
