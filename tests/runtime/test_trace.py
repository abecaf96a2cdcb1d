"""Traces: lookups are exact, merges consolidate, compaction bounds the size."""

import mmap
from collections import Counter

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from runtime import Dataflow
from runtime.operators.capture import CaptureOp
from runtime.times import Antichain, Lattice
from runtime.memory import physical_memory
from runtime.trace import ArrangedBatch, Trace


def batch(rows, key_arity):
    data = np.array([r[0] for r in rows], dtype=np.int64).T.reshape(-1, len(rows))
    time = np.array([[r[1] for r in rows]], dtype=np.int64)
    diff = np.array([r[2] for r in rows], dtype=np.int64)
    return ArrangedBatch.build(data[:key_arity], data[key_arity:], time, diff)


updates = st.lists(st.tuples(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 2)), st.integers(0, 3), st.sampled_from([-1, 1])), min_size=1, max_size=20)


@given(st.lists(updates, min_size=1, max_size=6), st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=5))
def test_lookup_finds_exactly_the_matching_keys(batches, probes):
    trace = Trace(Lattice(), 2, 1)
    everything = Counter()
    for rows in batches:
        trace.insert(batch(rows, 2))
        for r, t, d in rows:
            everything[(r, t)] += d
    probe_key = np.array(probes, dtype=np.int64).T.reshape(2, -1)
    found = trace.lookup(probe_key)
    got = Counter()
    for i, v, t, d in zip(found.owner, *found.val, found.time[0], found.diff):
        k0, k1 = probe_key[:, i]
        got[((int(k0), int(k1), int(v)), int(t))] += int(d)
    want = Counter({k: c for k, c in everything.items() if k[0][:2] in set(probes) and c})
    got = Counter({k: c for k, c in got.items() if c})
    # Each probe finds the key's updates; duplicates in probes find them twice.
    assert got == Counter({k: c * probes.count(k[0][:2]) for k, c in want.items()})


def test_lookup_of_a_key_with_more_updates_than_room_finds_them_all():
    """A lookup's room follows the fan-out of earlier ones and grows when a batch has more."""
    trace = Trace(Lattice(), 1, 1)
    sizes = [1200, 280, 60, 10]  # four batches (each under 1/MERGE_RATIO of the previous: no merges)
    for b, size in enumerate(sizes):
        trace.insert(batch([((7, v), b, 1) for v in range(size)] + [((8, v), b, 1) for v in range(3)], 1))
    assert len(trace.ends) == 4
    missing = np.array([[1, 2, 3, 4, 5, 6]], dtype=np.int64)
    assert len(trace.lookup(missing).diff) == 0  # teaches the trace a fan-out of 0
    probe_key = np.array([[8, 7, 9]], dtype=np.int64)
    want = sorted([(1, v, b, 1) for b, size in enumerate(sizes) for v in range(size)] + [(0, v, b, 1) for b in range(4) for v in range(3)])
    for _ in range(2):  # the second lookup starts with the room the first needed
        found = trace.lookup(probe_key)
        got = sorted(zip(found.owner.tolist(), found.val[0].tolist(), found.time[0].tolist(), found.diff.tolist()))
        assert got == want


def test_multi_column_keys_sharing_a_leading_column_never_join():
    # The same leading column for two different keys: the other key columns decide.
    trace = Trace(Lattice(), 2, 0)
    trace.insert(ArrangedBatch.build(np.array([[7, 7], [5, 6]], dtype=np.int64), np.zeros((0, 2), np.int64),
                                     np.zeros((1, 2), np.int64), np.ones(2, np.int64)))
    found = trace.lookup(np.array([[7], [6]], dtype=np.int64))
    assert found.owner.tolist() == [0] and found.diff.tolist() == [1]
    assert trace.count(np.array([[7, 7, 8], [6, 4, 6]], dtype=np.int64)).tolist() == [1, 0, 0]


def test_a_merge_sums_an_update_of_the_newer_segment_into_the_older_ones_run():
    # The older segment holds (7, 0) at times 1 and 2; the newer one (7, 0) at time 1 again.
    trace = Trace(Lattice(), 1, 1)
    trace.insert(batch([((7, 0), 1, 1), ((7, 0), 2, 1)], 1))
    trace.insert(batch([((7, 0), 1, 1)], 1))
    assert trace.sizes() == [2]
    seg = trace.segment(0)
    assert seg.time[0].tolist() == [1, 2] and seg.diff.tolist() == [2, 1]


