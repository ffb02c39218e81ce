"""A lock taken and released N times in a tight loop by one thread (about 3 lock events per turn),
after 0.5 s for the recorder to put its probes in place; prints the loop's seconds.

usage: lock_churn.py N
"""
import sys
import threading
import time

N = int(sys.argv[1])
time.sleep(0.5)
lock = threading.Lock()
t0 = time.perf_counter()
for _ in range(N):
    lock.acquire()
    lock.release()
print(f"{time.perf_counter() - t0:.3f}")
