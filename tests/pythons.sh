#!/usr/bin/env bash
# Installs the CPython interpreters the version tests run on (tests/cpython_versions.rs):
# CPython 3.13 and free-threaded 3.13t, built from Debian trixie's source package (no registry
# carries a newer CPython binary for Debian 12; recipe in the shared toolchains notes).
#
# Each build lands in $THREADRADAR_PYTHONS (default ~/.cache/threadradar/pythons), outside the
# clone, so later runs reuse it: an interpreter whose `.complete` marker exists is skipped.
# CPython 3.14 and 3.15 are Debian sid's binary packages, which need a newer glibc than this
# system's: they are installed into a minimal sid chroot ($THREADRADAR_SID, default
# ~/.cache/threadradar/sid), and $PREFIX/3.14/bin/python3.14 (3.15 likewise) is a wrapper that
# runs the chroot's interpreter with this machine's own directories (/tmp, /root, /work, the
# clone…) visible at the same paths, in a mount namespace of its own: a test runs it like any
# other interpreter, on its own scripts, and the process is still a chrooted one (its `/` is
# the chroot's), so that reading its binaries and sources through /proc/<pid>/root is tested too.
#
# Usage: bash tests/pythons.sh [3.13] [3.13t] [3.14] [3.15]     (no argument: all four)
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
[ ${#wanted[@]} -gt 0 ] || wanted=(3.13 3.13t 3.14 3.15)

# 3.14 and 3.15: the sid chroot (once), then a wrapper per interpreter.
SID="${THREADRADAR_SID:-$HOME/.cache/threadradar/sid}"
# The packages the tests need inside it: the interpreters and CPython's own test suite (the
# record tests run `-m test.test_threading_local` as a user's suite).
SID_PACKAGES=python3.14,python3.15,libpython3.14-testsuite,libpython3.15-testsuite
sid_wanted=()
for v in "${wanted[@]}"; do
  case "$v" in 3.14|3.15) sid_wanted+=("$v");; esac
done
if [ ${#sid_wanted[@]} -gt 0 ]; then
  if [ ! -f "$SID/.complete-$SID_PACKAGES" ]; then
    command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
    mirror=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    log "installing Debian sid's CPython 3.14 and 3.15 into $SID (debootstrap, ~1 min, ~650 MB)"
    rm -rf "$SID"
    debootstrap --variant=minbase --include="$SID_PACKAGES" sid "$SID" "${mirror:-http://deb.debian.org/debian}" >"$PREFIX/sid-debootstrap.log" 2>&1 \
      || { echo "pythons.sh: debootstrap of sid failed; see $PREFIX/sid-debootstrap.log" >&2; exit 1; }
    touch "$SID/.complete-$SID_PACKAGES"
  fi
  wrapper="$PREFIX/chroot-python"
  cat >"$wrapper" <<'WRAP'
#!/bin/sh
# Runs interpreter $1 of the sid chroot ($THREADRADAR_SID, default ~/.cache/threadradar/sid) with
# the rest of the arguments, in a mount namespace of its own in which this machine's own
# top-level directories (not its system ones) are bound into the chroot at the same paths, /dev
# is bound and a /proc is mounted; the working directory stays what it was.
ROOT=${THREADRADAR_SID:-$HOME/.cache/threadradar/sid}
PY=$1; shift
exec unshare --mount --propagation private /bin/sh -c '
ROOT=$1; PY=$2; shift 2
for d in /*; do
  case "$d" in /bin|/boot|/dev|/etc|/lib|/lib32|/lib64|/libx32|/proc|/run|/sbin|/sys|/usr|/var|/lost+found) continue;; esac
  [ -d "$d" ] || continue
  mkdir -p "$ROOT$d" && mount --rbind "$d" "$ROOT$d"
done
mount --rbind /dev "$ROOT/dev"
mount -t proc proc "$ROOT/proc"
exec chroot "$ROOT" /bin/sh -c "cd \"\$0\" 2>/dev/null; exec \"\$@\"" "$PWD" "$PY" "$@"
' sh "$ROOT" "$PY" "$@"
WRAP
  chmod +x "$wrapper"
  for v in "${sid_wanted[@]}"; do
    mkdir -p "$PREFIX/$v/bin"
    printf '#!/bin/sh\nexec "%s" python%s "$@"\n' "$wrapper" "$v" >"$PREFIX/$v/bin/python$v"
    chmod +x "$PREFIX/$v/bin/python$v"
    "$PREFIX/$v/bin/python$v" -c 'import sys, threading, test.support; print(sys.version)' \
      || { echo "pythons.sh: python$v of the sid chroot does not run" >&2; exit 1; }
  done
fi

todo=()
for v in "${wanted[@]}"; do
  case "$v" in 3.13|3.13t) ;; 3.14|3.15) continue;; *) echo "pythons.sh: unknown interpreter '$v'; use 3.13, 3.13t, 3.14 or 3.15" >&2; exit 2;; esac
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
