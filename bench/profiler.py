"""ThreadRadar's sampler side by side with py-spy, on one workload, at one rate, in one run.

    python3 bench/profiler.py [--seconds 8] [--repeat 3] [--rate-ms 3] [--out bench/results/profiler.json]

Needs `target/release/threadradar` (cargo build --release) and py-spy (`pip install py-spy`); run
`bash bench/profiler.sh` to get both. Measures, for ThreadRadar and for py-spy in its default
(pausing) mode, with --nonblocking, and with --gil:

- profiler CPU seconds per 1000 samples: each profiler attaches (--pid) to a running workload for a
  fixed time and its own CPU time (user + system, from wait4's rusage) is divided by its samples;
- the workload's throughput loss: iterations per second when launched under the profiler, against
  the same workload unprofiled;
- the achieved rate at the requested interval, while attached for a fixed time;
- accuracy: mean absolute error, in percentage points, between each worker thread's share of
  computing samples and its share of CPU time as the thread itself measured (time.thread_time()).

Prints a Markdown table of medians over --repeat runs with ratios against ThreadRadar, and writes
all raw figures as JSON.
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
from accuracy import evaluate  # noqa: E402

THREADRADAR = os.path.join(ROOT, "target", "release", "threadradar")
WORKLOAD = os.path.join(HERE, "workload.py")
PY = sys.executable

CONFIGS = {
    "threadradar": [],
    "py-spy": [],
    "py-spy --nonblocking": ["--nonblocking"],
    "py-spy --gil": ["--gil"],
}


def profiler_cmd(name, out, rate_hz, interval_ms, target):
    """The command for profiler `name`, writing to `out`; `target` is ["--pid", P] or ["--", cmd…]."""
    if name == "threadradar":
        return [THREADRADAR, "record", "--no-progress", "--interval-ms", str(interval_ms), "-o", out] + target
    extra = CONFIGS[name]
    cmd = ["py-spy", "record", "--rate", str(rate_hz), "--format", "speedscope", "--threads", "--output", out] + extra
    if target[0] == "--pid":
        return cmd + ["--pid", target[1]] + target[2:]
    return cmd + target


def sample_count(name, out):
    """Sampler ticks. py-spy's own "Samples:" figure counts thread traces, so its ticks are read
    from the speedscope file: with --idle every thread is in every tick, so the longest
    per-thread profile has one entry per tick (with --gil, one trace per tick at most)."""
    if name == "threadradar":
        from accuracy import load_run
        return load_run(out)["meta"]["sample_count"]
    with open(out) as f:
        doc = json.load(f)
    lengths = [len(p["samples"]) for p in doc["profiles"]]
    return sum(lengths) if "--gil" in CONFIGS[name] else max(lengths, default=0)


def run_waited(cmd, **kw):
    """Runs cmd, returns (returncode, stderr, cpu_seconds of that process and its waited children)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    err = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, err, ru.ru_utime + ru.ru_stime


def unprofiled(seconds, tmp):
    truth = os.path.join(tmp, "base.json")
    subprocess.run([PY, WORKLOAD, "--seconds", str(seconds), "--out", truth], check=True)
    with open(truth) as f:
        return json.load(f)["iterations_per_s"]


def launched(name, seconds, interval_ms, tmp, i):
    """Launch the workload under the profiler: throughput, rate and accuracy."""
    out = os.path.join(tmp, f"{name.replace(' ', '_')}-{i}.json")
    truth = os.path.join(tmp, f"truth-{name.replace(' ', '_')}-{i}.json")
    cmd = profiler_cmd(name, out, round(1000 / interval_ms), interval_ms, ["--", PY, WORKLOAD, "--seconds", str(seconds), "--out", truth])
    t0 = time.perf_counter()
    code, err, _ = run_waited(cmd)
    wall = time.perf_counter() - t0
    if code != 0:
        raise SystemExit(f"{name} failed ({code}): {err}")
    with open(truth) as f:
        t = json.load(f)
    acc = evaluate("threadradar" if name == "threadradar" else "pyspy", out, truth)
    return {
        "iterations_per_s": t["iterations_per_s"],
        "mae_pp": acc["mae_pp"],
        "wall_s": wall,
    }


