"""Bug 1: data race in a lazily created singleton (paper §5.1). BUGGY version.

Worker threads register with the singleton ``WorkerManager`` when they start,
loop doing some CPU work, and after each iteration call
``WorkerManager.get_instance().interrupt(self)``; the manager removes a
registered worker and tells it to stop. ``get_instance()`` checks
``_instance is None`` and then creates the manager without holding a lock. The
constructor is slow: it reads its settings (I/O, which lets the other threads
run) and then builds a table for ~100 ms of CPU. The window between the check
and the assignment is therefore wide, and several workers (here usually all of
them) see ``None`` and each build their own manager. A worker registered with a manager that has since been replaced is
never interrupted. It keeps looping until the main thread stops it at the
time limit, which is the paper's five-second cut-off.

What ThreadRadar should show (paper Fig. 6a, Fig. 7): the Program ThreadRadar
splits the workers into two clusters. Workers that were interrupted have little
computational runtime; workers that were never interrupted loop until the time
limit. ``Worker.run`` has the same radar. Below it, the radar of
``WorkerManager.__init__`` has a lower pedestal of several threads (often all
of them), where a singleton's constructor should run in exactly one.

The fix (``fixed.py``): double-checked locking in ``get_instance()``, so
exactly one thread runs the constructor while the others wait on the lock
(waiting is not computing). Every worker is interrupted after its first
iteration and the program ends on its own. The thread that built the manager
then has much more computational runtime than the others.

Run: ``python3 buggy.py [--workers 10] [--timeout 5]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import busy_work, name_list, positive_float, positive_int  # noqa: E402

SETTINGS_LOAD_S = 0.02  # the constructor first waits this long for its settings (I/O)...
TABLE_ROWS = 20  # ...then builds this many rows of a table...
ROW_MS = 5.0  # ...each costing this much CPU: ~100 ms of computing per constructor
ITERATION_MS = 10.0  # CPU work of one worker iteration


class WorkerManager:
    """Keeps the registered workers and tells each one when to stop."""

    _instance: WorkerManager | None = None
    # Names of the threads that ran __init__; a singleton should have exactly one.
    constructed_by: list[str] = []

    @classmethod
    def get_instance(cls) -> WorkerManager:
        # BUG: check-then-create without synchronisation. Every thread that
        # passes the check before the first constructor finishes builds its own
        # manager, and the last assignment wins.
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    @classmethod
    def reset(cls) -> None:
        """Forget the singleton, so that a test can start a fresh run."""
        cls._instance = None
        cls.constructed_by = []

    def __init__(self) -> None:
        WorkerManager.constructed_by.append(threading.current_thread().name)
        self._lock = threading.Lock()
        self._workers: set[Worker] = set()
        self.settings = self._load_settings()
        self.table = self._build_table(self.settings["table_rows"])

    @staticmethod
    def _load_settings() -> dict[str, int]:
        """Read the manager's settings. The sleep stands in for reading a file: like
        real I/O it releases the GIL, so the other workers run in the meantime."""
        time.sleep(SETTINGS_LOAD_S)
        return {"table_rows": TABLE_ROWS}

    @staticmethod
    def _build_table(rows: int) -> list[int]:
        """The expensive part of setting up the manager (pure-Python CPU work)."""
        table = []
        for _ in range(rows):
            table.append(busy_work(ROW_MS))
        return table

    def register(self, worker: Worker) -> None:
        with self._lock:
            self._workers.add(worker)

    def interrupt(self, worker: Worker) -> None:
        """Stop ``worker`` if it is registered here; otherwise do nothing."""
        with self._lock:
            if worker not in self._workers:
                return
            self._workers.remove(worker)
        worker.interrupt()


class Worker(threading.Thread):
    """Registers with the manager, then works until the manager interrupts it."""

    def __init__(self, index: int, start_gate: threading.Event, give_up: threading.Event) -> None:
        super().__init__(name=f"worker-{index}")
        self._interrupted = threading.Event()
        self._start_gate = start_gate  # set by the main thread once all workers exist
        self._give_up = give_up  # set by the main thread at the time limit
        self.iterations = 0
        self.cpu_seconds = 0.0  # this thread's CPU time, measured when it ends

    def interrupt(self) -> None:
        self._interrupted.set()

    @property
    def was_interrupted(self) -> bool:
        return self._interrupted.is_set()

    def run(self) -> None:
        self._start_gate.wait()
        WorkerManager.get_instance().register(self)
        while not self._interrupted.is_set() and not self._give_up.is_set():
            busy_work(ITERATION_MS)
            self.iterations += 1
            WorkerManager.get_instance().interrupt(self)  # ready to be stopped
        self.cpu_seconds = time.thread_time()


@dataclass
class Outcome:
    """What happened in one run of the workers."""

    constructor_threads: list[str]
    interrupted: list[str]
    never_interrupted: list[str]
    cpu_seconds: dict[str, float]  # per worker
    elapsed: float
    timeout: float

    def summary(self) -> str:
        n = len(self.constructor_threads)
        workers = len(self.interrupted) + len(self.never_interrupted)
        text = (
            f"constructor ran in {n} thread{'s' if n != 1 else ''}: "
            f"{name_list(self.constructor_threads)}; "
            f"{n} manager{'s' if n != 1 else ''} for {workers} workers; "
        )
        if self.never_interrupted:
            text += (
                f"{len(self.interrupted)} interrupted, "
                f"{len(self.never_interrupted)} never interrupted "
                f"({name_list(self.never_interrupted)}) and stopped at the "
                f"{self.timeout:g} s time limit"
            )
        else:
            text += f"all interrupted, finished in {self.elapsed:.2f} s"
        busiest = max(self.cpu_seconds, key=self.cpu_seconds.__getitem__)
        median = statistics.median(self.cpu_seconds.values())
        return text + f"; CPU: {busiest} {self.cpu_seconds[busiest]:.2f} s, median {median:.2f} s"


def run_workers(workers: int = 10, timeout: float = 5.0) -> Outcome:
    """Start ``workers`` threads and wait until all were interrupted or ``timeout`` passed."""
    WorkerManager.reset()
    start_gate, give_up = threading.Event(), threading.Event()
    threads = [Worker(i, start_gate, give_up) for i in range(workers)]
    for thread in threads:
        thread.start()
    # Release all workers at once, as threads started together on several cores
    # would run: under the GIL, starting them one by one would serialise them.
    start_gate.set()
    start = time.monotonic()
    for thread in threads:
        thread.join(max(0.0, start + timeout - time.monotonic()))
    give_up.set()  # stop the workers that were never interrupted
    for thread in threads:
        thread.join()
    return Outcome(
        constructor_threads=list(WorkerManager.constructed_by),
        interrupted=[t.name for t in threads if t.was_interrupted],
        never_interrupted=[t.name for t in threads if not t.was_interrupted],
        cpu_seconds={t.name: t.cpu_seconds for t in threads},
        elapsed=time.monotonic() - start,
        timeout=timeout,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument(
        "--workers", type=positive_int, default=10, help="worker threads (default 10)"
    )
    parser.add_argument(
        "--timeout",
        type=positive_float,
        default=5.0,
        help="seconds after which the main thread stops the remaining workers (default 5)",
    )
    args = parser.parse_args(argv)
    print(run_workers(args.workers, args.timeout).summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
