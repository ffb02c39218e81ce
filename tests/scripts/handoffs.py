"""Threads that hand off to each other at known times and log every hand-off: the ground truth of
`threadradar waits` (tests/waits.rs).

Five kinds of hand-off, each between its own pair of threads: a Lock (used as a binary semaphore),
a Condition, an Event, a queue.Queue and a pipe. A releaser thread computes for a few milliseconds
inside the hand-off object's `release` (so a sampler can see who is about to release), logs
`time.time()`, its own name, the waiter's name and the object, then releases; the waiter blocks in
`wait` until then, computes a little and waits again. Hand-offs are spaced HANDOFF_GAP_S apart, one
at a time, so that sampling can tell them apart. At the end the log is printed as one JSON line.

Run: python3 handoffs.py [ROUNDS]
"""

import json
import os
import queue
import sys
import threading
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 6
HANDOFF_GAP_S = 0.04
BUSY_S = 0.008  # the releaser computes this long before each release
WAITER_BUSY_S = 0.012  # and the woken waiter this long: both long enough to be sampled

log = []
log_lock = threading.Lock()


def spin(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def record(kind, waiter):
    with log_lock:
        log.append({"time": time.time(), "releaser": threading.current_thread().name, "waiter": waiter, "object": kind})


class LockHandoff:
    kind = "lock"

    def __init__(self):
        self.lock = threading.Lock()
        self.lock.acquire()  # held: the waiter blocks until the releaser releases it

    def wait(self):
        self.lock.acquire()

    def release(self, waiter):
        spin(BUSY_S)
        record(self.kind, waiter)
        self.lock.release()


class ConditionHandoff:
    kind = "condition"

    def __init__(self):
        self.cond = threading.Condition()
        self.ready = False

    def wait(self):
        with self.cond:
            while not self.ready:
                self.cond.wait()
            self.ready = False

    def release(self, waiter):
        spin(BUSY_S)
        with self.cond:
            self.ready = True
            record(self.kind, waiter)
            self.cond.notify()


class EventHandoff:
    kind = "event"

    def __init__(self):
        self.event = threading.Event()

    def wait(self):
        self.event.wait()
        self.event.clear()

    def release(self, waiter):
        spin(BUSY_S)
        record(self.kind, waiter)
        self.event.set()


class QueueHandoff:
    kind = "queue"

    def __init__(self):
        self.q = queue.Queue()

    def wait(self):
        self.q.get()

    def release(self, waiter):
        spin(BUSY_S)
        record(self.kind, waiter)
        self.q.put(1)


class PipeHandoff:
    kind = "pipe"

    def __init__(self):
        self.r, self.w = os.pipe()

    def wait(self):
        os.read(self.r, 1)

    def release(self, waiter):
        spin(BUSY_S)
        record(self.kind, waiter)
        os.write(self.w, b"x")


HANDOFFS = [LockHandoff(), ConditionHandoff(), EventHandoff(), QueueHandoff(), PipeHandoff()]
for _h in HANDOFFS:
    _h.consumed = 0  # hand-offs the waiter has taken


def waiter(h):
    for _ in range(ROUNDS):
        h.wait()
        h.consumed += 1
        spin(WAITER_BUSY_S)


def releaser(h, index, t0):
    for r in range(ROUNDS):
        at = t0 + (r * len(HANDOFFS) + index) * HANDOFF_GAP_S
        # Never hand off twice before the waiter took the previous one (on a loaded machine the
        # waiter may be late): a lock released twice raises, an event set twice is seen once.
        time.sleep(max(0.0, at - time.time()))
        while h.consumed < r:
            time.sleep(0.001)
        h.release(f"waiter-{h.kind}")


def main():
    t0 = time.time() + 0.2  # every thread is waiting by then
    threads = []
    for i, h in enumerate(HANDOFFS):
        threads.append(threading.Thread(target=waiter, args=(h,), name=f"waiter-{h.kind}"))
        threads.append(threading.Thread(target=releaser, args=(h, i, t0), name=f"releaser-{h.kind}"))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(log))


if __name__ == "__main__":
    main()
