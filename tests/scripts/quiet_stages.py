"""Many threads that sleep long and then move on: N workers wait on one Event, are released
together, and wait on a second Event at another line. For the recorder's quiet threads (a
thread the scheduler did not run is not read again, and from 64 threads on its last sample is
repeated): after the release every worker must be seen at its new line, never at the old one.

Prints one JSON line: {"ready": <when every worker had reached the first wait>, "released": <time.time() when the first Event was set>,
"settled": <when every worker had reached the second wait>, "second": <when the second was set>}.

usage: quiet_stages.py [N] [SECONDS_PER_STAGE]
"""
import json
import sys
import threading
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 80
STAGE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
threading.stack_size(256 * 1024)
first = threading.Event()
second = threading.Event()
arrived = threading.Semaphore(0)


def stage_one():
    arrived.release()
    first.wait()


def stage_two():
    arrived.release()
    second.wait()


def worker():
    stage_one()
    stage_two()


threads = [threading.Thread(target=worker, name=f"quiet-{i}") for i in range(N)]
for t in threads:
    t.start()
for _ in range(N):
    arrived.acquire()
ready = time.time()
time.sleep(STAGE)
released = time.time()
first.set()
for _ in range(N):
    arrived.acquire()
settled = time.time()
time.sleep(STAGE)
second_at = time.time()
second.set()
for t in threads:
    t.join()
print(json.dumps({"ready": ready, "released": released, "settled": settled, "second": second_at}), flush=True)