@given(st.lists(st.tuples(updates, st.integers(0, 4)), min_size=1, max_size=8))
def test_segments_hold_the_advanced_consolidated_updates(steps):
    """After any inserts and frontier moves, the trace accumulates like the updates with
    times advanced to the frontier, each segment sorted and consolidated."""
    lat = Lattice()
    trace = Trace(lat, 1, 2)
    handle = trace.new_handle()
    everything = Counter()
    frontier = 0
    for rows, advance in steps:
        trace.insert(batch(rows, 1))
        for r, t, d in rows:
            everything[(r, t)] += d
        frontier += advance
        handle.set_frontier(Antichain(lat, [(frontier,)]))
        got = Counter()
        for seg in trace.segments():
            cols = np.vstack([seg.key, seg.val, seg.time])
            assert np.all(np.diff(np.lexsort(cols[::-1])) == 1), "segment not sorted"
            assert np.unique(cols, axis=1).shape[1] == len(seg), "segment not consolidated"
            assert np.all(seg.diff != 0)
            for col, d in zip(cols.T.tolist(), seg.diff.tolist()):
                got[(tuple(col[:3]), max(col[3], frontier))] += d
        want = Counter()
        for (r, t), d in everything.items():
            want[(r, max(t, frontier))] += d
        assert +got == +want and -got == -want


@given(st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 3), st.tuples(st.integers(0, 5), st.integers(0, 5)), st.sampled_from([-1, 1, 2])),
                                    min_size=1, max_size=8),
                           st.integers(0, 2), st.integers(0, 2), st.booleans()), min_size=1, max_size=6))
def test_a_trace_knows_its_least_inserted_diff_and_a_bound_on_its_times(steps):
    """`only_insertions` says whether any diff inserted was not positive, and every time held,
    after merges that advance times to the readers' frontier (of one or two elements: the
    least of them in a coordinate bounds how far a time moves in it), is at or below
    `times_at_most` in each coordinate."""
    lat = Lattice(("epoch", "iteration"))
    trace = Trace(lat, 1, 0)
    handle = trace.new_handle()
    inserted, x, y = [], 0, 0
    for rows, dx, dy, two in steps:
        b = ArrangedBatch.build(np.array([[r[0] for r in rows]], np.int64), np.zeros((0, len(rows)), np.int64),
                                np.array([r[1] for r in rows], np.int64).T.copy(), np.array([r[2] for r in rows], np.int64))
        trace.insert(b)
        inserted += b.diff.tolist()
        x, y = x + dx, y + dy  # the frontier only advances
        handle.set_frontier(Antichain(lat, [(x, y + 2), (x + 2, y)] if two else [(x, y)]))
        trace.compact()
        assert trace.only_insertions == all(d > 0 for d in inserted)
        bound = trace.times_at_most()
        for seg in trace.segments():
            assert (seg.time <= bound[:, None]).all(), (seg.time.tolist(), bound.tolist())


def test_merges_compact_to_the_readers_frontier():
    lat = Lattice()
    trace = Trace(lat, 1, 0)
    handle = trace.new_handle()
    trace.insert(batch([((1,), 0, 1)], 1))
    trace.insert(batch([((1,), 5, -1)], 1))
    trace.compact()
    assert len(trace) == 2  # times 0 and 5 are still distinguishable
    handle.set_frontier(Antichain(lat, [(6,)]))
    trace.compact()
    assert len(trace) == 0  # both advance to 6 and cancel


def test_sliding_window_keeps_every_trace_bounded():
    """Many thousands of updates, constant live data: traces stay small."""
    window, total = 200, 20_000
    df = Dataflow()
    xin, xs = df.new_input("xs", 2)
    counts = xs.count(key=1)
    joined = xs.join(counts)
    cap = joined.distinct().capture()
    rng = np.random.default_rng(1)
    live = []
    for epoch in range(total):
        row = (int(rng.integers(0, 50)), epoch)
        xin.insert([row])
        live.append(row)
        if len(live) > window:
            xin.remove([live.pop(0)])
        xin.advance_to(epoch + 1)
        if epoch % 10 == 9:
            df.step()
            if epoch > 1000:
                for op in df.ops:
                    if isinstance(op, CaptureOp):
                        continue  # the change log the test asked for keeps every time
                    for trace in (getattr(op, "trace", None), getattr(op, "out_trace", None)):
                        if trace is not None:
                            assert len(trace) <= 8 * window, (trace, len(trace))
    df.step()
    assert sum(cap.contents().values()) == window


