"""A certain deadlock, for `threadradar dump` (tests/dump.rs): thread "a" takes lock_a then
lock_b, thread "b" takes lock_b then lock_a, and a barrier between the first and the second
acquire makes sure each holds its first lock before asking for the other. The main thread then
joins them, forever. It prints one JSON line once both threads are about to block: its pid and
each thread's native id.

Run: python3 deadlock.py [rlock|lock]   (the kind of both locks; rlock by default)
"""

import json
import os
import sys
import threading

KIND = sys.argv[1] if len(sys.argv) > 1 else "rlock"
make = threading.RLock if KIND == "rlock" else threading.Lock
lock_a = make()
lock_b = make()
barrier = threading.Barrier(3)
ids = {}


def take(first, second):
    with first:
        ids[threading.current_thread().name] = threading.get_native_id()
        barrier.wait()
        with second:  # deadlock: the other thread holds it
            pass


def main():
    a = threading.Thread(target=take, args=(lock_a, lock_b), name="a")
    b = threading.Thread(target=take, args=(lock_b, lock_a), name="b")
    a.start()
    b.start()
    barrier.wait()
    print(json.dumps({"pid": os.getpid(), "threads": ids, "kind": KIND}), flush=True)
    a.join()
    b.join()


main()
