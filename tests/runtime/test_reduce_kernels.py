"""The reduce kernels against each other and against a brute-force closure."""


import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.operators import reduce_kernels as kernels
from runtime.times import Lattice
from runtime.trace import ArrangedBatch, Trace

times_1d = st.lists(st.tuples(st.integers(0, 6)), min_size=0, max_size=8)
times_2d = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=0, max_size=8)


def _columns(groups, depth):
    rows = sorted({(g, *t) for g, ts in enumerate(groups) for t in ts})
    g = np.array([r[0] for r in rows], dtype=np.int64)
    t = np.array([r[1:] for r in rows], dtype=np.int64).reshape(len(rows), depth).T.copy()
    return g, t


def _brute_closure(new, hist):
    """Joins of subsets of new ∪ hist that contain a new time (product order): the new
    times, closed under joining with any time of either."""
    gens = set(new) | set(hist)
    out = found = set(new)
    while found:
        found = {tuple(max(a, b) for a, b in zip(c, g)) for c in found for g in gens} - out
        out = out | found
    return out


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_product_sweep_equals_closure(data):
    depth = data.draw(st.sampled_from([1, 2]))
    strategy = times_1d if depth == 1 else times_2d
    ngroups = data.draw(st.integers(1, 3))
    new = [data.draw(strategy) for _ in range(ngroups)]
    hist = [data.draw(strategy.map(lambda ts: ts[:5])) for _ in range(ngroups)]
    new_g, new_t = _columns(new, depth)
    hist_g, hist_t = _columns(hist, depth)
    # The history in two parts, in any order.
    order = np.random.default_rng(len(hist_g)).permutation(len(hist_g))
    a, b = order[: len(order) // 2], order[len(order) // 2:]
    got_g, got_t = kernels.product_interesting_times(
        ngroups, new_g, new_t, hist_g[a], hist_t[:, a], hist_g[b], hist_t[:, b])
    got = list(zip(got_g.tolist(), map(tuple, got_t.T.tolist())))
    assert got == sorted(set(got)), "sweep output must be sorted and unique"
    expected = {(g, t) for g in range(ngroups) for t in _brute_closure(new[g], hist[g])}
    assert set(got) == expected
    generic_g, generic_t = kernels.interesting_times(
        ngroups, new_g, new_t, hist_g, hist_t, np.zeros(depth, dtype=np.bool_))
    assert set(zip(generic_g.tolist(), map(tuple, generic_t.T.tolist()))) == expected


def _le(a, b):
    return all(x <= y for x, y in zip(a, b))


def _brute_distinct(new, inputs, outputs, frontier):
    """Distinct's corrections for one group from the definitions: at each interesting
    time in lexicographic order (product order is a refinement of it), the
    indicator of the accumulated input, minus the accumulated output and the
    corrections already made at or before that time. Times in advance of the
    frontier are set aside (`later`); `needed` are those of them at which a correction
    would be due if no more input came."""
    corrections, later, needed = [], [], []
    for t in sorted(_brute_closure(new, [s for s, _ in inputs + outputs])):
        acc_in = sum(d for s, d in inputs if _le(s, t))
        acc_out = sum(d for s, d in outputs if _le(s, t))
        done = sum(d for s, d in corrections if _le(s, t))
        e = (1 if acc_in > 0 else 0) - acc_out - done
        if any(_le(f, t) for f in frontier):
            later.append(t)
            if e:
                needed.append(t)
        elif e:
            corrections.append((t, e))
    return corrections, later, needed


def _minimal(times):
    return [t for t in times if not any(_le(s, t) and s != t for s in times)]


def _updates(group_lists, depth):
    rows = [(g, t, d) for g, ts in enumerate(group_lists) for t, d in ts]
    rows = [rows[i] for i in np.random.default_rng(len(rows)).permutation(len(rows))]  # any order
    g = np.array([r[0] for r in rows], dtype=np.int64)
    t = np.array([r[1] for r in rows], dtype=np.int64).reshape(len(rows), depth).T.copy()
    d = np.array([r[2] for r in rows], dtype=np.int64)
    return g, t, d


def _consolidated(updates):
    total = {}
    for t, d in updates:
        total[t] = total.get(t, 0) + d
    return sorted((t, d) for t, d in total.items() if d)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_distinct_equals_its_definition(data):
    """Groups whose times form a chain take distinct_fused's sweep, the rest
    distinct_general's closure and prefix sums; both must give the corrections the
    definition gives, reading histories from traces of one or more segments."""
    depth = data.draw(st.sampled_from([1, 2]))
    coordinate = st.integers(0, 5)
    time = st.tuples(*[coordinate] * depth)
    def chain(most, size):  # (x, x): pairwise comparable
        return st.lists(st.integers(0, most), min_size=1, max_size=size).map(lambda xs: [tuple([x] * depth) for x in xs])
    ngroups = data.draw(st.integers(1, 4))
    new, inputs, outputs = [], [], []
    for _ in range(ngroups):
        if data.draw(st.booleans()):
            # A long chain has more elements than distinct_fused sorts by insertion.
            times = data.draw(chain(60, 60) if data.draw(st.booleans()) else chain(5, 12))
        else:
            times = data.draw(st.lists(time, min_size=1, max_size=10))
        k = data.draw(st.integers(1, len(times)))
        diffs = data.draw(st.lists(st.sampled_from([-1, 1, 2]), min_size=len(times), max_size=len(times)))
        new.append(sorted(set(times[:k])))
        split = data.draw(st.integers(0, len(times)))
        # Histories as traces hold them: consolidated (times whose diffs cancel are gone).
        inputs.append(_consolidated(zip(times[:split], diffs[:split])))
        outputs.append(_consolidated([(t, 1) for t in times[split:]][: len(times) // 3]))
    frontier = data.draw(st.lists(time, max_size=2))
    _assert_distinct_is_its_definition(data, depth, new, inputs, outputs, frontier)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_distinct_of_one_round_equals_its_definition(data):
    """A loop's round over several epochs at once: each key's new times share their
    iteration, beside histories at earlier and later iterations and other epochs (no chain:
    distinct_fused sets the key aside, and distinct_general sweeps the round's level when
    every later time is in advance of the frontier, else takes the closure)."""
    ngroups = data.draw(st.integers(1, 4))
    time = st.tuples(st.integers(0, 6), st.integers(0, 6))
    new, inputs, outputs = [], [], []
    for _ in range(ngroups):
        level = data.draw(st.integers(0, 6))
        new.append(sorted(set(data.draw(st.lists(st.integers(0, 6), min_size=1, max_size=4)))))
        new[-1] = [(x, level) for x in new[-1]]
        history = data.draw(st.lists(time, max_size=14))
        diffs = data.draw(st.lists(st.sampled_from([-1, 1, 2]), min_size=len(history), max_size=len(history)))
        split = data.draw(st.integers(0, len(history)))
        inputs.append(_consolidated(zip(history[:split], diffs[:split])))
        outputs.append(_consolidated([(t, 1) for t in history[split:]]))
    # The frontier of a round: epochs from some one on at the next iteration, later epochs at
    # any; sometimes another.
    epoch, iteration = data.draw(st.integers(0, 6)), data.draw(st.integers(0, 7))
    frontier = [(epoch, iteration)] + data.draw(st.lists(time, max_size=1))
    _assert_distinct_is_its_definition(data, 2, new, inputs, outputs, frontier)


def _assert_distinct_is_its_definition(data, depth, new, inputs, outputs, frontier):
    """kernels.distinct on the groups' new times and histories (traces of one or two
    segments), with kept pairs carried along, against _brute_distinct."""
    ngroups = len(new)
    time = st.tuples(*[st.integers(0, 5)] * depth)
    frontier = [f for f in frontier if not any(_le(o, f) and o != f for o in frontier)]
    lattice = Lattice(("epoch", "iteration")[:depth])
    traces = []
    for history in (inputs, outputs):
        trace = Trace(lattice, 1, 0)
        rows = [(g, t, d) for g, h in enumerate(history) for t, d in h]
        cut = data.draw(st.integers(0, len(rows)))  # one or two inserts: one or more segments
        for part in (rows[:cut], rows[cut:]):
            if part:
                trace.insert(ArrangedBatch.build(np.array([[g for g, _, _ in part]], np.int64), np.zeros((0, len(part)), np.int64),
                                                 np.array([t for _, t, _ in part], np.int64).T.reshape(depth, -1),
                                                 np.array([d for _, _, d in part], np.int64)))
        traces.append(trace)
    pairs = [(g, t) for g, ts in enumerate(new) for t in ts]
    key = np.array([[g for g, _ in pairs]], np.int64)
    times = np.array([t for _, t in pairs], np.int64).T.reshape(depth, -1).copy()
    frontier_t = np.array(sorted(set(frontier)), dtype=np.int64).reshape(-1, depth).T.copy()
    since = np.zeros((depth, 1), dtype=np.int64)
    # Pairs kept by earlier runs are carried along, ahead of this run's later work.
    kept = data.draw(st.lists(st.tuples(st.integers(0, 9), time), max_size=3))
    kept_key = np.array([[g for g, _ in kept]], np.int64).reshape(1, -1)
    kept_time = np.array([t for _, t in kept], np.int64).T.reshape(depth, -1).copy()
    out_k, out_t, out_d, later_k, later_t = kernels.distinct(key, times, kept_key, kept_time, traces[0], traces[1].parts(), since, frontier_t)
    got = list(zip(out_k[0].tolist(), map(tuple, out_t.T.tolist()), out_d.tolist()))
    assert got == sorted(got)  # in arranged order: by key, then time
    got_later = list(zip(later_k[0].tolist(), map(tuple, later_t.T.tolist())))
    assert got_later[: len(kept)] == [(g, tuple(t)) for g, t in kept]
    got_later = sorted(got_later[len(kept):])
    expected = []
    for g in range(ngroups):
        corrections, later, needed = _brute_distinct(new[g], inputs[g], outputs[g], set(frontier))
        expected += [(g, t, e) for t, e in corrections]
        kept_here = [t for h, t in got_later if h == g]
        assert len(set(kept_here)) == len(kept_here)
        # What is set aside is later work, and enough of it: each later time at which a correction
        # would be due, were no more input to come, is at or after a time set aside (the join-closure
        # from that one brings it back); a later time at which more input comes is visited then.
        assert set(kept_here) <= set(_minimal(later)) | set(_minimal(needed))
        assert all(any(_le(s, t) for s in kept_here) for t in needed)
        if _is_chain(new[g] + [t for t, _ in inputs[g] + outputs[g]]):
            # A chain's sweep sets aside the least of those times only, or nothing.
            assert kept_here == _minimal(needed)
    assert got == sorted(expected)


def _is_chain(times):
    times = sorted(set(times))
    return all(_le(a, b) for a, b in zip(times, times[1:]))


def _trace_of(rows, depth):
    """A trace of (key, time, diff) rows, keys of one column, inserted in two parts (two segments)."""
    trace = Trace(Lattice(("epoch", "iteration")[:depth]), 1, 0)
    for part in (rows[: len(rows) // 2], rows[len(rows) // 2 :]):
        if part:
            trace.insert(ArrangedBatch.build(np.array([[g for g, _, _ in part]], np.int64), np.zeros((0, len(part)), np.int64),
                                             np.array([t for _, t, _ in part], np.int64).T.reshape(depth, -1),
                                             np.array([d for _, _, d in part], np.int64)))
    return trace


def _work(pairs, kept, frontier, depth):
    """(key, time) columns of the pairs to visit and of the kept ones (keys of one column),
    and the frontier's columns."""
    def columns(items):
        return (np.array([[g for g, _ in items]], np.int64).reshape(1, -1),
                np.array([t for _, t in items], np.int64).T.reshape(depth, -1).copy())

    return (*columns(pairs), *columns(kept), np.array(frontier, np.int64).T.reshape(depth, -1).copy())


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_distinct_sorting_its_work_itself_equals_ready_work_first(data):
    """With `sort`, distinct joins the kept pairs now due to the visited ones itself (one
    compiled call): the same corrections and the same work kept as ready_work, then distinct."""
    depth = data.draw(st.sampled_from([1, 2]))
    time = st.tuples(*[st.integers(0, 4)] * depth)
    row = st.tuples(st.integers(0, 5), time, st.sampled_from([-1, 1, 2]))
    traces = [_trace_of(data.draw(st.lists(row, max_size=12)), depth) for _ in range(2)]
    pairs = sorted(set(data.draw(st.lists(st.tuples(st.integers(0, 5), time), max_size=8))))  # one arranged batch's
    kept = data.draw(st.lists(st.tuples(st.integers(0, 5), time), max_size=6))  # in any order
    frontier = sorted(set(data.draw(st.lists(time, min_size=1, max_size=2))))

    key, times, kept_key, kept_time, frontier_t = _work(pairs, kept, frontier, depth)
    since = np.zeros((depth, 1), np.int64)
    parts = (traces[0], traces[1].parts(), since, frontier_t)
    got = kernels.distinct(key, times, kept_key, kept_time, *parts, sort=True)
    want = kernels.distinct(*kernels.ready_work(key, times, kept_key, kept_time, frontier_t), *parts)
    assert [a.tolist() for a in got] == [b.tolist() for b in want]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_distinct_leaving_its_input_unread_equals_reading_it_when_it_may(data):
    """With `input_before`, distinct does not read its input: the caller vouches that every
    input count is positive and every input time at or before every time visited. On such
    inputs it gives what reading the input gives, whatever the output history and however
    the times are ordered (keys whose times are not a chain are visited again with it)."""
    depth = data.draw(st.sampled_from([1, 2]))
    time = st.tuples(*[st.integers(0, 4)] * depth)
    pairs = sorted(set(data.draw(st.lists(st.tuples(st.integers(0, 5), time), min_size=1, max_size=8))))
    least = tuple(min(t[c] for _, t in pairs) for c in range(depth))
    below = st.tuples(*[st.integers(0, least[c]) for c in range(depth)])
    kept = data.draw(st.lists(st.tuples(st.integers(0, 5), st.tuples(*[st.integers(least[c], 4) for c in range(depth)])), max_size=3))
    # Every key visited has input at or before the least time visited; other keys may have some.
    inputs = [(g, data.draw(below), data.draw(st.integers(1, 2))) for g in sorted({g for g, _ in pairs + kept})]
    inputs += data.draw(st.lists(st.tuples(st.integers(0, 5), below, st.integers(1, 2)), max_size=6))
    outputs = data.draw(st.lists(st.tuples(st.integers(0, 5), time, st.sampled_from([-1, 1])), max_size=10))
    traces = [_trace_of(inputs, depth), _trace_of(outputs, depth)]
    frontier = sorted(set(data.draw(st.lists(time, min_size=1, max_size=2))))

    key, times, kept_key, kept_time, frontier_t = _work(pairs, kept, frontier, depth)
    parts = (traces[0], traces[1].parts(), np.zeros((depth, 1), np.int64), frontier_t)
    sort = data.draw(st.booleans())
    got = kernels.distinct(key, times, kept_key, kept_time, *parts, sort=sort, input_before=True)
    want = kernels.distinct(key, times, kept_key, kept_time, *parts, sort=sort)
    assert [a.tolist() for a in got[:3]] == [b.tolist() for b in want[:3]]
    # The pairs for later in any order: a key set aside as not a chain when its input is read
    # (and its times with it) may be a chain without it, and its later pairs then come first.
    assert sorted(zip(got[3].T.tolist(), got[4].T.tolist())) == sorted(zip(want[3].T.tolist(), want[4].T.tolist()))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3)), min_size=0, max_size=80), st.integers(0, 5))
def test_order_by_xy_is_a_stable_sort(points, spare):
    """distinct_fused's sort of a large group's elements: by x, then y, ties in place order."""
    el = np.zeros((4, len(points) + spare), np.int64)
    if points:
        el[:2, : len(points)] = np.array(points, np.int64).T
    order = np.full(len(points) + spare, -1, np.int64)
    kernels._order_by_xy(el, len(points), order)
    assert order[: len(points)].tolist() == sorted(range(len(points)), key=lambda i: points[i])
