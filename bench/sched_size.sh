#!/usr/bin/env bash
# How many bytes the scheduler events take in a run file (issue #16): the paper's bug 2
# (samples/python/bug2_producer_consumer/VARIANT.py, default fixed) recorded REPEAT times (default
# 3) for SECS seconds (default 2) with --sched and with --no-sched, interleaved. Prints per run
# the file sizes, the events kept, and the bytes their JSON takes (spelled-out `switches`/
# `wakeups`, or the packed `sched_packed`), then medians. BIN=path/to/threadradar measures another
# build (e.g. one from before the packed form); NO_BUILD=1 uses the release binary as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
secs=${2:-2}
variant=${3:-fixed}
bin="${BIN:-${CARGO_TARGET_DIR:-target}/release/threadradar}"
[ -n "${NO_BUILD:-}${BIN:-}" ] || cargo build --release -q --bin threadradar
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$bin" "$dir" "$repeat" "$secs" "$variant" <<'PY'
import json, os, statistics, subprocess, sys
bin_, dir_, repeat, secs, variant = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
rows = []
for i in range(repeat):
    r = {}
    for name, flags in [("plain", ["--no-sched"]), ("sched", ["--sched"])]:
        out = f"{dir_}/{name}-{i}.json"
        subprocess.run([bin_, "record", "--no-progress", "-o", out, *flags, "--", "python3",
                        f"samples/python/bug2_producer_consumer/{variant}.py", "--duration", secs],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        r[name] = os.path.getsize(out)
        if name == "sched":
            chunks = [json.loads(l) for l in open(out) if l.strip() and not l.startswith('{"format"')]
            ev = sum(len(c.get(k, [])) + len(c.get("sched_packed", {}).get(k, [])) for c in chunks for k in ("switches", "wakeups"))
            nbytes = sum(len(json.dumps(c[k], separators=(",", ":"))) for c in chunks for k in ("switches", "wakeups", "sched_packed") if k in c)
            r.update(events=ev, event_bytes=nbytes, per_event=nbytes / max(ev, 1), form="packed" if any("sched_packed" in c for c in chunks) else "spelled out")
    r["growth"] = r["sched"] / r["plain"]
    rows.append(r)
    print(f"run {i}: {r['form']}: {r['events']} events, {r['event_bytes'] / 1e3:.0f} kB of events, {r['per_event']:.1f} B/event; "
          f"file {r['sched'] / 1e3:.0f} kB with --sched, {r['plain'] / 1e3:.0f} kB without ({r['growth']:.2f}x)", flush=True)
med = lambda k: statistics.median(r[k] for r in rows)
print(f"\nmedians of {repeat} runs of {variant}.py, {secs} s: {med('events'):.0f} events, {med('per_event'):.1f} B/event, "
      f"--sched file {med('sched') / 1e3:.0f} kB = {med('growth'):.2f}x the run without")
PY
