#!/usr/bin/env bash
# What reading waits and recording scheduler events cost the recorder (issue #16).
#
# Records the paper's bug 2 (samples/python/bug2_producer_consumer/buggy.py: one producer, ten
# consumers waiting on one Condition, so most thread-samples are waits that change often) REPEAT
# times (default 3) in each of three settings, interleaved:
#   plain   --no-sched --no-waits
#   waits   --no-sched            (wait targets and objects read)
#   sched   (waits) --sched       (plus sched_switch / sched_waking through perf_event_open)
# and prints, per setting, the medians of: the recorder's CPU (user + system, from wait4's rusage)
# per 1000 thread-samples, the run file's size, and the scheduler events kept. One Markdown table
# for docs/benchmarks.md. --sched needs root (or perf_event_paranoid <= -1). NO_BUILD=1 uses the
# release binary as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
secs=${2:-6}
bin="${CARGO_TARGET_DIR:-target}/release/threadradar"
[ -n "${NO_BUILD:-}" ] || cargo build --release -q --bin threadradar
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$bin" "$dir" "$repeat" "$secs" <<'PY'
import json, os, statistics, subprocess, sys
bin_, dir_, repeat, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
settings = {"plain": ["--no-sched", "--no-waits"], "waits": ["--no-sched"], "sched": ["--sched"]}
res = {k: [] for k in settings}
for i in range(repeat):
    for name, flags in settings.items():
        out = os.path.join(dir_, f"{name}-{i}.json")
        p = subprocess.Popen([bin_, "record", "--no-progress", "-o", out, *flags, "--", "python3",
                              "samples/python/bug2_producer_consumer/buggy.py", "--duration", secs],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, _, ru = os.wait4(p.pid, 0)
        err = p.stderr.read().decode()
        if "not recorded" in err:
            print(err, file=sys.stderr)
        cpu = ru.ru_utime + ru.ru_stime
        lines = [json.loads(l) for l in open(out) if l.strip()]
        c = lines[-1]
        ts = sum(len(s["threads"]) for s in c["samples"])
        waits = sum(1 for s in c["samples"] for t in s["threads"] if len(t) > 6 and t[6] is not None)
        res[name].append(dict(cpu_per_1000=1000 * cpu / max(ts, 1), size=os.path.getsize(out), ts=ts,
                              waits=waits, targets=len(c.get("waits", [])),
                              switches=len(c.get("switches", [])) + len(c.get("sched_packed", {}).get("switches", [])),
                              wakeups=len(c.get("wakeups", [])) + len(c.get("sched_packed", {}).get("wakeups", [])),
                              lost=(c.get("sched") or {}).get("lost_events", 0)))
med = lambda name, k: statistics.median(r[k] for r in res[name])
base_cpu, base_size = med("plain", "cpu_per_1000"), med("plain", "size")
print("| setting | recorder CPU ms / 1000 thread-samples | vs plain | thread-samples | with a wait | wait targets | switches | wake-ups | lost | file size | vs plain |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for name in settings:
    print(f"| {name} | {med(name, 'cpu_per_1000') * 1000:.1f} | {med(name, 'cpu_per_1000') / base_cpu:.2f}x | {med(name, 'ts'):.0f} | "
          f"{med(name, 'waits'):.0f} | {med(name, 'targets'):.0f} | {med(name, 'switches'):.0f} | {med(name, 'wakeups'):.0f} | "
          f"{med(name, 'lost'):.0f} | {med(name, 'size') / 1e6:.2f} MB | {med(name, 'size') / base_size:.2f}x |")
print(f"\nmedians of {repeat} runs, {secs} s each; per run CPU ms/1000: " +
      "; ".join(f"{n}: " + ", ".join(f"{r['cpu_per_1000'] * 1000:.1f}" for r in res[n]) for n in settings))
PY
