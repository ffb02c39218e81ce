"""Threads and objects whose names issue #32 found wrong (tests/record_names.rs).

`pool SECONDS`: a concurrent.futures.ThreadPoolExecutor of 8 workers, fed small jobs for SECONDS;
each job reads os.environ (a line whose `.get(` waits on nothing). The workers wait in
`work_queue.get(block=True)` on the executor's C `queue.SimpleQueue`. Prints
{"jobs": n, "workers": [thread names]}.

`raw SECONDS`: three threads started with `_thread.start_new_thread` the way execnet starts its
own (through a pool object's `_perform_spawn`), so `threading` knows nothing of them: a reader
blocked in one `os.read` on a pipe for SECONDS (the main thread writes nothing, then closes the
pipe), and two sleepers. Prints {"threads": [{"tid", "runs", "read_s"?}]}: each thread's native id,
the function it ran, and for the reader how long its single read blocked.
"""

import _thread
import json
import os
import sys
import time


def pool(seconds):
    import concurrent.futures
    import threading

    def handle(i):
        home = os.environ.get("HOME")
        s = 0
        for k in range(2000):
            s += k
        return s, len(home or "")

    jobs = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as ex:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            futures = [ex.submit(handle, i) for i in range(8)]
            for f in futures:
                f.result()
            jobs += len(futures)
            time.sleep(0.0005)
        workers = sorted(t.name for t in threading.enumerate() if t is not threading.main_thread())
    print(json.dumps({"jobs": jobs, "workers": workers}))


class WorkerPool:
    """Like execnet's: runs a function on a thread started with _thread.start_new_thread."""

    def __init__(self):
        self.log = []
        self.lock = _thread.allocate_lock()
        self.left = 0

    def spawn(self, func, *args):
        with self.lock:
            self.left += 1
        _thread.start_new_thread(self._perform_spawn, (func, args))

    def _perform_spawn(self, func, args):
        entry = {"tid": _thread.get_native_id(), "runs": func.__name__}
        entry.update(func(*args) or {})
        with self.lock:
            self.log.append(entry)
            self.left -= 1


def reader(fd):
    t0 = time.monotonic()
    data = os.read(fd, 1)  # blocks until the main thread closes the pipe
    return {"read_s": time.monotonic() - t0, "read_bytes": len(data)}


def sleeper(seconds):
    time.sleep(seconds)


def raw(seconds):
    pool = WorkerPool()
    r, w = os.pipe()
    pool.spawn(reader, r)
    pool.spawn(sleeper, seconds)
    pool.spawn(sleeper, seconds)
    time.sleep(seconds)
    os.close(w)
    while True:
        with pool.lock:
            if pool.left == 0:
                break
        time.sleep(0.01)
    print(json.dumps({"threads": pool.log}))


if __name__ == "__main__":
    {"pool": pool, "raw": raw}[sys.argv[1]](float(sys.argv[2]))