def test_a_large_store_gets_room_for_the_machines_memory_and_grows_no_more(monkeypatch):
    """A store growing past RESERVE_FROM bytes (lowered here to 1 KB) moves into address space
    with room for as many updates as the machine has memory for; later inserts go into it
    without another copy, and the trace holds what a trace of ordinary arrays holds."""
    import runtime.trace.spine as spine

    rows = [[((k % 97, k % 5, k % 3), k % 7, 1 if k % 11 else -1) for k in range(start, start + 40)] for start in range(0, 800, 40)]
    plain = Trace(Lattice(), 1, 2)
    for r in rows:
        plain.insert(batch(r, 1))
    monkeypatch.setattr(spine, "RESERVE_FROM", 1024)
    trace = Trace(Lattice(), 1, 2)
    stores = []
    for r in rows:
        trace.insert(batch(r, 1))
        stores.append(trace.store)
    mapped = [s for s in stores if _mapped(s)]
    assert mapped and all(s is mapped[0] for s in mapped)  # one store from the first large one on
    assert mapped[0].shape[1] >= physical_memory() // (trace.width * 8)
    assert trace.sizes() == plain.sizes()
    got, want = trace.contents(), plain.contents()
    assert all(np.array_equal(a, b) for a, b in zip((got.key, got.val, got.time, got.diff), (want.key, want.val, want.time, want.diff)))


def test_a_store_is_ordinary_memory_where_the_system_maps_none(monkeypatch):
    import runtime.memory
    import runtime.trace.spine as spine

    class Refusing:  # the mmap module, as a system that maps nothing
        MAP_PRIVATE, MAP_ANONYMOUS = mmap.MAP_PRIVATE, mmap.MAP_ANONYMOUS

        @staticmethod
        def mmap(*args, **kwargs):
            raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(spine, "RESERVE_FROM", 1024)
    monkeypatch.setattr(runtime.memory, "mmap", Refusing)
    trace = Trace(Lattice(), 1, 2)
    for start in range(0, 400, 40):
        trace.insert(batch([((k, 0, 0), 0, 1) for k in range(start, start + 40)], 1))
    assert not _mapped(trace.store) and len(trace) == 400


def _mapped(array) -> bool:
    """The array's memory is a mapping of its own (runtime.memory.address_space)."""
    while isinstance(array, np.ndarray):
        array = array.base
    return isinstance(array.obj if isinstance(array, memoryview) else array, mmap.mmap)


@given(st.integers(0, 2**32), st.integers(1, 3), st.lists(st.integers(1, 1500), min_size=1, max_size=3),
       st.sampled_from([3, 1 << 20, 1 << 40, 1 << 62]), st.lists(st.integers(0, 1 << 20), min_size=2, max_size=2))
def test_arranging_batches_that_carry_bounds_equals_arranging_them_without(seed, key_arity, sizes, span, slack):
    """A join's output carries the bounds of its rows (Batch.bounds): arranged with them,
    exact or wider, batches come out as arranged without them, by columns the sort packs
    into words and by columns too wide for that."""
    from runtime.batch import Batch

    rng = np.random.default_rng(seed)
    arity = key_arity + 1
    batches = []
    for n in sizes:
        data = rng.integers(-span, span, (arity, n), dtype=np.int64)
        time = rng.integers(0, 4, (2, n), dtype=np.int64)
        diff = rng.choice(np.array([-1, 1, 2], np.int64), n)
        batches.append(Batch(data, time, diff))
    rows = np.concatenate([np.vstack([b.data, b.time, b.diff]) for b in batches], axis=1)
    bounds = np.array([rows.min(axis=1) - slack[0], rows.max(axis=1) + slack[1]])
    carrying = [Batch(b.data, b.time, b.diff, bounds) for b in batches]
    plain, bounded = ArrangedBatch.from_batches(batches, key_arity), ArrangedBatch.from_batches(carrying, key_arity)
    for a, b in ((plain.key, bounded.key), (plain.val, bounded.val), (plain.time, bounded.time), (plain.diff, bounded.diff)):
        assert np.array_equal(a, b)
    assert np.all(plain.diff)  # consolidated
