"""Starts a child process in its own group's reach, then handles SIGINT (and optionally SIGTERM)
by logging it and carrying on for LINGER seconds before exiting with code 5.

usage: stubborn.py LOG LINGER [ignore-term]
Writes "child PID" and each signal received ("SIGINT", "SIGTERM") to LOG, one per line.
"""
import os
import signal
import subprocess
import sys
import time

LOG, LINGER = sys.argv[1], float(sys.argv[2])
IGNORE_TERM = len(sys.argv) > 3 and sys.argv[3] == "ignore-term"
deadline = None


def log(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


def on_signal(signum, _frame):
    global deadline
    log(signal.Signals(signum).name)
    if deadline is None:
        deadline = time.monotonic() + LINGER


signal.signal(signal.SIGINT, on_signal)
if IGNORE_TERM:
    signal.signal(signal.SIGTERM, on_signal)
child = subprocess.Popen(["sleep", "600"])
log(f"child {child.pid}")
print("ready", flush=True)
x = 0
while deadline is None or time.monotonic() < deadline:
    x = (x + 1) % 7
    time.sleep(0.001)
sys.exit(5)
