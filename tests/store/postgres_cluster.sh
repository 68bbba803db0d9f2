#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the store tests, from the Debian binaries
# (/usr/lib/postgresql/<newest>/bin, or $FEDSTAT_POSTGRES_BIN). PostgreSQL refuses to run as root:
# as root the cluster belongs to the package's `postgres` user (runuser), otherwise to the caller.
# It listens on a Unix socket in DIR only (listen_addresses ''), superuser `fedstat`, trust auth.
#   postgres_cluster.sh start DIR [PORT]   make DIR (0700), initdb DIR/data, start, an empty
#                                          database "fedstat"; DIR/port
#   postgres_cluster.sh halt DIR           pg_ctl stop -m immediate (a crash), keeping the data
#   postgres_cluster.sh resume DIR         start the halted cluster again (crash recovery)
#   postgres_cluster.sh stop DIR           stop it (immediate) and remove DIR, whatever its state
#   postgres_cluster.sh stop-named FILE    stop the cluster whose DIR FILE names (none: nothing)
#   postgres_cluster.sh psql DIR SQL       run SQL in database "fedstat": rows, '|' between columns
set -euo pipefail
command=${1:?start, halt, resume, stop, stop-named or psql} dir=${2:?DIR}
if [ "$command" = stop-named ]; then
  [ -f "$dir" ] || exit 0
  command=stop dir=$(cat "$2")
  [ -n "$dir" ] || exit 0
fi
bin=${FEDSTAT_POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
[ -x "$bin/pg_ctl" ] || { echo "postgres_cluster.sh: no PostgreSQL binaries (apt-get install postgresql-15)" >&2; exit 1; }
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
pg_start() {
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-k $dir -c listen_addresses='' -p $(cat "$dir/port")" start >/dev/null
}
pg_halt() {
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null || true
  fi
}
case $command in
  start)
    port=${3:-5432}
    pg_halt 2>/dev/null || true  # a cluster left by a run that was killed: replaced
    rm -rf "$dir/data"
    mkdir -p "$dir" && chmod 700 "$dir"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir"; fi
    as_owner "$bin/initdb" -D "$dir/data" --auth=trust -U fedstat --no-sync -E UTF8 \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    echo "$port" >"$dir/port"
    pg_start || { cat "$dir/server.log" >&2; exit 1; }
    "$bin/createdb" -h "$dir" -p "$port" -U fedstat fedstat
    ;;
  halt) pg_halt ;;
  resume) pg_start || { cat "$dir/server.log" >&2; exit 1; } ;;
  stop)
    pg_halt
    rm -rf "$dir"
    ;;
  psql) "$bin/psql" -h "$dir" -p "$(cat "$dir/port")" -U fedstat -d fedstat -X -q -t -A \
          -v ON_ERROR_STOP=1 -c "${3:?SQL}" ;;
  *) echo "postgres_cluster.sh: unknown command $command" >&2; exit 2 ;;
esac
