#!/usr/bin/env bash
# The consumer test's last step (run_consumer.cmake): examples/report_to_server, built against the
# installed package, reaches the REAL fedstat-server over TLS-PSK with nothing but the C ABI.
#   report_to_server_test.sh SERVER DEVICE_A DEVICE_B WORKDIR [EMULATOR...]
# DEVICE_A and DEVICE_B are the example built two ways (find_package, pkg-config fedstat-c; the
# same program twice when there is no pkg-config), run under EMULATOR when cross-compiled; the
# server is the host's. A small config in WORKDIR: credentials for devices 1 and 2, one trusted
# data-shift task (id 7, ε = 1 from the stability histogram, min_clients = max_clients = 2).
# Checked: a wrong key is refused at the handshake (exit 4, permission_denied, named as a key
# problem); both devices complete the round at once (exit 0, "server: task 7 completed", the
# ledger charged ε = 1) and the server logs it completed; a port nobody listens on is refused
# (exit 4, unavailable); with credentials from fedstat-ca (beside SERVER), both complete a signed
# DIST round of a second server (task 8) that takes devices by mutual TLS only (X.509 certificates
# from fedstat-ca, device_authentication "certificate", no device secrets), a credential with
# another device's key is refused, and so is a server whose certificate names another server.
set -euo pipefail
server=$1 device_a=$2 device_b=$3 work=$4
shift 4
emulator=("$@")
rm -rf "$work" && mkdir -p "$work/a" "$work/b" "$work/c" && cd "$work"

for i in $(seq 0 199); do echo "$i $((1000 / (i + 2)))"; done >reference.txt
cat >server.json <<'EOF'
{"listen": "127.0.0.1:0", "store": "server.db", "credentials": "devices.txt",
 "tasks": [{"id": 7, "kind": "data_shift", "trust": "trusted", "epsilon": 1, "delta": 1e-6,
            "min_clients": 2, "max_clients": 2, "deadline_seconds": 120,
            "admission_seconds": 60, "phase_timeout_seconds": 60,
            "seed": "0000000000000000000000000000000000000000000000000000000000000007",
            "data_shift": {"rows": 3, "width": 64, "heap_capacity": 16, "k": 256,
                           "domain": 200, "local_epsilon": 1, "reference": "reference.txt"}}]}
EOF
key_a=$(printf 'a1%.0s' $(seq 32)) key_b=$(printf 'b2%.0s' $(seq 32))
printf '1 %s\n2 %s\n' "$key_a" "$key_b" >devices.txt
echo "$key_a" >psk-1.hex
echo "$key_b" >psk-2.hex
printf 'c3%.0s' $(seq 32) >wrong.hex
chmod 600 devices.txt server.json

# start_server CONFIG LOG: the server in the background (pid), once it listens (port).
start_server() {
  rm -f port
  "$server" --config "$1" --port-file port 2>"$2" &
  pid=$!
  trap 'kill $pid 2>/dev/null || true' EXIT
  for _ in $(seq 600); do  # until the server has written ./port (atomically, once it listens)
    [ -s port ] && break
    kill -0 $pid 2>/dev/null || { echo "the server exited before listening"; cat "$2"; exit 1; }
    sleep 0.1  # polling the file, bounded above (60 s)
  done
  [ -s port ] || { echo "the server did not listen within 60 s"; cat "$2"; exit 1; }
  port=$(cat port)
}
start_server server.json server.log

# expect_exit CODE OUT CMD...: runs CMD (stdout and stderr into OUT), fails unless it exits CODE.
expect_exit() {
  local want=$1 out=$2 rc=0
  shift 2
  "$@" >"$out" 2>&1 || rc=$?
  [ "$rc" -eq "$want" ] || { echo "expected exit $want, got $rc: $*"; cat "$out"; exit 1; }
}

# A key the server does not hold: refused at the handshake, named as a key problem.
expect_exit 4 wrong.out "${emulator[@]}" "$device_a" 127.0.0.1 "$port" 1 wrong.hex c
grep -q "failed: permission_denied: TLS: the server refused the pre-shared key" wrong.out ||
  { cat wrong.out; exit 1; }
echo "wrong key: $(grep -o 'permission_denied.*' wrong.out)"

# The round: two devices at once (min_clients 2), each with its own storage directory.
"${emulator[@]}" "$device_a" 127.0.0.1 "$port" 1 psk-1.hex a >a.out 2>&1 &
pid_a=$!
"${emulator[@]}" "$device_b" 127.0.0.1 "$port" 2 psk-2.hex b >b.out 2>&1 &
pid_b=$!
rc_a=0 rc_b=0
wait $pid_a || rc_a=$?
wait $pid_b || rc_b=$?
for d in a b; do
  cat $d.out
  rc=rc_$d
  [ "${!rc}" -eq 0 ] || { echo "device $d exited ${!rc}"; cat server.log; exit 1; }
  grep -q "^connected to 127.0.0.1 port $port as device [12] (TLS 1.2 PSK, full handshake)$" $d.out ||
    { echo "device $d: no 'connected ... full handshake' line"; exit 1; }
  grep -q "^server: task 7 completed: every report chunk acknowledged, the round published$" $d.out ||
    { echo "device $d: no completed task 7"; cat server.log; exit 1; }
  grep -q "^ledger: epsilon 1 of 10 spent, delta 1e-06$" $d.out ||
    { echo "device $d: its ledger was not charged epsilon 1"; exit 1; }
done
# The devices have the RoundOutcome; the server logs the round's end just after sending it.
for _ in $(seq 300); do
  grep -q '"task 7: completed"' server.log && break
  sleep 0.1  # polling the log, bounded above (30 s)
