"""Bug 2: synchronisation granularity in producer/consumer (paper §5.2). BUGGY version.

Producer threads make units and put them into a bounded ``Storage``; consumer
threads take units out and consume them. Producing and consuming a unit cost
the same, so the producers and the consumers should each account for about
half of the computational runtime. The storage is a monitor with ONE condition
variable, used for both "not empty" and "not full", and every ``put`` and
``take`` calls ``notify_all()``. So each unit wakes every waiting thread,
consumers and producers alike. Nearly all of them find their condition
unchanged: they take the lock again, re-check and go back to sleep. With one
producer and ten consumers that is about nine futile wake-ups per unit, all of
them in consumer threads.

What ThreadRadar should show (paper Fig. 8a/b): two clusters that match the
thread types, consumers (high total, low average) and the producer. The
producer's share of the computational runtime is well below the expected 50 %
(typically 30-40 % here, 18 % in the paper's Java run), because the consumers
spend computing time re-checking a condition that still holds. Producer and
consumer throughput are equal, so the synchronisation is correct; it is only
too coarse. The program prints the throughput, each side's CPU time and the
wake-ups per unit.

The fix (``fixed.py``): two conditions on one lock, ``not_empty`` and
``not_full`` (the design of ``queue.Queue``, and of the ``ArrayBlockingQueue``
in the paper). A ``put`` wakes one consumer and a ``take`` wakes one producer,
and the producer and consumer shares come close to 50/50 whatever the number
of consumers.

Why a unit is mostly waiting: a unit is a little pure-Python computation
(``--cpu-ms``) plus a wait for a device (``--wait-ms``, a ``time.sleep``, which
is not computing). Real Python programs use threads like this, and this is
where the bug costs something. If a unit were 1 ms of pure-Python CPU, every
thread would queue for the GIL instead of waiting on the condition. Then
``notify_all()`` would find almost nobody to wake, and the two versions would
look the same (try ``--cpu-ms 1 --wait-ms 0``).

Run: ``python3 buggy.py [--producers 1] [--consumers 10] [--duration 4]``
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import (  # noqa: E402
    busy_work,
    cpu_share,
    non_negative_float,
    positive_float,
    positive_int,
)

CAPACITY = 10  # units the storage holds


class Storage:
    """A bounded buffer guarded by a single monitor (one lock, one condition)."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._items: deque[int] = deque()
        self._closed = False
        self.wakeups = 0  # times a waiting thread was woken up
        # The program's own log of who woke whom (printed as "truth:", checked by
        # tests/waits.rs): consumers notified, by the role of the thread that notified them,
        # and wake-ups after which the thread found its condition unchanged and waited again.
        self.waiting_consumers = 0
        self.consumers_woken_by: dict[str, int] = {}
        self.futile_wakeups = 0
        # BUG: one condition for two different facts ("not empty" and "not full").
        self._monitor = threading.Condition()

    def put(self, item: int) -> bool:
        """Add ``item``, waiting while the storage is full; False once closed."""
        with self._monitor:
            while len(self._items) >= self._capacity and not self._closed:
                self._monitor.wait()
                self.wakeups += 1
                self.futile_wakeups += len(self._items) >= self._capacity and not self._closed
            if self._closed:
                return False
            self._items.append(item)
            self._notified(self.waiting_consumers)
            self._monitor.notify_all()  # BUG: wakes everyone; one consumer would do
            return True

    def take(self) -> int | None:
        """Remove the oldest item, waiting while the storage is empty; None once closed."""
        with self._monitor:
            while not self._items and not self._closed:
                self.waiting_consumers += 1
                self._monitor.wait()
                self.wakeups += 1
                self.futile_wakeups += not self._items and not self._closed
            if self._closed:
                return None
            item = self._items.popleft()
            self._notified(self.waiting_consumers)
            self._monitor.notify_all()  # BUG: wakes everyone; one producer would do
            return item

    def _notified(self, consumers: int) -> None:
        """Log, under the lock, that the current thread is about to wake ``consumers`` waiting consumers."""
        if consumers:
            role = threading.current_thread().name.split("-")[0]
            self.consumers_woken_by[role] = self.consumers_woken_by.get(role, 0) + consumers
            self.waiting_consumers -= consumers

    def close(self) -> None:
        """End the run: every waiting and future ``put``/``take`` returns at once."""
        with self._monitor:
            self._closed = True
            self._notified(self.waiting_consumers)
            self._monitor.notify_all()


