#!/usr/bin/env bash
# The extension in a real VS Code: code-server (VS Code in the browser, from npm) with the
# platform-specific .vsix installed (it carries the `threadradar` binary), a real recording of the
# Bug 1 sample, the workbench driven in Debian's Chromium (playwright-core, no browser download).
# Checks: inlay hints and lenses against `threadradar report`, the glyph images and that none covers
# any text, themes, the overview and detail webviews and their navigation, the activity views and
# status bar, the run switcher and the panels' refresh on a run switch, the timeline's first worker
# lane on the first screen, the glyph image in a hover, the annotations setting, a "▶ Profile" lens
# on a pytest test (its run, outcome and status bar), a failing test's outcome icon, "▶ Profile
# again" and Compare with Previous Run of This Test, an untrusted workspace
# (test/e2e/editor.e2e.ts). A test fails at once on an error the server shows, not after a timeout.
#
#   bash editors/vscode/scripts/e2e.sh            # from a fresh clone; root (apt, ptrace)
#
# code-server is installed once into $THREADRADAR_CACHE (~/.cache/threadradar) and reused.
# Screenshots of every step: $E2E_SHOTS (target/e2e-screenshots in the repository). Builds the
# server with cargo (release) unless THREADRADAR_BIN is set. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$PWD
repo=$(cd ../.. && pwd)
log() { printf '\n== vscode e2e: %s\n' "$*"; }

CODE_SERVER_VERSION=4.100.3
RG_CACHE_NAME=vscode-ripgrep-cache-1.15.11
RG_TARBALL=ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz
cache=${THREADRADAR_CACHE:-$HOME/.cache/threadradar}
shots=${E2E_SHOTS:-$repo/target/e2e-screenshots}
cs_dir="$cache/code-server-$CODE_SERVER_VERSION"
cs_bin="$cs_dir/node_modules/.bin/code-server"

# --- what the machine needs --------------------------------------------------------------------
need=()
command -v npm >/dev/null || need+=(nodejs npm)
command -v rg >/dev/null || need+=(ripgrep)
[ -n "${CHROMIUM:-}" ] || [ -x /usr/bin/chromium ] || need+=(chromium)
if [ ! -x "$cs_bin" ]; then
  # code-server's native modules build against Kerberos (kerberos) and need pkg-config.
  dpkg -s libkrb5-dev >/dev/null 2>&1 || need+=(libkrb5-dev)
  command -v pkg-config >/dev/null || need+=(pkg-config)
fi
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  apt-get update -qq && apt-get install -y -qq "${need[@]}"
fi

# --- code-server, once, into the cache ----------------------------------------------------------
if [ ! -x "$cs_bin" ]; then
  log "installing code-server $CODE_SERVER_VERSION into $cs_dir (once)"
  work=$(mktemp -d)
  # @vscode/ripgrep's postinstall downloads rg from GitHub unless its cache has it: seed the cache
  # with Debian's rg (it looks in $TMPDIR/$RG_CACHE_NAME).
  mkdir -p "$work/tmp/$RG_CACHE_NAME" "$work/rg"
  cp "$(command -v rg)" "$work/rg/rg"
  tar -C "$work/rg" -czf "$work/tmp/$RG_CACHE_NAME/$RG_TARBALL" rg
  rm -rf "$cs_dir.partial"
  mkdir -p "$cs_dir.partial"
  echo '{"private": true}' >"$cs_dir.partial/package.json"
  # A local (not -g) install: code-server's postinstall runs `npm install` in lib/vscode, which a
  # global install's environment (npm_config_global) turns into a broken nested global install.
  (cd "$cs_dir.partial" && TMPDIR="$work/tmp" npm_config_cache="$cache/npm" npm_config_yes=true \
    npm_config_unsafe_perm=true npm install --no-audit --no-fund --no-package-lock --loglevel=error \
    "code-server@$CODE_SERVER_VERSION")
  rm -rf "$work" "$cs_dir"
  mv "$cs_dir.partial" "$cs_dir"
fi
"$cs_bin" --config /dev/null --version | head -1

