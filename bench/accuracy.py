"""Per-thread accuracy of a profile against the workload's own CPU times.

    python3 accuracy.py threadradar RUN.json TRUTH.json
    python3 accuracy.py pyspy SPEEDSCOPE.json TRUTH.json

For each worker thread of bench/workload.py (matched by OS thread id), compares its share of computing
samples among the workers with its share of the workers' summed `time.thread_time()`. Prints JSON:
{"mae_pp": mean absolute error in percentage points, "threads": {name: [sample_share, cpu_share]}}.

ThreadRadar: samples whose state is computing (flags & 3 == 0). py-spy: the speedscope export
(with --threads) has one profile per thread, whose samples are the thread's non-idle samples.
"""
import json
import re
import sys


def load_run(path):
    """A ThreadRadar run file of either version: one JSON document (v1), or JSON lines (v2): a
    header line, then chunks whose tables are appended and whose thread_updates replace threads."""
    with open(path) as f:
        first = f.readline()
        head = json.loads(first) if first.strip() else {}
        if set(head) != {"format", "version"}:
            return json.loads(first + f.read())
        run = {"threads": [], "samples": [], "meta": {}}
        for line in f:
            if not line.strip():
                continue
            try:
                c = json.loads(line)
            except json.JSONDecodeError:
                break  # a last line cut off by a killed recorder
            run["meta"] = c.get("meta", run["meta"])
            run["threads"] += c.get("threads", [])
            for i, t in c.get("thread_updates", []):
                run["threads"][i] = t
            run["samples"] += c.get("samples", [])
        return run


def threadradar_counts(path):
    """Computing samples per OS thread id."""
    run = load_run(path)
    tids = [t["tid"] for t in run["threads"]]
    counts = {}
    for s in run["samples"]:
        for th in s["threads"]:
            if th[2] & 3 == 0:
                counts[tids[th[0]]] = counts.get(tids[th[0]], 0) + 1
    return counts


def pyspy_counts(path):
    """Samples per OS thread id; py-spy (with --threads) names each profile 'Thread <tid> "<name>"'."""
    doc = json.load(open(path))
    counts = {}
    for p in doc["profiles"]:
        m = re.match(r"Thread (\d+)", p.get("name", ""))
        if m:
            tid = int(m.group(1))
            counts[tid] = counts.get(tid, 0) + len(p["samples"])
    return counts


def evaluate(kind, prof, truth_path):
    counts = threadradar_counts(prof) if kind == "threadradar" else pyspy_counts(prof)
    truth = json.load(open(truth_path))
    cpu, tids = truth["threads"], truth["tids"]
    workers = sorted(cpu)
    total_c = sum(counts.get(tids[w], 0) for w in workers) or 1
    total_t = sum(cpu.values())
    rows = {w: [100 * counts.get(tids[w], 0) / total_c, 100 * cpu[w] / total_t] for w in workers}
    mae = sum(abs(a - b) for a, b in rows.values()) / len(rows)
    return {"mae_pp": round(mae, 3), "threads": {k: [round(a, 2), round(b, 2)] for k, (a, b) in rows.items()}}


def main():
    print(json.dumps(evaluate(*sys.argv[1:4])))


if __name__ == "__main__":
    main()
