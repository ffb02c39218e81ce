#!/usr/bin/env bash
# How well kernel wake-ups are attributed to the sampled waits they end (issue #16), against the
# program's own log: the paper's bug 2 (samples/python/bug2_producer_consumer/{buggy,fixed}.py),
# recorded REPEAT times (default 3) each with --sched, SECS seconds (default 2), interleaved.
#
# Per run it prints what `threadradar waits --json --object Condition` says next to the program's
# `truth:` line: consumers woken by consumers and by producers, futile wake-ups, and futile
# wake-ups per unit consumed; then the medians. A consumer-to-consumer edge beyond the log (all of
# them in the fixed version, where no consumer notifies) is a wake-up pinned on the wrong sleep.
# BIN=path/to/threadradar compares another build (e.g. main's); NO_BUILD=1 uses the release
# binary as it is. Needs root (or perf_event_paranoid <= -1) for --sched.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
secs=${2:-2}
bin="${BIN:-${CARGO_TARGET_DIR:-target}/release/threadradar}"
[ -n "${NO_BUILD:-}${BIN:-}" ] || cargo build --release -q --bin threadradar
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$bin" "$dir" "$repeat" "$secs" <<'PY'
import json, re, statistics, subprocess, sys
bin_, dir_, repeat, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
rows = {"buggy": [], "fixed": []}
for i in range(repeat):
    for variant in rows:
        out = f"{dir_}/{variant}-{i}.json"
        rec = subprocess.run([bin_, "record", "--no-progress", "--sched", "-o", out, "--", "python3",
                              f"samples/python/bug2_producer_consumer/{variant}.py", "--duration", str(secs)],
                             capture_output=True, text=True)
        if rec.returncode != 0 or "not recorded" in rec.stderr:
            sys.exit(f"record failed: {rec.stderr}")
        truth = json.loads(next(l[len("truth: "):] for l in rec.stdout.splitlines() if l.startswith("truth: ")))
        rate = float(re.search(r"consumers ([0-9.]+) units/s", rec.stdout).group(1))
        units = rate * secs
        w = json.loads(subprocess.run([bin_, "waits", out, "--json", "--object", "Condition"], capture_output=True, text=True, check=True).stdout)
        wakes = [e for e in w["edges"] if e["kind"] == "wake" and e["wakee"].startswith("consumer-")]
        by = lambda role: sum(1 for e in wakes if e["waker"].startswith(role))
        futile = sum(o["futile_wakeups"] for o in w["objects"])
        logged_c = truth["consumers_woken_by"].get("consumer", 0)
        r = dict(by_c=by("consumer-"), by_p=by("producer-"), logged_c=logged_c, logged_p=truth["consumers_woken_by"].get("producer", 0),
                 wakes=len(wakes), futile=futile, logged_futile=truth["futile_wakeups"], units=units)
        r["excess_pct"] = 100.0 * max(0, r["by_c"] - logged_c) / max(1, r["wakes"])
        r["futile_per_unit"] = futile / max(units, 1)
        r["logged_futile_per_unit"] = r["logged_futile"] / max(units, 1)
        rows[variant].append(r)
        print(f"{variant} #{i}: consumer wakes {r['wakes']}, by consumers {r['by_c']} (logged {logged_c}, excess {r['excess_pct']:.1f} %), "
              f"by producers {r['by_p']} (logged {r['logged_p']}), futile {futile} (logged {r['logged_futile']}), units {units:.0f}, "
              f"futile/unit {r['futile_per_unit']:.2f} (logged {r['logged_futile_per_unit']:.2f})", flush=True)
med = lambda v, k: statistics.median(r[k] for r in rows[v])
print("\n| version | consumer wake edges | by consumers (logged) | excess over the log | futile (logged) | futile per unit (logged) |")
print("|---|---|---|---|---|---|")
for v in rows:
    print(f"| {v} | {med(v, 'wakes'):.0f} | {med(v, 'by_c'):.0f} ({med(v, 'logged_c'):.0f}) | {med(v, 'excess_pct'):.1f} % | "
          f"{med(v, 'futile'):.0f} ({med(v, 'logged_futile'):.0f}) | {med(v, 'futile_per_unit'):.2f} ({med(v, 'logged_futile_per_unit'):.2f}) |")
fall = med("buggy", "futile_per_unit") / max(med("fixed", "futile_per_unit"), 1e-9)
logged_fall = med("buggy", "logged_futile_per_unit") / max(med("fixed", "logged_futile_per_unit"), 1e-9)
print(f"\nfutile wake-ups per unit, buggy -> fixed: {fall:.1f}x fall (the program's log: {logged_fall:.1f}x); medians of {repeat} runs of {secs:g} s")
PY
