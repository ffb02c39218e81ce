"""ThreadRadar's recorder against py-spy on many threads and at high rates, side by side in one run.

    python3 bench/threads.py [--seconds 8] [--repeat 3] [--cases 100@3,300@3,10@0.1,launch@3]

Each case `N@MS` starts `bench/idle_threads.py N` (every tenth thread computes in bursts, the
others wait on a condition, like a server's pool), waits 1 s, and attaches each profiler for
`--seconds` at the interval MS:

- `threadradar record --pid P --interval-ms MS --duration S`
- `py-spy record --pid P --rate 1000/MS --threads --idle --nonblocking --format speedscope`
  (`--idle` so that py-spy, like ThreadRadar, records every thread at every tick)

The case `launch@MS` instead launches a short program under each profiler, start-up included:
`bench/workload.py --seconds 1` (four CPU-bound threads), wrapped so that the program writes its
own CPU time (`getrusage`, to the microsecond) at exit; the profiler's CPU is then the CPU of the profiler and its
children minus the program's own.

It reports, per profiler, its own CPU time (user + system of the process and its children, from
wait4's rusage) per 1000 thread-samples, and the achieved rate: ticks against the profiler's wall
time × 1000/MS (py-spy's `--duration` counts samples, so a py-spy that falls behind runs longer
than S; its start-up and writing count against both).
Thread-samples: ThreadRadar's run lists every thread per tick; py-spy's speedscope has one
profile per thread whose samples are that thread's traces. Prints Markdown (medians; ratios
py-spy / ThreadRadar) and writes the raw figures to bench/results/threads.json.
Needs `target/release/threadradar` (or $THREADRADAR) and py-spy (`pip install py-spy`).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from accuracy import load_run  # noqa: E402

THREADRADAR = os.environ.get("THREADRADAR") or os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "threadradar")
WORKLOAD = os.path.join(HERE, "idle_threads.py")
PY = sys.executable


def waited(cmd):
    """Runs cmd; returns (CPU seconds of it and its waited children, wall seconds)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{cmd[0]} failed ({code}): {out}")
    return ru.ru_utime + ru.ru_stime, time.perf_counter() - t0


def threadradar(pid, ms, seconds, out):
    cpu, wall = waited([THREADRADAR, "record", "--no-progress", "--pid", str(pid), "--interval-ms", str(ms), "--duration", str(seconds), "-o", out])
    run = load_run(out)
    ticks = len(run["samples"])
    return cpu, wall, ticks, sum(len(s["threads"]) for s in run["samples"])


def pyspy(pid, ms, seconds, out):
    rate = round(1000 / ms)
    cpu, wall = waited(["py-spy", "record", "--pid", str(pid), "--rate", str(rate), "--duration", str(seconds), "--threads", "--idle", "--nonblocking", "--format", "speedscope", "--output", out])
    doc = json.load(open(out))
    lengths = [len(p["samples"]) for p in doc["profiles"]]
    return cpu, wall, max(lengths, default=0), sum(lengths)


PROFILERS = {"threadradar": threadradar, "py-spy": pyspy}

