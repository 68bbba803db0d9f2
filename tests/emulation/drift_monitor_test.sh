#!/usr/bin/env bash
# The drift-monitor example (examples/drift_monitor) as a phone app against a real fedstat-server:
# three monitors (devices 1..3, a state directory each) count one event file each, exit, then
# count a second file and answer a data-shift task (trust none, min_clients 3) over TLS-PSK, in
# parallel. Checked: the histogram each monitor persisted equals the counts of both its files;
# the published aggregate (sum_sha256) and estimate equal the SDK's contribution of the union
# of all six files (fedstat-drift-expected), with 3 contributors; a wrong key is refused (exit 4);
# two trusted KL tasks in two later runs leave each persisted ledger at ε = 2 (1 after the first);
# a refused event line is named and the counts before it are kept (exit 3); a full histogram
# names the line of the first item it cannot take; a corrupt state blob is refused and left as
# it was (exit 3).
#   drift_monitor_test.sh SERVER MONITOR EXPECTED WORKDIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
server=$1 monitor=$2 expected=$3 work=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work"

# fails with the command's output unless its exit code is $1: expect_exit CODE CMD...
expect_exit() {
  local want=$1 rc=0; shift
  "$@" >out.txt 2>err.txt || rc=$?
  [ "$rc" -eq "$want" ] || { echo "expected exit $want, got $rc: $*"; cat out.txt err.txt; exit 1; }
}

# ---- Error paths (no server) ----------------------------------------------------------------
printf '10\n11\n\n11\n-4\n12\n' >bad.txt
expect_exit 3 "$monitor" --state bad --events bad.txt
grep -q "bad.txt: line 5: '-4' is not an item id" err.txt || { cat err.txt; exit 1; }
grep -q "the 3 events before it are counted and saved" err.txt
expect_exit 0 "$monitor" --state bad --show
[ "$(tail -n +2 out.txt)" = "$(printf '10 1\n11 2')" ] || { echo "kept counts wrong"; cat out.txt; exit 1; }

# A budget that is not a finite number is a usage error, before anything is read or counted.
for budget in inf nan -1; do
  expect_exit 2 "$monitor" --state bad --epsilon-budget "$budget"
  grep -q "epsilon-budget must be a finite number > 0" err.txt || { cat err.txt; exit 1; }
done
# So is a trust model the task policy does not know.
for list in bogus "none," ""; do
  expect_exit 2 "$monitor" --state bad --accept-trust "$list"
  grep -q "accept-trust must list trusted, tagg, dist, none or all" err.txt || { cat err.txt; exit 1; }
done

cp -r bad corrupt
printf '\xff' | dd of=corrupt/drift-histogram bs=1 seek=40 conv=notrunc status=none
cp corrupt/drift-histogram corrupt.copy
echo 12 >one.txt
expect_exit 3 "$monitor" --state corrupt --events one.txt
grep -q "drift-histogram.*data_loss" err.txt || { cat err.txt; exit 1; }
cmp corrupt/drift-histogram corrupt.copy  # refused, not reset: the blob is as it was

seq 0 4096 >full.txt  # 4097 distinct ids; the histogram holds 4096
expect_exit 3 "$monitor" --state full --events full.txt
grep -q "line 4097: item 4096 refused" err.txt || { cat err.txt; exit 1; }
expect_exit 0 "$monitor" --state full --show
grep -q "^histogram: 4096 items, 4096 events, 1 dropped$" out.txt || { cat out.txt; exit 1; }
echo "error paths: bad line named and earlier counts kept; corrupt blob refused; full histogram"

# ---- Configuration, keys and events ---------------------------------------------------------
python3 - <<'PY'
import hashlib, hmac, json, os, random
secret = bytes.fromhex(os.environ["FLEET_SECRET"])
def psk(device):  # host_server/net/credentials.h: HKDF-SHA256, no salt, one output block
    prk = hmac.new(b"\0" * 32, secret, hashlib.sha256).digest()
    info = b"fedstat device psk v1" + device.to_bytes(8, "big")
    return hmac.new(prk, info + b"\x01", hashlib.sha256).hexdigest()
with open("reference.txt", "w") as f:
    for i in range(200): f.write(f"{i} {max(1, 20000 // (i + 1))}\n")
task = {"id": 7, "kind": "data_shift", "trust": "none", "epsilon": 0, "delta": 0,
        "min_clients": 3, "max_clients": 3, "deadline_seconds": 600, "admission_seconds": 120,
        "phase_timeout_seconds": 120, "seed": "00" * 31 + "07",
        "data_shift": {"rows": 5, "width": 256, "heap_capacity": 64, "k": 1024, "domain": 300,
                       "local_epsilon": 0, "reference": "reference.txt"}}
json.dump(task, open("task.json", "w"))
# Two trusted KL tasks after it (ε = 1 each): runs 3 and 4 answer one each, so the ledger each
# monitor persisted must carry run 3's charge into run 4.
kl = [{"id": i, "kind": "kl", "trust": "trusted", "epsilon": 1.0, "delta": 1e-6,
       "min_clients": 3, "max_clients": 3, "deadline_seconds": 600, "admission_seconds": 120,
       "phase_timeout_seconds": 120, "seed": "00" * 31 + f"{i:02x}",
       "kl": {"reference": "reference.txt", "rounds": 100, "lambda": 0.1}} for i in (8, 9)]
