"""An async test, run by pytest-asyncio: the event loop hands the sums to worker threads
(`asyncio.to_thread`), whose names (`asyncio_0`, …) show in the profiled run."""

from __future__ import annotations

import asyncio

import pytest

from pool import square_all

pytest.importorskip("pytest_asyncio", reason="pytest-asyncio runs async tests")


@pytest.mark.asyncio
async def test_sums_in_threads():
    chunks = [list(range(i * 15_000, (i + 1) * 15_000)) for i in range(3)]
    parts = await asyncio.gather(*(asyncio.to_thread(square_all, c) for c in chunks))
    assert sum(parts) == sum(n * n for c in chunks for n in c)