# Runs a script and writes the process's own user + system CPU seconds at exit.
# The program's own CPU, to the microsecond (getrusage; os.times() counts in 10 ms ticks), written
# at exit, which then skips the interpreter's finalisation: what remains of the profiler's and its
# children's CPU is the profiler's alone, for both profilers alike.
SELF_CPU = (
    "import atexit, os, resource, runpy, sys; out = sys.argv.pop(1); "
    "atexit.register(lambda: ((lambda r, f: (f.write(str(r.ru_utime + r.ru_stime)), f.close()))(resource.getrusage(resource.RUSAGE_SELF), open(out, 'w')), os._exit(0))); "
    "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def launch(name, ms, tmp, i):
    """Launches bench/workload.py (1 s) under profiler `name`: (profiler CPU s, wall s, ticks, thread-samples)."""
    out = os.path.join(tmp, f"launch-{name}-{i}.out")
    own = os.path.join(tmp, f"launch-{name}-{i}.cpu")
    program = [PY, "-c", SELF_CPU, own, os.path.join(HERE, "workload.py"), "--seconds", "1", "--out", os.path.join(tmp, "truth.json")]
    if name == "threadradar":
        cpu, wall = waited([THREADRADAR, "record", "--no-progress", "--interval-ms", str(ms), "-o", out, "--"] + program)
        run = load_run(out)
        ticks, ts = len(run["samples"]), sum(len(s["threads"]) for s in run["samples"])
    else:
        cpu, wall = waited(["py-spy", "record", "--rate", str(round(1000 / ms)), "--threads", "--idle", "--nonblocking", "--format", "speedscope", "--output", out, "--"] + program)
        doc = json.load(open(out))
        lengths = [len(p["samples"]) for p in doc["profiles"]]
        ticks, ts = max(lengths, default=0), sum(lengths)
    program_cpu = float(open(own).read())
    return cpu - program_cpu, wall, ticks, ts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="100@3,300@3,10@0.1")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "threads.json"))
    args = ap.parse_args()
    cases = [(n if n == "launch" else int(n), float(ms)) for n, ms in (c.split("@") for c in args.cases.split(","))]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, ms in cases:
            for i in range(args.repeat):
                if n == "launch":
                    for name in PROFILERS:
                        cpu, wall, ticks, ts = launch(name, ms, tmp, i)
                        r = {"case": f"{n}@{ms}", "threads": 5, "interval_ms": ms, "profiler": name, "cpu_s": cpu, "ticks": ticks, "thread_samples": ts,
                             "cpu_ms_per_1000": 1000 * 1000 * cpu / max(ts, 1), "wall_s": wall, "rate_pct": 100 * ticks / (wall * 1000 / ms)}
                        results.append(r)
                        print(json.dumps(r), file=sys.stderr)
                    continue
                w = subprocess.Popen([PY, WORKLOAD, str(n)], stdout=subprocess.DEVNULL)
                time.sleep(1.0)
                try:
                    for name, fn in PROFILERS.items():  # both in one repetition, one after the other
                        cpu, wall, ticks, ts = fn(w.pid, ms, args.seconds, os.path.join(tmp, f"{name}-{n}-{i}.out"))
                        r = {"case": f"{n}@{ms}", "threads": n, "interval_ms": ms, "profiler": name, "cpu_s": cpu, "ticks": ticks, "thread_samples": ts,
                             "cpu_ms_per_1000": 1000 * 1000 * cpu / max(ts, 1), "wall_s": wall,
                             "rate_pct": 100 * ticks / (max(wall, args.seconds) * 1000 / ms)}
                        results.append(r)
                        print(json.dumps(r), file=sys.stderr)
                finally:
                    w.kill()
                    w.wait()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"\n{args.seconds} s attached, medians of {args.repeat}; load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores.\n")
    print("| threads @ interval | profiler | CPU ms / 1000 thread-samples | py-spy / ThreadRadar | achieved rate | thread-samples / s |")
    print("|---|---|---:|---:|---:|---:|")
    for n, ms in cases:
        case = f"{n}@{ms}"
        med = {p: {k: statistics.median(r[k] for r in results if r["case"] == case and r["profiler"] == p) for k in ("cpu_ms_per_1000", "rate_pct", "thread_samples", "wall_s")} for p in PROFILERS}
        for p in PROFILERS:
            ratio = med[p]["cpu_ms_per_1000"] / med["threadradar"]["cpu_ms_per_1000"] if med["threadradar"]["cpu_ms_per_1000"] else float("nan")
            label = "launched 1 s program" if n == "launch" else f"{n}"
            print(f"| {label} @ {ms:g} ms ({1000 / ms:.0f} Hz) | {p} | {med[p]['cpu_ms_per_1000']:.1f} | {ratio:.2f}× | {med[p]['rate_pct']:.1f} % | {med[p]['thread_samples'] / med[p]['wall_s']:,.0f} |")


if __name__ == "__main__":
    main()