# --- the server binary and the platform-specific .vsix ------------------------------------------
if [ -z "${THREADRADAR_BIN:-}" ]; then
  log "cargo build --release --bin threadradar"
  (cd "$repo" && cargo build --release --locked --bin threadradar)
  THREADRADAR_BIN="${CARGO_TARGET_DIR:-$repo/target}/release/threadradar"
fi
[ -x "$THREADRADAR_BIN" ] || { echo "vscode e2e: THREADRADAR_BIN=$THREADRADAR_BIN is not an executable file" >&2; exit 2; }

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  log "npm ci"
  npm ci --no-audit --no-fund --loglevel=error
fi
log "packaging the linux-x64 .vsix with the server"
vsix=$(THREADRADAR_BIN="$THREADRADAR_BIN" bash scripts/package.sh linux-x64)
echo "$vsix ($(( $(wc -c <"$vsix") / 1024 / 1024 )) MB)"

# --- a profiled sample: two real recordings of Bug 1 --------------------------------------------
tmp=$(mktemp -d)
pids=()
cleanup() {
  # Each code-server leads its own process group (setsid): ending the group also ends its
  # extension hosts, which would otherwise outlive it.
  for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
ws="$tmp/bug1"
mkdir -p "$ws/.threadradar/runs"
cp "$repo/samples/python/bug1_worker_manager/buggy.py" "$repo/samples/python/common.py" "$ws/"
run_old="$ws/.threadradar/runs/20200101T000000Z-old.json"
run_new="$ws/.threadradar/runs/20200101T000100Z-new.json"
# The interpreter itself, not a wrapper script (a pyenv shim is a shell script, which record cannot sample).
python=$(python3 -c 'import sys; print(sys.executable)')
# The "▶ Profile" lenses run pytest with this interpreter (the server's rule without the Python
# extension: python3 on PATH): a fresh machine may not have it.
if ! "$python" -c 'import pytest' 2>/dev/null; then
  log "installing pytest for $python"
  "$python" -m pip --version >/dev/null 2>&1 || "$python" -m ensurepip --upgrade >/dev/null 2>&1 || apt-get install -y -qq python3-pip
  "$python" -m pip install -q pytest || "$python" -m pip install -q --break-system-packages pytest
  "$python" -c 'import pytest' || { echo "vscode e2e: pytest could not be installed for $python" >&2; exit 2; }
fi
log "recording the sample twice ($python)"
(cd "$ws" && "$THREADRADAR_BIN" record -o "$run_old" --no-progress -- "$python" buggy.py --workers 4 --timeout 1 >"$tmp/rec.log" 2>&1) \
  || { cat "$tmp/rec.log" >&2; echo "vscode e2e: recording failed (it needs ptrace: root, or kernel.yama.ptrace_scope = 0)" >&2; exit 2; }
(cd "$ws" && "$THREADRADAR_BIN" record -o "$run_new" --no-progress -- "$python" buggy.py --workers 6 --timeout 1.5 >"$tmp/rec.log" 2>&1) \
  || { cat "$tmp/rec.log" >&2; exit 2; }
"$THREADRADAR_BIN" report --json "$run_new" >"$tmp/report.json"
# A pytest project in the workspace for the "▶ Profile" lens (issue #19), and pytest's own verdict
# on the test the lens will profile.
cp -r "$repo/samples/python/testproject" "$ws/testproject"
rm -rf "$ws/testproject/.threadradar" "$ws/testproject"/tests/__pycache__
pytest_rc=0
(cd "$ws/testproject" && "$python" -m pytest -q -p no:cacheprovider tests/check_pool.py::test_parallel_sum_is_right >"$tmp/pytest.log" 2>&1) || pytest_rc=$?
# A threaded test that fails, for the Runs view's outcome icon (issue 32), and pytest's verdict on it.
cat >"$ws/testproject/tests/check_fails.py" <<'PY'
import threading


def add(total, n):
    for i in range(n):
        total[0] += i


def test_threaded_total_is_wrong():
    total = [0]
    threads = [threading.Thread(target=add, args=(total, 200_000)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert total[0] == 0, "the threads added something"
PY
failing_rc=0
(cd "$ws/testproject" && "$python" -m pytest -q -p no:cacheprovider tests/check_fails.py >"$tmp/pytest-fails.log" 2>&1) || failing_rc=$?
untrusted="$tmp/untrusted"
mkdir -p "$untrusted/.threadradar/runs"
cp "$ws/buggy.py" "$ws/common.py" "$untrusted/"
cp "$run_new" "$untrusted/.threadradar/runs/"

# --- two code-servers: a trusted one and one that asks for workspace trust ----------------------
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start_code_server() { # name port extra-args…
  local name=$1 port=$2
  shift 2
  local data="$tmp/$name-data" exts="$tmp/$name-exts"
  mkdir -p "$data/User" "$exts"
  # The extension finds its own server (no serverPath); no welcome page, no telemetry.
  cat >"$data/User/settings.json" <<'JSON'
{
  "workbench.startupEditor": "none",
  "threadradar.annotations": "all",
  "workbench.colorTheme": "Default Dark Modern",
  "workbench.tips.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "editor.minimap.enabled": false,
  "chat.disableAIFeatures": true,
  "security.workspace.trust.startupPrompt": "never"
}
JSON
  "$cs_bin" --config "$tmp/$name-config.yaml" --user-data-dir "$data" --extensions-dir "$exts" --install-extension "$vsix" >"$tmp/$name-install.log" 2>&1 \
    || { cat "$tmp/$name-install.log" >&2; exit 1; }
  # TESTPROJECT_MISBEHAVE=1: the sample's test_hangs hangs until it is cancelled (else it is skipped).
  TESTPROJECT_MISBEHAVE=1 setsid "$cs_bin" --config "$tmp/$name-config.yaml" --auth none --bind-addr "127.0.0.1:$port" --disable-telemetry --disable-update-check \
    --user-data-dir "$data" --extensions-dir "$exts" "$@" >"$tmp/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  cat "$tmp/$name.log" >&2
  echo "vscode e2e: code-server ($name) did not start on port $port" >&2
  exit 1
}
port=$(free_port)
start_code_server trusted "$port" --disable-workspace-trust
uport=$(free_port)
start_code_server untrusted "$uport"

log "driving the workbench in Chromium (screenshots: $shots)"
rm -rf "$shots"
mkdir -p "$shots"
# The file runs as one test of node's runner: --test-timeout bounds the whole session (each step
# has its own, much shorter limit and fails at once on an error the server shows).
set +e
TR_E2E_URL="http://127.0.0.1:$port" TR_E2E_UNTRUSTED_URL="http://127.0.0.1:$uport" \
TR_E2E_WS="$ws" TR_E2E_UNTRUSTED_WS="$untrusted" TR_E2E_SHOTS="$shots" \
TR_E2E_REPORT="$tmp/report.json" \
TR_E2E_RUN_NEW="$run_new" TR_E2E_RUN_OLD="$run_old" TR_E2E_PYTEST_RC="$pytest_rc" TR_E2E_FAILING_RC="$failing_rc" \
  node --import tsx --test --test-concurrency=1 --test-timeout=1200000 --test-reporter=spec test/e2e/editor.e2e.ts
rc=$?
set -e
if [ $rc -ne 0 ]; then
  echo "--- code-server log (trusted) ---" >&2
  tail -n 40 "$tmp/trusted.log" >&2
  find "$tmp/trusted-data/logs" -name '*ThreadRadar*' -exec tail -n 40 {} + >&2 2>/dev/null || true
  echo "vscode e2e: FAILED (screenshots in $shots)" >&2
  exit $rc
fi
# The server that ran is the one the .vsix carries (no serverPath was set).
started=$(find "$tmp/trusted-data/logs" -name 'ThreadRadar.log' -exec grep -h 'Starting .* lsp' {} + | head -1)
case "$started" in
  *"$tmp/trusted-exts/"*"/server/threadradar lsp"*) echo "vscode e2e: the bundled server ran: ${started#*Starting }" ;;
  *) echo "vscode e2e: the extension did not start its bundled server: ${started:-no 'Starting … lsp' in its log}" >&2; exit 1 ;;
esac
echo "vscode e2e: passed (screenshots in $shots)"
