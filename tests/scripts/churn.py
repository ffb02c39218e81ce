"""Starts and ends many short threads, a few at a time, and logs each one's own facts.

CPython hands a new thread the ident (and often the stack memory) of one that just ended, so a
profiler that keys threads by ident, or caches names by ident, gives later threads earlier names.
Each thread logs its name, class and native id; the main thread logs the wall-clock time just
before starting it and just after joining it, which bounds its life. A recording can be checked
against this truth.

usage: churn.py LOG [THREADS] [AT_ONCE]
"""
import json
import sys
import threading
import time

LOG = sys.argv[1]
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 600
AT_ONCE = int(sys.argv[3]) if len(sys.argv) > 3 else 6
facts = {}
life = {}
facts_lock = threading.Lock()


def work(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x = (x * 31 + 7) % 1000003
    return x


def log(thread, type_name):
    with facts_lock:
        facts[thread.name] = {"name": thread.name, "type": type_name, "tid": threading.get_native_id(), "ident": threading.get_ident()}


class Alpha(threading.Thread):
    def run(self):
        work(0.004)
        time.sleep(0.004)
        log(self, "Alpha")


class Beta(threading.Thread):
    def run(self):
        time.sleep(0.003)
        work(0.005)
        log(self, "Beta")


started = 0
while started < THREADS:
    wave = []
    for _ in range(min(AT_ONCE, THREADS - started)):
        cls = Alpha if started % 2 == 0 else Beta
        wave.append(cls(name=f"w{started}"))
        started += 1
    for t in wave:
        life[t.name] = [time.time(), None]
        t.start()
    for t in wave:
        t.join()
        life[t.name][1] = time.time()
    # A gap between waves: a thread given an earlier thread's name is then seen outside that
    # thread's lifetime.
    time.sleep(0.004)

with open(LOG, "w") as f:
    json.dump([dict(facts[n], start=life[n][0], end=life[n][1]) for n in facts], f)
print(f"churn.py done: {len(facts)} threads", flush=True)
