#!/usr/bin/env bash
# Network faults (label netfault): a real fedstat-server on loopback, with short time-outs
# (handshake 2 s, idle 3 s) and the default check-in limit (60 a minute per device), under one
# attack (fedstat-netfault) while an honest fleet (fedstat-sim: 24 real Clients over real TLS-PSK)
# runs a secure-aggregation round (kl, dist). The attack must be bounded — every hostile
# connection closed within its time-out plus kSlackMs, the server's memory bounded while 1,000
# idle connections are open, a 4 GiB frame header refused at once, a check-in flood refused
# beyond the limit and nothing of it stored — and the honest round must publish exactly what it
# would without the attack: the in-process result of the fleet's seeded contributions, bit for bit
# (as round_test.sh checks it), with every device completed. The attack starts first and goes on
# until the round is over (--stop-file), so the whole round runs under it. The check-in attacks
# (hello_flood: two sessions at a time from one credential; drop_every_round: a device taking its
# task and dropping, every 50 ms) use a valid device key; the others need none. handshake_flood
# (one worker sending ClientHellos back to back, no credential) comes from this machine's first
# non-loopback IPv4 address, to which the per-address handshake limit applies (loopback peers
# are exempt): the server listens on every address with a limit of 120 a minute (a burst of 120,
# then 2 a second), and answers no more handshakes than that; without such an address the case
# is skipped (exit 77).
#   netfault_test.sh SERVER SIM NETFAULT WORKDIR CASE
# CASE: silent | slowloris | idle_flood | huge_frame | hello_flood | drop_every_round |
#       handshake_flood
set -euo pipefail
source "$(dirname "$0")/common.sh"
server=$1 sim=$2 netfault=$3 work=$4 case=$5
listen=127.0.0.1 source=
if [ "$case" = handshake_flood ]; then
  source=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$' | grep -v '^127\.' | head -1 || true)
  [ -n "$source" ] || { echo "netfault.handshake_flood: no non-loopback IPv4 address: skipped"; exit 77; }
  listen=0.0.0.0
  # Off loopback the server refuses a published fleet secret (common.sh's 5a…5a): one of its own.
  FLEET_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
  export FLEET_SECRET
fi
clients=24
handshake_ms=2000 idle_ms=3000
hostile_id=9001  # the attacker's device id (a valid credential): never one of the fleet's 1..24
rm -rf "$work" && mkdir -p "$work/data" "$work/state"
cd "$work"
python3 - "$clients" "$handshake_ms" "$idle_ms" "$listen" <<'PY'
import json, os, sys
clients, handshake_ms, idle_ms = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
listen = sys.argv[4]
with open('data/items.txt', 'w') as f:      # the fleet: a Zipf law shifted by 15 ids
    for i in range(300): f.write(f"{i + 15} {max(1, 100000 // (i + 1))}\n")
with open('reference.txt', 'w') as f:       # Π, the reference
    for i in range(320): f.write(f"{i} {max(1, 100000 // (i + 1))}\n")
# Every fleet device is admitted (min = max = the fleet): a hostile device never takes a place.
task = {"id": 3, "kind": "kl", "trust": "dist", "epsilon": 1.0, "delta": 1e-6,
        "min_clients": clients, "max_clients": clients, "threshold": (2 * clients + 2) // 3,
        "deadline_seconds": 600, "admission_seconds": 120, "phase_timeout_seconds": 120,
        "seed": "00" * 31 + "31", "kl": {"reference": "reference.txt", "rounds": 300, "lambda": 0.1}}
json.dump(task, open('task.json', 'w'))
json.dump({"listen": listen + ":0", "store": "server.db", "fleet_secret": os.environ["FLEET_SECRET"],
           "handshake_timeout_ms": handshake_ms, "idle_timeout_ms": idle_ms,
           "handshakes_per_address_per_minute": 120, "tasks": [task]}, open('server.json', 'w'))
PY

# Where the server's memory is measured (idle_flood, huge_frame), ASan's quarantine is off: it
# holds every freed block (up to 256 MB) and the RSS would count the connections' churn, not what
# the server holds at once. Elsewhere the server runs with the sanitizer's defaults.
server_env=()
case $case in
  idle_flood | huge_frame) server_env=(env "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0") ;;
esac
${server_env[@]+"${server_env[@]}"} "$server" --config server.json --port-file port 2>server.log &
pid=$!
attack_pid=
trap 'kill $pid $attack_pid 2>/dev/null || true' EXIT
wait_for_port $pid server.log
endpoint=127.0.0.1:$(cat port)

