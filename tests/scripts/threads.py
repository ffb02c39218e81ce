"""Named threads with unequal CPU work, a sleeper and a lock waiter; runs about SECONDS seconds.

usage: threads.py [SECONDS] [EXIT_CODE]
"""
import sys
import threading
import time

SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
EXIT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
deadline = time.monotonic() + SECONDS
lock = threading.Lock()
lock.acquire()


def spin(n):
    x = 0
    for i in range(n):
        x = (x + i * i) % 1000003
    return x


class Cruncher(threading.Thread):
    """Does `weight` units of work per round, so 8x and 1x threads compete for the GIL."""

    def __init__(self, weight, name):
        super().__init__(name=name, daemon=True)
        self.weight = weight

    def run(self):
        while time.monotonic() < deadline:
            crunch(self.weight)


def crunch(weight):
    spin(2000 * weight)
    time.sleep(0.0005 * (8 - weight) / 8)


def sleeper():
    while time.monotonic() < deadline:
        time.sleep(0.05)


def waiter():
    lock.acquire(timeout=SECONDS)


threads = [
    Cruncher(8, "heavy"),
    Cruncher(1, "light"),
    threading.Thread(target=sleeper, name="sleepy", daemon=True),
    threading.Thread(target=waiter, name="locked", daemon=True),
]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("threads.py done", flush=True)
sys.exit(EXIT)
