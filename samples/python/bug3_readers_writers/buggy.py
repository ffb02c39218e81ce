"""Bug 3: race condition between readers and writers (paper §5.3). BUGGY version.

Writer threads add records and bump a shared counter under a lock. Reader
threads busy-wait (spin, doing a little CPU work per round) until the batch
they need is complete, that is until the counter reaches ``TARGET``. The
writers together write a few more records than that. Every access to the
counter is properly locked, but the readers test ``counter == TARGET``. The
counter holds that exact value only between two increments, so a reader that
does not look in that moment misses it and spins on, until the main thread's
time limit (4 s here; the paper's test cuts the run off after five seconds).
Locking makes each access safe; it does not control the order in which readers
and writers get to the counter.

What ThreadRadar should show (paper Fig. 10a/b): two clusters with
intersection. The low cluster mixes both writers with the readers that
happened to see the exact value and terminated early; they all computed for
about the same time. The high cluster holds the readers that missed the value
and kept spinning. The radar of ``Reader.run`` splits the readers the same
way. How many readers terminate varies from run to run; in principle any
number can.

The fix (``fixed.py``): the readers test ``counter >= TARGET``. All readers
stop right after the writers reach the target, and the program ends on its
own. The Program ThreadRadar shows one cluster of readers and writers with
similar computational runtime and no outliers.

Every access to the counter logs itself (the program's own truth): the
summary ends with a ``truth:`` line (how many times and how long the writers
held the lock, how long the readers waited to enter it), and ``--log FILE``
writes every access as a JSON line: ``{"section": "increment"|"get", "thread",
"start"`` (``time.time()`` inside), ``"wait"`` (from just before the ``with`` to
inside), ``"hold"`` (inside to the end of the block), ``"whole"`` (from
before the ``with`` to after it; the lock was acquired somewhere in the
``wait``, as the thread may wait for the GIL right after acquiring it)``}``. By default a writer holds the lock only for the
increment (about a microsecond, too short for any sampler to see);
``--hold-ms`` makes it hold the lock while it publishes the record (a sleep,
as for I/O), so that ``threadradar sections`` can show the writers' section and
the readers' waits to enter (``tests/sections_bug3.rs``).

Run: ``python3 buggy.py [--readers 10] [--writers 2] [--timeout 4] [--hold-ms 0] [--log FILE]``
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import (  # noqa: E402
    busy_work,
    name_list,
    non_negative_float,
    positive_float,
    positive_int,
)

TARGET = 30  # records the readers wait for
EXTRA_RECORDS = 4  # the writers together write this many more
WRITE_MS = 7.5  # CPU work of writing one record
READ_MS = 8.0  # CPU work of one reader round (scanning the records) between two looks


class SharedCounter:
    """The number of records written so far; every access holds the lock.

    Every access is logged in ``log``: (section, thread, time inside, wait to
    enter, hold, whole access from before the ``with`` to after it), with
    ``time.time()`` so that a profile's start lines up.
    """

    def __init__(self, hold_ms: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._value = 0
        self._hold_s = hold_ms / 1000.0
        self.log: list[tuple[str, str, float, float, float, float]] = []

    def increment(self) -> None:
        called = time.time()
        with self._lock:
            entered = time.time()
            if self._hold_s:
                time.sleep(self._hold_s)  # publish the record (I/O) while holding the lock
            self._value += 1
            held = time.time() - entered
        self._note("increment", called, entered, held, time.time())

    def get(self) -> int:
        called = time.time()
        with self._lock:
            entered = time.time()
            value = self._value
            held = time.time() - entered
        self._note("get", called, entered, held, time.time())
        return value

    def _note(self, section: str, called: float, entered: float, held: float, left: float) -> None:
        # The lock was acquired in [called, entered] and released in [entered + held, left]:
        # Python cannot stamp the acquire itself (the thread may wait for the GIL right after it).
        name = threading.current_thread().name
        self.log.append((section, name, entered, entered - called, held, left - called))

    def truth(self) -> dict[str, float]:
        """What the log adds up to: the writers' holds and the readers' waits to enter."""
        holds = [h for section, _, _, _, h, _ in self.log if section == "increment"]
        waits = [w for section, _, _, w, _, _ in self.log if section == "get"]
        return {
            "writer_holds": len(holds),
            "writer_hold_s": round(sum(holds), 6),
            "reader_gets": len(waits),
            "reader_wait_s": round(sum(waits), 6),
        }


class Writer(threading.Thread):
    def __init__(
        self, index: int, counter: SharedCounter, records: int, start_gate: threading.Event
    ) -> None:
        super().__init__(name=f"writer-{index}")
        self._counter = counter
        self._records = records
        self._start_gate = start_gate
        self.cpu_seconds = 0.0  # this thread's CPU time, measured when it ends

    def run(self) -> None:
        self._start_gate.wait()
        for _ in range(self._records):
            busy_work(WRITE_MS)  # write the record
            self._counter.increment()  # publish it
        self.cpu_seconds = time.thread_time()


class Reader(threading.Thread):
    def __init__(
        self,
        index: int,
        counter: SharedCounter,
        start_gate: threading.Event,
        give_up: threading.Event,
    ) -> None:
        super().__init__(name=f"reader-{index}")
        self._counter = counter
        self._start_gate = start_gate
        self._give_up = give_up  # set by the main thread at the time limit
        self.saw_target = False
        self.cpu_seconds = 0.0

    def run(self) -> None:
        self._start_gate.wait()
        while not self._give_up.is_set():
            busy_work(READ_MS)  # look at the records written so far
            if self._counter.get() == TARGET:  # BUG: misses the target once it has passed
                self.saw_target = True
                break
        self.cpu_seconds = time.thread_time()


def spread(readers: list[Reader], writers: list[Writer]) -> list[threading.Thread]:
    """Readers and writers in start order, with the writers spread out among the readers.

    Under the GIL, threads take turns roughly in the order in which they started
    waiting. With the writers spread out, some readers get a turn between two
    writes, as they would with every thread on its own core. Started side by
    side, the two writers would often bump the counter back to back (no reader
    sees the target) or leave it for a whole round (every reader sees it).
    """
    order: list[threading.Thread] = list(readers)
    for j, writer in enumerate(writers):
        order.insert(round((j + 1) * len(readers) / len(writers)) + j, writer)
    return order


def average(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument(
        "--readers", type=positive_int, default=10, help="reader threads (default 10)"
    )
    parser.add_argument(
        "--writers", type=positive_int, default=2, help="writer threads (default 2)"
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=4.0,
        help="seconds after which the main thread stops all readers (default 4)",
    )
    parser.add_argument(
        "--hold-ms",
        type=non_negative_float,
        default=0.0,
        help="ms a writer holds the lock to publish a record, sleeping as for I/O (default 0)",
    )
    parser.add_argument(
        "--log", metavar="FILE", help="write every access to the counter as a JSON line"
    )
    args = parser.parse_args(argv)

    counter = SharedCounter(args.hold_ms)
    start_gate, give_up = threading.Event(), threading.Event()
    # Split TARGET + EXTRA_RECORDS records between the writers.
    total = TARGET + EXTRA_RECORDS
    shares = [total // args.writers + (i < total % args.writers) for i in range(args.writers)]
    writers = [Writer(i, counter, n, start_gate) for i, n in enumerate(shares)]
    readers = [Reader(i, counter, start_gate, give_up) for i in range(args.readers)]
    for thread in spread(readers, writers):
        thread.start()
    start = time.monotonic()
    start_gate.set()
    for thread in [*writers, *readers]:
        thread.join(max(0.0, start + args.timeout - time.monotonic()))
    give_up.set()  # stop the readers that are still spinning
    for thread in [*writers, *readers]:
        thread.join()
    elapsed = time.monotonic() - start

    done = [r for r in readers if r.saw_target]
    spinning = [r for r in readers if not r.saw_target]
    summary = (
        f"{len(done)} of {len(readers)} readers saw counter == {TARGET} and terminated "
        f"({name_list(r.name for r in done)})"
    )
    if spinning:
        summary += f"; {len(spinning)} missed it and spun until the {args.timeout:g} s time limit"
    else:
        summary += f"; finished in {elapsed:.2f} s"
    groups = [
        ("writers", writers),
        ("terminated readers", done),
        ("spinning readers", spinning),
    ]
    cpu = ", ".join(
        f"{label} {average([t.cpu_seconds for t in group]):.2f} s"
        for label, group in groups
        if group
    )
    summary += f"; final counter {counter.get()}; mean CPU: {cpu}"
    print(summary)
    print("truth: " + json.dumps(counter.truth(), sort_keys=True))
    if args.log:
        with open(args.log, "w", encoding="utf-8") as log:
            for section, thread, start, wait, hold, whole in counter.log:
                entry = {"section": section, "thread": thread, "start": start, "wait": wait}
                log.write(json.dumps({**entry, "hold": hold, "whole": whole}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
