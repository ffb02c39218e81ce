"""Ground truth for critical sections: several threads take turns at one lock; the section
usually holds it for about 1 ms and every 50th time for about 40 ms. Every execution is logged
from inside the section, as the profiler should find it.

usage: sections_truth.py LOG [THREADS] [ROUNDS] [FAST_S]

LOG gets one JSON object per line and execution:
{"thread": name, "start": time.time() on entering, "duration": seconds held, "slow": bool,
 "wait": seconds from just before `with` to entering (the wait to acquire)}
"""
import json
import sys
import threading
import time

LOG = sys.argv[1]
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 4
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 100
FAST_S = float(sys.argv[4]) if len(sys.argv) > 4 else 0.001
SLOW_S = 0.040
EVERY = 50


def hold(seconds):
    """Keep the lock for `seconds`, as a section waiting for I/O would: the thread sleeps, so the
    GIL is free and the others' turns do not stretch this one (the logged durations stay true)."""
    time.sleep(seconds)


class Store:
    def __init__(self):
        self._lock = threading.Lock()
        self.count = 0
        self.log = []

    def update(self):
        called = time.time()
        with self._lock:
            start, t0 = time.time(), time.perf_counter()
            self.count += 1
            slow = self.count % EVERY == 0
            hold(SLOW_S if slow else FAST_S)
            held = time.perf_counter() - t0
            self.log.append({"thread": threading.current_thread().name, "start": start, "duration": held, "slow": slow, "wait": start - called})


def worker(store, rounds):
    for _ in range(rounds):
        store.update()
        time.sleep(0.010)  # outside the section long enough to be sampled: executions stay apart


def main():
    store = Store()
    threads = [threading.Thread(target=worker, args=(store, ROUNDS), name=f"worker-{i}") for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with open(LOG, "w") as f:
        for entry in store.log:
            f.write(json.dumps(entry) + "\n")


if __name__ == "__main__":
    main()
