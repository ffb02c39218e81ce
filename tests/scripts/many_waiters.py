"""Many threads that begin to wait together: N `Waiter` threads (a Thread subclass) wait on one
Event, `gate`, until it is set. For the recorder's start-up with many threads (issue #30): a
waiting thread's sample stands unread while its wait object and type are still to be read, a
few threads per walk; every one must end up with the gate as its wait's object — in the samples
taken before the object was read too — and `Waiter` as its type.

Prints one JSON line: {"gate": id(gate), "ready": <time.time() when every waiter had reached its
wait>, "released": <time.time() when the gate was set>}.

usage: many_waiters.py [N] [SECONDS]
"""
import json
import sys
import threading
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 400
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
threading.stack_size(256 * 1024)
gate = threading.Event()
arrived = threading.Semaphore(0)


class Waiter(threading.Thread):
    def run(self):
        arrived.release()
        gate.wait()


waiters = [Waiter(name=f"waiter-{i}") for i in range(N)]
for w in waiters:
    w.start()
for _ in waiters:
    arrived.acquire()
time.sleep(0.05)  # the last ones from `release` into `wait`
ready = time.time()
time.sleep(SECONDS)
released = time.time()
gate.set()
for w in waiters:
    w.join()
print(json.dumps({"gate": id(gate), "ready": ready, "released": released}), flush=True)
