"""Seen keys (runtime.operators.seen_keys) against a Python set: which keys of a batch are new,
across batches whose keys fall outside the box so far (it grows and lays its bits out again),
and giving up past MAX_BITS. The dataflow's side (distinct's first loads): test_distinct_load."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.operators import seen_keys
from runtime.operators.seen_keys import SeenKeys


def _batches(arity: int):
    value = st.integers(-40, 300)
    row = st.tuples(*[value] * arity)
    return st.lists(st.tuples(st.booleans(), st.lists(row, max_size=30)), min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_unseen_keys_are_those_not_in_a_set(data):
    arity = data.draw(st.integers(1, 3))
    seen = SeenKeys(arity)
    reference: set = set()
    for mark_only, rows in data.draw(_batches(arity)):
        rows = sorted(rows)  # a run's keys come sorted; repeats allowed
        key = np.array(rows, np.int64).T.reshape(arity, len(rows))
        if mark_only:
            assert seen.mark(key)
        else:
            fresh = seen.unseen(key)
            expected, before = [], set(reference)
            for r in rows:
                if r not in before:
                    expected.append(r)
                    before.add(r)
            assert [tuple(c) for c in fresh.T.tolist()] == expected
        reference.update(rows)


def test_the_box_grows_in_every_direction_and_keeps_what_it_saw():
    seen = SeenKeys(2)
    assert seen.unseen(np.array([[5], [5]])).tolist() == [[5], [5]]
    assert seen.unseen(np.array([[-3, 5, 900], [7, 5, -2]])).tolist() == [[-3, 900], [7, -2]]
    assert seen.unseen(np.array([[-3, 5, 5, 900], [7, 4, 5, -2]])).tolist() == [[5], [4]]


def test_a_box_past_max_bits_is_given_up(monkeypatch):
    monkeypatch.setattr(seen_keys, "MAX_BITS", 1 << 12)
    seen = SeenKeys(2)
    assert seen.unseen(np.array([[0, 10], [0, 10]])).tolist() == [[0, 10], [0, 10]]
    assert seen.unseen(np.array([[0], [5000]])) is None
    assert not seen.mark(np.array([[1 << 40], [0]]))


def test_keys_near_the_ends_of_int64_are_given_up_not_overflowed():
    seen = SeenKeys(1)
    assert seen.unseen(np.array([[-(1 << 63), (1 << 63) - 1]])) is None
    seen = SeenKeys(2)
    assert seen.unseen(np.array([[(1 << 63) - 2, (1 << 63) - 1], [0, 0]])) is None
    assert SeenKeys(1).mark(np.array([[1 << 62, (1 << 62) + 1]])) is True
