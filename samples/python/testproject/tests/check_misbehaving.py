"""Tests that misbehave on purpose, for the editor's error paths (tests/lsp_tests.rs). They only
misbehave when TESTPROJECT_MISBEHAVE=1, so a plain `pytest` here skips them."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

pytestmark = pytest.mark.skipif(os.environ.get("TESTPROJECT_MISBEHAVE") != "1", reason="set TESTPROJECT_MISBEHAVE=1")


def test_hangs():
    """Never ends on its own: two threads spin until the run is cancelled."""
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            sum(i * i for i in range(1000))

    threads = [threading.Thread(target=spin, name=f"spinner-{i}", daemon=True) for i in range(2)]
    for t in threads:
        t.start()
    while True:
        time.sleep(0.05)


def test_kills_its_process_group():
    """Works a little, then kills pytest's whole process group."""
    deadline = time.time() + 0.5
    while time.time() < deadline:
        sum(i * i for i in range(1000))
    os.killpg(0, signal.SIGKILL)
