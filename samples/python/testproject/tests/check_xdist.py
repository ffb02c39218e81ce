"""Work for pytest-xdist's workers (`-n 2`): each test runs threads in its worker process."""

from __future__ import annotations

import pytest

from pool import parallel_sum


@pytest.mark.parametrize("i", range(4))
def test_chunk(i):
    numbers = list(range(i * 20_000, (i + 1) * 20_000))
    assert parallel_sum(numbers, workers=2) == sum(n * n for n in numbers)
