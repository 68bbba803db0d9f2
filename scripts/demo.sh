#!/usr/bin/env bash
# The main job: sets up the host build, starts fedstat-server on the demo's tasks
# (examples/fleet/tasks.json, a task list that scripts/fleet_demo.py turns into a server config)
# and runs a fleet of emulated devices — real SDK Clients over real TLS on loopback, with
# credentials from the fleet CA (fedstat-ca) — for every task, then prints one table: task, trust
# model, signed, ε, clients, dropouts, estimate, exact value, error, bytes sent per device,
# seconds.
# Arguments go to scripts/fleet_demo.py: [--clients N] [--dropout R] [--seed S] [--unsigned] [--json]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh host >&2
cmake --preset host-release >/dev/null
cmake --build --preset host-release --target fedstat-server fedstat-sim fedstat-ca >/dev/null
exec python3 scripts/fleet_demo.py --build build/host-release "$@"
