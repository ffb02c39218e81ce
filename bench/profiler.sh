#!/usr/bin/env bash
# ThreadRadar's sampler against py-spy on one workload, plus the load time of a large run file.
# Results: Markdown on stdout (copy into docs/benchmarks.md), raw JSON in bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v py-spy >/dev/null || python3 -m pip install -q py-spy
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine; }
cargo build --release -q
cargo build --release -q -p threadradar-profiler --example synth_run

python3 bench/profiler.py "$@"

echo
echo "Loading run files (\`threadradar info\`: read, parse, validate, print):"
mkdir -p bench/results
target/release/examples/synth_run bench/results/1m-thread-samples.json 125000 8 5000
target/release/examples/synth_run bench/results/1m-ticks.json 1000000 4 5000
hyperfine -N -w 1 -r 5 --export-markdown bench/results/load.md \
  'target/release/threadradar info bench/results/1m-thread-samples.json' \
  'target/release/threadradar info bench/results/1m-ticks.json' >/dev/null
cat bench/results/load.md
rm -f bench/results/1m-thread-samples.json bench/results/1m-ticks.json
