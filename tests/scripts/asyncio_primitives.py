"""asyncio tasks that wait on each other through asyncio's primitives and log who woke whom, for
checking the waits between tasks (tests/tasks_units.rs).

For each primitive, tasks take turns: a task does CPU work for a few milliseconds (so that a
sample sees it), notes its own name as the primitive's last setter and then sets, releases, puts
or notifies; a task that had to wait notes, once it runs again, that the last setter woke it.

- Event: `ev-set` sets the event, `ev-wait-0`..`ev-wait-1` wait on it (and it is cleared again);
- Lock: `lock-0`..`lock-2` take one lock in turn, work (and sleep) while holding it and release
  it;
- Queue: `q-put` puts items, `q-get-0`..`q-get-1` get them;
- Condition: `cond-notify` notifies one waiter at a time, `cond-wait-0`..`cond-wait-1` wait;
- Semaphore(1): `sem-0`..`sem-1` take it in turn.

The log (JSON, the file named by the first argument): `edges`, a list of [setter, waiter,
primitive] — one per wait that blocked — and the task names.

usage: asyncio_primitives.py LOG [ROUNDS]
"""
import asyncio
import json
import sys
import time

LOG = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 12
last_by = {}
edges = []
names = []


def burn(ms):
    end = time.thread_time_ns() + int(ms * 1e6)
    x = 0
    while time.thread_time_ns() < end:
        for i in range(200):
            x = (x + i * i) % 1000003
    return x


def me():
    return asyncio.current_task().get_name()


def woke(prim, blocked):
    if blocked:
        edges.append([last_by[prim], me(), prim])


async def ev_set(ev, done):
    for _ in range(ROUNDS * 2):
        burn(6)
        last_by["event"] = me()
        ev.set()
        await asyncio.sleep(0.004)
        ev.clear()
        await asyncio.sleep(0.002)
    done.set()


async def ev_wait(ev, done):
    while not done.is_set():
        blocked = not ev.is_set()
        await ev.wait()
        woke("event", blocked)
        burn(1)
        while ev.is_set() and not done.is_set():
            await asyncio.sleep(0.001)


async def take_turns(prim, kind):
    """Take `prim` (a Lock or a Semaphore(1)) in turn with the other tasks, working and sleeping
    while holding it; the release wakes the next one waiting."""
    for _ in range(ROUNDS):
        blocked = prim.locked()
        async with prim:
            woke(kind, blocked)
            burn(3)
            await asyncio.sleep(0.002)
            burn(3)
            last_by[kind] = me()
        await asyncio.sleep(0.002)


async def q_put(q, getters):
    for n in range(ROUNDS * 2):
        burn(6)
        last_by["queue"] = me()
        await q.put(n)
        await asyncio.sleep(0.003)
    for _ in range(getters):
        last_by["queue"] = me()
        await q.put(None)


async def q_get(q):
    while True:
        blocked = q.empty()
        item = await q.get()
        woke("queue", blocked)
        if item is None:
            return
        burn(1)


async def cond_notify(cond, done):
    for _ in range(ROUNDS * 2):
        burn(6)
        async with cond:
            last_by["condition"] = me()
            cond.notify(1)
        await asyncio.sleep(0.003)
    done.set()
    async with cond:
        last_by["condition"] = me()
        cond.notify_all()


async def cond_wait(cond, done):
    while not done.is_set():
        async with cond:
            try:
                await asyncio.wait_for(cond.wait(), 0.5)
            except TimeoutError:
                continue
            woke("condition", True)
        burn(1)


async def main():
    # A recorder attached at launch finds asyncio's tables once the module is loaded: give it
    # the time to before the tasks start.
    await asyncio.sleep(0.3)
    ev, ev_done = asyncio.Event(), asyncio.Event()
    lock, q, cond, cond_done = asyncio.Lock(), asyncio.Queue(), asyncio.Condition(), asyncio.Event()
    sem = asyncio.Semaphore(1)
    specs = [("ev-set", ev_set(ev, ev_done))]
    specs += [(f"ev-wait-{i}", ev_wait(ev, ev_done)) for i in range(2)]
    specs += [(f"lock-{i}", take_turns(lock, "lock")) for i in range(3)]
    specs += [("q-put", q_put(q, 2))] + [(f"q-get-{i}", q_get(q)) for i in range(2)]
    specs += [(f"cond-wait-{i}", cond_wait(cond, cond_done)) for i in range(2)] + [("cond-notify", cond_notify(cond, cond_done))]
    specs += [(f"sem-{i}", take_turns(sem, "semaphore")) for i in range(2)]
    tasks = []
    for name, coro in specs:
        names.append(name)
        tasks.append(asyncio.create_task(coro, name=name))
    await asyncio.sleep(0)
    # The event's waiters may be left waiting on a set that never comes: they end with it.
    await tasks[0]
    last_by["event"] = me()
    ev.set()
    await asyncio.gather(*tasks)


asyncio.run(main())
with open(LOG, "w") as f:
    json.dump({"edges": edges, "tasks": names}, f)
