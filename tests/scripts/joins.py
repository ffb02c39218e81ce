"""Two joins on consecutive lines: `t1.join()`, then `t.join()` in a loop on the next line.

The second join's frame sits at the address the first one's did, with the same code and
instruction pointer; only the caller's line differs. Writes when each join began and ended
(time.time()) as JSON to the path given as the first argument: the truth a recording is checked
against.
"""
import json
import sys
import threading
import time


def work(seconds):
    end = time.time() + seconds
    while time.time() < end:
        time.sleep(0.001)


t1 = threading.Thread(target=work, args=(0.6,), name="first")
t2 = threading.Thread(target=work, args=(1.2,), name="second")
t1.start()
t2.start()
source = open(__file__).read().splitlines()
log = {
    "first_join_line": source.index("t1.join()") + 1,
    "second_join_line": source.index("for t in [t2]: t.join()") + 1,
}
log["first_join"] = [time.time()]
t1.join()
log["first_join"].append(time.time()); log["second_join"] = [time.time()]
for t in [t2]: t.join()
log["second_join"].append(time.time())
with open(sys.argv[1], "w") as f:
    json.dump(log, f)
