#!/usr/bin/env bash
# Packages the extension: `package.sh TARGET` makes a platform-specific .vsix (linux-x64,
# linux-arm64, darwin-arm64, win32-x64, …) that carries the `threadradar` binary in server/, so
# installing the extension is all a user does (as rust-analyzer ships its server); without a
# target, the universal .vsix that finds the server on PATH or through threadradar.serverPath.
#
#   THREADRADAR_BIN=target/release/threadradar bash scripts/package.sh linux-x64
#
# The binary must be built for TARGET (cargo build --release [--target …]). Prints the .vsix's path
# on stdout; everything else goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-}
version=$(node -p 'require("./package.json").version')
rm -rf server
if [ -n "$target" ]; then
  bin=${THREADRADAR_BIN:-}
  [ -n "$bin" ] && [ -x "$bin" ] || { echo "package: set THREADRADAR_BIN to the threadradar binary built for $target" >&2; exit 2; }
  exe=threadradar
  case "$target" in win32-*) exe=threadradar.exe ;; esac
  mkdir -p server
  cp "$bin" "server/$exe"
  chmod 755 "server/$exe"
  # Debug symbols are most of an unstripped release binary; users need none of them.
  case "$target" in linux-*) command -v strip >/dev/null && strip --strip-debug "server/$exe" ;; esac
  out="threadradar-$target-$version.vsix"
  npx vsce package --target "$target" --no-dependencies --no-rewrite-relative-links -o "$out" >&2
else
  out="threadradar-$version.vsix"
  npx vsce package --no-dependencies --no-rewrite-relative-links -o "$out" >&2
fi
rm -rf server
echo "$PWD/$out"
