"""Helpers shared by the ThreadRadar sample programs.

The samples are plain scripts, not a package: each one puts this directory on
``sys.path`` before ``import common``, so it runs from any working directory.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable


def busy_work(ms: float) -> int:
    """Burn about ``ms`` milliseconds of this thread's CPU time in pure Python.

    The loop is bounded by ``time.thread_time()`` (this thread's CPU clock), not by
    the wall clock, so a call is a fixed *virtual workload* (paper §5.2): it costs
    the same CPU however many threads compete for the GIL, and a sampling profiler
    sees the calling thread computing for about ``ms`` milliseconds in total.
    Returns a checksum so the arithmetic is not dead code.
    """
    deadline = time.thread_time() + ms / 1000.0
    acc = 0
    while time.thread_time() < deadline:
        for i in range(64):
            acc = (acc * 31 + i) & 0xFFFF_FFFF
    return acc


def cpu_share(part: float, total: float) -> float:
    """``part`` as a percentage of ``total`` (0 when nothing was measured)."""
    return 100.0 * part / total if total > 0 else 0.0


def name_list(names: Iterable[str]) -> str:
    """Thread names sorted by their numeric suffix: ``worker-2, worker-10``."""

    def key(name: str) -> tuple[str, int]:
        prefix, _, number = name.rpartition("-")
        return (prefix, int(number)) if number.isdigit() else (name, -1)

    return ", ".join(sorted(names, key=key)) or "none"


def positive_int(text: str) -> int:
    """An ``argparse`` type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def positive_float(text: str) -> float:
    """An ``argparse`` type: a number greater than 0."""
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, not {text}")
    return value


def non_negative_float(text: str) -> float:
    """An ``argparse`` type: a number of at least 0."""
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {text}")
    return value
