"""Threads whose names the waits view must keep apart and show as text (issue 32).

Eight pool threads named like `concurrent.futures`' own with a long common prefix
(`ThreadPoolExecutor-LongServiceName-0_0` … `_7`: only the end tells them apart) and one named
`<script>alert(1)</script>` take items from one `queue.Queue` that a producer fills; each also
waits on a `Future` of its own (many `Future`s, one site), so the objects table has one row for
them. Prints one JSON line: the thread names.
"""
import json
import queue
import sys
import threading
import time
from concurrent.futures import Future

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 40
HOSTILE = "<script>alert(1)</script>"
names = [f"ThreadPoolExecutor-LongServiceName-0_{i}" for i in range(8)] + [HOSTILE]
jobs: "queue.Queue[Future | None]" = queue.Queue()


def worker() -> None:
    while True:
        fut = jobs.get()
        if fut is None:
            return
        fut.result()  # waits for the producer to complete it


def producer() -> None:
    for _ in range(ROUNDS):
        futs = [Future() for _ in names]
        for f in futs:
            jobs.put(f)
        time.sleep(0.004)
        for f in futs:
            f.set_result(1)
            time.sleep(0.0005)
    for _ in names:
        jobs.put(None)


threads = [threading.Thread(target=worker, name=n) for n in names]
for t in threads:
    t.start()
p = threading.Thread(target=producer, name="producer")
p.start()
p.join()
for t in threads:
    t.join()
print(json.dumps(names + ["producer"]))
