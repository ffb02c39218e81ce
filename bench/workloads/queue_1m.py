"""queue.Queue: N `put`s by one thread and N `get`s by another (2 N operations; N = 500 000 by
default), after 0.5 s for the recorder to put its probes in place; prints the loop's seconds.
The program docs/benchmarks.md times with and without `record --exact-locks`.

usage: queue_1m.py [N]
"""
import queue
import sys
import threading
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 500_000
time.sleep(0.5)
q = queue.Queue()


def produce():
    for i in range(N):
        q.put(i)


t0 = time.perf_counter()
p = threading.Thread(target=produce)
p.start()
for _ in range(N):
    q.get()
p.join()
print(f"{time.perf_counter() - t0:.3f}")
