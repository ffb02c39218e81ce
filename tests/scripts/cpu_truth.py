"""Two CPU-heavy threads and six light ones that compute in short bursts between sleeps and waits
on a shared lock; every thread measures its own CPU time and the program logs it.

Each thread records `time.thread_time()` and its native id when it ends; the main thread only
starts and joins them. The profile's per-thread CPU shares can be checked against this truth.

usage: cpu_truth.py LOG [SECONDS]
"""
import json
import sys
import threading
import time

LOG = sys.argv[1]
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
lock = threading.Lock()
facts = {}
gate = threading.Barrier(8)


def spin(n):
    x = 0
    for i in range(n):
        x = (x + i * i) % 1000003
    return x


def done(name):
    facts[name] = {"tid": threading.get_native_id(), "cpu_s": time.thread_time()}


class Heavy(threading.Thread):
    def run(self):
        gate.wait()
        end = time.monotonic() + SECONDS
        while time.monotonic() < end:
            spin(5000)
        done(self.name)


class Light(threading.Thread):
    """Bursts of `burst` iterations, a sleep of `nap` seconds, and every third round a wait for
    the shared lock held by a sibling for a moment."""

    def __init__(self, name, burst, nap):
        super().__init__(name=name)
        self.burst, self.nap = burst, nap

    def run(self):
        gate.wait()
        end = time.monotonic() + SECONDS
        rounds = 0
        while time.monotonic() < end:
            spin(self.burst)
            time.sleep(self.nap)
            rounds += 1
            if rounds % 3 == 0:
                with lock:
                    spin(self.burst // 4)
                    time.sleep(0.002)
        done(self.name)


threads = [Heavy(name="heavy-0"), Heavy(name="heavy-1")]
threads += [Light(f"light-{i}", burst=15000 * (i + 1), nap=0.004 + 0.002 * i) for i in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
with open(LOG, "w") as f:
    json.dump(facts, f)
print(f"cpu_truth.py done: {len(facts)} threads", flush=True)