# The attack: --seconds is its least duration; it then goes on until ./stop exists.
common=(--server "$endpoint" --ready-file ready --stop-file stop --watch-pid "$pid" --json)
keyed=(--fleet-secret "$FLEET_SECRET" --id "$hostile_id")
case $case in
  silent) args=(--attack silent --seconds 5 --wait-seconds 10) ;;
  slowloris) args=(--attack slowloris --seconds 5 --interval-ms 1000 --wait-seconds 10) ;;
  idle_flood) args=(--attack idle_flood --count 1000 --seconds 5 --wait-seconds 10) ;;
  huge_frame) args=(--attack huge_frame "${keyed[@]}" --seconds 3 --interval-ms 100) ;;
  hello_flood) args=(--attack hello_flood "${keyed[@]}" --count 2 --seconds 3) ;;
  drop_every_round) args=(--attack drop_every_round "${keyed[@]}" --seconds 3 --interval-ms 50) ;;
  handshake_flood)
    common[1]=$source:$(cat port)
    args=(--attack handshake_flood --count 1 --source "$source" --seconds 3) ;;
  *) echo "unknown case $case"; exit 2 ;;
esac
"$netfault" "${args[@]}" "${common[@]}" >attack.json 2>attack.err &
attack_pid=$!

# wait_until WHAT COMMAND...: polls COMMAND (every 0.1 s, at most 60 s) until it succeeds; fails
# if the attack or the server exits first.
wait_until() {
  local what=$1; shift
  for _ in $(seq 600); do
    "$@" && return 0
    kill -0 $pid 2>/dev/null || { echo "the server exited while waiting for $what"; cat server.log; exit 1; }
    kill -0 $attack_pid 2>/dev/null || { echo "the attack exited while waiting for $what"; cat attack.json attack.err; exit 1; }
    sleep 0.1  # polling a condition, bounded above
  done
  echo "timed out waiting for $what"; exit 1
}
wait_until "the attack to start" test -e ready
case $case in
  hello_flood | drop_every_round)
    # The fleet starts once the attacker is being refused: the round runs with the limit biting.
    wait_until "the check-in limit to refuse device $hostile_id" \
      grep -q "client $hostile_id: more than [0-9]* check-ins a minute" server.log ;;
esac

"$sim" --server "$endpoint" --clients "$clients" --task task.json --data data \
  --fleet-secret "$FLEET_SECRET" --seed 17 --noise-seed 9 --state state --json >sim.json
kill -0 $attack_pid 2>/dev/null || { echo "the attack ended before the round did"; cat attack.json; exit 1; }
touch stop
wait $attack_pid || { echo "fedstat-netfault failed"; cat attack.err; exit 1; }
attack_pid=
kill -0 $pid 2>/dev/null || { echo "the server died under the attack"; cat server.log; exit 1; }
"$server" results 3 --config server.json --json >result.json
kill -TERM $pid && wait $pid || true
trap - EXIT
grep -q '"event":"stopped"' server.log || { echo "server did not stop cleanly"; cat server.log; exit 1; }
grep -q '"integrity":"ok"' server.log

python3 - "$case" "$handshake_ms" "$hostile_id" <<'PY'
import json, math, sqlite3, sys
case, handshake_ms, hostile = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# Late, never early: the handshake clock starts at accept, and on a loaded 2-core machine the
# sanitized server's one io thread also accepts late while it stores the round's events (DIST:
# synchronous=FULL) and admits a wave of 1,000 reconnections (measured: up to 2 s late).
SLACK_MS = 4000
attack, sim, result = (json.load(open(f)) for f in ('attack.json', 'sim.json', 'result.json'))
print('attack', json.dumps(attack))

def check(condition, message):
    if not condition:
        sys.exit(f'netfault.{case}: {message}\nattack: {json.dumps(attack)}')

