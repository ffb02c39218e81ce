"""A `multiprocessing.Lock` handed between two processes, each hand-off logged: the ground truth of
what `threadradar waits` may say about a futex shared across processes
(tests/record_wait_objects.rs).

The parent forks one child; each runs `locker(lock, …)` in a thread of its own, named
`parent-locker` and `child-locker`: ROUNDS times, take the lock (`with lock:`), hold it HOLD_S,
let it go, rest REST_S. While one holds it the other sleeps on the lock's futex, in shared memory.
Inside the lock each new holder logs who had it before, when that one let it go (`time.time()`
just before its release, kept in shared memory), when it got it (`took`: the release lies between
the two) and whether it had asked before that release (it slept on the lock: a hand-off). Each
hand-off is printed as one JSON line `{"handoff": …}` as it happens; the parent prints
`{"pids": {"parent": n, "child": n}}` at the end.

Run: python3 mp_lock.py [ROUNDS]
"""

import json
import multiprocessing
import os
import sys
import threading
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
HOLD_S = 0.015
REST_S = 0.004


def locker(lock, shared, me, name, rounds):
    for _ in range(rounds):
        asked = time.time()
        with lock:
            took = time.time()
            prev, released = int(shared[0]), shared[1]
            if prev not in (0, me):
                handoff = {
                    "releaser": "parent-locker" if prev == 1 else "child-locker",
                    "waiter": name,
                    "time": released,
                    "took": took,
                    "slept": asked < released,
                    "pid": os.getpid(),
                }
                print(json.dumps({"handoff": handoff}), flush=True)
            shared[0] = me
            time.sleep(HOLD_S)
            shared[1] = time.time()
        time.sleep(REST_S)


def in_thread(lock, shared, me, name, rounds):
    """`locker` in a thread named from its start (a name set later may be read too late)."""
    t = threading.Thread(target=locker, args=(lock, shared, me, name, rounds), name=name)
    t.start()
    t.join()


def main():
    ctx = multiprocessing.get_context("fork")
    lock = ctx.Lock()
    shared = ctx.RawArray("d", 2)  # [who held it last (1 parent, 2 child), when it was let go]
    child = ctx.Process(target=in_thread, args=(lock, shared, 2, "child-locker", ROUNDS), name="child")
    child.start()
    in_thread(lock, shared, 1, "parent-locker", ROUNDS)
    child.join()
    print(json.dumps({"pids": {"parent": os.getpid(), "child": child.pid}}), flush=True)


if __name__ == "__main__":
    main()
