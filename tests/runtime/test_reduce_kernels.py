"""The reduce kernels against each other and against a brute-force closure."""

from itertools import combinations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from runtime.operators import reduce_kernels as kernels

times_1d = st.lists(st.tuples(st.integers(0, 6)), min_size=0, max_size=8)
times_2d = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6)), min_size=0, max_size=8)


def _columns(groups, depth):
    rows = sorted({(g, *t) for g, ts in enumerate(groups) for t in ts})
    g = np.array([r[0] for r in rows], dtype=np.int64)
    t = np.array([r[1:] for r in rows], dtype=np.int64).reshape(len(rows), depth).T.copy()
    return g, t


def _brute_closure(new, hist):
    """Joins of subsets of new ∪ hist that contain a new time (product order)."""
    gens = set(new) | set(hist)
    out = set()
    for n in set(new):
        others = sorted(gens)
        for k in range(len(others) + 1):
            for subset in combinations(others, k):
                out.add(tuple(max(c) for c in zip(n, *subset)))
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
