"""Locks the source does not name as locks: one made by a factory function and kept in an
attribute with a plain name, and two kept in a dict. Threads take turns at each; every execution
is logged from inside the section, for the profiler's sections to be checked against.

usage: factory_locks.py LOG [THREADS] [ROUNDS] [HOLD_S]

LOG gets one JSON object per line and execution:
{"thread": name, "section": "pool" | "table", "start": time.time() on entering, "duration": seconds held}
"""
import json
import sys
import threading
import time

LOG = sys.argv[1]
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 4
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 15
HOLD_S = float(sys.argv[4]) if len(sys.argv) > 4 else 0.020

entries = []


def make_guard():
    # Nothing at the `with` below says this is a lock: only the run's recorded waits can.
    return threading.Lock()


GUARDS = {"a": make_guard(), "b": make_guard()}


class Pool:
    def __init__(self):
        self._guard = make_guard()

    def take(self):
        with self._guard:
            start, t0 = time.time(), time.perf_counter()
            time.sleep(HOLD_S)
            entries.append({"thread": threading.current_thread().name, "section": "pool", "start": start, "duration": time.perf_counter() - t0})


def update(name):
    with GUARDS[name]:
        start, t0 = time.time(), time.perf_counter()
        time.sleep(HOLD_S)
        entries.append({"thread": threading.current_thread().name, "section": "table", "start": start, "duration": time.perf_counter() - t0})


def worker(section, rounds):
    # Half the threads take turns at the pool's guard, half at GUARDS["a"]: each lock is
    # contended, so threads are seen waiting at both `with`s.
    for _ in range(2 * rounds):
        section()
        time.sleep(0.005)


def main():
    pool = Pool()
    sections = [pool.take, lambda: update("a")]
    threads = [threading.Thread(target=worker, args=(sections[i % 2], ROUNDS), name=f"worker-{i}") for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(LOG, "w") as f:
        for e in entries:
            f.write(json.dumps(e) + "\n")


if __name__ == "__main__":
    main()
