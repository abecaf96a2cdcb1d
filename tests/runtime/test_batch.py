"""Batches consolidate exactly, even when rows share their leading column."""

from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import runtime.batch as batch_module
from runtime.batch import Batch
from runtime.symbols import decode_floats, encode_floats

rows = st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.integers(0, 2), st.integers(-2, 2)), max_size=40)


def to_batch(rs):
    arr = np.array(rs, dtype=np.int64).reshape(-1, 4).T
    return Batch(arr[:2].copy(), arr[2:3].copy(), arr[3].copy())


def as_counter(b):
    c = Counter()
    for (x, y), t, d in zip(b.data.T.tolist(), b.time[0].tolist(), b.diff.tolist()):
        c[(x, y, t)] += d
    return Counter({k: v for k, v in c.items() if v})


@given(rows)
def test_consolidate_sums_identical_updates(rs):
    b = to_batch(rs).consolidate()
    assert as_counter(b) == as_counter(to_batch(rs))
    assert len(b) == len(as_counter(b))  # one update per (row, time), none zero


@given(rows)
def test_consolidate_is_exact_when_every_row_shares_the_lead(rs):
    original = batch_module.lead_column
    batch_module.lead_column = lambda block: np.zeros(block.shape[1], dtype=np.int64)
    try:
        b = to_batch(rs).consolidate()
    finally:
        batch_module.lead_column = original
    assert as_counter(b) == as_counter(to_batch(rs))
    assert len(b) == len(as_counter(b))


@given(st.lists(st.floats(allow_nan=False), min_size=2, max_size=20))
def test_float_encoding_preserves_order_and_value(xs):
    codes = encode_floats(np.array(xs))
    assert decode_floats(codes).tolist() == xs
    order = np.argsort(codes, kind="stable")
    # Sorting the codes sorts the values (-0.0 just before 0.0). Pairwise
    # comparison rather than np.diff, which turns inf - inf into nan.
    ordered = np.array(xs)[order]
    assert np.all(ordered[:-1] <= ordered[1:])
    signs = np.signbit(ordered[ordered == 0])
    assert not np.any(~signs[:-1] & signs[1:])


@given(st.integers(0, 4), st.lists(st.integers(0, 3), max_size=5), st.booleans())
def test_select_columns_keeps_the_given_columns_in_order(n, columns, reversed_view):
    """Whether it slices (consecutive ascending columns) or takes, the rows are the columns asked for."""
    from runtime.operators.basic import select_columns

    data = np.arange(4 * n, dtype=np.int64).reshape(4, n)
    if reversed_view:  # a view with a negative stride, as a user's column function may return
        data = data[::-1]
    b = Batch(data, np.zeros((1, n), np.int64), np.ones(n, np.int64))
    out = select_columns(tuple(columns))(b)
    assert out.data.shape == (len(columns), n)
    assert out.data.tolist() == [data[c].tolist() for c in columns]
    assert out.time is b.time and out.diff is b.diff
    assert out.bounds is None


@given(st.integers(1, 6), st.lists(st.integers(0, 3), max_size=5), st.lists(st.booleans(), min_size=6, max_size=6))
def test_selecting_and_filtering_keep_the_bounds_a_join_gave(n, columns, keep):
    """A join's output carries the bounds of its rows (Batch.bounds): a select keeps those of
    the columns it keeps, in their order, and those of the time and the diff; a filter keeps
    them all (they still hold for fewer rows)."""
    from runtime.operators.basic import filter_columns, select_columns

    rng = np.random.default_rng(n)
    data, time, diff = rng.integers(-9, 9, (4, n)), rng.integers(0, 5, (2, n)), rng.integers(1, 3, n)
    rows = np.vstack([data, time, diff])
    bounds = np.array([rows.min(axis=1) - 1, rows.max(axis=1)])
    b = Batch(data, time, diff, bounds)
    out = select_columns(tuple(columns))(b)
    assert out.bounds.tolist() == bounds[:, list(columns) + [4, 5, 6]].tolist()
    mask = np.array(keep[:n])
    kept = filter_columns(lambda d: mask)(b)
    assert kept.bounds is bounds and kept.data.tolist() == data[:, mask].tolist()
