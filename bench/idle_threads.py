"""Benchmark workload shaped like a server: many threads, most of them idle.

N threads: every tenth one computes in short bursts and sleeps, the others wait on a condition
that is notified now and then (so their stacks rarely change), as request handlers in a pool do.
Runs until killed or for SECONDS.

usage: idle_threads.py [THREADS] [SECONDS]
"""
import sys
import threading
import time

THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 100
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 3600.0
cond = threading.Condition()
stop = time.monotonic() + SECONDS


def busy():
    x = 0
    while time.monotonic() < stop:
        for i in range(3000):
            x = (x + i * i) % 1000003
        time.sleep(0.002)


def idle():
    while time.monotonic() < stop:
        with cond:
            cond.wait(timeout=1.0)


threads = [threading.Thread(target=busy if i % 10 == 0 else idle, name=f"{'busy' if i % 10 == 0 else 'idle'}-{i}", daemon=True) for i in range(THREADS)]
for t in threads:
    t.start()
print(f"idle_threads.py: {THREADS} threads", flush=True)
while time.monotonic() < stop:
    time.sleep(0.25)
    with cond:
        cond.notify(2)