done
grep -q '"task 7: completed"' server.log || { echo "the server did not complete task 7"; cat server.log; exit 1; }

kill $pid && wait $pid || true
trap - EXIT
# Nobody listens there any more: refused, and said so.
expect_exit 4 refused.out "${emulator[@]}" "$device_a" 127.0.0.1 "$port" 1 psk-1.hex c
grep -q "failed: unavailable: transport: connection refused" refused.out || { cat refused.out; exit 1; }

# A signed DIST round (issue 42; c/credential.h): fedstat-ca beside SERVER issues both devices'
# credentials, the server holds only the CA's public key, and each device is given its own
# (--credential: its key, its certificate line, the CA's key). A credential whose key is not its
# certificate's is refused before connecting (exit 2, permission_denied); both devices complete
# the round, and the server closes its consistency stage (the round was signed). The server
# takes devices by their X.509 certificates only (c/tls.h fedstat_tls_channel_connect_certificate:
# --certificate, from fleet.crt, and ca.crt); a device expecting another server name is refused.
ca=$(dirname "$server")/fedstat-ca
"$ca" init --out-key ca.key --out-public ca.pub --seed 5 >/dev/null  # and ca.crt
"$ca" issue --ca-key ca.key --first-id 1 --count 2 --seed 6 --out fleet.creds >/dev/null
"$ca" server-cert --ca-key ca.key --name 127.0.0.1 --out-certificate server.crt \
  --out-key server.key --seed 9 >/dev/null
# fleet.crt: a "fedstat-device <id>" line before each device's PEM certificate.
awk '/^fedstat-device /{id = $2; next} id {print > ("device-" id ".crt")}' fleet.crt
[ -s device-1.crt ] && [ -s device-2.crt ] || { echo "fleet.crt: no device certificates"; exit 1; }
awk -v ca="$(sed -n 2p ca.pub)" 'NR > 1 && NF == 4 {
  printf "%s\n%s %s %s\n%s\n", $2, $1, $3, $4, ca > ("credential-" $1 ".txt") }' fleet.creds
{ sed -n 1p credential-2.txt; sed -n 2,3p credential-1.txt; } >credential-wrong.txt
expect_exit 2 wrong-credential.out "${emulator[@]}" "$device_a" --credential credential-wrong.txt \
  127.0.0.1 1 1 psk-1.hex c
grep -q "the credential failed: permission_denied" wrong-credential.out ||
  { cat wrong-credential.out; exit 1; }
echo "wrong signing key: $(grep -o 'permission_denied.*' wrong-credential.out)"
cat >signed.json <<'EOF'
{"listen": "127.0.0.1:0", "store": "signed.db", "ca_public_key": "ca.pub",
 "tls_certificate": "server.crt", "tls_private_key": "server.key", "tls_client_ca": "ca.crt",
 "device_authentication": "certificate",
 "tasks": [{"id": 8, "kind": "kl", "trust": "dist", "epsilon": 1, "delta": 1e-6,
            "min_clients": 2, "max_clients": 2, "deadline_seconds": 120,
            "admission_seconds": 60, "phase_timeout_seconds": 60,
            "seed": "0000000000000000000000000000000000000000000000000000000000000008",
            "kl": {"reference": "reference.txt", "rounds": 300, "lambda": 0.1}}]}
EOF
chmod 600 signed.json
start_server signed.json signed.log
expect_exit 4 wrong-name.out "${emulator[@]}" "$device_a" --credential credential-1.txt \
  --certificate device-1.crt --ca-certificate ca.crt --server-name fedstat.example.org \
  127.0.0.1 "$port" 1 - c
grep -q "failed: permission_denied: TLS: server name mismatch" wrong-name.out ||
  { cat wrong-name.out; exit 1; }
echo "wrong server name: $(grep -o 'permission_denied.*' wrong-name.out)"
mtls() {  # the device's options for mutual TLS: mtls ID
  echo --credential credential-$1.txt --certificate device-$1.crt --ca-certificate ca.crt \
    --server-name 127.0.0.1
}
"${emulator[@]}" "$device_a" $(mtls 1) 127.0.0.1 "$port" 1 - a >signed-a.out 2>&1 &
pid_a=$!
"${emulator[@]}" "$device_b" $(mtls 2) 127.0.0.1 "$port" 2 - b >signed-b.out 2>&1 &
pid_b=$!
rc_a=0 rc_b=0
wait $pid_a || rc_a=$?
wait $pid_b || rc_b=$?
for d in a b; do
  cat signed-$d.out
  rc=rc_$d
  [ "${!rc}" -eq 0 ] || { echo "signed: device $d exited ${!rc}"; cat signed.log; exit 1; }
  grep -q "^connected to 127.0.0.1 port $port as device [12] (TLS 1.2 certificate, full handshake)$" \
    signed-$d.out || { echo "signed: device $d did not connect with its certificate"; exit 1; }
  grep -q "^server: task 8 completed: every report chunk acknowledged, the round published$" \
    signed-$d.out || { echo "signed: device $d did not complete task 8"; cat signed.log; exit 1; }
done
for _ in $(seq 300); do
  grep -q '"task 8: completed"' signed.log && break
  sleep 0.1  # polling the log, bounded above (30 s)
done
grep -q 'secagg_closed (consistency, 2 members)' signed.log ||
  { echo "signed: the server closed no consistency stage"; cat signed.log; exit 1; }
kill $pid && wait $pid || true
trap - EXIT
echo "report_to_server: ok"