json.dump({"listen": "127.0.0.1:0", "store": "server.db", "fleet_secret": os.environ["FLEET_SECRET"],
           "tasks": [task] + kl}, open("server.json", "w"))
rng = random.Random(20261123)
for device in (1, 2, 3):
    open(f"psk-{device}.hex", "w").write(psk(device) + "\n")
    for run, n in (("a", 400), ("b", 300)):   # a Zipf law over 250 ids, shifted by 10 per device
        lines = [str(10 * device + min(249, int(rng.paretovariate(1.1)) - 1)) for _ in range(n)]
        lines.insert(n // 2, "")               # a blank line, skipped
        open(f"events-{device}{run}.txt", "w").write("\n".join(lines) + "\n")
open("wrong.hex", "w").write("00" * 32 + "\n")
PY

# ---- Run 1: count only ----------------------------------------------------------------------
for d in 1 2 3; do
  expect_exit 0 "$monitor" --state "state-$d" --events "events-${d}a.txt"
  grep -q "^counted 400 events from events-${d}a.txt (401 lines, 1 blank)$" out.txt
done

"$server" --config server.json --port-file port 2>server.log &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
wait_for_port $pid server.log
endpoint=127.0.0.1:$(cat port)

# A key the server does not hold: refused at the handshake, exit 4, nothing retried.
expect_exit 4 "$monitor" --state state-9 --server "$endpoint" --device-id 9 --psk-file wrong.hex
grep -q "permission_denied" err.txt || { cat out.txt err.txt; exit 1; }

# ---- Run 2: count more and answer the task, three devices at once ---------------------------
for d in 1 2 3; do
  # Task 7 is trust none: the monitors opt in to it (--accept-trust; the default declines it).
  "$monitor" --state "state-$d" --events "events-${d}b.txt" --server "$endpoint" --device-id "$d" \
    --psk-file "psk-$d.hex" --accept-trust none --max-sessions 100 --retry-ms 100 \
    >"run2-$d.out" 2>"run2-$d.err" &
  pids[$d]=$!
done
for d in 1 2 3; do
  wait "${pids[$d]}" || { echo "device $d failed"; cat "run2-$d.out" "run2-$d.err"; exit 1; }
  grep -q "^outcome: task 7 completed; epsilon spent 0 " "run2-$d.out" || { cat "run2-$d.out"; exit 1; }
done
cat run2-1.out

# ---- Runs 3 and 4: a trusted KL task each; the persisted ledger adds the charges up --------
for run in 3 4; do
  task=$((run + 5)) spent=$((run - 2))
  for d in 1 2 3; do
    "$monitor" --state "state-$d" --server "$endpoint" --device-id "$d" --psk-file "psk-$d.hex"       --max-sessions 100 --retry-ms 100 >"run$run-$d.out" 2>"run$run-$d.err" &
    pids[$d]=$!
  done
  for d in 1 2 3; do
    wait "${pids[$d]}" || { echo "device $d failed"; cat "run$run-$d.out" "run$run-$d.err"; exit 1; }
    grep -q "^outcome: task $task completed; epsilon spent 1 (ledger: $spent of 10 spent)" \
      "run$run-$d.out" || { cat "run$run-$d.out"; exit 1; }
  done
done
echo "the ledger carried run 3's charge into run 4: $(tail -n 1 run4-1.out)"

# The rounds are over: a further check-in finds no task for device 1.
expect_exit 0 "$monitor" --state state-1 --server "$endpoint" --device-id 1 --psk-file psk-1.hex \
  --max-sessions 2 --retry-ms 10
grep -q "^outcome: no task offered in 2 check-ins$" out.txt || { cat out.txt; exit 1; }

"$server" results 7 --config server.json --json >result.json
kill -TERM $pid && wait $pid || true
trap - EXIT
for d in 1 2 3; do "$monitor" --state "state-$d" --show >"shown-$d.txt"; done
"$expected" task.json 3 events-*.txt >expected.json
python3 - <<'PY'
import collections, json
for d in (1, 2, 3):
    counts = collections.Counter()
    for run in "ab":
        counts.update(int(l) for l in open(f"events-{d}{run}.txt") if l.strip())
    shown = open(f"shown-{d}.txt").read().splitlines()
    assert shown[0] == f"histogram: {len(counts)} items, 700 events, 0 dropped", shown[0]
    stored = {int(a): int(b) for a, b in (l.split() for l in shown[1:])}
    assert stored == dict(counts), f"device {d}: the persisted histogram is not both runs' counts"
result, expected = json.load(open("result.json")), json.load(open("expected.json"))
print("published", result)
print("expected ", expected)
assert expected["union_events"] == 2100, expected
assert result["contributors"] == 3 and result["items"] == 2100, result
assert result["sum_sha256"] == expected["sum_sha256"], "aggregate differs from the union's sketch"
assert result["estimate"] == expected["estimate"], (result["estimate"], expected["estimate"])
assert 0 < result["estimate"] <= 1, result
print("each persisted histogram holds both runs; the published aggregate is the union's, bit for bit")
PY
grep -q '"event":"stopped"' server.log || { echo "server did not stop cleanly"; cat server.log; exit 1; }
