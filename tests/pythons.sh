#!/usr/bin/env bash
# Installs the CPython interpreters the version tests run on (tests/cpython_versions.rs):
# CPython 3.13 and free-threaded 3.13t, built from Debian trixie's source package (no registry
# carries a newer CPython binary for Debian 12; recipe in the shared toolchains notes).
#
# Each build lands in $THREADRADAR_PYTHONS (default ~/.cache/threadradar/pythons), outside the
# clone, so later runs reuse it: an interpreter whose `.complete` marker exists is skipped.
# Usage: bash tests/pythons.sh [3.13] [3.13t]     (no argument: both)
set -euo pipefail

PREFIX="${THREADRADAR_PYTHONS:-$HOME/.cache/threadradar/pythons}"
VERSION=3.13.5                          # what trixie's python3.13 source package holds
TARBALL="python3.13_${VERSION}.orig.tar.xz"
mkdir -p "$PREFIX/src"
log() { printf '== pythons: %s\n' "$*"; }

# One build at a time even when two test runs start together.
exec 9>"$PREFIX/.lock"
flock 9

wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(3.13 3.13t)

todo=()
for v in "${wanted[@]}"; do
  case "$v" in 3.13|3.13t) ;; *) echo "pythons.sh: unknown interpreter '$v'; use 3.13 or 3.13t" >&2; exit 2;; esac
  if [ -f "$PREFIX/$v/.complete" ] && "$PREFIX/$v/bin/python$v" -c 'pass' 2>/dev/null; then
    log "$v present in $PREFIX/$v"
  else
    todo+=("$v")
  fi
done
[ ${#todo[@]} -gt 0 ] || exit 0

if [ ! -f "$PREFIX/src/$TARBALL" ]; then
  # Sources only: the deb-src line for trixie installs nothing from trixie.
  if ! grep -rqs 'deb-src .* trixie main' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    echo "deb-src ${mirror:-http://deb.debian.org/debian} trixie main" > /etc/apt/sources.list.d/trixie-src.list
  fi
  apt-get update -qq
  missing=()
  for p in build-essential dpkg-dev libssl-dev zlib1g-dev libbz2-dev libreadline-dev \
           libsqlite3-dev libffi-dev liblzma-dev uuid-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] || apt-get install -y -qq "${missing[@]}"
  log "downloading python3.13's Debian source package"
  (cd "$PREFIX/src" && apt-get source --download-only -qq python3.13 >/dev/null)
  [ -f "$PREFIX/src/$TARBALL" ] || { echo "pythons.sh: apt-get source did not give $TARBALL (trixie moved on?); update VERSION" >&2; exit 1; }
fi

for v in "${todo[@]}"; do
  flags=()
  [ "$v" = 3.13t ] && flags+=(--disable-gil)
  tree="$PREFIX/src/build-$v"
  rm -rf "$tree" "$PREFIX/$v"
  mkdir -p "$tree"
  log "building $v (${flags[*]:-default}) in $tree; takes minutes"
  start=$SECONDS
  tar xf "$PREFIX/src/$TARBALL" -C "$tree" --strip-components=1
  (
    cd "$tree"
    nice -n 10 ./configure -q --prefix="$PREFIX/$v" --without-ensurepip "${flags[@]}" >build.log 2>&1
    nice -n 10 make -j2 >>build.log 2>&1
    nice -n 10 make install >>build.log 2>&1
  ) || { echo "pythons.sh: building $v failed; see $tree/build.log" >&2; exit 1; }
  "$PREFIX/$v/bin/python$v" -c 'import sys, threading; print(sys.version)'
  touch "$PREFIX/$v/.complete"
  rm -rf "$tree"
  log "$v built in $((SECONDS - start)) s"
done
