"""Ground truth for exact lock hand-offs in the waits view: a producer hands items to two
consumers through a threading.Condition (KIND=condition) or a queue.Queue (KIND=queue), one every
INTERVAL seconds, so that each consumer waits long enough for samples to see it. Every hand-off is
logged by the consumer that got the item, on the clock of the lock events
(time.monotonic_ns = CLOCK_MONOTONIC).

usage: notify_truth.py LOG [KIND] [ITEMS] [INTERVAL]

LOG gets one JSON object per line and hand-off (ITEMS of them, and one per consumer for the
None that stops it):
{"waker": "producer", "wakee": consumer's thread name, "called_ns": before wait()/get(),
 "returned_ns": after it returned with the item, "woken": the consumer actually blocked in
 Condition.wait (for the queue: its get() called not_empty.wait(), seen by a wrapper)}
"""
import json
import queue
import sys
import threading
import time

LOG = sys.argv[1]
KIND = sys.argv[2] if len(sys.argv) > 2 else "condition"
ITEMS = int(sys.argv[3]) if len(sys.argv) > 3 else 200
INTERVAL = float(sys.argv[4]) if len(sys.argv) > 4 else 0.012
CONSUMERS = 2

cond = threading.Condition()
items = []
q = queue.Queue()
log = []
log_lock = threading.Lock()


def consume_condition(name):
    while True:
        with cond:
            called = time.monotonic_ns()
            woken = False
            while not items:
                woken = True
                cond.wait()
            returned = time.monotonic_ns()
            item = items.pop(0)
        with log_lock:
            log.append({"waker": "producer", "wakee": name, "called_ns": called, "returned_ns": returned, "woken": woken})
        if item is None:
            return


# Whether this thread's q.get() blocked: Queue.get calls self.not_empty.wait() only when the queue
# is empty, and the instance attribute shadows Condition.wait.
blocked = threading.local()
_wait = q.not_empty.wait


def logged_wait(timeout=None):
    blocked.yes = True
    return _wait(timeout)


q.not_empty.wait = logged_wait


def consume_queue(name):
    while True:
        called = time.monotonic_ns()
        blocked.yes = False
        item = q.get()
        returned = time.monotonic_ns()
        woken = blocked.yes
        with log_lock:
            log.append({"waker": "producer", "wakee": name, "called_ns": called, "returned_ns": returned, "woken": woken})
        if item is None:
            return


def produce():
    for i in range(ITEMS + CONSUMERS):
        time.sleep(INTERVAL)
        item = i if i < ITEMS else None
        if KIND == "condition":
            with cond:
                items.append(item)
                cond.notify()
        else:
            q.put(item)


# The recorder puts its probes in place after it has found the interpreter, which can take a
# second or more on a loaded machine; hand-offs before that are not judged (tests/exact_locks.rs),
# and a late start left fewer than 150 of the 202 once under load: the threads start after 2 s.
time.sleep(2.0)
target = consume_condition if KIND == "condition" else consume_queue
threads = [threading.Thread(target=target, args=(f"consumer-{k}",), name=f"consumer-{k}") for k in range(1, CONSUMERS + 1)]
threads.append(threading.Thread(target=produce, name="producer"))
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(LOG, "w") as f:
    for entry in log:
        f.write(json.dumps(entry) + "\n")