def attached(name, seconds, interval_ms, tmp, i):
    """Attach to a running workload for `seconds`: the profiler's own CPU per 1000 samples."""
    truth = os.path.join(tmp, f"attach-truth-{i}.json")
    # The workload outlives the profiler's window by far, so every profiler samples the full
    # window (a workload that ended early would look like a low sampling rate); it is stopped after.
    w = subprocess.Popen([PY, WORKLOAD, "--seconds", str(seconds * 4 + 10), "--out", truth], stdout=subprocess.DEVNULL)
    time.sleep(1.0)
    out = os.path.join(tmp, f"attach-{name.replace(' ', '_')}-{i}.json")
    target = ["--pid", str(w.pid), "--duration", str(int(round(seconds)))]
    if name != "threadradar" and "--gil" not in CONFIGS[name]:
        # Like ThreadRadar, record idle threads too, so every tick reads every thread.
        target.append("--idle")
    cmd = profiler_cmd(name, out, round(1000 / interval_ms), interval_ms, target)
    code, err, cpu = run_waited(cmd)
    w.kill()
    w.wait()
    if code != 0:
        raise SystemExit(f"{name} failed attaching ({code}): {err}")
    samples = sample_count(name, out)
    duration = int(round(seconds))
    return {
        "cpu_s": cpu,
        "samples": samples,
        "cpu_s_per_1000": 1000 * cpu / max(samples, 1),
        "rate_pct": 100 * samples / (duration * 1000 / interval_ms),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rate-ms", type=float, default=3.0)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "profiler.json"))
    ap.add_argument("--only", help="comma-separated subset of: " + ", ".join(CONFIGS))
    args = ap.parse_args()
    names = [n.strip() for n in args.only.split(",")] if args.only else list(CONFIGS)
    results = {"seconds": args.seconds, "interval_ms": args.rate_ms, "unprofiled": [], "launch": {n: [] for n in names}, "attach": {n: [] for n in names}}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            # Interleave profilers within each repetition so machine drift hits all alike.
            results["unprofiled"].append(unprofiled(args.seconds, tmp))
            for n in names:
                results["launch"][n].append(launched(n, args.seconds, args.rate_ms, tmp, i))
                results["attach"][n].append(attached(n, args.seconds, args.rate_ms, tmp, i))
                print(f"run {i + 1}/{args.repeat} {n}: {results['launch'][n][-1]} {results['attach'][n][-1]}", file=sys.stderr)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)

    base = statistics.median(results["unprofiled"])
    med = lambda xs, k: statistics.median(x[k] for x in xs)  # noqa: E731
    rows = {}
    for n in names:
        rows[n] = {
            "cpu": med(results["attach"][n], "cpu_s_per_1000"),
            "loss": 100 * (1 - med(results["launch"][n], "iterations_per_s") / base),
            "rate": med(results["attach"][n], "rate_pct"),
            "mae": med(results["launch"][n], "mae_pp"),
        }
    ref = rows.get("threadradar")
    print(f"\nWorkload: {os.path.basename(WORKLOAD)}, 4 CPU-bound threads (work 8:4:2:1), ~{args.seconds:g} s, interval {args.rate_ms:g} ms, medians of {args.repeat} runs.\n")
    print("| profiler | CPU s / 1000 samples | vs ThreadRadar | throughput loss | achieved rate | thread-share MAE (pp) | vs ThreadRadar |")
    print("|---|---|---|---|---|---|---|")
    for n, r in rows.items():
        cpu_ratio = f"{r['cpu'] / ref['cpu']:.2f}×" if ref and ref["cpu"] > 0 else "-"
        mae_ratio = f"{r['mae'] / ref['mae']:.2f}×" if ref and ref["mae"] > 0 else "-"
        print(f"| {n} | {r['cpu']:.4f} | {cpu_ratio} | {r['loss']:.1f} % | {r['rate']:.1f} % | {r['mae']:.2f} | {mae_ratio} |")


if __name__ == "__main__":
    main()
