#!/usr/bin/env bash
# Whole-command timing and peak memory of `threadradar report` on the issue's synthetic run:
# 1,000,000 thread-samples (15,625 ticks × 64 threads), 5,000 functions, 20,000 call paths.
# `threadradar info` on the same file is the baseline (read, parse, validate: no analysis).
# Results: Markdown on stdout (copy into docs/benchmarks.md, "Analysis"), raw in bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -q
cargo build --release -q -p threadradar-profiler --example synth_run
bin="$target/release/threadradar"

mkdir -p bench/results
run=bench/results/analysis-1m.json
"$target/release/examples/synth_run" "$run" 15625 64 5000
ls -l "$run" | awk '{printf "run file: %.0f MB\n", $5 / 1e6}'

hyperfine -N -w 1 -r "${RUNS:-5}" --export-markdown bench/results/report.md \
  "$bin info $run" \
  "$bin report $run" \
  "$bin report --level class $run" \
  "$bin report --kmeans plain $run" \
  "$bin report --states all $run" \
  "$bin report --json $run" >/dev/null
cat bench/results/report.md

echo
echo "| command | peak RSS | wall |"
echo "|:---|---:|---:|"
for args in "info" "report" "report --json"; do
  /usr/bin/time -f "%M %e" -o bench/results/time.txt $bin $args "$run" >/dev/null
  read -r kib secs < bench/results/time.txt
  printf '| `threadradar %s` | %.0f MiB | %s s |\n' "$args" "$(echo "$kib / 1024" | bc -l)" "$secs"
done
rm -f "$run" bench/results/time.txt
