"""Code under test: a sum of squares spread over worker threads.

``parallel_sum`` splits the numbers into one chunk per worker; each worker thread squares its
chunk (pure Python, so the threads take turns holding the GIL) and adds the result to a shared
total under a lock. ``checked_sum`` has the off-by-one the failing test finds.
"""

from __future__ import annotations

import threading


def square_all(numbers: list[int]) -> int:
    total = 0
    for n in numbers:
        for _ in range(50):
            total += n * n
    return total // 50


def parallel_sum(numbers: list[int], workers: int = 4) -> int:
    lock = threading.Lock()
    result = [0]
    chunks = [numbers[i::workers] for i in range(workers)]

    def work(chunk: list[int]) -> None:
        part = square_all(chunk)
        with lock:
            result[0] += part

    threads = [threading.Thread(target=work, args=(c,), name=f"pool-worker-{i}") for i, c in enumerate(chunks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return result[0]


def checked_sum(numbers: list[int], workers: int = 4) -> int:
    # The bug: the last number is left out.
    return parallel_sum(numbers[:-1], workers)
