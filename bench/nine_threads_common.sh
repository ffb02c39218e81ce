# Shared by bench/readers.sh and bench/max_rate.sh (sourced, from the repository's root): the
# interpreters, the binary, a scratch directory, and the nine-thread workload started fresh.
# Expects DURATION to be set. BIN may be set to compare another build.
PYDIR="${THREADRADAR_PYTHONS:-$HOME/.cache/threadradar/pythons}"
BIN="${BIN:-${CARGO_TARGET_DIR:-$PWD/target}/release/threadradar}"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
workload=$PWD/bench/workloads/nine_threads.py

# Starts the workload on interpreter $1 and prints its pid once it runs Python.
start() {
  "$1" "$workload" $((DURATION + 3)) >/dev/null 2>&1 &
  local pid=$!
  sleep 1.5
  echo "$pid"
}

# Ends a workload started by `start`.
stop() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
