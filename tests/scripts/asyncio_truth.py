"""asyncio tasks that log their own truth, for checking the recorded tasks (tests/asyncio_tasks.rs).

Six fetch tasks ("fetch-0".."fetch-5", coroutine `Fetcher.fetch`) and three parse tasks
("parse-0".."parse-2", coroutine `parse`) share the event loop. Each does CPU work in steps and
measures each step with time.thread_time_ns() around it, adding it to its own total; between steps
it awaits an asyncio.Event (the start), a Queue (parse) or asyncio.sleep (fetch). parse-0 first
awaits the task fetch-5 itself. Meanwhile `asyncio.to_thread` runs CPU work in the default pool.

The log (JSON, the file named by the first argument): every task's name, coroutine, measured
CPU nanoseconds and how long before the program's end it finished, which task awaited which, the event loop thread's native id and the to_thread
work's CPU nanoseconds.

usage: asyncio_truth.py LOG [SCALE]   (SCALE multiplies the work; 1.0 is about 3 s of CPU)
"""
import asyncio
import json
import sys
import threading
import time

LOG = sys.argv[1]
SCALE = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
cpu = {}
coros = {}
finished = {}
awaited = []
pool_cpu = [0]


def burn(ns):
    """CPU work until this thread has used `ns` more nanoseconds of CPU."""
    end = time.thread_time_ns() + ns
    x = 0
    while time.thread_time_ns() < end:
        for i in range(300):
            x = (x + i * i) % 1000003
    return x


def step(name, ns):
    t0 = time.thread_time_ns()
    burn(ns)
    cpu[name] += time.thread_time_ns() - t0


class Fetcher:
    def __init__(self, i, queue, start):
        self.i = i
        self.queue = queue
        self.start = start

    async def fetch(self):
        name = asyncio.current_task().get_name()
        await self.start.wait()
        for n in range(int(50 * SCALE)):
            step(name, (2 + self.i) * 1_000_000)
            await self.queue.put((name, n))
            await asyncio.sleep(0.001 * (self.i % 3))
        finished[name] = time.monotonic()


async def parse(j, queue, wait_for):
    name = asyncio.current_task().get_name()
    if wait_for is not None:
        awaited.append([name, wait_for.get_name()])
        await wait_for
    while True:
        item = await queue.get()
        if item is None:
            finished[name] = time.monotonic()
            return
        step(name, (3 + 2 * j) * 1_000_000)


def pool_work(ns):
    t0 = time.thread_time_ns()
    burn(ns)
    pool_cpu[0] += time.thread_time_ns() - t0


async def main():
    start = asyncio.Event()
    queue = asyncio.Queue()
    fetchers = []
    for i in range(6):
        name = f"fetch-{i}"
        cpu[name] = 0
        coros[name] = "Fetcher.fetch"
        fetchers.append(asyncio.create_task(Fetcher(i, queue, start).fetch(), name=name))
    parsers = []
    for j in range(3):
        name = f"parse-{j}"
        cpu[name] = 0
        coros[name] = "parse"
        parsers.append(asyncio.create_task(parse(j, queue, fetchers[0] if j == 0 else None), name=name))
    await asyncio.sleep(0.05)
    start.set()
    pool = [asyncio.to_thread(pool_work, 15_000_000) for _ in range(int(12 * SCALE))]
    await asyncio.gather(*fetchers, *pool)
    for _ in parsers:
        await queue.put(None)
    await asyncio.gather(*parsers)


asyncio.run(main())
ended = time.monotonic()
with open(LOG, "w") as f:
    json.dump(
        {
            "tasks": [{"name": n, "coro": coros[n], "cpu_ns": cpu[n], "finished_before_end_s": ended - finished[n]} for n in cpu],
            "awaited": awaited,
            "loop_tid": threading.get_native_id(),
            "pool_cpu_ns": pool_cpu[0],
        },
        f,
    )
