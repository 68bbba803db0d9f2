#!/usr/bin/env bash
# fedstat-server refuses a configuration naming noise_seed (it once seeded the central noise; a
# collector now noises each round from a stored CSPRNG seed, a TAgg from its CSPRNG, and a field
# that silently does nothing is refused): a collector with a trusted task and noise_seed exits 2
# saying so, before listening; the same config without it starts (and is stopped with SIGTERM
# once it listens). TAGG: a TAgg (role "tagg") with noise_seed is refused the same way; a
# collector with a tagg task and no "tagg" endpoint is refused; a TAgg without collectors is
# refused; a TAgg with several collectors serves only when task_collectors names each tagg task's
# one collector (listed). A task list given as the config, and a non-loopback --status-listen,
# are refused with what to do, as is a published fleet_secret off loopback.
#   config_refusal_test.sh SERVER WORKDIR
set -euo pipefail
server=$1 work=$2
source "$(dirname "$0")/common.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
for i in $(seq 0 49); do echo "$i $((1000 / (i + 1)))"; done >reference.txt
task='{"id": 5, "kind": "kl", "trust": "trusted", "epsilon": 1, "delta": 1e-6, "min_clients": 2,
       "max_clients": 4, "deadline_seconds": 60, "seed": "'$(printf '0%.0s' $(seq 63))'1",
       "kl": {"reference": "reference.txt", "rounds": 20, "lambda": 0.1}}'
echo '{"listen": "127.0.0.1:0", "store": "a.db", "fleet_secret": "'$(printf '1%.0s' $(seq 64))'",
       "noise_seed": 3, "tasks": ['"$task"']}' >seeded.json
rc=0
timeout 20 "$server" --config seeded.json --port-file port 2>seeded.err || rc=$?
[ "$rc" -eq 2 ] || { echo "expected exit 2, got $rc"; cat seeded.err; exit 1; }
grep -q "noise_seed is no longer read: remove it.*CSPRNG" seeded.err
[ ! -e port ]
sed 's/"noise_seed": 3, //' seeded.json >plain.json
"$server" --config plain.json --port-file port 2>plain.err &
pid=$!
wait_for_port $pid plain.err
kill -TERM $pid
wait $pid
grep -q '"event":"stopped"' plain.err
tagg_task=${task/\"trusted\"/\"tagg\"}
psk=$(printf '2%.0s' $(seq 64))
refused() {  # refused CONFIG TEXT: exit 2 before listening, naming TEXT
  local rc=0
  rm -f port
  timeout 20 "$server" --config "$1" --port-file port 2>refused.err || rc=$?
  [ "$rc" -eq 2 ] || { echo "$1: expected exit 2, got $rc"; cat refused.err; exit 1; }
  grep -q "$2" refused.err || { echo "$1: no '$2'"; cat refused.err; exit 1; }
  [ ! -e port ]
}
echo '{"role": "tagg", "listen": "127.0.0.1:0", "store": "t.db", "noise_seed": 3,
       "collectors": {"c1": "'$psk'"}, "tasks": ['"$tagg_task"']}' >tagg_seeded.json
refused tagg_seeded.json "noise_seed is no longer read: remove it"
echo '{"listen": "127.0.0.1:0", "store": "c.db", "fleet_secret": "'$psk'",
       "tasks": ['"$tagg_task"']}' >collector_alone.json
refused collector_alone.json 'task 5 is trust "tagg": the config needs a "tagg" endpoint'
echo '{"role": "tagg", "listen": "127.0.0.1:0", "store": "t.db", "tasks": []}' >no_collectors.json
refused no_collectors.json "a TAgg needs collectors"
# Each TAGG task takes one collector's aggregate: with several collectors, it must be named.
echo '{"role": "tagg", "listen": "127.0.0.1:0", "store": "t.db",
       "collectors": {"c1": "'$psk'", "c2": "'$psk'"}, "tasks": ['"$tagg_task"']}' >two_collectors.json
