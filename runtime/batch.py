"""Batches: columnar collections of updates `(data, time, diff)`.

A `Batch` holds `n` updates as three int64 arrays: `data` of shape
`(arity, n)` (one contiguous row per data column, so a column is `data[j]` and a
gather is one `take`), `time` of shape `(depth, n)` (one row per time
coordinate) and `diff` of shape `(n,)`. One batch may carry many distinct times;
operators work on whole batches at once, which is how fine-grained times keep
batch throughput.

Consolidation sums the diffs of identical `(data, time)` pairs and drops zeros.
It orders rows by a 64-bit hash and then by the columns themselves, so it is
exact whatever the hash does.
"""

from __future__ import annotations

import numpy as np

from runtime.kernels import arrange_order, hash_columns

INT = np.int64
_EMPTY_INDEX = np.zeros(0, dtype=np.intp)


def key_hash(key: np.ndarray) -> np.ndarray:
    """The arrangement key of (k, n) key columns: the column itself when k == 1."""
    if key.shape[0] == 1:
        return key[0]
    if key.shape[0] == 0:
        return np.zeros(key.shape[1], dtype=INT)
    return hash_columns(key)


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
        pos, diff = arrange_order(key_hash(self.data), self.data, self.time, self.diff)
        return Batch(self.data[:, pos], self.time[:, pos], diff)
