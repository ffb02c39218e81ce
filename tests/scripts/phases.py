"""Threads that log their own phases, so the timeline can be checked against the truth.

A `Phaser` thread computes for 0.5 s, sleeps for 0.5 s and computes again for 0.5 s; a `Waiter`
thread waits on a condition until the phaser notifies it after its first phase. Each phase's
start and end (wall clock, `time.time()`) are printed as one JSON line at the end.
"""

import json
import threading
import time

events = []
cond = threading.Condition()
released = False


def spin(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def compute_phase():
    spin(0.5)


def sleep_phase():
    time.sleep(0.5)


def log(thread, phase, fn):
    t0 = time.time()
    fn()
    events.append({"thread": thread, "phase": phase, "start": t0, "end": time.time()})


def wait_phase():
    with cond:
        while not released:
            cond.wait()


def phaser():
    global released
    log("phaser", "compute_phase", compute_phase)
    with cond:
        released = True
        cond.notify_all()
    log("phaser", "sleep_phase", sleep_phase)
    log("phaser", "compute_phase", compute_phase)


def waiter():
    log("waiter", "wait_phase", wait_phase)


threads = [threading.Thread(target=waiter, name="waiter"), threading.Thread(target=phaser, name="phaser")]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(json.dumps(events))