def work_on_unit(cpu_ms: float, wait_ms: float) -> int:
    """The virtual workload of making or using one unit: compute, then wait for a device."""
    result = busy_work(cpu_ms)
    time.sleep(wait_ms / 1000.0)
    return result


class Producer(threading.Thread):
    def __init__(self, index: int, storage: Storage, cpu_ms: float, wait_ms: float) -> None:
        super().__init__(name=f"producer-{index}")
        self._storage = storage
        self._cpu_ms, self._wait_ms = cpu_ms, wait_ms
        self.produced = 0
        self.cpu_seconds = 0.0  # this thread's CPU time, measured when it ends

    def produce(self) -> int:
        return work_on_unit(self._cpu_ms, self._wait_ms)

    def run(self) -> None:
        while self._storage.put(self.produce()):
            self.produced += 1
        self.cpu_seconds = time.thread_time()


class Consumer(threading.Thread):
    def __init__(self, index: int, storage: Storage, cpu_ms: float, wait_ms: float) -> None:
        super().__init__(name=f"consumer-{index}")
        self._storage = storage
        self._cpu_ms, self._wait_ms = cpu_ms, wait_ms
        self.consumed = 0
        self.cpu_seconds = 0.0

    def consume(self, item: int) -> None:
        work_on_unit(self._cpu_ms, self._wait_ms)

    def run(self) -> None:
        while (item := self._storage.take()) is not None:
            self.consume(item)
            self.consumed += 1
        self.cpu_seconds = time.thread_time()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument(
        "--producers", type=positive_int, default=1, help="producer threads (default 1)"
    )
    parser.add_argument(
        "--consumers", type=positive_int, default=10, help="consumer threads (default 10)"
    )
    parser.add_argument(
        "--duration", type=positive_float, default=4.0, help="seconds to run (default 4)"
    )
    parser.add_argument(
        "--cpu-ms",
        type=non_negative_float,
        default=0.02,
        help="pure-Python CPU per unit (default 0.02)",
    )
    parser.add_argument(
        "--wait-ms",
        type=non_negative_float,
        default=0.98,
        help="device wait per unit (default 0.98)",
    )
    args = parser.parse_args(argv)

    storage = Storage(CAPACITY)
    producers = [Producer(i, storage, args.cpu_ms, args.wait_ms) for i in range(args.producers)]
    consumers = [Consumer(i, storage, args.cpu_ms, args.wait_ms) for i in range(args.consumers)]
    start = time.monotonic()
    for thread in [*consumers, *producers]:
        thread.start()
    time.sleep(args.duration)
    storage.close()
    elapsed = time.monotonic() - start
    for thread in [*producers, *consumers]:
        thread.join()

    produced = sum(p.produced for p in producers)
    consumed = sum(c.consumed for c in consumers)
    producer_cpu = sum(p.cpu_seconds for p in producers)
    consumer_cpu = sum(c.cpu_seconds for c in consumers)
    total_cpu = producer_cpu + consumer_cpu
    print(
        f"throughput: producers {produced / elapsed:.1f} units/s, "
        f"consumers {consumed / elapsed:.1f} units/s; "
        f"CPU: producers {producer_cpu:.2f} s ({cpu_share(producer_cpu, total_cpu):.0f} %), "
        f"consumers {consumer_cpu:.2f} s ({cpu_share(consumer_cpu, total_cpu):.0f} %); "
        f"{storage.wakeups / max(produced, 1):.1f} wake-ups per unit"
    )
    truth = {"consumers_woken_by": storage.consumers_woken_by, "futile_wakeups": storage.futile_wakeups}
    print("truth: " + json.dumps(truth, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
