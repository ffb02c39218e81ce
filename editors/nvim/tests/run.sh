#!/usr/bin/env bash
# The Neovim plugin's tests: a real headless Neovim (0.7.2 or newer) against the real
# `threadradar lsp`, on a copy of the Bug 1 sample with two real recordings. The expected
# figures come from `threadradar report --json` on the same runs.
#
#   THREADRADAR_BIN=/path/to/threadradar [NVIM_BIN=nvim] editors/nvim/tests/run.sh [test_name …]
#
# Recording needs ptrace (root, or kernel.yama.ptrace_scope = 0). Exit code 0 = all passed.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
plugin="$(dirname "$here")"
repo="$(cd "$plugin/../.." && pwd)"

bin="${THREADRADAR_BIN:-}"
if [ -z "$bin" ]; then
  if [ -x "$repo/target/release/threadradar" ]; then
    bin="$repo/target/release/threadradar"
  elif command -v threadradar >/dev/null; then
    bin="$(command -v threadradar)"
  else
    echo "no threadradar binary: build it (cargo build --release) or set THREADRADAR_BIN" >&2
    exit 2
  fi
fi
nvim="${NVIM_BIN:-nvim}"
if ! command -v "$nvim" >/dev/null; then
  echo "nvim is not installed (apt-get install neovim), or set NVIM_BIN" >&2
  exit 2
fi
echo "$("$nvim" --version | head -1); server $bin ($("$bin" --version))"

start=$(date +%s)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The sample project (buggy.py and fixed.py of Bug 1) and its runs: "old" (buggy, 4 workers),
# "fixed" (fixed.py, 6 workers) and "new" (buggy, 6 workers, the newest).
ws="$tmp/ws"
mkdir -p "$ws/.threadradar/runs" "$tmp/expect"
cp -r "$repo/samples/python/bug1_worker_manager" "$repo/samples/python/common.py" "$ws/"
run_old="$ws/.threadradar/runs/20200101T000000Z-old.json"
run_fixed="$ws/.threadradar/runs/20200101T000050Z-fixed.json"
run_new="$ws/.threadradar/runs/20200101T000100Z-new.json"
# The interpreter itself, not a wrapper script (a pyenv shim is a shell script, which record cannot sample).
python=$(python3 -c 'import sys; print(sys.executable)')
record() {
  local out="$1" script="$2"
  shift 2
  if ! (cd "$ws" && "$bin" record -o "$out" --no-progress -- \
    "$python" "$ws/bug1_worker_manager/$script" "$@" >"$tmp/record.log" 2>&1); then
    cat "$tmp/record.log" >&2
    echo "recording failed (it needs ptrace: root, or kernel.yama.ptrace_scope = 0)" >&2
    exit 2
  fi
}
record "$run_old" buggy.py --workers 4 --timeout 1
record "$run_fixed" fixed.py --workers 6 --timeout 1.5
record "$run_new" buggy.py --workers 6 --timeout 1.5

report() { "$bin" report --json "$@"; }
report "$run_new" >"$tmp/expect/new-function.json"
report --level class "$run_new" >"$tmp/expect/new-class.json"
report --no-stdlib "$run_new" >"$tmp/expect/new-function-nostdlib.json"
report --exclude-thread worker-0 "$run_new" >"$tmp/expect/new-function-without-worker-0.json"
report "$run_old" >"$tmp/expect/old-function.json"
report --level class "$run_old" >"$tmp/expect/old-class.json"
report "$run_fixed" >"$tmp/expect/fixed-function.json"

# A project to record in from the editor (test_record): a copy of the sample and two runs.
rec="$tmp/rec"
mkdir -p "$rec/.threadradar/runs"
cp -r "$repo/samples/python/bug1_worker_manager" "$repo/samples/python/common.py" "$rec/"
cp "$run_old" "$run_new" "$rec/.threadradar/runs/"

# A workspace without runs and one whose only run is cut off.
mkdir -p "$tmp/norun" "$tmp/badrun/.threadradar/runs"
cp "$repo/samples/python/bug1_worker_manager/buggy.py" "$tmp/norun/"
cp "$repo/samples/python/bug1_worker_manager/buggy.py" "$tmp/badrun/"
head -c 300 "$run_new" >"$tmp/badrun/.threadradar/runs/20200101T000000Z-cut.json"

