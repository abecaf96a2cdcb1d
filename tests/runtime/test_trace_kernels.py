"""The trace's kernels against brute force: lookups and counts over every segment, merges."""

import bisect

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from runtime.trace import ArrangedBatch
from runtime.trace.kernels import FENCE, NO_ROOM, _seek, count_segments, lookup_segments, merge_segments, settle


def _segments(data, key_arity, val_arity, depth):
    """A trace block of sorted, consolidated segments (some long enough to have fences), its
    fences and ends, and the updates as (key, val, time, diff) tuples per segment."""
    blocks, ends = [], []
    for _ in range(data.draw(st.integers(0, 4))):
        n = data.draw(st.sampled_from([0, 1, 5, 40, 3 * FENCE + 7]))
        key = data.draw(arrays(np.int64, (key_arity, n), elements=st.integers(0, 6)))
        val = data.draw(arrays(np.int64, (val_arity, n), elements=st.integers(0, 3)))
        time = data.draw(arrays(np.int64, (depth, n), elements=st.integers(0, 3)))
        b = ArrangedBatch.build(key, val, time, np.ones(n, np.int64))
        blocks.append(np.vstack([b.key, b.val, b.time, b.diff[None]]))
        ends.append((ends[-1] if ends else 0) + len(b))
    store = np.ascontiguousarray(np.hstack(blocks)) if blocks else np.zeros((key_arity + val_arity + depth + 1, 0), np.int64)
    fence = np.ascontiguousarray(store[:key_arity, ::FENCE])
    return store, fence, np.array(ends, np.int64)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_lookup_segments_writes_every_match_of_every_segment_or_asks_for_room(data):
    k = data.draw(st.integers(0, 2))
    store, fence, ends = _segments(data, k, 1, 2)
    probes = data.draw(arrays(np.int64, (k, data.draw(st.integers(0, 12))), elements=st.integers(-1, 7)))
    if data.draw(st.booleans()) and probes.shape[1]:
        probes = probes[:, np.lexsort(probes[::-1])] if k else probes
    at = data.draw(st.integers(0, 3))
    room = data.draw(st.sampled_from([0, 10, 10_000]))
    owner, rows = np.full(room, -7), np.full((store.shape[0] - k, room), -7)
    end = lookup_segments(store, fence, ends, k, probes, owner, rows, at)
    starts = [0] + ends.tolist()[:-1]
    expected = [(i, j) for s, e in zip(starts, ends.tolist()) for i in range(probes.shape[1]) for j in range(s, e)
                if store[:k, j].tolist() == probes[:, i].tolist()]
    if at + len(expected) > room:
        assert end == -(at + len(expected))
        return
    assert end == at + len(expected)
    assert owner[at:end].tolist() == [i for i, _ in expected]
    assert rows[:, at:end].tolist() == store[k:, [j for _, j in expected]].tolist()
    assert (owner[:at] == -7).all() and (owner[end:] == -7).all()


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_count_segments_counts_the_updates_with_each_probe_key(data):
    k = data.draw(st.integers(1, 2))
    store, fence, ends = _segments(data, k, 0, 1)
    probes = data.draw(arrays(np.int64, (k, data.draw(st.integers(0, 12))), elements=st.integers(-1, 7)))
    got = count_segments(store, fence, ends, k, probes)
    n = int(ends[-1]) if len(ends) else 0
    expected = [sum(store[:k, j].tolist() == p for j in range(n)) for p in probes.T.tolist()]
    assert got.tolist() == expected


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_merge_segments_equals_arranging_the_advanced_concatenation(data):
    k, v, d = data.draw(st.integers(0, 2)), data.draw(st.integers(0, 1)), data.draw(st.integers(1, 2))
    halves = []
    for _ in range(2):
        n = data.draw(st.sampled_from([0, 1, 6, 30, 300]))  # 300: more runs to consolidate than merge_segments marks
        key = data.draw(arrays(np.int64, (k, n), elements=st.integers(0, 3)))
        val = data.draw(arrays(np.int64, (v, n), elements=st.integers(0, 2)))
        time = data.draw(arrays(np.int64, (d, n), elements=st.integers(0, 3)))
        diff = data.draw(arrays(np.int64, n, elements=st.sampled_from([-1, 1, 2])))
        b = ArrangedBatch.build(key, val, time, diff)
        halves.append(np.vstack([b.key, b.val, b.time, b.diff[None]]))
    # Rows before the two segments, which the merge leaves alone: the least key, value and time,
    # which the older segment's first rows may share.
    lead = data.draw(st.integers(0, 3))
    before = np.zeros((k + v + d + 1, lead), np.int64)
    before[-1] = 9
    store = np.ascontiguousarray(np.hstack([before] + halves))
    a, b, c = lead, lead + halves[0].shape[1], store.shape[1]
    since = data.draw(arrays(np.int64, (d, data.draw(st.integers(0, 2))), elements=st.integers(0, 3)))
    both = store[:, a:c].copy()
    spare = np.full((store.shape[0], c - b), -7)  # exactly the newer segment's size
    m = merge_segments(store, a, b, c, k + v, since, spare)
    time = np.maximum(both[k + v : -1, :, None], since[:, None, :]).min(axis=2) if since.shape[1] else both[k + v : -1]
    want = ArrangedBatch.build(both[:k], both[k : k + v], time, both[-1])
    assert store[:, a : a + m].tolist() == np.vstack([want.key, want.val, want.time, want.diff[None]]).tolist()
    assert store[:, :a].tolist() == before.tolist()  # the rows before the segments are left alone


