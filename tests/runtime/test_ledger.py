"""The count ledger (runtime.ledger) accepts exactly the submissions after which no row's
count is negative at any time, compared with a from-scratch reference over every update
accepted so far; a refused submission changes nothing."""

import gc
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime import ledger as ledger_module
from runtime.ledger import CountLedger, NegativeCount


def never_negative(updates) -> bool:
    """The reference: per row, counts summed in time order (a time's updates together) stay >= 0."""
    per_row = defaultdict(lambda: defaultdict(int))
    for row, time, diff in updates:
        per_row[row][time] += diff
    for by_time in per_row.values():
        count = 0
        for time in sorted(by_time):
            count += by_time[time]
            if count < 0:
                return False
    return True


update = st.tuples(st.tuples(st.integers(0, 2), st.integers(0, 1)), st.integers(0, 4), st.sampled_from([-2, -1, 1, 1, 2]))
submission = st.tuples(st.lists(update, min_size=1, max_size=6), st.integers(0, 2))  # updates, how far the open time moves


@settings(max_examples=400, deadline=None)
@given(st.lists(submission, min_size=1, max_size=25), st.booleans(), st.sampled_from([0, 3, 32]), st.sampled_from([0, 4, 1 << 14]))
def test_the_ledger_accepts_what_the_reference_accepts(submissions, pile_early, few, small):
    saved = ledger_module._PILE, ledger_module._FEW, ledger_module._SMALL
    if pile_early:  # arrange after every submission instead of every 64
        ledger_module._PILE = 1
    # 0: the check for many rows on every submission; 32: the row-by-row one on every
    # submission; 3: both, the row-by-row one until a larger submission is unarranged.
    ledger_module._FEW = few
    # 0: rows in the trace from the start; 4: in the dict, then in the trace once more than 4
    # (a row's updates compacted past _SHORT); 16,384: in the dict throughout.
    ledger_module._SMALL = small
    try:
        ledger = CountLedger(2)
        accepted = []
        open_time = 0
        for updates, step in submissions:
            updates = [(row, open_time + t, d) for row, t, d in updates]  # never before the open time
            data = np.array([row for row, _, _ in updates], dtype=np.int64).T
            time = np.array([t for _, t, _ in updates], dtype=np.int64)
            diff = np.array([d for _, _, d in updates], dtype=np.int64)
            valid = never_negative(accepted + updates)
            try:
                ledger.submit(data, diff, time, open_time)
            except NegativeCount as e:
                assert not valid, f"refused a valid submission: {e}"
                row = tuple(int(v) for v in e.row)
                assert row in {r for r, _, d in updates if d < 0}
                assert e.count < 0
                continue
            assert valid, f"accepted {updates} after {accepted}"
            accepted += updates
            open_time += step
    finally:
        ledger_module._PILE, ledger_module._FEW, ledger_module._SMALL = saved


@pytest.mark.parametrize("few, small", [(0, 0), (32, 0), (32, 1 << 14)])  # small 0: rows in the trace, else in the dict
def test_a_refusal_names_the_earliest_negative_time_and_records_nothing(few, small, monkeypatch):
    monkeypatch.setattr(ledger_module, "_FEW", few)
    monkeypatch.setattr(ledger_module, "_SMALL", small)
    ledger = CountLedger(1)
    ledger.submit(np.array([[7]]), np.array([1]), np.array([3]), 0)
    with pytest.raises(NegativeCount) as refused:  # removed at 1 and 2: negative from 1 on
        ledger.submit(np.array([[7, 7]]), np.array([-1, -1]), np.array([2, 1]), 0)
    assert (refused.value.row.tolist(), refused.value.time, refused.value.count) == ([7], 1, -1)
    ledger.submit(np.array([[7]]), np.array([-1]), np.array([3]), 0)  # the refused removals left no trace


@pytest.mark.parametrize("few, small", [(0, 0), (32, 0), (32, 1 << 14)])  # small 0: rows in the trace, else in the dict
def test_a_nullary_relation_has_one_row_to_count(few, small, monkeypatch):
    monkeypatch.setattr(ledger_module, "_FEW", few)
    monkeypatch.setattr(ledger_module, "_SMALL", small)
    ledger = CountLedger(0)
    ledger.submit(np.zeros((0, 2), dtype=np.int64), np.array([1, 1]), np.array([0, 0]), 0)
    ledger.submit(np.zeros((0, 1), dtype=np.int64), np.array([-2]), np.array([1]), 1)
    with pytest.raises(NegativeCount) as refused:
        ledger.submit(np.zeros((0, 1), dtype=np.int64), np.array([-1]), np.array([2]), 2)
    assert (refused.value.row.tolist(), refused.value.time, refused.value.count) == ([], 2, -1)


def test_rows_kept_in_the_dict_leave_nothing_for_the_garbage_collector_to_track():
    """A few thousand rows kept by row must not each add an object that every full
    collection of the process walks (lists did: a bulk load of 9,000 edges then paid a
    collection of the whole heap, 65 ms instead of 16 ms)."""
    ledger = CountLedger(2)
    rows = np.arange(10_000, dtype=np.int64).reshape(2, 5_000)
    gc.collect()
    before = len(gc.get_objects())
    ledger.submit(rows, np.ones(5_000, np.int64), np.zeros(5_000, np.int64), 0)
    ledger.submit(rows[:, :10], -np.ones(10, np.int64), np.ones(10, np.int64), 1)
    gc.collect()
    assert ledger.small is not None and len(ledger.small) == 5_000
    assert len(gc.get_objects()) - before < 100
