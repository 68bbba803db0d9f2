#!/usr/bin/env bash
# The main job: sets up the host build and runs the end-to-end demo of the SDK on the embedded
# defaults (random sources, item hash, arena, integrity-checked storage, nanopb frames over TCP).
# Arguments go to the demo: scripts/demo.sh [--seed N] [--storage-dir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh host >&2
cmake --preset host-release >/dev/null
cmake --build --preset host-release --target fedstat-demo fedstat-server >/dev/null
exec build/host-release/examples/fedstat-demo "$@"
