#!/usr/bin/env bash
# The test command: sets everything up and runs every test fedstat has.
#   1. installs missing Debian packages and fetches the mbedtls/nanopb sources (scripts/setup.sh)
#   2. format check (scripts/lint.sh)
#   3. host (x86-64) build with ASan + UBSan: unit tests, heap-check tests, server and demo smoke,
#      the emulation tests (their device fleet, fedstat-sim, built in Release first)
#   3b. host build with Clang, libFuzzer, ASan + UBSan: every fuzz target for 20 s (label fuzz;
#      scripts/fuzz.sh --long runs them longer)
#   4. AArch64 build: the same unit tests under qemu-aarch64 (its consumer test's device reaches
#      the host-asan server)
#   5. Cortex-M4 build: the bare-metal self-test image under qemu-system-arm, and the firmware
#      (examples/cortex_m_firmware) in a round with the host-asan server and fedstat-sim devices
#   6. Cortex-M0 build (16 KiB of RAM): the core self-test under qemu-system-arm (micro:bit)
#   (3-5 each also install their build and build and run tests/consumer against it: label consumer)
# Exits non-zero if any step fails. Ends with "tests: N passed, M failed".
set -euo pipefail
cd "$(dirname "$0")/.."
export CTEST_OUTPUT_ON_FAILURE=1

start=$(date +%s)
bash scripts/setup.sh all
bash scripts/lint.sh

passed=0
failed=0
run_preset() {  # run_preset PRESET [-D...]: configure, build and test, adding to the totals
  local preset=$1 t0 log summary total fails
  shift
  t0=$(date +%s)
  echo "==== $preset: configure, build, test"
  cmake --preset "$preset" "$@" >/dev/null
  cmake --build --preset "$preset"
  log=$(mktemp)
  local rc=0
  ctest --preset "$preset" 2>&1 | tee "$log" || rc=$?
  summary=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  rm -f "$log"
  if [ -z "$summary" ]; then
    echo "==== $preset: ctest printed no summary (rc=$rc)" >&2
    failed=$((failed + 1))
    return
  fi
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
  fails=$(sed -E 's/.*passed, ([0-9]+) tests? failed.*/\1/' <<<"$summary")
  passed=$((passed + total - fails))
  failed=$((failed + fails))
  if [ "$rc" -ne 0 ] && [ "$fails" -eq 0 ]; then failed=$((failed + 1)); fi
  echo "==== $preset: $((total - fails)) passed, $fails failed in $(($(date +%s) - t0)) s"
}

# The emulation tests' fleet (fedstat-sim, the devices' load) in Release; the server they test
# stays sanitized (tests/emulation/CMakeLists.txt says why).
t0=$(date +%s)
echo "==== host-release: fedstat-sim for the emulation tests"
cmake --preset host-release >/dev/null
cmake --build --preset host-release --target fedstat-sim
echo "==== host-release: fedstat-sim built in $(($(date +%s) - t0)) s"
run_preset host-asan "-DFEDSTAT_EMULATION_SIM=$PWD/build/host-release/host_server/fedstat-sim"
run_preset host-fuzz "-DFEDSTAT_FUZZ_SECONDS=20"
# Its consumer test runs the AArch64 examples/report_to_server (qemu-aarch64) against the host's
# server (the sanitized one) on loopback.
run_preset aarch64 "-DFEDSTAT_HOST_SERVER=$PWD/build/host-asan/host_server/fedstat-server"
# The firmware round test (issue 14) runs the host's server (the sanitized one) and fleet.
run_preset cortex-m4 "-DFEDSTAT_HOST_SERVER=$PWD/build/host-asan/host_server/fedstat-server" \
  "-DFEDSTAT_HOST_SIM=$PWD/build/host-release/host_server/fedstat-sim"
run_preset cortex-m0

echo "==== all presets done in $(($(date +%s) - start)) s"
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
