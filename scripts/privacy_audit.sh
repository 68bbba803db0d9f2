#!/usr/bin/env bash
# The privacy audit (tests/privacy_audit/) on its own.
#   scripts/privacy_audit.sh          as the test command runs it: the host-asan build, ctest -L privacy
#   scripts/privacy_audit.sh --long   the Release build with FEDSTAT_AUDIT_SCALE=10 (ten times the
#                                     samples, so tighter lower bounds); FEDSTAT_AUDIT_SCALE=N in
#                                     the environment picks another scale
# Prints one line per audited mechanism:
#   audit <mechanism>: epsilon lower bound X (claimed Y), N samples; ...
# and exits non-zero if any audit (or negative control) fails.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "")
    cmake --preset host-asan >/dev/null
    cmake --build --preset host-asan --target fedstat_privacy_audit
    log=build/host-asan/privacy_audit.log
    rc=0
    ctest --preset host-asan -L privacy --verbose >"$log" 2>&1 || rc=$?
    grep -E 'tests passed|Total Test time|\*\*\*Failed|Failure' "$log" || true
    echo "==== privacy audit (full output in $log):"
    grep -E '^[0-9]+: audit ' "$log" | sed -E 's/^[0-9]+: //' || true
    exit "$rc"
    ;;
  --long)
    export FEDSTAT_AUDIT_SCALE="${FEDSTAT_AUDIT_SCALE:-10}"
    cmake --preset host-release >/dev/null
    cmake --build --preset host-release --target fedstat_privacy_audit
    log=build/host-release/privacy_audit_long.log
    start=$(date +%s)
    rc=0
    build/host-release/tests/privacy_audit/fedstat_privacy_audit | tee "$log" || rc=$?
    echo "==== privacy audit, FEDSTAT_AUDIT_SCALE=$FEDSTAT_AUDIT_SCALE, $(($(date +%s) - start)) s:"
    grep -E '^audit ' "$log" || true
    exit "$rc"
    ;;
  *)
    echo "usage: scripts/privacy_audit.sh [--long]" >&2
    exit 2
    ;;
esac
