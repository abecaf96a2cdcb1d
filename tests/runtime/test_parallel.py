"""Large batches run in two halves on two threads: the answers are the reference's all the same."""

from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime import parallel
from runtime.operators.join import _adjoined
from tests.runtime.harness import check, toggles
from tests.runtime.test_oracle import reachability


@contextmanager
def split_everything():
    """Every batch of two or more updates is split."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parallel, "SPLIT", 2)
        yield


def test_split_point_never_cuts_a_key():
    key = np.array([[1, 1, 1, 2, 2, 3], [5, 5, 5, 0, 0, 0]], np.int64)
    assert parallel.split_point(key[:, :2]) is None  # too small
    cut = parallel.split_point(np.repeat(key, parallel.SPLIT, axis=1))
    assert cut == 3 * parallel.SPLIT  # the first change of key at or after the middle


@settings(max_examples=60, deadline=None)
@given(toggles(2, [2, 2], values=4, max_updates=10))
def test_join_in_halves(steps):
    with split_everything():
        check(lambda a, b: a.join(b), [2, 2], steps)


@settings(max_examples=60, deadline=None)
@given(toggles(2, [2, 1], values=6, max_updates=10, max_steps=8))
def test_iterated_join_and_distinct_in_halves(steps):
    with split_everything():
        check(reachability, [2, 1], steps)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40), st.integers(1, 4))
def test_halves_written_into_one_block_are_adjoined_in_place(low, gap, high, rows):
    """A join's halves write into the two ends of one block; the high half moves down next to
    the low one (in chunks no longer than the gap), or both are copied when the gap is tiny."""
    block = np.full((rows, low + gap + high + 3), -1, np.int64)
    block[:, :low] = np.arange(low)
    block[:, low + gap : low + gap + high] = np.arange(low, low + high)
    got = _adjoined(block[:, :low], block[:, low + gap : low + gap + high])
    assert got.tolist() == [list(range(low + high))] * rows
    if low + high and (gap == 0 or gap * 16 >= high):
        assert np.shares_memory(got, block)  # in place
    separate = _adjoined(block[:, :low].copy(), np.arange(low, low + high).repeat(rows).reshape(high, rows).T.copy())
    assert separate.tolist() == [list(range(low + high))] * rows
