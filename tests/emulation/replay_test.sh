#!/usr/bin/env bash
# Emulation: a replayed message is refused. A recording TCP proxy sits between two emulated
# devices and the real server while they complete a round; then every byte one device sent is
# replayed, verbatim, on a fresh connection to the server. TLS-ECDHE-PSK binds each session to
# fresh randoms from both sides, so the replayed handshake cannot finish: the server must log a
# failed handshake ("event":"refused") and store nothing (the store's event count is unchanged).
# Also: a device checking in after the only task is over is told to retry later (fedstat-sim
# outcome "no-task", the server's detail "no open task with room"); a report or resume for a
# closed task (TASK_CLOSED) is tested in tests/rounds and tests/client.
#   replay_test.sh SERVER SIM WORKDIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
server=$1 sim=$2 work=$3
rm -rf "$work" && mkdir -p "$work/data" "$work/state" "$work/recorded"
cd "$work"
write_small_data_shift_round 2
"$server" --config server.json --port-file port 2>server.log &
pid=$!
proxy=
trap 'kill $pid $proxy 2>/dev/null || true' EXIT
wait_for_port $pid server.log
port=$(cat port)

# The recording proxy: forwards both ways; keeps what each client sent in recorded/<n>.bin.
python3 - "$port" <<'PY' &
import socket, sys, threading
upstream = int(sys.argv[1])
listener = socket.socket()
listener.bind(('127.0.0.1', 0))
listener.listen(16)
def pump(src, dst, record):
    while True:
        data = src.recv(65536)
        if not data: break
        if record: record.write(data); record.flush()
        dst.sendall(data)
    try: dst.shutdown(socket.SHUT_WR)
    except OSError: pass
with open('proxy_port.tmp', 'w') as f: f.write(str(listener.getsockname()[1]))
import os; os.rename('proxy_port.tmp', 'proxy_port')
n = 0
while True:
    client, _ = listener.accept()
    server = socket.create_connection(('127.0.0.1', upstream))
    record = open(f'recorded/{n}.bin', 'wb'); n += 1
    threading.Thread(target=pump, args=(client, server, record), daemon=True).start()
    threading.Thread(target=pump, args=(server, client, None), daemon=True).start()
PY
proxy=$!
for _ in $(seq 600); do [ -s proxy_port ] && break; sleep 0.1; done
[ -s proxy_port ] || { echo 'the recording proxy did not start'; exit 1; }

"$sim" --server 127.0.0.1:$(cat proxy_port) --clients 2 --task task.json --data data \
  --accept-trust none --fleet-secret "$FLEET_SECRET" --seed 3 --state state --json >sim.json
kill $proxy
python3 - "$port" <<'PY'
import glob, json, socket, sqlite3, sys
sim = json.load(open('sim.json'))
assert sim['outcomes'] == {'completed': 2}, sim['outcomes']
count = lambda: sqlite3.connect('server.db').execute('SELECT COUNT(*) FROM events').fetchone()[0]
before = count()
# The largest recording: a whole session (handshake, hello, reply, report chunks).
recorded = max(glob.glob('recorded/*.bin'), key=lambda p: len(open(p, 'rb').read()))
data = open(recorded, 'rb').read()
s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))
s.settimeout(30)
try:
    s.sendall(data)
    while s.recv(65536): pass   # until the server closes the connection
except (ConnectionResetError, BrokenPipeError):
    pass
s.close()
assert count() == before, 'a replayed session stored something'
print('replayed', len(data), 'bytes of', recorded, '; events stored: unchanged at', before)
PY
# The server closed the replayed connection at its handshake; wait for its log line.
for _ in $(seq 300); do grep -q '"event":"refused".*TLS handshake failed' server.log && break; sleep 0.1; done
grep '"event":"refused"' server.log
grep -q '"event":"refused".*TLS handshake failed' server.log

# A device checking in after the round is over gets no task (the sim checks in once, and exits 1:
# its one device did not complete, the reason on stderr).
rc=0
"$sim" --server 127.0.0.1:$port --clients 1 --first-id 50 --task task.json --data data \
  --accept-trust none --fleet-secret "$FLEET_SECRET" --max-sessions 1 --json >late.json 2>late.err || rc=$?
[ $rc -eq 1 ] && grep -q '1 of 1 devices were offered no task: .*no open task' late.err ||
  { echo "the late device: fedstat-sim exit $rc (want 1)"; cat late.err; exit 1; }
python3 - <<'PY'
import json
d = json.load(open('late.json'))['devices'][0]
print('late device:', d['outcome'], d['detail'])
assert d['outcome'] == 'no-task' and 'no open task' in d['detail'], d
PY
kill -TERM $pid && wait $pid || true
trap - EXIT
