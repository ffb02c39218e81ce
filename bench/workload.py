"""Benchmark workload: CPU-bound Python threads with unequal work that report their own CPU time.

Each thread runs pure-Python arithmetic for `weight × unit` iterations and records
`time.thread_time()` when it ends, so a profiler's per-thread share of computing samples can be
compared with the thread's true share of CPU time. Prints one JSON object to stdout (or to --out):
{"threads": {name: cpu_seconds}, "tids": {name: native_id}, "wall_s": ..., "iterations_per_s": ...}.

Usage: python3 workload.py [--weights 8,4,2,1] [--seconds 6] [--out result.json]
"""
import argparse
import json
import threading
import time


def spin(iterations):
    x = 0
    for i in range(iterations):
        x = (x + i * i) % 1000003
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", default="8,4,2,1", help="relative work per thread")
    ap.add_argument("--seconds", type=float, default=6.0, help="approximate wall time, unprofiled")
    ap.add_argument("--out", help="write the JSON result here instead of stdout")
    args = ap.parse_args()
    weights = [int(w) for w in args.weights.split(",")]

    # Calibrate: iterations per second of one thread alone.
    t0 = time.perf_counter()
    spin(200_000)
    per_s = 200_000 / (time.perf_counter() - t0)
    # All threads share one GIL, so the total work fits in `seconds` of wall time.
    unit = int(per_s * args.seconds / sum(weights))

    cpu = {}
    tids = {}

    def work(name, n):
        tids[name] = threading.get_native_id()
        spin(n)
        cpu[name] = time.thread_time()

    threads = [threading.Thread(target=work, args=(f"w{w}x-{i}", w * unit), name=f"w{w}x-{i}") for i, w in enumerate(weights)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    result = {"threads": cpu, "tids": tids, "wall_s": wall, "iterations_per_s": unit * sum(weights) / wall}
    text = json.dumps(result)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