def test_a_merge_with_more_rows_to_consolidate_than_it_marks_consolidates_them_all():
    """Advancing makes 300 times of one key equal (more than merge_segments marks one by one,
    twice the newer segment's size and 64): they become one update, as do the newer's."""
    older = np.vstack([np.zeros(300, np.int64), np.arange(300), np.ones(300, np.int64)])  # key, time, diff
    newer = np.array([[0, 1], [5, 400], [1, 1]], np.int64)
    store = np.ascontiguousarray(np.hstack([older, newer]))
    spare = np.empty((3, 2), np.int64)
    m = merge_segments(store, 0, 300, 302, 1, np.array([[350]], np.int64), spare)
    assert store[:, :m].tolist() == [[0, 1], [350, 400], [301, 1]]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_join_segments_writes_each_delta_update_times_each_matching_trace_update(data):
    """Against nested loops; the trace's times read `delay` iterations later (a delayed trace:
    runtime.trace.delayed) when it is 1. With little room, the join comes in parts: each call
    writes at most its room and stops before a delta update whose matches do not fit, and
    calls going on from where it stopped, with the room it asks for, give every row once;
    the bounds they widen end as the least and the greatest value of each row written."""
    from runtime.operators.join import _destinations
    from runtime.operators.join_kernels import join_segments

    k, v = data.draw(st.integers(1, 2)), data.draw(st.integers(0, 1))
    store, fence, ends = _segments(data, k, v, 2)
    n = data.draw(st.integers(0, 12))
    dkey = data.draw(arrays(np.int64, (k, n), elements=st.integers(-1, 7)))
    if data.draw(st.booleans()) and n:
        dkey = dkey[:, np.lexsort(dkey[::-1])]
    dval = data.draw(arrays(np.int64, (1, n), elements=st.integers(0, 9)))
    dtime = data.draw(arrays(np.int64, (2, n), elements=st.integers(0, 4)))
    ddiff = data.draw(arrays(np.int64, n, elements=st.sampled_from([-1, 1, 2])))
    delta_first = data.draw(st.booleans())
    delay = data.draw(st.sampled_from([0, 1]))
    room = data.draw(st.sampled_from([0, 1, 5, 10_000]))
    # Some of the joined columns, in some order (a select the join does), or all of them.
    columns = data.draw(st.none() | st.permutations(range(k + 1 + v)).flatmap(lambda p: st.integers(0, len(p)).map(lambda n: tuple(p[:n]))))
    width = k + 1 + v if columns is None else len(columns)
    dest = _destinations(k, 1, v, delta_first, columns)
    rows = store.T.tolist()
    want = []
    for i in range(n):
        for r in rows:
            if r[:k] == dkey[:, i].tolist():
                vals = dval[:, i].tolist() + r[k : k + v] if delta_first else r[k : k + v] + dval[:, i].tolist()
                epoch, iteration = r[k + v : k + v + 2]
                time = [max(dtime[0, i], epoch), max(dtime[1, i], iteration + delay)]
                row = dkey[:, i].tolist() + vals
                want.append((tuple(row if columns is None else [row[c] for c in columns]), tuple(time), int(ddiff[i]) * r[-1]))
    at = np.zeros(5, np.int64)
    bounds = np.array([[np.iinfo(np.int64).max] * (width + 3), [np.iinfo(np.int64).min] * (width + 3)])
    got = []
    calls = 0
    need = 0  # the room the last call asked for: the rows of the delta update it stopped before
    while at[0] < len(ends):
        size = max(room, need)
        out = (np.full((width, size), -7), np.full((2, size), -7), np.full(size, -7))
        m = join_segments(dkey, dval, dtime, ddiff, store, fence, ends, k, delay, dest, *out, at, bounds)
        assert need <= m <= size
        got += [(tuple(out[0][:, c].tolist()), tuple(out[1][:, c].tolist()), int(out[2][c])) for c in range(m)]
        need = int(at[4]) if at[0] < len(ends) else 0
        assert at[0] == len(ends) or need > size - m  # stopped only for want of room
        calls += 1
        assert calls <= len(want) + 1  # every call after the first writes rows
    assert sorted(got) == sorted(want)
    # The bounds are the least and the greatest value written to each row (data, time, diff).
    written = [list(data) + list(time) + [diff] for data, time, diff in got]
    for row in range(width + 3):
        values = [w[row] for w in written]
        assert bounds[:, row].tolist() == ([min(values), max(values)] if values else [np.iinfo(np.int64).max, np.iinfo(np.int64).min])


