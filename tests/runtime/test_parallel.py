"""Large batches run in two halves on two threads: the answers are the reference's all the same."""

from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings

from runtime import parallel
from runtime.operators import reduce
from tests.runtime.harness import check, toggles
from tests.runtime.test_oracle import reachability


@contextmanager
def split_everything():
    """Every batch of two or more updates is split."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parallel, "SPLIT", 2)
        patch.setattr(reduce, "SPLIT_READING", 2)
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
