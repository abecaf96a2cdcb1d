"""Batches: columnar collections of updates `(data, time, diff)`.

A `Batch` holds `n` updates as three int64 arrays: `data` of shape
`(arity, n)` (one contiguous row per data column, so a column is `data[j]` and a
gather is one `take`), `time` of shape `(depth, n)` (one row per time
coordinate) and `diff` of shape `(n,)`. One batch may carry many distinct times;
operators work on whole batches at once, which is how fine-grained times keep
batch throughput.

Consolidation sums the diffs of identical `(data, time)` pairs and drops zeros.
It groups by a 64-bit hash of the row and then checks the rows themselves, so it
is exact: a hash collision (never seen in practice) falls back to a lexicographic
sort of the columns.
"""

from __future__ import annotations

import numpy as np

INT = np.int64
_EMPTY_INDEX = np.zeros(0, dtype=np.intp)
_MIX_A = np.uint64(0x9E3779B97F4A7C15)
_MIX_B = np.uint64(0xBF58476D1CE4E5B9)
_MIX_C = np.uint64(0x94D049BB133111EB)


def hash_rows(*blocks: np.ndarray) -> np.ndarray:
    """A 64-bit hash (as int64) of each column of the stacked (k_i, n) blocks."""
    n = blocks[0].shape[1]
    h = np.full(n, 0x2545F4914F6CDD1D, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for block in blocks:
            for row in block.view(np.uint64):
                h = (h ^ row) * _MIX_A
                h ^= h >> np.uint64(31)
        h ^= h >> np.uint64(30)
        h *= _MIX_B
        h ^= h >> np.uint64(27)
        h *= _MIX_C
        h ^= h >> np.uint64(31)
    return h.view(INT)


def key_hash(key: np.ndarray) -> np.ndarray:
    """The arrangement key of (k, n) key columns: the column itself when k == 1."""
    if key.shape[0] == 1:
        return key[0]
    if key.shape[0] == 0:
        return np.zeros(key.shape[1], dtype=INT)
    from runtime.trace.kernels import hash_columns  # the compiled form of hash_rows

    return hash_columns(key)


def rows_differ(block: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For index arrays a, b: whether column a differs from column b of `block`."""
    if block.shape[0] == 0:
        return np.zeros(len(a), dtype=bool)
    return np.any(block[:, a] != block[:, b], axis=0)


def group_sorted(primary: np.ndarray, secondary: np.ndarray | None, rows: np.ndarray):
    """Sort by (primary, secondary) and find runs of identical `rows`.

    `rows` is the stacked (k, n) content that defines identity; `primary` and
    `secondary` are hashes of it (or of a prefix of it). Returns `(order,
    starts)`: the permutation and the start of each run of identical rows in
    sorted order. Exact even under hash collisions.
    """
    n = rows.shape[1]
    if n == 0:
        return _EMPTY_INDEX, _EMPTY_INDEX
    if secondary is None:
        order = np.argsort(primary, kind="stable")
        keys = (primary[order],)
    else:
        order = np.lexsort((secondary, primary))
        keys = (primary[order], secondary[order])
    same_hash = np.ones(n - 1, dtype=bool)
    for k in keys:
        same_hash &= k[1:] == k[:-1]
    sorted_rows = rows[:, order]
    differ = np.any(sorted_rows[:, 1:] != sorted_rows[:, :-1], axis=0) if rows.shape[0] else np.zeros(n - 1, dtype=bool)
    if np.any(same_hash & differ):
        # A hash collision interleaved distinct rows: sort the rows themselves.
        order = np.lexsort(rows[::-1]) if secondary is None else np.lexsort(tuple(rows[::-1]) + (primary,))
        sorted_rows = rows[:, order]
        differ = np.any(sorted_rows[:, 1:] != sorted_rows[:, :-1], axis=0)
        if secondary is not None:
            sp = primary[order]
            differ |= sp[1:] != sp[:-1]
    else:
        differ |= ~same_hash
    starts = np.concatenate(([0], np.flatnonzero(differ) + 1))
    return order, starts


class Batch:
    """An immutable batch of updates: data (arity, n), time (depth, n), diff (n,)."""

    __slots__ = ("data", "time", "diff")

    def __init__(self, data: np.ndarray, time: np.ndarray, diff: np.ndarray):
        self.data = data
        self.time = time
        self.diff = diff

    @staticmethod
    def empty(arity: int, depth: int) -> "Batch":
        return Batch(np.zeros((arity, 0), INT), np.zeros((depth, 0), INT), np.zeros(0, INT))

    def __len__(self) -> int:
        return len(self.diff)

    def __repr__(self):
        return f"Batch(n={len(self)}, arity={self.arity})"

    @property
    def arity(self) -> int:
        return self.data.shape[0]

    def take(self, index) -> "Batch":
        return Batch(self.data[:, index], self.time[:, index], self.diff[index])

    def negate(self) -> "Batch":
        return Batch(self.data, self.time, -self.diff)

    def with_time(self, time: np.ndarray) -> "Batch":
        return Batch(self.data, time, self.diff)

    def with_data(self, data: np.ndarray) -> "Batch":
        return Batch(data, self.time, self.diff)

    @staticmethod
    def concat(batches: list["Batch"]) -> "Batch":
        if len(batches) == 1:
            return batches[0]
        return Batch(
            np.concatenate([b.data for b in batches], axis=1),
            np.concatenate([b.time for b in batches], axis=1),
            np.concatenate([b.diff for b in batches]),
        )

    def consolidate(self) -> "Batch":
        """Sum the diffs of identical (data, time) updates; drop zeros."""
        n = len(self)
        if n <= 1:
            return self if n == 0 or self.diff[0] != 0 else self.take(_EMPTY_INDEX)
        rows = np.concatenate([self.data, self.time], axis=0)
        order, starts = group_sorted(hash_rows(rows), None, rows)
        diff = np.add.reduceat(self.diff[order], starts)
        keep = diff != 0
        index = order[starts[keep]]
        return Batch(self.data[:, index], self.time[:, index], diff[keep])

    def rows(self) -> list[tuple]:
        return [tuple(int(x) for x in r) for r in self.data.T]
