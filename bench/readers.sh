#!/usr/bin/env bash
# The readers side by side on CPython 3.14 and 3.15 (issue #30): ThreadRadar, py-spy
# (--nonblocking) and CPython 3.15's own `profiling.sampling`, each attached for DURATION seconds
# at 333 Hz (3 ms) to a fresh run of bench/workloads/nine_threads.py, one after the other.
# Counted with `perf stat` around the profiler alone: its CPU time (task-clock) and its
# process_vm_readv calls; samples from each tool's own summary. Prints a Markdown table.
#
# Needs: root, perf, the sid chroot's interpreters (bash tests/pythons.sh 3.14 3.15), a release
# build (cargo build --release), and py-spy (pip install py-spy) for its column.
# Usage: bash bench/readers.sh [DURATION] [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-4}
REPEATS=${2:-3}
. bench/nine_threads_common.sh

# perf stat of a command: "cpu_ms vm_readv".
measure() {
  perf stat -x, -e task-clock,syscalls:sys_enter_process_vm_readv -o "$WORK/perf.txt" -- "$@" >"$WORK/out.txt" 2>&1 || true
  awk -F, '/task-clock/{cpu=$1} /process_vm_readv/{r=$1} END{printf "%.0f %d\n", cpu, r}' "$WORK/perf.txt"
}

echo "| CPython | profiler | CPU ms (per s sampled) | samples | process_vm_readv per sample |"
echo "|---|---|---|---|---|"
for v in 3.14 3.15; do
  py="$PYDIR/$v/bin/python$v"
  tools=(threadradar threadradar-no-sched py-spy)
  [ "$v" = 3.15 ] && tools+=(profiling.sampling)
  for tool in "${tools[@]}"; do
    for r in $(seq "$REPEATS"); do
      pid=$(start "$py")
      case "$tool" in
        threadradar) read -r cpu reads < <(measure "$BIN" record --no-progress --pid "$pid" --duration "$DURATION" -o "$WORK/run.json")
          samples=$("$BIN" info "$WORK/run.json" | awk '/^samples/{print $2}') ;;
        threadradar-no-sched) read -r cpu reads < <(measure "$BIN" record --no-progress --no-sched --pid "$pid" --duration "$DURATION" -o "$WORK/run.json")
          samples=$("$BIN" info "$WORK/run.json" | awk '/^samples/{print $2}') ;;
        py-spy) command -v py-spy >/dev/null || { stop "$pid"; continue; }
          read -r cpu reads < <(measure py-spy record --nonblocking -r 333 -d "$DURATION" -p "$pid" -f raw -o "$WORK/spy.txt")
          samples=$(grep -o 'Samples: [0-9]*' "$WORK/out.txt" | awk '{print $2}' | tail -1) ;;
        profiling.sampling) read -r cpu reads < <(measure "$py" -m profiling.sampling attach -a -r 333 -d "$DURATION" --collapsed -o "$WORK/ps.txt" "$pid")
          samples=$(grep -o 'Captured [0-9]* samples' "$WORK/out.txt" | awk '{print $2}') ;;
      esac
      stop "$pid"
      per_s=$(awk -v c="$cpu" -v d="$DURATION" 'BEGIN{printf "%.0f", c / d}')
      per=$(awk -v r="$reads" -v s="${samples:-0}" 'BEGIN{ if (s > 0) printf "%.1f", r / s; else print "-" }')
      echo "| $v | $tool | $cpu ($per_s) | ${samples:-?} | $per |"
    done
  done
done
