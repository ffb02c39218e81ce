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


def lock_entry_points():
    """Where the lock functions the recorder probes begin, as far as ctypes reaches them: the
    exported PyThread_acquire_lock_timed and PyThread_release_lock (probed by name), and the C
    functions of `_thread.lock.acquire` and `.release` (probed by method: a bound builtin method is
    a PyCFunctionObject, whose m_ml follows the object header; ml_meth follows ml_name)."""
    import ctypes
    import sysconfig

    found = []
    for name in ("PyThread_acquire_lock_timed", "PyThread_release_lock"):
        try:
            found.append(ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)
        except AttributeError:
            pass
    header = 32 if sysconfig.get_config_var("Py_GIL_DISABLED") else 16
    lock = threading.Lock()
    for method in (lock.acquire, lock.release):
        ml = ctypes.c_void_p.from_address(id(method) + header).value
        if ml:
            found.append(ctypes.c_void_p.from_address(ml + ctypes.sizeof(ctypes.c_void_p)).value)
    # Only addresses inside this process's executable mappings are read (a layout other than the
    # one assumed above gives none, and the threads then start when `limit_s` runs out).
    code = []
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split()
            if "x" in parts[1]:
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                code.append((lo, hi))
    return [a for a in found if a and any(lo <= a < hi for lo, hi in code)]


def wait_for_probes(limit_s=20.0):
    """Waits until the recorder's uprobes are in place: a probed function's first byte becomes the
    breakpoint (int3, 0xcc) in this process's memory. The recorder puts them there after it has
    found the interpreter, a second or more on a loaded machine, and hand-offs before that are not
    judged (tests/exact_locks.rs). Gives up after `limit_s` (then the test sees too few)."""
    import ctypes

    points = lock_entry_points()
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if any(ctypes.string_at(a, 1) == b"\xcc" for a in points):
            time.sleep(0.05)  # the other probes are opened in the same moment
            return
        time.sleep(0.005)


wait_for_probes()
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
