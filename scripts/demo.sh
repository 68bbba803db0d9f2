#!/usr/bin/env bash
# The main job: sets up the host build, starts fedstat-server on the embedded defaults
# (examples/fleet/tasks.json) and runs a fleet of emulated devices — real SDK Clients over real
# TLS on loopback — for every task, then prints one table: task, trust model, ε, clients,
# dropouts, estimate, exact value, error, bytes sent per device, seconds.
# Arguments go to scripts/fleet_demo.py: [--clients N] [--dropout R] [--seed S] [--json]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh host >&2
cmake --preset host-release >/dev/null
cmake --build --preset host-release --target fedstat-server fedstat-sim >/dev/null
exec python3 scripts/fleet_demo.py --build build/host-release "$@"
