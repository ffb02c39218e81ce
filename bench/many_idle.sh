#!/usr/bin/env bash
# Issue #30's "cost follows the threads that ran": attach to bench/workloads/many_idle.py (1 000
# threads blocked on an Event, 2 computing) at 3 ms, scheduler events on, and report each attach's
# rate over the whole attach and from its second second on (the start-up reads every thread's
# type, wait object and kernel state once), and the recorder's CPU.
#
# usage: bench/many_idle.sh [RUNS] [SECONDS] [BINARY...]
#   PYTHON=…   the interpreter of the workload (default: python3)
#   IDLE=…     idle threads (default 1000)
# Several binaries (e.g. before and after a change) attach in turn to the same running workload.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
runs=${1:-3}
secs=${2:-4}
shift $(($# < 2 ? $# : 2))
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=("$here/../target/release/threadradar")
py=${PYTHON:-python3}
idle=${IDLE:-1000}
out=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$out"' EXIT
"$py" "$here/workloads/many_idle.py" "$idle" 2 3600 > "$out/workload.log" &
pid=$!
for _ in $(seq 50); do grep -q idle "$out/workload.log" 2>/dev/null && break; sleep 0.1; done
sleep 1
echo "many_idle.py $idle 2 on $("$py" -c 'import sys; print(sys.version.split()[0])'), ${secs} s attaches at 3 ms, $(nproc) cores"
printf '%-44s %8s %8s %10s %8s\n' binary "rate Hz" "% of 333" "from 1 s %" "CPU s"
for r in $(seq "$runs"); do
  for b in "${bins[@]}"; do
    f="$out/run-$r.json"
    /usr/bin/time -f "%U %S" -o "$out/time" "$b" record --no-progress --pid "$pid" --duration "$secs" -o "$f" 2> "$out/err" || { cat "$out/err"; exit 1; }
    python3 - "$f" "$secs" "$b" "$(cat "$out/time")" <<'EOF'
import json, sys
path, secs, binary, cpu = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4].split()
ts = []
for line in open(path, "rb"):
    if line.strip():
        c = json.loads(line)
        ts += [s["t"] for s in c.get("samples", [])]
want = 1000 / 3.0
late = [t for t in ts if t >= 1e9]
print(f"{binary[-44:]:<44} {len(ts) / secs:8.1f} {100 * len(ts) / secs / want:8.1f} "
      f"{100 * len(late) / (secs - 1) / want:10.1f} {float(cpu[0]) + float(cpu[1]):8.2f}")
EOF
  done
done
