"""Lattices: scalar and vectorised forms agree; advance_by preserves comparisons."""

import itertools

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from runtime.times import ALTNEU, EPOCH, ITERATION, Antichain, Lattice

LATTICES = [Lattice((EPOCH,)), Lattice((EPOCH, ITERATION)), Lattice((EPOCH, ITERATION, ITERATION)),
            Lattice((EPOCH, ALTNEU)), Lattice((EPOCH, ITERATION, ALTNEU))]


def times_of(lattice, n):
    coords = []
    for layer in lattice.layers:
        coords.append(st.integers(0, 1) if layer == ALTNEU else st.integers(0, 3))
    return st.lists(st.tuples(*coords), min_size=n, max_size=n)


def brute_le(lattice, a, b):
    """Definition-level order: product coordinates, AltNeu flag only at equal inner time."""
    d = lattice.depth
    if d == 1:
        return a[0] <= b[0]
    inner = Lattice(lattice.layers[:-1])
    if lattice.layers[-1] == ALTNEU:
        return a[-1] <= b[-1] if a[:-1] == b[:-1] else brute_le(inner, a[:-1], b[:-1])
    return a[-1] <= b[-1] and brute_le(inner, a[:-1], b[:-1])


@given(st.sampled_from(LATTICES).flatmap(lambda l: st.tuples(st.just(l), times_of(l, 3))))
def test_join_meet_are_least_upper_and_greatest_lower_bounds(case):
    lattice, (a, b, c) = case
    le = lattice.le
    assert le(a, b) == brute_le(lattice, a, b)
    j, m = lattice.join(a, b), lattice.meet(a, b)
    assert le(a, j) and le(b, j) and le(m, a) and le(m, b)
    # least / greatest among a sample of candidates
    if le(a, c) and le(b, c):
        assert le(j, c)
    if le(c, a) and le(c, b):
        assert le(c, m)


@given(st.sampled_from(LATTICES).flatmap(lambda l: st.tuples(st.just(l), times_of(l, 8))))
def test_vectorised_forms_match_scalar(case):
    lattice, ts = case
    a = np.array(ts[:4], dtype=np.int64).T
    b = np.array(ts[4:], dtype=np.int64).T
    le = lattice.le_arrays(a, b)
    joins = lattice.join_arrays(a, b)
    meets = lattice.meet_arrays(a, b)
    for i in range(4):
        x, y = ts[i], ts[4 + i]
        assert bool(le[i]) == lattice.le(x, y) == brute_le(lattice, x, y)
        assert tuple(joins[:, i]) == lattice.join(x, y)
        assert tuple(meets[:, i]) == lattice.meet(x, y)


@given(st.sampled_from(LATTICES).flatmap(lambda l: st.tuples(st.just(l), times_of(l, 3), times_of(l, 6))))
def test_advance_by_preserves_comparisons_beyond_the_frontier(case):
    lattice, frontier, times = case
    f = Antichain(lattice, frontier)
    arr = np.array(times, dtype=np.int64).T
    advanced = lattice.advance_by(arr, f)
    # every time in advance of the frontier (from a grid) compares the same way
    ranges = [range(2) if layer == ALTNEU else range(5) for layer in lattice.layers]
    for probe in itertools.product(*ranges):
        if not f.less_equal(probe):
            continue
        for i, t in enumerate(times):
            assert lattice.le(t, probe) == lattice.le(tuple(advanced[:, i]), probe)


def test_antichain_keeps_minimal_elements():
    lat = Lattice((EPOCH, ITERATION))
    a = Antichain(lat, [(1, 3), (2, 1), (1, 4), (3, 0), (2, 2)])
    assert set(a.elements) == {(1, 3), (2, 1), (3, 0)}
    assert a.less_equal((2, 5)) and not a.less_equal((1, 2))
    assert a.in_advance_mask(np.array([[2, 1], [5, 2]])).tolist() == [True, False]


@given(st.sampled_from(LATTICES).flatmap(lambda l: st.tuples(st.just(l), st.integers(0, 12).flatmap(lambda n: times_of(l, n)))))
def test_antichain_is_the_set_of_minimal_times(case):
    lattice, times = case
    minimal = {t for t in times if not any(u != t and brute_le(lattice, u, t) for u in times)}
    assert set(Antichain(lattice, times).elements) == minimal
    assert len(Antichain(lattice, times).elements) == len(minimal)
