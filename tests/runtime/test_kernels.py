"""Compiled kernels against numpy or brute force: sorting, lookups, antichains, merges."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from runtime import kernels

int64s = st.integers(-(2**63), 2**63 - 1)
small = st.integers(-3, 3)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_lex_order_is_a_stable_lexicographic_sort(data):
    """Sizes on both sides of the insertion/radix switch; extreme, small and wide-ranged
    values (one, several or no radix passes); `first` equal to rows[0] or not."""
    n = data.draw(st.integers(0, 80))
    values = st.one_of(int64s, small, st.integers(0, 70_000))
    first = data.draw(arrays(np.int64, n, elements=values))
    rows = data.draw(arrays(np.int64, (data.draw(st.integers(0, 2)), n), elements=values))
    time = data.draw(arrays(np.int64, (data.draw(st.integers(0, 2)), n), elements=small))
    if rows.shape[0] and data.draw(st.booleans()):
        first = rows[0].copy()
    use_first = data.draw(st.booleans())
    keys = tuple(time[::-1]) + tuple(rows[::-1]) + ((first,) if use_first else ())
    expected = np.lexsort(keys) if keys else np.arange(n)
    got = kernels.lex_order(first if use_first else first[:0], rows, time)
    assert got.tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_sort_rows_equals_lexsort(data):
    """Random columns, or a few sorted runs (arranged batches one after the other: the merge path)."""
    n = data.draw(st.integers(0, 40))
    first = data.draw(arrays(np.int64, n, elements=small))
    rows = data.draw(arrays(np.int64, (data.draw(st.integers(0, 2)), n), elements=small))
    if data.draw(st.booleans()):
        cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=10)))
        for lo, hi in zip([0] + cuts, cuts + [n]):
            run = np.lexsort(tuple(rows[::-1, lo:hi]) + (first[lo:hi],)) + lo
            first[lo:hi], rows[:, lo:hi] = first[run], rows[:, run]
    expected = np.lexsort(tuple(rows[::-1]) + (first,))
    assert kernels.sort_rows(first, rows).tolist() == expected.tolist()


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_radix_lexsort_equals_lexsort(data):
    n = data.draw(st.integers(0, 40))
    keys = [data.draw(arrays(np.int64, n, elements=st.one_of(int64s, small))) for _ in range(data.draw(st.integers(1, 3)))]
    assert kernels.radix_lexsort(keys).tolist() == np.lexsort(keys).tolist()


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_lookup_positions_finds_every_match(data):
    keys = np.sort(data.draw(arrays(np.int64, st.integers(0, 30), elements=st.integers(0, 12))))
    probes = data.draw(arrays(np.int64, st.integers(0, 12), elements=st.integers(-1, 13)))
    if data.draw(st.booleans()):
        probes = np.sort(probes)
    owner, pos = kernels.lookup_positions(keys, keys[None, :], probes, probes[None, :])
    expected = [(i, j) for i in range(len(probes)) for j in range(len(keys)) if keys[j] == probes[i]]
    assert list(zip(owner.tolist(), pos.tolist())) == expected


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: arrays(np.int64, (2, n), elements=st.integers(0, 5))))
def test_minimal_pairs_is_the_minimal_antichain(times):
    points = set(map(tuple, times.T.tolist()))
    expected = {p for p in points if not any(q != p and q[0] <= p[0] and q[1] <= p[1] for q in points)}
    got = list(map(tuple, kernels.minimal_pairs(times).T.tolist()))
    assert len(got) == len(set(got)) and set(got) == expected


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_advancing_by_a_frontier_is_a_max_with_its_least_coordinates(data):
    """The identity the merges and distinct read by (runtime.trace.kernels.least_coordinates):
    the meet of a time's joins with a frontier's elements is, per coordinate, the larger of
    the time's coordinate and the least of the elements'."""
    from runtime.trace.kernels import least_coordinates

    times = data.draw(arrays(np.int64, (2, data.draw(st.integers(0, 10))), elements=st.integers(0, 6)))
    since = data.draw(arrays(np.int64, (2, data.draw(st.integers(1, 3))), elements=st.integers(0, 6)))
    got = np.maximum(times, least_coordinates(since, 2)[:, None])
    expected = np.maximum(times[:, :, None], since[:, None, :]).min(axis=2) if times.shape[1] else times
    assert got.tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_arrange_sorts_and_consolidates_like_a_counter(data):
    """Packed keys (narrow ranges) and column-by-column passes (ranges wider than
    64 bits together); a lead equal to the first key column or not."""
    n = data.draw(st.integers(0, 80))
    values = data.draw(st.sampled_from([small, st.integers(0, 3_000), int64s]))
    cols = data.draw(arrays(np.int64, (data.draw(st.integers(1, 3)), n), elements=values))
    # Times all equal too: then one column may take all 64 bits of the packed key.
    time = data.draw(arrays(np.int64, (data.draw(st.integers(1, 2)), n), elements=data.draw(st.sampled_from([small, st.just(5)]))))
    diff = data.draw(arrays(np.int64, n, elements=st.integers(-2, 2)))
    lead = cols[0].copy() if data.draw(st.booleans()) else data.draw(arrays(np.int64, n, elements=small))
    cols_out, time_out, diff_out = _arranged(kernels.arrange(lead, cols, time, diff), cols, time)
    rows = [(int(lead[i]), *cols[:, i].tolist(), *time[:, i].tolist()) for i in range(n)]
    expected = {}
    for row, d in zip(rows, diff.tolist()):
        expected[row] = expected.get(row, 0) + d
    # Sorted by the lead first, which the block does not hold.
    expected = [(row[1:], d) for row, d in sorted(expected.items()) if d]
    got = [((*cols_out[:, i].tolist(), *time_out[:, i].tolist()), int(diff_out[i])) for i in range(len(diff_out))]
    assert got == expected


def _arranged(block, cols, time):
    """arrange's block taken apart: (columns, time rows, diff)."""
    c, t = cols.shape[0], time.shape[0]
    assert block.shape[0] == c + t + 1
    return block[:c], block[c : c + t], block[c + t]


