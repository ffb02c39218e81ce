"""Per-thread accuracy of a profile against the workload's own CPU times.

    python3 accuracy.py threadradar RUN.json TRUTH.json
    python3 accuracy.py pyspy SPEEDSCOPE.json TRUTH.json

For each worker thread of bench/workload.py (named w<k>x-<i>), compares its share of computing
samples among the workers with its share of the workers' summed `time.thread_time()`. Prints JSON:
{"mae_pp": mean absolute error in percentage points, "threads": {name: [sample_share, cpu_share]}}.

ThreadRadar: samples whose state is computing (flags & 3 == 0). py-spy: the speedscope export has
one profile per thread ("name" holds the thread name when py-spy could read it, with
--threadnames), whose samples are the thread's non-idle samples.
"""
import json
import re
import sys


def threadradar_counts(path):
    run = json.load(open(path))
    names = [t["name"] for t in run["threads"]]
    counts = {}
    for s in run["samples"]:
        for th in s["threads"]:
            if th[2] & 3 == 0:
                n = names[th[0]]
                counts[n] = counts.get(n, 0) + 1
    return counts


def pyspy_counts(path):
    doc = json.load(open(path))
    counts = {}
    for p in doc["profiles"]:
        m = re.search(r"(w\d+x-\d+)", p.get("name", ""))
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + len(p["samples"])
    return counts


def main():
    kind, prof, truth_path = sys.argv[1:4]
    counts = threadradar_counts(prof) if kind == "threadradar" else pyspy_counts(prof)
    truth = json.load(open(truth_path))["threads"]
    workers = sorted(truth)
    total_c = sum(counts.get(w, 0) for w in workers) or 1
    total_t = sum(truth.values())
    rows = {w: [100 * counts.get(w, 0) / total_c, 100 * truth[w] / total_t] for w in workers}
    mae = sum(abs(a - b) for a, b in rows.values()) / len(rows)
    print(json.dumps({"mae_pp": round(mae, 3), "threads": {k: [round(a, 2), round(b, 2)] for k, (a, b) in rows.items()}}))


if __name__ == "__main__":
    main()
