"""The readers' benchmark workload: nine threads, as the CPython 3.14/3.15 issue measured them.

Two threads compute, four sleep in short naps, two wait on a Condition that is notified now and
then, and the main thread joins them all. Runs for the seconds given (default 8).
"""
import sys
import threading
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 8.0
end = time.time() + seconds
cond = threading.Condition()


def compute():
    x = 0
    while time.time() < end:
        for i in range(2000):
            x = (x + i * i) % 1000003


def nap():
    while time.time() < end:
        time.sleep(0.005)


def wait():
    while time.time() < end:
        with cond:
            cond.wait(0.05)


def notify():
    while time.time() < end:
        time.sleep(0.02)
        with cond:
            cond.notify_all()


threads = [threading.Thread(target=f, name=f"{f.__name__}-{i}") for i, f in enumerate([compute, compute, nap, nap, nap, notify, wait, wait])]
for t in threads:
    t.start()
for t in threads:
    t.join()
