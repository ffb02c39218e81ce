"""Threads that hand one contended lock to each other and log every hand-off: the ground truth of
`threadradar waits`' lock hand-off edges (tests/waits.rs).

THREADS workers share one `threading.Condition` built on a plain `Lock`. Each, ROUNDS times: asks
for the lock (`with cond:`), holds it for HOLD_S (sleeping, so the others block in the lock's
futex, inside `Condition.__enter__`), and lets it go, then rests REST_S before asking again. While
one holds the lock the others sleep on it, so each release wakes the next holder: a hand-off of
the condition's lock, not a notify. Inside the lock each new holder logs who had it before, when
that one let it go (`time.time()` just before its release) and whether the new holder had asked
before that release (it slept on the lock: a hand-off; otherwise it found the lock free). At the
end the log is printed as one JSON line.

Run: python3 lock_handoffs.py [ROUNDS] [THREADS]
"""

import json
import sys
import threading
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
THREADS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
HOLD_S = 0.015
REST_S = 0.004

cond = threading.Condition(threading.Lock())
holder = {"name": None, "released": 0.0}
log = []


def worker():
    me = threading.current_thread().name
    for _ in range(ROUNDS):
        asked = time.time()
        with cond:
            prev, released = holder["name"], holder["released"]
            if prev is not None and prev != me:
                log.append({"releaser": prev, "waiter": me, "time": released, "slept": asked < released})
            holder["name"] = me
            time.sleep(HOLD_S)
            holder["released"] = time.time()
        time.sleep(REST_S)


def main():
    threads = [threading.Thread(target=worker, name=f"locker-{i}") for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps(log))


if __name__ == "__main__":
    main()
