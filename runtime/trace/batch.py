"""Arranged batches: consolidated updates sorted by the values of their key.

An `ArrangedBatch` splits each update's data into `key` and `val` columns.
Updates are sorted by the values themselves: the key columns, the value
columns, then time. So all updates of one key are contiguous and are found by a
lexicographic binary search, and a batch is put in order by its values (radix
passes, or numpy's sort of the updates packed into words: runtime.kernels.arranged),
with no hash to compute or to collide. `lead`, the leading key
column (zeros for a keyless arrangement), is what the sorting kernels take
first.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import INT, Batch, lead_column
from runtime.kernels import arranged_parts, lookup_positions


class ArrangedBatch:
    __slots__ = ("key", "val", "time", "diff", "_data", "block")

    def __init__(self, key, val, time, diff, data=None, block=None):
        self.key = key
        self.val = val
        self.time = time
        self.diff = diff
        self._data = data  # the key and value columns as one block, when they are views of one
        # The whole batch as one C-ordered block whose rows are the key, value and time columns
        # and the diff, when they are views of one (a trace merges it from there: runtime.trace.spine).
        self.block = block

    def __len__(self):
        return len(self.diff)

    def __repr__(self):
        return f"ArrangedBatch(n={len(self)})"

    @property
    def lead(self) -> np.ndarray:
        return lead_column(self.key) if self.key.shape[0] == 0 else self.key[0]

    @staticmethod
    def empty(key_arity: int, val_arity: int, depth: int) -> "ArrangedBatch":
        return ArrangedBatch(np.zeros((key_arity, 0), INT), np.zeros((val_arity, 0), INT), np.zeros((depth, 0), INT), np.zeros(0, INT))

    @staticmethod
    def build(key: np.ndarray, val: np.ndarray, time: np.ndarray, diff: np.ndarray) -> "ArrangedBatch":
        """Sort into arranged order and consolidate identical (key, val, time) updates."""
        return ArrangedBatch.from_batch(Batch(np.concatenate([key, val], axis=0), time, diff), key.shape[0])

    @staticmethod
    def from_batch(batch: Batch, key_arity: int) -> "ArrangedBatch":
        return ArrangedBatch.from_batches([batch], key_arity)

    @staticmethod
    def from_batches(batches: list[Batch], key_arity: int) -> "ArrangedBatch":
        """from_batch of the batches' updates together, not concatenated first."""
        if len(batches) == 1:
            data, time, diff = batches[0].data, batches[0].time, batches[0].diff
            # One update is in order and consolidated (a loop's rounds often carry one); the
            # kernels that read arranged batches take writeable arrays only.
            if len(diff) == 1 and diff[0] and data.flags.writeable and time.flags.writeable and diff.flags.writeable:
                return ArrangedBatch(data[:key_arity], data[key_arity:], time, diff, data)
        bounds = [b.bounds for b in batches] if key_arity else None  # (without a key, see kernels._numpy_sorted)
        cols, time, diff, block = arranged_parts([(lead_column(b.data[:key_arity]), b.data, b.time, b.diff) for b in batches], bounds)
        return ArrangedBatch(cols[:key_arity], cols[key_arity:], time, diff, cols, block)

    def take(self, index) -> "ArrangedBatch":
        return ArrangedBatch(self.key[:, index], self.val[:, index], self.time[:, index], self.diff[index])

    def copy(self) -> "ArrangedBatch":
        return ArrangedBatch(self.key.copy(), self.val.copy(), self.time.copy(), self.diff.copy())

    def to_batch(self) -> Batch:
        data = self._data
        if data is None:
            data = self.key if not len(self.val) else np.concatenate([self.key, self.val], axis=0)  # no values: the key is the row
        return Batch(data, self.time, self.diff)

    def lookup(self, probe_lead: np.ndarray, probe_key: np.ndarray):
        """Pairs (probe index, position here) of updates whose key equals the probe's."""
        return lookup_positions(self.lead, self.key, probe_lead, probe_key)
