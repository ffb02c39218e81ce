"""Many threads that exist, few that run: N threads blocked on an Event (the shape of a server's
idle pool) and BUSY threads that compute. For the issue #30 goal "cost follows the threads that
ran, not the threads that exist".

usage: many_idle.py [N] [BUSY] [SECONDS]
"""
import sys
import threading
import time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
BUSY = int(sys.argv[2]) if len(sys.argv) > 2 else 2
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 3600.0
threading.stack_size(256 * 1024)
done = threading.Event()


def busy():
    x = 0
    while not done.is_set():
        for i in range(5000):
            x = (x + i * i) % 1000003


for i in range(N):
    threading.Thread(target=done.wait, name=f"idle-{i}", daemon=True).start()
for i in range(BUSY):
    threading.Thread(target=busy, name=f"busy-{i}", daemon=True).start()
print(f"many_idle.py: {N} idle, {BUSY} busy", flush=True)
time.sleep(SECONDS)
done.set()
