"""The main thread joins its workers one after the other at one line (`for t in workers:
t.join()`), each a different `threading.Thread` it sleeps on: the ground truth that a wait's object
is read again when the thread waits at the same line on another object
(tests/record_wait_objects.rs). Worker i sleeps, then ends STEP_S after worker i-1 (a little off the sampler's
2 ms clock, so that no sample sees the main thread between two joins); the main thread
logs, for each join, the joined thread's name, `id()` (its address) and when the join began and
returned, and prints them as one JSON line at the end.

Run: python3 join_loop.py [WORKERS]
"""

import json
import sys
import threading
import time

WORKERS = int(sys.argv[1]) if len(sys.argv) > 1 else 4
STEP_S = 0.1  # shorter than the recorder's re-read of an unchanged wait (200 ms)
OFF_GRID_S = 0.0013


def work(i):
    time.sleep(STEP_S * (i + 1))
    # End off the sampler's clock: a sleep ends on a timer tick, often the sampler's own, which
    # would see the main thread between two joins; this spin moves the end between two samples.
    end = time.perf_counter() + OFF_GRID_S
    while time.perf_counter() < end:
        pass


def main():
    workers = [threading.Thread(target=work, args=(i,), name=f"worker-{i}") for i in range(WORKERS)]
    for t in workers:
        t.start()
    joins = []
    for t in workers:
        began = time.time()
        t.join()
        joins.append({"name": t.name, "addr": id(t), "began": began, "returned": time.time()})
    print(json.dumps({"joins": joins}))


if __name__ == "__main__":
    main()