if case in ('silent', 'slowloris', 'idle_flood'):
    life = attack['lifetime_ms']
    check(attack['connect_failures'] == 0, 'a connection could not be opened')
    check(attack['still_open'] == 0, 'the server left hostile connections open')
    check(attack['closed_by_server'] == attack['connections'], 'not every connection was closed')
    # Closed by the handshake time-out: not before it, and not long after.
    check(life['min'] >= handshake_ms - 50, f'closed before the handshake time-out: {life}')
    check(life['max'] <= handshake_ms + SLACK_MS, f'open past the handshake time-out: {life}')
    check(attack['bytes_received'] == 0, 'the server answered a peer that never finished a hello')
    if case == 'slowloris':
        # One byte a second: a few bytes of its 100-odd byte ClientHello before the server cut it off.
        per = attack['bytes_sent'] / attack['connections']
        check(per <= (handshake_ms + SLACK_MS) / 1000 + 1, f'{per} bytes per connection')
        check(attack['bytes_sent'] < attack['client_hello_bytes'], 'a whole ClientHello went out')
    if case == 'idle_flood':
        server = attack['server']
        check(attack['peak_open'] == 1000, 'fewer than 1,000 connections open at once')
        # The server held all of them at once (its descriptors), and its memory stayed bounded:
        # at most 96 KiB per idle connection (tls_server.h: mbedTLS's 2 × 16.7 KiB record buffers,
        # a 4 KiB receive chunk, the 738-byte frame buffer, the Connection; ASan's shadow and
        # redzones come on top), the honest round included.
        check(server['fds_max'] - server['fds_before'] >= 1000, f'server fds: {server}')
        grown_kb = server['rss_max_kb'] - server['rss_before_kb']
        check(grown_kb <= 1000 * 96, f'the server grew by {grown_kb} KiB')
        print(f'idle_flood: server RSS {server["rss_before_kb"]} -> {server["rss_max_kb"]} KiB '
              f'({grown_kb / 1000:.1f} KiB per idle connection), fds {server["fds_max"]}')
elif case == 'huge_frame':
    check(attack['handshake_failures'] == 0, 'the attacker could not authenticate')
    check(attack['still_open'] == 0, 'a connection announcing 4 GiB stayed open')
    check(attack['closed_by_server'] == attack['attempts'], 'not every attempt was closed')
    # Refused on the prefix's third byte, before a 4 GiB anything: at once, nothing allocated.
    check(attack['close_ms']['max'] <= 1000, f'closed after {attack["close_ms"]}')
    check(attack['bytes_received'] == 0, 'the server answered the 4 GiB header')
    grown_kb = attack['server']['rss_max_kb'] - attack['server']['rss_before_kb']
    check(grown_kb <= 64 * 1024, f'the server grew by {grown_kb} KiB')
elif case == 'handshake_flood':
    # The limit answered a burst of 120 handshakes, then 2 a second (plus the second it began);
    # every other connection was dropped before the server made a key pair, with no byte sent.
    bound = 120 + 2 * (math.ceil(attack['seconds']) + 1)
    # (A failed connect is the attacker's machine running short of ports: not checked.)
    check(attack['attempts'] > bound, f'the flood never passed the limit: {attack["attempts"]}')
    check(attack['answered'] <= bound, f'{attack["answered"]} handshakes answered, at most {bound}')
    check(attack['closed_unanswered'] > 0, 'the limit never refused the flood')
    print(f'handshake_flood: {attack["attempts"]} ClientHellos in {attack["seconds"]:.1f} s, '
          f'{attack["answered"]} answered (at most {bound}), {attack["closed_unanswered"]} dropped '
          f'unanswered; server CPU {attack["server"]["cpu_seconds"]} s')
else:  # hello_flood, drop_every_round
    check(attack['handshake_failures'] == 0 and attack['errors'] == 0, 'sessions failed')
    check(attack['rate_limited'] > 0, 'the check-in limit never refused the flood')
    # What the limit let through: a burst of 60, then one a second (plus the second it began).
    admitted = attack['offered'] + attack['refused']
    bound = 60 + math.ceil(attack['seconds']) + 1
    check(admitted <= bound, f'{admitted} check-ins let through, at most {bound}')
    # Each offered check-in stored its ClientHello; a refused one nothing.
    db = sqlite3.connect('server.db')
    stored = db.execute('SELECT COUNT(*) FROM events WHERE client_id = ? AND kind = 1',
                        (hostile,)).fetchone()[0]
    check(stored == attack['offered'], f'{stored} events stored for {attack["offered"]} offers')
    print(f'{case}: {attack["sessions"]} check-ins in {attack["seconds"]:.1f} s, '
          f'{attack["offered"]} offered, {attack["refused"]} refused by the round, '
          f'{attack["rate_limited"]} refused by the limit, {stored} events stored')

# The honest round, as without the attack: every device completed, and the published result is
# the in-process one.
expected = sim['expected']
print('fleet outcomes', sim['outcomes'], 'in', round(sim['seconds'], 2), 's')
check(sim['outcomes'] == {'completed': sim['clients']}, f'fleet outcomes {sim["outcomes"]}')
check(result['contributors'] == sim['contributors'] == sim['clients'], 'contributors differ')
check(result['sum_sha256'] == expected['sum_sha256'], 'aggregate differs from the in-process sum')
check(result['estimate'] == expected['estimate'], 'estimate differs from the in-process one')
print(f'netfault.{case}: bounded, and the honest round published the in-process result bit for bit')
PY
