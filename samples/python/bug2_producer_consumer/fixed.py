"""Bug 2: synchronisation granularity in producer/consumer (paper §5.2). FIXED version.

Same program as ``buggy.py``: producer threads put units into a bounded
``Storage`` and consumer threads take them out, at the same cost per unit. The
storage now has two conditions on one lock, ``not_empty`` (consumers wait
there) and ``not_full`` (producers wait there). This is how ``queue.Queue`` is
built, and it matches the ``ArrayBlockingQueue`` fix in the paper. A ``put``
wakes one consumer and a ``take`` wakes one producer, so about one thread is
woken per unit instead of all of them.

What ThreadRadar should show (paper Fig. 8c, Fig. 9): the producer and the
consumers each account for about 50 % of the computational runtime, whatever
the number of consumers. With one producer and N consumers there are two
clusters: the producer alone at about 50 %, and the consumers sharing the
other half. With ``--consumers 1`` there is one cluster at about 50 % each.
Throughput is at least as high as in the buggy version.

The bug (``buggy.py``): one condition with ``notify_all()`` for both "not
empty" and "not full". Every unit wakes all waiting consumers, and their
futile re-checks push the consumers' share far above the producer's.

A unit is a little pure-Python computation (``--cpu-ms``) plus a wait for a
device (``--wait-ms``); ``buggy.py`` explains why a unit is mostly waiting.

Run: ``python3 fixed.py [--producers 1] [--consumers 10] [--duration 4]``
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
    """A bounded buffer guarded by one lock with two conditions, like ``queue.Queue``."""

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
        # FIX: one condition per fact, both on the same lock.
        lock = threading.Lock()
        self._not_empty = threading.Condition(lock)  # consumers wait here
        self._not_full = threading.Condition(lock)  # producers wait here

    def put(self, item: int) -> bool:
        """Add ``item``, waiting while the storage is full; False once closed."""
        with self._not_full:
            while len(self._items) >= self._capacity and not self._closed:
                self._not_full.wait()
                self.wakeups += 1
                self.futile_wakeups += len(self._items) >= self._capacity and not self._closed
            if self._closed:
                return False
            self._items.append(item)
            self._notified(min(1, self.waiting_consumers))
            self._not_empty.notify()  # FIX: wake one consumer, nobody else
            return True

    def take(self) -> int | None:
        """Remove the oldest item, waiting while the storage is empty; None once closed."""
        with self._not_empty:
            while not self._items and not self._closed:
                self.waiting_consumers += 1
                self._not_empty.wait()
                self.wakeups += 1
                self.futile_wakeups += not self._items and not self._closed
            if self._closed:
                return None
            item = self._items.popleft()
            self._not_full.notify()  # FIX: wake one producer, nobody else
            return item

    def _notified(self, consumers: int) -> None:
        """Log, under the lock, that the current thread is about to wake ``consumers`` waiting consumers."""
        if consumers:
            role = threading.current_thread().name.split("-")[0]
            self.consumers_woken_by[role] = self.consumers_woken_by.get(role, 0) + consumers
            self.waiting_consumers -= consumers

    def close(self) -> None:
        """End the run: every waiting and future ``put``/``take`` returns at once."""
        with self._not_empty:  # the same lock as self._not_full
            self._closed = True
            self._notified(self.waiting_consumers)
            self._not_empty.notify_all()
            self._not_full.notify_all()


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
