"""Many asyncio tasks that exist, few that run (issue #34's cost goal: a 10 000-task program keeps
>= 95 % of 333 Hz while its tasks are read). N tasks on one event loop: most sleep 1-3 s between
tiny steps, a tenth wait on an Event that is set only at the end, and BUSY tasks compute in 2 ms
steps.

usage: many_tasks.py [N] [BUSY] [SECONDS]
"""
import asyncio
import random
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
BUSY = int(sys.argv[2]) if len(sys.argv) > 2 else 2
SECONDS = float(sys.argv[3]) if len(sys.argv) > 3 else 3600.0


def spin(n):
    x = 0
    for i in range(n):
        x = (x + i * i) % 1000003
    return x


async def sleeper(rng):
    while True:
        await asyncio.sleep(rng.uniform(1.0, 3.0))
        spin(50)


async def waiter(event):
    await event.wait()


async def busy():
    while True:
        spin(20000)
        await asyncio.sleep(0)


async def main():
    rng = random.Random(1)
    event = asyncio.Event()
    tasks = []
    for i in range(N):
        coro = waiter(event) if i % 10 == 0 else sleeper(rng)
        tasks.append(asyncio.create_task(coro, name=f"idle-{i}"))
    for i in range(BUSY):
        tasks.append(asyncio.create_task(busy(), name=f"busy-{i}"))
    print(f"many_tasks.py: {N} tasks, {BUSY} busy", flush=True)
    await asyncio.sleep(SECONDS)
    event.set()


asyncio.run(main())