def test_settle_asks_for_room_and_changes_nothing_when_an_array_is_too_small():
    """settle copies a batch in only when the store, the spare block, the segment ends and
    the fences all have room for it; otherwise it answers NO_ROOM and leaves them as they were."""
    one = ArrangedBatch.build(np.array([[3]]), np.zeros((0, 1), np.int64), np.array([[0], [1]]), np.array([1]))
    two = ArrangedBatch.build(np.array([[1, 2]]), np.zeros((0, 2), np.int64), np.array([[0, 0], [0, 0]]), np.array([1, 1]))
    args = (one.key, one.val, one.time, one.diff)
    since = np.zeros((2, 1), np.int64)
    no_block = np.empty((4, 0), np.int64)  # the batch not given as one block

    def arrays(capacity, spare, ends, fences):
        store = np.full((4, capacity), -7, np.int64)
        store[:, :2] = np.vstack([two.key, two.time, two.diff[None]])
        ends_ = np.zeros(ends, np.int64)
        ends_[0] = 2
        return store, np.empty((4, spare), np.int64), ends_, np.zeros((1, fences), np.int64)

    for small in (dict(capacity=2), dict(ends=1), dict(fences=0)):
        sizes = dict(capacity=8, spare=8, ends=4, fences=1) | small
        store, spare, ends, fence = arrays(**sizes)
        inserted = np.array([9, -9, -9], np.int64)
        before = (store.copy(), ends.copy(), fence.copy(), inserted.copy())
        assert settle(store, spare, ends, 1, 1, since, fence, *args, inserted, 1 << 40, no_block) == NO_ROOM, small
        assert all(np.array_equal(a, b) for a, b in zip(before, (store, ends, fence, inserted)))
    store, spare, ends, fence = arrays(capacity=8, spare=0, ends=4, fences=1)  # the merge of both needs spare room
    assert settle(store, spare, ends, 1, 1, since, fence, *args, inserted, 1 << 40, no_block) == NO_ROOM
    store, spare, ends, fence = arrays(capacity=8, spare=8, ends=4, fences=1)
    count = settle(store, spare, ends, 1, 1, since, fence, *args, inserted, 1 << 40, no_block)
    assert count == 1  # copied in, then merged with the segment before it, from the bottom of the store
    assert store[:, :3].tolist() == [[1, 2, 3], [0, 0, 0], [0, 0, 1], [1, 1, 1]] and ends[0] == 3
    assert inserted.tolist() == [1, 0, 1]  # the least diff and the greatest times, the batch's taken in
    # Given as one block, the batch is merged from there: the same segment.
    store, spare, ends, fence = arrays(capacity=8, spare=8, ends=4, fences=1)
    inserted = np.array([9, -9, -9], np.int64)
    count = settle(store, spare, ends, 1, 1, since, fence, *args, inserted, 1 << 40, np.vstack([one.key, one.time, one.diff[None]]))
    assert count == 1 and store[:, :3].tolist() == [[1, 2, 3], [0, 0, 0], [0, 0, 1], [1, 1, 1]] and ends[0] == 3
    assert inserted.tolist() == [1, 0, 1] and fence[:, 0].tolist() == [1]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_seek_finds_the_first_position_not_before_the_probe_from_any_start(data):
    """_seek from any earlier probe's position (near or far, before or after the answer) gives
    what a binary search of the whole segment gives."""
    n = data.draw(st.integers(0, 6 * FENCE))
    keys = sorted(data.draw(st.lists(st.integers(0, 3 * FENCE), min_size=n, max_size=n)))
    lead = data.draw(st.integers(0, 1))
    store = np.ascontiguousarray(np.array([[lead] * n, keys, [1] * n], np.int64).reshape(3, n))
    fence = np.ascontiguousarray(store[:2, ::FENCE])
    probe = np.array([[data.draw(st.integers(0, 1))], [data.draw(st.integers(-1, 3 * FENCE + 1))]], np.int64)
    start = data.draw(st.integers(0, n))
    lo = data.draw(st.integers(start, n))
    rows = list(zip(store[0].tolist(), keys))[start:]
    expected = start + bisect.bisect_left(rows, (int(probe[0, 0]), int(probe[1, 0])))
    assert _seek(store, fence, 2, start, n, probe, 0, lo) == expected