def test_arrange_restores_a_column_that_takes_all_64_bits_of_the_packed_key():
    extremes = np.array([-(2**63), 2**63 - 1, 0, -1] * 10, dtype=np.int64)
    cols = extremes[None, :]
    time = np.zeros((1, len(extremes)), np.int64)
    cols_out, time_out, diff_out = _arranged(kernels.arrange(extremes.copy(), cols, time, np.ones(len(extremes), np.int64)), cols, time)
    assert cols_out[0].tolist() == [-(2**63), -1, 0, 2**63 - 1] and diff_out.tolist() == [10] * 4


def test_arrange_keeps_a_column_spanning_all_64_bits_after_a_constant_lead():
    """A keyless arrangement (lead all zeros) of a column whose range needs all 64 bits, as
    floats of both signs do: the packed key's shifts reach 64, which machines take as 0."""
    values = [-(2**63), 2**63 - 1] + list(range(kernels._INSERTION))  # past the insertion sort
    n = len(values)
    cols, time = np.array([values], np.int64), np.zeros((1, n), np.int64)
    cols, time, diff = _arranged(kernels.arrange(np.zeros(n, np.int64), cols, time, np.ones(n, np.int64)), cols, time)
    assert cols[0].tolist() == sorted(values)
    assert diff.tolist() == [1] * n


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([1, 3, 4_000, 2**20, 2**62]), st.integers(0, 3),
       st.sampled_from(["ones", "small", "wide", "full"]), st.booleans())
def test_arranged_by_numpy_sort_of_packed_words_sums_like_unique_rows(seed, span, ncols, diffs, lead_is_key):
    """From _NUMPY_SORT_FROM rows on, updates are packed into words beside their diff (or, when
    the diffs' range does not fit, their position) and sorted by numpy; inputs too wide for a
    word go to the radix passes. Either way, whole or in parts: numpy's unique rows and their
    summed diffs."""
    rng = np.random.default_rng(seed)
    n = kernels._NUMPY_SORT_FROM + int(rng.integers(0, 3_000))
    cols = rng.integers(-span, span, size=(ncols, n), dtype=np.int64)[:, rng.integers(0, n, n)]  # repeated rows
    time = np.stack([np.full(n, 2, np.int64), rng.integers(0, 5, size=n, dtype=np.int64)])
    diff = {"ones": np.ones(n, np.int64), "small": rng.integers(-2, 3, size=n, dtype=np.int64),
            "wide": rng.integers(-(2**40), 2**40, size=n, dtype=np.int64), "full": rng.integers(-(2**62), 2**62, size=n, dtype=np.int64)}[diffs]
    lead = cols[0].copy() if lead_is_key and ncols else rng.integers(0, 4, size=n, dtype=np.int64)
    rows = np.concatenate([lead[None], cols, time])
    unique, inverse = np.unique(rows.T, axis=0, return_inverse=True)
    sums = np.zeros(len(unique), np.int64)
    np.add.at(sums, inverse.ravel(), diff)  # (int64 sums: bincount's float weights would round)
    kept = sums != 0
    # All at once, and in parts (a join's output halves), which are not concatenated first.
    cuts = [0, *sorted(rng.integers(0, n, size=int(rng.integers(1, 4)))), n]
    parts = [(lead[a:b], cols[:, a:b], time[:, a:b], diff[a:b]) for a, b in zip(cuts, cuts[1:]) if b > a]
    for cols_out, time_out, diff_out in (kernels.arranged(lead, cols, time, diff), kernels.arranged_parts(parts)[:3]):
        assert np.array_equal(np.concatenate([cols_out, time_out]), unique[kept].T[1:])
        assert np.array_equal(diff_out, sums[kept])


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 2**32), st.sampled_from([(50, 3), (4_000, 2), (2**40, 1)]))
def test_arrange_of_a_large_input_sorts_in_narrower_digits_like_lexsort(seed, shape):
    """From _WIDE_FROM rows on the radix passes take digits of at most _DIGIT_WIDE bits: the same order and sums as
    numpy's lexsort and a count of equal rows, for packed keys of a few bits to 64."""
    span, ncols = shape
    rng = np.random.default_rng(seed)
    n = kernels._WIDE_FROM + int(rng.integers(0, 5_000))
    cols = rng.integers(-span, span, size=(ncols, n), dtype=np.int64)
    time = np.stack([np.full(n, 3, np.int64), rng.integers(0, 4, size=n, dtype=np.int64)])
    diff = rng.choice(np.array([-1, 1, 2], np.int64), size=n)
    cols_out, time_out, diff_out = _arranged(kernels.arrange(cols[0].copy(), cols, time, diff), cols, time)
    rows = np.concatenate([cols, time])
    unique, inverse = np.unique(rows.T, axis=0, return_inverse=True)  # sorted lexicographically, first row first
    sums = np.bincount(inverse.ravel(), weights=diff, minlength=len(unique)).astype(np.int64)
    kept = sums != 0
    assert np.array_equal(np.concatenate([cols_out, time_out]), unique[kept].T)
    assert np.array_equal(diff_out, sums[kept])
