#!/usr/bin/env bash
# Unpacks Debian's mbedtls and nanopb source packages into .deps/ (or $FEDSTAT_SOURCES_DIR), at the
# versions of the installed binary packages: nanopb's runtime must match its generator, and the
# bare-metal mbedTLS must match the host's headers. Nothing fetched here is ever committed.
# Enables deb-src entries (derived from the machine's own deb entries) if there are none.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${FEDSTAT_SOURCES_DIR:-$PWD/.deps}
mkdir -p "$dest"

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else echo "fetch-sources: root is needed to run: $*" >&2; exit 1
  fi
}

# source package, binary package whose version to match, a file that proves the unpack worked
wanted=("nanopb nanopb pb_decode.c" "mbedtls libmbedtls-dev library/aes.c")
to_fetch=()
for entry in "${wanted[@]}"; do
  read -r source binary proof <<<"$entry"
  version=$(dpkg-query -W -f='${source:Version}\n' "$binary" 2>/dev/null | head -n 1 || true)
  if [ -z "$version" ]; then
    echo "fetch-sources: $binary is not installed: run scripts/setup.sh first" >&2
    exit 1
  fi
  upstream=${version#*:}
  upstream=${upstream%-*}
  if [ ! -f "$dest/$source-$upstream/$proof" ]; then to_fetch+=("$source=$version"); fi
done
if [ ${#to_fetch[@]} -eq 0 ]; then
  echo "fetch-sources: mbedtls and nanopb sources are in $dest"
  exit 0
fi

has_deb_src() {
  grep -qsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
    /etc/apt/sources.list.d/*.sources
}
if ! has_deb_src; then
  echo "fetch-sources: enabling deb-src entries derived from the machine's deb entries"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources |
      as_root tee /etc/apt/sources.list.d/fedstat-deb-src.sources >/dev/null
  else
    grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed 's/^deb /deb-src /' | as_root tee /etc/apt/sources.list.d/fedstat-deb-src.list >/dev/null
  fi
  as_root apt-get -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3 update
fi

echo "fetch-sources: apt-get source ${to_fetch[*]} into $dest"
(cd "$dest" && apt-get -q -o Acquire::Retries=3 source "${to_fetch[@]}" 2>&1 |
  grep -vE "^(W: Download is performed unsandboxed|dpkg-source: info:|NOTICE:|Please use:|git clone|to retrieve|https:)" || true)
for entry in "${wanted[@]}"; do
  read -r source binary proof <<<"$entry"
  ls "$dest"/"$source"-*/"$proof" >/dev/null 2>&1 || {
    echo "fetch-sources: $source sources did not unpack into $dest" >&2
    exit 1
  }
done
rm -f "$dest"/*.dsc "$dest"/*.tar.* 2>/dev/null || true
