"""Grouping: vectorised sorting, run finding and summing over int64 columns.

The irregular parts of operators (per-key histories, per-key times) are written
as sorts and run boundaries over whole arrays rather than Python loops. Rows are
compared exactly, column by column; `first` is a group id or key hash sorted
before the other columns.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import INT
from runtime import kernels
from runtime.kernels import minimal_pairs
from runtime.times import Antichain, Lattice

_NO = np.zeros(0, dtype=np.intp)


def sort_rows(first: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Permutation sorting by `first`, then each row of `rows` in order (stable)."""
    return kernels.sort_rows(first.astype(INT, copy=False), rows.astype(INT, copy=False))


def run_starts(first: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Starts of runs of equal (first, rows) columns in sorted arrays."""
    n = len(first)
    if n == 0:
        return _NO
    change = first[1:] != first[:-1]
    if rows.shape[0]:
        change |= np.any(rows[:, 1:] != rows[:, :-1], axis=0)
    return np.concatenate(([0], np.flatnonzero(change) + 1))


def sum_by(group: np.ndarray, val: np.ndarray, diff: np.ndarray):
    """Consolidate (group, val) -> summed diff; sorted by group then val; no zeros."""
    order = sort_rows(group, val)
    group, val, diff = group[order], val[:, order], diff[order]
    starts = run_starts(group, val)
    if len(starts) == len(group):
        keep = diff != 0
        return group[keep], val[:, keep], diff[keep]
    summed = np.add.reduceat(diff, starts) if len(starts) else diff[:0]
    keep = summed != 0
    idx = starts[keep]
    return group[idx], val[:, idx], summed[keep]


def unique_pairs(group: np.ndarray, time: np.ndarray):
    """Distinct (group, time) pairs, sorted by group then time lexicographically."""
    order = sort_rows(group, time)
    group, time = group[order], time[:, order]
    starts = run_starts(group, time)
    return group[starts], time[:, starts]


def minimal_times(lattice: Lattice, times: np.ndarray) -> list[tuple]:
    """The minimal antichain of the columns of a (depth, n) array, exactly."""
    if times.shape[1] == 0:
        return []
    if lattice.depth == 1:
        return [(int(times.min()),)]
    if lattice.is_product and lattice.depth == 2:
        return [tuple(col) for col in minimal_pairs(times).T.tolist()]
    _, uniq = unique_pairs(np.zeros(times.shape[1], INT), times)
    return list(Antichain(lattice, [tuple(int(x) for x in col) for col in uniq.T]).elements)


def dense_ids(first: np.ndarray, rows: np.ndarray):
    """Number the distinct (first, rows) columns 0, 1, ... in sorted order.

    Returns (ids, representatives): ids[i] is the number of column i, and
    column representatives[j] is one with number j.
    """
    return kernels.dense_rows(first.astype(INT, copy=False), rows.astype(INT, copy=False))
