"""One passing, one failing, a parametrized, a test class and a unittest.TestCase test of
pool.py. The failing test is meant to fail: it shows a failure's outcome in the run."""

from __future__ import annotations

import unittest

import pytest

from pool import checked_sum, parallel_sum

NUMBERS = list(range(60_000))
EXPECTED = sum(n * n for n in NUMBERS)


def test_parallel_sum_is_right():
    assert parallel_sum(NUMBERS, workers=4) == EXPECTED


def test_checked_sum_is_right():
    assert checked_sum(NUMBERS, workers=4) == EXPECTED, "checked_sum leaves the last number out"


@pytest.mark.parametrize("workers", [1, 3])
def test_any_number_of_workers(workers):
    assert parallel_sum(NUMBERS[:20_000], workers=workers) == sum(n * n for n in NUMBERS[:20_000])


class TestPool:
    def test_empty(self):
        assert parallel_sum([], workers=2) == 0


class PoolCase(unittest.TestCase):
    def test_small(self):
        self.assertEqual(parallel_sum([1, 2, 3], workers=2), 14)
