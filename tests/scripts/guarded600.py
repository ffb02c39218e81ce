"""Ground truth for exact lock events: 600 executions of one `with guard:` section, taken in turn
by a few threads; most hold the lock about 2 ms, every 50th about 40 ms. Each execution is logged
from inside the section on the clock the kernel's events use (time.monotonic_ns = CLOCK_MONOTONIC).

usage: guarded600.py LOG [KIND] [THREADS] [EXECUTIONS]

KIND: lock (threading.Lock, the default), rlock (threading.RLock, entered twice per execution:
only the outer acquire takes the lock), condition (threading.Condition entered with `with`, its
RLock taking the lock; notify_all inside, with nobody waiting).
LOG gets one JSON object per line and execution:
{"tid": native thread id, "start_ns": monotonic ns on entering, "duration_ns": ns held (up to just
before leaving), "called_ns": monotonic ns just before `with`, "slow": bool, "lock_id": id(guard),
the lock object's address (for the RLock and the Condition: the object entered by `with`)}
"""
import json
import sys
import threading
import time

LOG = sys.argv[1]
KIND = sys.argv[2] if len(sys.argv) > 2 else "lock"
THREADS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
EXECUTIONS = int(sys.argv[4]) if len(sys.argv) > 4 else 600
FAST_S, SLOW_S, EVERY = 0.002, 0.040, 50

guard = {"lock": threading.Lock, "rlock": threading.RLock, "condition": threading.Condition}[KIND]()
count = 0
log = []


def section():
    """One execution: the thread sleeps inside (the GIL is free, so the held time stays true)."""
    global count
    called = time.monotonic_ns()
    with guard:
        if KIND == "rlock":
            guard.acquire()  # re-entered: no second lock-taking
        start = time.monotonic_ns()
        count += 1
        slow = count % EVERY == 0
        time.sleep(SLOW_S if slow else FAST_S)
        end = time.monotonic_ns()
        log.append({"tid": threading.get_native_id(), "start_ns": start, "duration_ns": end - start, "called_ns": called, "slow": slow, "lock_id": id(guard)})
        if KIND == "rlock":
            guard.release()
        if KIND == "condition":
            guard.notify_all()
        return count


def worker():
    while True:
        time.sleep(0.0005)  # apart: a thread that just left lets another in
        if section() >= EXECUTIONS:
            return


def main():
    # The recorder puts its probes in place before the first execution: after it has found the
    # interpreter, which took up to 1.7 s in one run on a loaded machine (279 of 600 executions
    # were before the probes), hence 3 s.
    time.sleep(3.0)
    threads = [threading.Thread(target=worker, name=f"worker-{i}") for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(LOG, "w") as f:
        for e in log[:EXECUTIONS]:
            f.write(json.dumps(e) + "\n")


main()
