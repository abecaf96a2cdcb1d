"""Large trace inserts run on the other core (runtime.trace.spine, runtime.parallel): whatever is
read right after one sees the insert done. Here every insert goes to the other core
(BACKGROUND_FROM lowered to 1) and the traces and a dataflow's answers are checked against
inserts done in place and a from-scratch closure."""

import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import runtime.parallel
import runtime.trace.spine as spine
from runtime.times import Antichain, Lattice
from runtime.trace import Trace
from runtime.trace.kernels import FENCE

from tests.runtime.test_distinct_load import closure, closure_dataflow, feed_epoch
from tests.runtime.test_trace import batch


@pytest.fixture(autouse=True)
def two_threads(monkeypatch):
    """A pool to hand inserts to even on a one-core machine (where the runtime has none)."""
    if runtime.parallel._pool is None:
        monkeypatch.setattr(runtime.parallel, "_pool", ThreadPoolExecutor(max_workers=2))

updates = st.lists(st.tuples(st.tuples(st.integers(0, 5), st.integers(0, 3)), st.integers(0, 3), st.sampled_from([-1, 1])),
                   min_size=1, max_size=30)


def _rows(trace):
    got = trace.contents()
    return Counter({(k, v, t): d for k, v, t, d in zip(got.key[0].tolist(), got.val[0].tolist(), got.time[0].tolist(),
                                                        got.diff.tolist())})


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(updates, st.integers(0, 3), st.sampled_from(["lookup", "len", "contents", "parts"])),
                min_size=1, max_size=8))
def test_reads_right_after_an_insert_on_the_other_core_see_it_done(steps):
    handed, kept = Trace(Lattice(), 1, 1), Trace(Lattice(), 1, 1)
    readers = [handed.new_handle(), kept.new_handle()]
    spine.BACKGROUND_FROM, before = 1, spine.BACKGROUND_FROM
    try:
        for rows, frontier, read in steps:
            for trace, reader in zip((handed, kept), readers):
                reader.set_frontier(Antichain(trace.lattice, [(frontier,)]))
            arranged = batch(rows, 1)
            handed.insert(arranged)
            assert handed._pending is not None or not len(arranged)  # on the other core (or done there)
            if read == "lookup":
                found = handed.lookup(np.arange(6, dtype=np.int64).reshape(1, -1))
                assert len(found.diff) == sum(s for s in handed.sizes())  # every update has a key in 0..5
            elif read == "len":
                assert len(handed) == sum(handed.sizes())
            elif read == "parts":
                store, fence, ends = handed.parts()
                assert ends.tolist() == handed.ends
            spine.BACKGROUND_FROM = 1 << 62
            kept.insert(arranged)
            spine.BACKGROUND_FROM = 1
            assert handed.sizes() == kept.sizes()
            assert _rows(handed) == _rows(kept)
            assert handed.only_insertions == kept.only_insertions
            assert handed.times_at_most().tolist() == kept.times_at_most().tolist()
    finally:
        spine.BACKGROUND_FROM = before


def test_an_error_in_an_insert_on_the_other_core_is_raised_at_the_next_use(monkeypatch):
    monkeypatch.setattr(spine, "BACKGROUND_FROM", 1)

    def broken(*args):
        raise MemoryError("no room")

    monkeypatch.setattr(spine, "settle", broken)
    trace = Trace(Lattice(), 1, 1)
    trace.insert(batch([((1, 2), 0, 1)], 1))  # handed over: no error yet
    with pytest.raises(MemoryError, match="no room"):
        trace.lookup(np.array([[1]], np.int64))
    with pytest.raises(MemoryError, match="no room"):  # and at the end of a step
        runtime.parallel.finish_background()


def test_a_closure_with_every_insert_on_the_other_core_stays_exact(monkeypatch):
    monkeypatch.setattr(spine, "BACKGROUND_FROM", 1)
    handed = []
    in_background = spine.in_background

    def spy(fn):
        handed.append(in_background(fn))
        return handed[-1]

    monkeypatch.setattr(spine, "in_background", spy)
    df, handle, captured = closure_dataflow()
    rng = random.Random(11)
    graph = {(rng.randrange(60), rng.randrange(60)) for _ in range(120)}
    epochs = [(sorted(graph), []), ([(60, 61), (61, 0)], []), ([], rng.sample(sorted(graph), 15)),
              (rng.sample(sorted(graph), 5) + [(3, 70)], rng.sample(sorted(graph), 10))]
    for t, (added, removed) in enumerate(epochs):
        graph = (graph | set(added)) - set(removed)
        feed_epoch(handle, t, added, removed)
        start = len(handed)
        df.step()
        assert len(handed) > start  # the epoch's inserts were handed over
        assert all(future.done() for future in handed[start:])  # and done within the step
        assert captured.contents() == {pair: 1 for pair in closure(graph)}, t


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(updates, st.integers(0, 3)), min_size=1, max_size=10), st.booleans())
def test_merges_in_two_halves_leave_the_trace_a_whole_merge_leaves(steps, handed_over):
    """Every merge split between the cores (SPLIT_MERGE_FROM lowered to 2), inserted here or on
    the other core: the same segments and updates as merges done whole."""
    split, whole = Trace(Lattice(), 1, 1), Trace(Lattice(), 1, 1)
    readers = [split.new_handle(), whole.new_handle()]
    before = spine.SPLIT_MERGE_FROM, spine.BACKGROUND_FROM
    try:
        for rows, frontier in steps:
            for trace, reader in zip((split, whole), readers):
                reader.set_frontier(Antichain(trace.lattice, [(frontier,)]))
            arranged = batch(rows, 1)
            spine.SPLIT_MERGE_FROM, spine.BACKGROUND_FROM = 2, 1 if handed_over else 1 << 62
            split.insert(arranged)
            spine.SPLIT_MERGE_FROM, spine.BACKGROUND_FROM = 1 << 62, 1 << 62
            whole.insert(arranged)
            assert split.sizes() == whole.sizes()
            assert _rows(split) == _rows(whole)
            store, fence, ends = split.parts()
            assert fence[:, : (len(split) + FENCE - 1) // FENCE].tolist() == store[:1, : len(split) : FENCE].tolist()
    finally:
        spine.SPLIT_MERGE_FROM, spine.BACKGROUND_FROM = before


def test_a_merge_in_halves_moves_the_upper_half_down_when_the_lower_one_shrank(monkeypatch):
    """Keys 0..99 at time 0, then their removal for keys below 40 and an insert for keys 40..59:
    the halves cut the merge at key 50; the lower half's 140 updates cancel down to 20, so the
    upper half's 60 move down next to them."""
    monkeypatch.setattr(spine, "SPLIT_MERGE_FROM", 2)
    halves = []
    merge_into = spine.merge_into

    def spy(*args):
        halves.append(args[2:4])
        return merge_into(*args)

    monkeypatch.setattr(spine, "merge_into", spy)
    trace = Trace(Lattice(), 1, 1)
    trace.new_handle()  # its frontier stays at time 0
    trace.insert(batch([((key, 0), 0, 1) for key in range(100)], 1))
    trace.insert(batch([((key, 0), 0, -1) for key in range(40)] + [((key, 1), 0, 1) for key in range(40, 60)], 1))
    assert sorted(halves) == [(0, 50), (50, 100)]  # the older segment's rows on each side of the cut
    assert trace.sizes() == [80]
    assert _rows(trace) == Counter({(key, 0, 0): 1 for key in range(40, 100)} | {(key, 1, 0): 1 for key in range(40, 60)})
