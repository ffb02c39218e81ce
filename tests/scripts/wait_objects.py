"""Threads that hand off to each other through the objects issue #16 names and log every hand-off:
the ground truth of `threadradar record`'s wait objects and `threadradar waits`' edges
(tests/record_wait_objects.rs).

Six kinds, each between its own threads: a `threading.Semaphore` (`self.sem.acquire()`), a
contended `threading.RLock` (`with self.rlock:` while the releaser holds it), a
`concurrent.futures` future (`fut.result()` on a `ThreadPoolExecutor` task), `Thread.join`
(`worker.join()` on a thread that ends) and two sockets (`conn.recv(1)` on one end of a
`socketpair()`, and of a localhost TCP connection). The waiter blocks first; the releaser computes a few milliseconds (so that a
sampler can see it), logs `time.time()`, its own name, the waiter's name and the kind, then
releases; the waiter notes when it is back (`woke`: the release happened between the two, which a
loaded machine can set milliseconds apart — the releaser waiting for the GIL between its log and
its release). Hand-offs are HANDOFF_GAP_S apart, one at a time. At the end the program prints one
JSON line: `{"handoffs": [...], "sockets": {KIND: {"inode": n, "fd": n}}}` (the waiters' ends of the
sockets).

Run: python3 wait_objects.py [ROUNDS] [KIND…]   (every kind when none is given)
"""

import concurrent.futures
import json
import os
import socket
import sys
import threading
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
KINDS = sys.argv[2:] or ["semaphore", "rlock", "future", "join", "socket", "tcp"]
HANDOFF_GAP_S = 0.04
BUSY_S = 0.006  # the releaser computes this long before each release
WAITER_BUSY_S = 0.012  # and the woken waiter this long: seen leaving its wait between two

log = []
log_lock = threading.Lock()


def spin(seconds):
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def record(kind, waiter, r):
    """Logged by the releaser just before it releases (round `r`)."""
    with log_lock:
        log.append({"time": time.time(), "releaser": threading.current_thread().name, "waiter": waiter, "object": kind, "round": r})


class SemaphoreHandoff:
    kind = "semaphore"

    def __init__(self):
        self.sem = threading.Semaphore(0)

    def wait(self, r):
        self.sem.acquire()

    def release(self, r):
        spin(BUSY_S)
        record(self.kind, "waiter-semaphore", r)
        self.sem.release()


class RLockHandoff:
    """The releaser takes the RLock (twice: it is re-entrant) before the waiter asks for it and
    lets it go at the hand-off; the waiter blocks in C on the contended lock."""

    kind = "rlock"

    def __init__(self):
        self.rlock = threading.RLock()
        self.held = [threading.Event() for _ in range(ROUNDS)]

    def wait(self, r):
        self.held[r].wait()  # the releaser has it: this acquire will block
        with self.rlock:
            pass

    def prepare(self, r):
        self.rlock.acquire()
        self.rlock.acquire()
        self.held[r].set()

    def release(self, r):
        spin(BUSY_S)
        self.rlock.release()
        record(self.kind, "waiter-rlock", r)
        self.rlock.release()  # the outer release lets the waiter in


class FutureHandoff:
    """The waiter submits a task and blocks on its result; the pool's worker is the releaser (it
    sets the result when the task returns)."""

    kind = "future"

    def __init__(self):
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pool-future")
        self.go = [threading.Event() for _ in range(ROUNDS)]

    def task(self, r):
        self.go[r].wait()
        spin(BUSY_S)
        record(self.kind, "waiter-future", r)
        return r  # the worker sets the result right after

    def wait(self, r):
        fut = self.pool.submit(self.task, r)
        return fut.result()

    def release(self, r):
        self.go[r].set()


class JoinHandoff:
    """The waiter starts a thread and joins it; the joined thread is the releaser (its end
    releases the join)."""

    kind = "join"

    def __init__(self):
        self.go = [threading.Event() for _ in range(ROUNDS)]

    def body(self, r):
        self.go[r].wait()
        spin(BUSY_S)
        record(self.kind, "waiter-join", r)  # the thread ends right after

    def wait(self, r):
        worker = threading.Thread(target=self.body, args=(r,), name=f"joined-{r}")
        worker.start()
        worker.join()

    def release(self, r):
        self.go[r].set()


class SocketHandoff:
    """A connected pair of Unix sockets (`socket.socketpair()`): the sender's `send` wakes the
    reader from its own thread."""

    kind = "socket"

    def __init__(self):
        self.conn, self.sender = socket.socketpair()

    def wait(self, r):
        self.conn.recv(1)

    def release(self, r):
        spin(BUSY_S)
        record(self.kind, f"waiter-{self.kind}", r)
        self.sender.send(b"x")


class TcpHandoff(SocketHandoff):
    """A localhost TCP connection: the kernel delivers the byte to the reader from a software
    interrupt, which names no thread."""

    kind = "tcp"

    def __init__(self):
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        self.sender = socket.create_connection(server.getsockname())
        self.sender.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn, _ = server.accept()
        server.close()


HANDOFFS = {
    "semaphore": SemaphoreHandoff,
    "rlock": RLockHandoff,
    "future": FutureHandoff,
    "join": JoinHandoff,
    "socket": SocketHandoff,
    "tcp": TcpHandoff,
}


def waiter(h, ready, consumed):
    for r in range(ROUNDS):
        ready[r].set()
        h.wait(r)
        h.woke[r] = time.time()
        consumed[r].set()
        spin(WAITER_BUSY_S)


def releaser(h, index, t0, ready, consumed, kinds):
    for r in range(ROUNDS):
        # Never before the waiter took the previous hand-off and asked for this one.
        ready[r].wait()
        if hasattr(h, "prepare"):
            h.prepare(r)
        at = t0 + (r * kinds + index) * HANDOFF_GAP_S
        time.sleep(max(0.01, at - time.time()))  # the waiter is blocked by then
        h.release(r)
        consumed[r].wait()


def main():
    handoffs = [HANDOFFS[k]() for k in KINDS]
    for h in handoffs:
        h.woke = [None] * ROUNDS  # when the waiter was back from each wait
    t0 = time.time() + 0.2
    threads = []
    for i, h in enumerate(handoffs):
        ready = [threading.Event() for _ in range(ROUNDS)]
        consumed = [threading.Event() for _ in range(ROUNDS)]
        threads.append(threading.Thread(target=waiter, args=(h, ready, consumed), name=f"waiter-{h.kind}"))
        threads.append(threading.Thread(target=releaser, args=(h, i, t0, ready, consumed, len(handoffs)), name=f"releaser-{h.kind}"))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    by_kind = {h.kind: h for h in handoffs}
    for entry in log:
        entry["woke"] = by_kind[entry["object"]].woke[entry["round"]]
    out = {"handoffs": log, "sockets": {}}
    for h in handoffs:
        if isinstance(h, SocketHandoff):
            out["sockets"][h.kind] = {"inode": os.fstat(h.conn.fileno()).st_ino, "fd": h.conn.fileno()}
        if isinstance(h, FutureHandoff):
            h.pool.shutdown()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