# A project whose run has asyncio tasks (test_units): tests/scripts/asyncio_truth.py recorded on
# CPython 3.14 (tests/pythons.sh), where it runs; where it is required (tests/run_all.sh sets
# THREADRADAR_REQUIRE_PYTHONS=1) its absence fails, elsewhere it is a skip, logged.
py314="${THREADRADAR_PYTHONS:-$HOME/.cache/threadradar/pythons}/3.14/bin/python3.14"
TR_TASKS=""
if "$py314" -c "import asyncio" >/dev/null 2>&1; then
  TR_TASKS="$tmp/tasks"
  mkdir -p "$TR_TASKS/.threadradar/runs"
  cp "$repo/tests/scripts/asyncio_truth.py" "$TR_TASKS/"
  if ! (cd "$TR_TASKS" && "$bin" record -o "$TR_TASKS/.threadradar/runs/20200101T000000Z-tasks.json" --no-progress -- \
    "$py314" asyncio_truth.py "$TR_TASKS/truth.json" 0.5 >"$tmp/record.log" 2>&1); then
    cat "$tmp/record.log" >&2
    echo "recording asyncio_truth.py on CPython 3.14 failed" >&2
    exit 2
  fi
elif [ "${THREADRADAR_REQUIRE_PYTHONS:-}" = 1 ]; then
  echo "CPython 3.14 is required here but $py314 does not run (bash tests/pythons.sh 3.14)" >&2
  exit 2
else
  echo "skip: test_units checks no run with asyncio tasks: $py314 does not run (bash tests/pythons.sh 3.14)" >&2
  [ -z "${THREADRADAR_SKIP_LOG:-}" ] || echo "nvim test_units: no CPython 3.14 ($py314) for a run with asyncio tasks" >>"$THREADRADAR_SKIP_LOG"
fi
export TR_TASKS

export TR_BIN="$bin" TR_WS="$ws" TR_EXPECT="$tmp/expect" TR_RUN_OLD="$run_old" TR_RUN_NEW="$run_new"
export TR_RUN_FIXED="$run_fixed" TR_REC="$rec"
export TR_NORUN="$tmp/norun" TR_BADRUN="$tmp/badrun" TR_TESTS="$here"
# A pytest project to profile a test in from its lens (test_profile_test, issue 19).
cp -r "$repo/samples/python/testproject" "$tmp/testproject"
export TR_TESTPROJECT="$tmp/testproject"
export XDG_CACHE_HOME="$tmp/cache" XDG_STATE_HOME="$tmp/state" XDG_DATA_HOME="$tmp/data"

passed=0
failed=0
failed_names=()
result() {
  if [ "$2" -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok   $1"
  else
    failed=$((failed + 1))
    failed_names+=("$1")
    echo "FAIL $1"
  fi
}

# The help file must be valid (:helptags fails on duplicate tags); tags go to a copy.
mkdir -p "$tmp/doc"
cp "$plugin/doc/threadradar.txt" "$tmp/doc/"
set +e
"$nvim" --headless -u NONE -i NONE \
  -c "try | helptags $tmp/doc | catch | echoerr v:exception | cquit 1 | endtry" \
  -c "if !filereadable('$tmp/doc/tags') | cquit 1 | endif" -c "qa!" </dev/null 2>&1
rc=$?
if [ $rc -eq 0 ] && ! grep -q "^:ThreadRadarOverview" "$tmp/doc/tags"; then rc=1; fi
set -e
result helptags $rc

tests=("$@")
if [ ${#tests[@]} -eq 0 ]; then
  tests=()
  for f in "$here"/test_*.lua; do
    tests+=("$(basename "$f" .lua)")
  done
  tests+=(pty_image)
fi

for t in "${tests[@]}"; do
  echo "--   $t"
  if [ "$t" = pty_image ]; then
    # Neovim's real TUI on a pseudo-terminal: the kitty graphics escapes it writes (pty_image.py).
    set +e
    NVIM="$nvim" PLUGIN="$plugin" timeout 300 python3 "$here/pty_image.py"
    rc=$?
    set -e
    result "$t" $rc
    continue
  fi
  set +e
  (cd "$ws" && timeout 120 "$nvim" --headless -u NONE -i NONE --cmd "set rtp+=$plugin" \
    -c "luafile $here/$t.lua" </dev/null 2>&1)
  rc=$?
  set -e
  result "$t" $rc
done

echo "$passed passed, $failed failed ($(( $(date +%s) - start ))s)"
if [ $failed -ne 0 ]; then
  echo "failed: ${failed_names[*]}"
  exit 1
fi
