"""Batches: columnar collections of updates `(data, time, diff)`.

A `Batch` holds `n` updates as three int64 arrays: `data` of shape
`(arity, n)` (one contiguous row per data column, so a column is `data[j]` and a
gather is one `take`), `time` of shape `(depth, n)` (one row per time
coordinate) and `diff` of shape `(n,)`. One batch may carry many distinct times;
operators work on whole batches at once, which is how fine-grained times keep
batch throughput.

Consolidation sums the diffs of identical `(data, time)` pairs and drops zeros.
It orders rows by their values (radix passes; numpy's sort of packed words for
large batches: runtime.kernels.arranged) and sums runs of equal rows.
"""

from __future__ import annotations

import numpy as np

from runtime.kernels import arranged

INT = np.int64
_EMPTY_INDEX = np.zeros(0, dtype=np.intp)


def per_row(value, n: int) -> np.ndarray:
    """`value` (one int, or one per row) as a new int64 array of n values. A scalar is
    filled in: np.broadcast_to costs ten times as much on the few rows of an update, and
    np.full four times as much as a list on one row."""
    if type(value) is int:
        return np.array([value] * n, dtype=INT) if n <= 16 else np.full(n, value, dtype=INT)
    value = np.asarray(value, dtype=INT)
    if value.ndim == 0:
        return np.full(n, value)
    return value.copy() if value.shape == (n,) else np.broadcast_to(value, (n,)).copy()


def lead_column(key: np.ndarray) -> np.ndarray:
    """The leading column of (k, n) key columns (zeros for k == 0): what arranged
    batches are sorted and searched by first, before the remaining key columns."""
    if key.shape[0] == 0:
        return np.zeros(key.shape[1], dtype=INT)
    return key[0]


class Batch:
    """An immutable batch of updates: data (arity, n), time (depth, n), diff (n,).

    `bounds`, when known, is (2, arity + depth + 1): a least and a greatest value of each
    data row, each time row and the diffs, every value lying between them (a join finds
    them as it writes: arranging its output then needs no pass over it to find them).
    What keeps a batch's values (`take`, `with_rows`) keeps its bounds; a batch made with
    other values has none."""

    __slots__ = ("data", "time", "diff", "bounds")

    def __init__(self, data: np.ndarray, time: np.ndarray, diff: np.ndarray, bounds: np.ndarray | None = None):
        self.data = data
        self.time = time
        self.diff = diff
        self.bounds = bounds

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
        """The updates at `index` (positions or a mask); the bounds, if known, still hold."""
        return Batch(self.data[:, index], self.time[:, index], self.diff[index], self.bounds)

    def with_rows(self, rows) -> "Batch":
        """Only the data rows `rows`, in that order: a slice (the data a view) or an index
        array; the bounds, if known, kept to match."""
        data = self.data[rows] if isinstance(rows, slice) else self.data.take(rows, axis=0)
        bounds = self.bounds
        if bounds is not None:
            bounds = np.concatenate([bounds[:, rows], bounds[:, self.arity :]], axis=1)
        return Batch(data, self.time, self.diff, bounds)

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
        return Batch(*arranged(lead_column(self.data), self.data, self.time, self.diff))
