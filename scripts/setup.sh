#!/usr/bin/env bash
# Installs the Debian 12 packages fedstat needs (only those missing) and fetches the mbedtls and
# nanopb source packages into .deps/ (scripts/fetch-sources.sh).
#
#   scripts/setup.sh host   what the host build needs (the demo, the server, host tests, the
#                           Python module and its pytest tests)
#   scripts/setup.sh all    plus the AArch64 and Cortex-M cross toolchains and QEMU (default)
#
# Needs root (or sudo) only when something is missing. Safe to run again: it then does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

scope=${1:-all}
case "$scope" in host | all) ;; *) echo "usage: scripts/setup.sh [host|all]" >&2; exit 2 ;; esac

host_packages=(cmake make g++ dpkg-dev libgtest-dev libbenchmark-dev libmbedtls-dev nanopb
  libnanopb-dev protobuf-compiler python3-protobuf libcli11-dev nlohmann-json3-dev libeigen3-dev clang-format python3-sklearn
  libasio-dev libsqlite3-dev rustc pybind11-dev python3-dev python3-numpy python3-pytest
  python3-scipy python3-venv python3-setuptools python3-wheel python3-build doxygen clang
  libclang-rt-14-dev chromium postgresql-15 libpq-dev)
cross_packages=(gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib
  qemu-system-arm g++-aarch64-linux-gnu qemu-user libgtest-dev:arm64 libmbedtls-dev:arm64)
packages=("${host_packages[@]}")
[ "$scope" = all ] && packages+=("${cross_packages[@]}")

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "setup: root is needed to run: $*" >&2; exit 1
  fi
}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${packages[@]}"; do installed "$p" || missing+=("$p"); done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  if [ "$scope" = all ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
    as_root dpkg --add-architecture arm64
  fi
  apt_options=(-o DPkg::Lock::Timeout=600 -o Acquire::Retries=3)
  as_root apt-get "${apt_options[@]}" update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get "${apt_options[@]}" install -y \
    --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#packages[@]} Debian packages for '$scope' are installed"
fi

bash scripts/fetch-sources.sh
