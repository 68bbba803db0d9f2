#!/usr/bin/env bash
# Builds the libFuzzer targets (the host-fuzz preset: Clang, ASan + UBSan) and runs them.
#   scripts/fuzz.sh                 every target for 20 s (what the test command runs)
#   scripts/fuzz.sh --long          every target for 10 minutes
#   scripts/fuzz.sh --seconds N     every target for N seconds
#   scripts/fuzz.sh ... -R REGEX    only the targets whose test name (fuzz.<name>) matches
# The seconds are cached in build/host-fuzz: after --long, a plain `ctest --preset host-fuzz`
# runs 10 minutes per target too (scripts/test.sh sets 20 again).
# Each run starts from the target's generated seeds plus tests/fuzz/corpus/<name>/; a failure
# leaves the input in build/host-fuzz/tests/fuzz/work/<name>/ (crash-*, leak-*, timeout-*).
# Minimise it (build/host-fuzz/tests/fuzz/fuzz_<name> -minimize_crash=1 -runs=10000 <input>),
# fix the bug, and commit the input to tests/fuzz/corpus/<name>/ as its regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=20
ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --long) seconds=600; shift ;;
    --seconds) seconds="${2:?--seconds needs a number}"; shift 2 ;;
    -R) ctest_args+=(-R "${2:?-R needs a regex}"); shift 2 ;;
    -h|--help) sed -n '2,${/^#/!q;s/^# \{0,1\}//p}' "$0"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: --seconds must be a positive integer" >&2
  exit 2
fi
bash scripts/setup.sh host
cmake --preset host-fuzz "-DFEDSTAT_FUZZ_SECONDS=$seconds" >/dev/null
cmake --build --preset host-fuzz
# The whole output (a failure's sanitizer report and broken invariant) goes to the log; the
# screen gets one line per target.
log=build/host-fuzz/fuzz.log
status=0
ctest --preset host-fuzz -L fuzz -V "${ctest_args[@]}" >"$log" 2>&1 || status=$?
grep -E "fuzz [a-z_]+:|tests passed|Failed|FAILED" "$log" || true
[ "$status" -eq 0 ] || echo "fuzz.sh: a target failed: the whole output is in $log" >&2
exit "$status"
