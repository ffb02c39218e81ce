#!/usr/bin/env bash
# The size of a run file: a 20-thread program (bench/workload.py) recorded for SECONDS (default 60)
# at the default 3 ms. Prints one Markdown table row for docs/run-format.md.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
bin="${CARGO_TARGET_DIR:-target}/release/threadradar"
cargo build --release -q --bin threadradar
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
weights=8,4,2,1,8,4,2,1,8,4,2,1,8,4,2,1,8,4,2,1
"$bin" record --no-progress --duration "$secs" -o "$dir/run.json" -- \
  python3 bench/workload.py --weights "$weights" --seconds 100000 --out "$dir/w.json" 2>/dev/null || true
python3 - "$dir/run.json" "$secs" <<'PY'
import json, os, sys
path, secs = sys.argv[1], sys.argv[2]
lines = [json.loads(l) for l in open(path) if l.strip()]
chunk = lines[1]
samples = chunk["samples"]
ts = sum(len(s["threads"]) for s in samples)
size = os.path.getsize(path)
print("| recording | samples | thread-samples | stacks | file size | bytes per thread-sample |")
print("|---|---|---|---|---|---|")
print(f"| {secs} s, {len(chunk['threads'])} threads, 3 ms | {len(samples)} | {ts} | {len(chunk['stacks'])} | {size / 1e6:.1f} MB | {size / max(ts, 1):.1f} |")
PY
