#!/usr/bin/env bash
# Builds the API reference (docs/api/README.md): Doxygen over the public headers with every
# warning an error, then the project's rules (scripts/check_api_docs.py: @memory and @paper per
# header, @errors per fallible function). Installs what is missing (scripts/setup.sh host) and
# configures the host-release build tree if needed; builds nothing else.
#   bash scripts/docs.sh        -> build/host-release/docs/api/html/index.html
# Exits non-zero, listing the problems, if any rule is broken.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh host
cmake --preset host-release >/dev/null
cmake --build --preset host-release --target fedstat_api_docs
