"""Starts a child process in its own group's reach, then handles SIGINT (and optionally SIGTERM)
by logging it and carrying on for LINGER seconds before exiting with code 5.

usage: stubborn.py LOG LINGER [ignore-term]
Writes "child PID" and each signal received ("SIGINT", "SIGTERM") to LOG, one per line.
"""
import os
import signal
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
# Imported after the handlers are in place: on a loaded machine importing `subprocess` (and
# `locale` with it) took over a second on 3.13t, and a SIGINT sent meanwhile ended the program
# with KeyboardInterrupt instead of being handled (record.rs's duration test saw 130, not 137).
import subprocess  # noqa: E402

child = subprocess.Popen(["sleep", "600"])
log(f"child {child.pid}")
print("ready", flush=True)
x = 0
while deadline is None or time.monotonic() < deadline:
    x = (x + 1) % 7
    time.sleep(0.001)
sys.exit(5)