refused two_collectors.json "task 5: several collectors are listed; name the one"
sed 's/"tasks"/"task_collectors": {"5": "c3"}, "tasks"/' two_collectors.json >unknown_owner.json
refused unknown_owner.json 'task_collectors.5: "c3" is not one of collectors'
sed 's/"tasks"/"task_collectors": {"5": "c1", "6": "c1"}, "tasks"/' two_collectors.json >not_tagg.json
refused not_tagg.json "task_collectors.6: not a declared tagg task"
sed 's/"tasks"/"task_collectors": {"5": "c2"}, "tasks"/' two_collectors.json >owned.json
"$server" --config owned.json --port-file port 2>owned.err &
pid=$!
wait_for_port $pid owned.err
kill -TERM $pid
wait $pid
# The per-address handshake limit: a number out of range is refused, naming the field.
sed 's/"noise_seed": 3, /"handshakes_per_address_per_minute": 2000000, /' seeded.json >limit.json
refused limit.json "handshakes_per_address_per_minute must be a whole number in \[0, 1000000\]"
# The connection caps (issue 39 item 8): out of range, or not a boolean, refused by name.
sed 's/"noise_seed": 3, /"max_connections_per_address": 2000000, /' seeded.json >caps.json
refused caps.json "max_connections_per_address must be a whole number in \[0, 1048576\]"
sed 's/"noise_seed": 3, /"exempt_loopback_peers": 1, /' seeded.json >exempt.json
refused exempt.json "exempt_loopback_peers must be true or false, not 1"
# A task list (examples/fleet/tasks.json's shape) given as the config: the error says what it is
# and where a server config starts (issue 44).
echo '['"$task"']' >task_list.json
refused task_list.json "holds a JSON array (a list of task declarations.*start from examples/server/server.json (every field: docs/server_config.md)"
# --status-listen takes the config's loopback rule.
rc=0
timeout 20 "$server" --config plain.json --status-listen 0.0.0.0:0 --port-file port 2>sl.err || rc=$?
[ "$rc" -eq 2 ] && grep -q "status_listen must be a loopback address" sl.err && [ ! -e port ] ||
  { echo "--status-listen 0.0.0.0:0: rc $rc"; cat sl.err; exit 1; }
# examples/server/server.json's published fleet_secret: only warned about on loopback, refused
# off loopback (anyone can derive every device's key from it).
sed 's/"fleet_secret": "[0-9a-f]*"/"fleet_secret": "66656473746174206578616d706c65206f6e6c792c206e657665722075736521"/' \
  plain.json >published.json
rc=0
timeout 20 "$server" --config published.json --listen 0.0.0.0:0 --port-file port 2>pub.err || rc=$?
[ "$rc" -eq 2 ] && grep -q "published in the fedstat repository.*off loopback: refused" pub.err &&
  [ ! -e port ] || { echo "published fleet_secret on 0.0.0.0: rc $rc"; cat pub.err; exit 1; }
# The store field (issue 43): another scheme is refused by name, without its password; "sqlite:"
# resolves against the config's directory (the server makes the file there); a postgresql://
# store with no server behind it fails at start (exit 1), never logging its password.
sed 's/"store": "a.db"/"store": "mysql:\/\/root:hunter2@h\/db"/' plain.json >mysql.json
refused mysql.json 'store "mysql://root:\*\*\*@h/db": unknown scheme mysql'
if grep -q hunter2 refused.err; then echo "the store's password was printed"; cat refused.err; exit 1; fi
mkdir -p sub && sed 's/"store": "a.db"/"store": "sqlite:state\/s.db"/' plain.json >sub/sqlite.json
cp reference.txt sub/
"$server" --config sub/sqlite.json --port-file port 2>sqlite.err &
pid=$!
wait_for_port $pid sqlite.err
kill -TERM $pid
wait $pid
[ -f sub/state/s.db ] || { echo "sqlite:state/s.db was not made beside the config"; exit 1; }
rm -f port
sed 's/"store": "a.db"/"store": "postgresql:\/\/u:hunter2@\/db?host=\/nonexistent"/' plain.json >pg.json
rc=0
timeout 20 "$server" --config pg.json --port-file port 2>pg.err || rc=$?
if grep -q "built without PostgreSQL" pg.err; then
  [ "$rc" -eq 2 ] || { echo "no libpq: expected exit 2, got $rc"; cat pg.err; exit 1; }
else
  [ "$rc" -eq 1 ] && grep -q "cannot connect" pg.err ||
    { echo "postgresql:// without a server: expected exit 1, got $rc"; cat pg.err; exit 1; }
fi
if grep -q hunter2 pg.err; then echo "the store's password was printed"; cat pg.err; exit 1; fi
[ ! -e port ]
echo "seeded central noise refused; the unseeded trusted task serves; tagg configs checked;" \
  "store specs checked"
