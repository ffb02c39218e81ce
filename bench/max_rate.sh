#!/usr/bin/env bash
# Issue #30's "highest sustained rate": each profiler attached for DURATION seconds to a fresh run
# of bench/workloads/nine_threads.py at the highest rate it accepts — ThreadRadar every 0.05 ms
# (20 kHz, its smallest --interval-ms), with and without scheduler events; py-spy --nonblocking
# and CPython 3.15's `profiling.sampling` asked for 20 kHz and 50 kHz — on Debian's 3.14 and 3.15.
# Prints a Markdown table of the rate each one sustained (samples per second of the attach, from
# its own summary) and its CPU time (perf stat task-clock around the profiler alone).
#
# Needs: root, perf, the sid chroot's interpreters (bash tests/pythons.sh 3.14 3.15), a release
# build (cargo build --release), py-spy (pip install py-spy) for its rows.
# Usage: bash bench/max_rate.sh [DURATION] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-3}
REPEATS=${2:-2}
. bench/nine_threads_common.sh

cpu_ms() {
  perf stat -x, -e task-clock -o "$WORK/perf.txt" -- "$@" >"$WORK/out.txt" 2>&1 || true
  awk -F, '/task-clock/{printf "%.0f\n", $1}' "$WORK/perf.txt"
}

echo "| CPython | profiler | asked | sustained Hz | CPU ms per s |"
echo "|---|---|---:|---:|---:|"
for v in 3.14 3.15; do
  py="$PYDIR/$v/bin/python$v"
  rows=("threadradar|20000" "threadradar --no-sched|20000" "py-spy --nonblocking|20000")
  [ "$v" = 3.15 ] && rows+=("profiling.sampling|20000" "profiling.sampling|50000")
  for row in "${rows[@]}"; do
    tool=${row%|*}
    rate=${row#*|}
    for _ in $(seq "$REPEATS"); do
      pid=$(start "$py")
      samples=""
      case "$tool" in
        threadradar) cpu=$(cpu_ms "$BIN" record --no-progress --pid "$pid" --duration "$DURATION" --interval-ms 0.05 -o "$WORK/run.json")
          samples=$("$BIN" info "$WORK/run.json" | awk '/^samples/{print $2}') ;;
        "threadradar --no-sched") cpu=$(cpu_ms "$BIN" record --no-progress --no-sched --pid "$pid" --duration "$DURATION" --interval-ms 0.05 -o "$WORK/run.json")
          samples=$("$BIN" info "$WORK/run.json" | awk '/^samples/{print $2}') ;;
        "py-spy --nonblocking") command -v py-spy >/dev/null || { stop "$pid"; continue; }
          cpu=$(cpu_ms py-spy record --nonblocking -r "$rate" -d "$DURATION" -p "$pid" -f raw -o "$WORK/spy.txt")
          samples=$(grep -o 'Samples: [0-9]*' "$WORK/out.txt" | awk '{print $2}' | tail -1) ;;
        profiling.sampling) cpu=$(cpu_ms "$py" -m profiling.sampling attach -a -r "$rate" -d "$DURATION" --collapsed -o "$WORK/ps.txt" "$pid")
          samples=$(grep -o 'Captured [0-9]* samples' "$WORK/out.txt" | awk '{print $2}') ;;
      esac
      stop "$pid"
      hz=$(awk -v s="${samples:-0}" -v d="$DURATION" 'BEGIN{printf "%.0f", s / d}')
      per_s=$(awk -v c="${cpu:-0}" -v d="$DURATION" 'BEGIN{printf "%.0f", c / d}')
      echo "| $v | $tool | $rate | $hz | $per_s |"
    done
  done
done
