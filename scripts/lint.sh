#!/usr/bin/env bash
# Style checks: clang-format (the root .clang-format) over every tracked C/C++ file.
#   scripts/lint.sh          check formatting (fails on any difference)
#   scripts/lint.sh --fix    reformat in place
#   scripts/lint.sh --tidy   also run clang-tidy over sdk/ and platform/ (needs a configured
#                            build/host-asan for compile_commands.json)
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.h' '*.cpp' '*.c' '*.h.in')
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
clang-format --dry-run --Werror "${files[@]}"
echo "lint: ${#files[@]} files formatted as .clang-format says"
if [ "${1:-}" = "--tidy" ]; then
  [ -f build/host-asan/compile_commands.json ] || cmake --preset host-asan >/dev/null
  mapfile -t sdk_sources < <(git ls-files 'sdk/*.cpp' 'platform/posix/*.cpp' 'platform/*.cpp')
  clang-tidy -p build/host-asan --quiet \
    --checks='-*,bugprone-*,performance-*,-bugprone-easily-swappable-parameters' \
    "${sdk_sources[@]}"
fi
