"""Threads that block on one thing each, for `threadradar record`'s wait reading.

Usage: waits.py LOG HOLD_SECONDS

Each waiter blocks for about HOLD_SECONDS on its own object: a queue.Queue (`q.get()`), a
Condition (`cond.wait()`), a Condition kept by a class (`self.not_empty`), a Lock held by the main
thread (`with lock:`), an Event (`ev.wait()`) and a pipe (`os.read`). Then the main thread releases
them one by one. A daemon thread waits on an Event that is never set, so the process exits while it
waits. LOG gets one JSON line per fact, with the program's own clock (`time.time()`) and native
thread ids: what the recording is checked against.
"""

import json
import os
import queue
import sys
import threading
import time

log_path, hold = sys.argv[1], float(sys.argv[2])
log_lock = threading.Lock()


def log(**fact):
    fact["time"] = time.time()
    with log_lock:
        with open(log_path, "a") as f:
            f.write(json.dumps(fact) + "\n")


class BoundedBuffer:
    def __init__(self):
        self.items = []
        self.not_empty = threading.Condition()

    def take(self):
        with self.not_empty:
            while not self.items:
                self.not_empty.wait()
            return self.items.pop()

    def add(self, item):
        with self.not_empty:
            self.items.append(item)
            self.not_empty.notify()


q = queue.Queue()
cond = threading.Condition()
cond_ready = []
buf = BoundedBuffer()
lock = threading.Lock()
ev = threading.Event()
never = threading.Event()
r, w = os.pipe()


def started(name):
    log(fact="thread", name=name, tid=threading.get_native_id())


def q_waiter():
    started("q_waiter")
    item = q.get()
    log(fact="woke", name="q_waiter", item=item)


def cond_waiter():
    started("cond_waiter")
    with cond:
        while not cond_ready:
            cond.wait()


def buf_waiter():
    started("buf_waiter")
    buf.take()


def lock_waiter(lock):
    started("lock_waiter")
    with lock:
        pass


def ev_waiter():
    started("ev_waiter")
    ev.wait()


def pipe_reader():
    started("pipe_reader")
    os.read(r, 1)


def stuck():
    started("stuck")
    never.wait()


log(fact="pipe", inode=os.fstat(r).st_ino, fd=r)
log(fact="thread", name="MainThread", tid=threading.get_native_id())
lock.acquire()
threads = [
    threading.Thread(target=q_waiter, name="q_waiter"),
    threading.Thread(target=cond_waiter, name="cond_waiter"),
    threading.Thread(target=buf_waiter, name="buf_waiter"),
    threading.Thread(target=lock_waiter, args=(lock,), name="lock_waiter"),
    threading.Thread(target=ev_waiter, name="ev_waiter"),
    threading.Thread(target=pipe_reader, name="pipe_reader"),
]
for t in threads:
    t.start()
threading.Thread(target=stuck, name="stuck", daemon=True).start()
time.sleep(hold)
# The hand-offs, each logged just before it happens.
log(fact="put", name="q_waiter")
q.put(1)
time.sleep(0.05)
with cond:
    cond_ready.append(1)
    cond.notify()
buf.add(1)
lock.release()
ev.set()
os.write(w, b"x")
for t in threads:
    t.join()
log(fact="done")
print("waits.py done", flush=True)
