"""Runs until killed: a main loop and one busy worker thread."""
import threading
import time


def busy():
    x = 0
    while True:
        x = (x + 1) % 7


threading.Thread(target=busy, name="busy", daemon=True).start()
print("ready", flush=True)
while True:
    time.sleep(0.1)
