"""Two CPU-bound threads that start together and each spin for CPU_SECONDS of their own CPU time.

Prints one JSON line: each thread's name, native id and CPU time as it measured it
(`time.thread_time()`), and whether the interpreter ran with a GIL; the tests compare the
recording with it.

usage: spinners.py [CPU_SECONDS] [SETTLE_SECONDS]

SETTLE_SECONDS (default 0) is slept by each thread, in `settle()`, before it spins: a profiler
that attaches late (a loaded machine) then still sees each thread before its CPU time begins.
"""
import json
import sys
import threading
import time

CPU_SECONDS = float(sys.argv[1]) if len(sys.argv) > 1 else 1.5
SETTLE_SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
gate = threading.Barrier(2)
report = {}


def settle():
    time.sleep(SETTLE_SECONDS)


class Spinner(threading.Thread):
    def run(self):
        gate.wait()
        settle()
        start = time.thread_time()
        x = 0
        while time.thread_time() - start < CPU_SECONDS:
            for i in range(2000):
                x = (x + i * i) % 1000003
        report[self.name] = {"native_id": threading.get_native_id(), "cpu_s": time.thread_time()}


threads = [Spinner(name=f"spinner-{i}") for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
gil = sys._is_gil_enabled() if hasattr(sys, "_is_gil_enabled") else True
print(json.dumps({"threads": report, "gil": gil}), flush=True)
