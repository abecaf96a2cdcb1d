"""Arranged batches: consolidated updates sorted by the values of their key.

An `ArrangedBatch` splits each update's data into `key` and `val` columns and
keeps `lead`, its leading key column (zeros for a keyless arrangement) as one
contiguous array. Updates are sorted by the values themselves: lead, the key
columns, the value columns, then time. So all updates of one key are
contiguous and are found by a lexicographic binary search, and a batch is put
in order by radix passes over its columns, with no hash to compute or to
collide.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import INT, Batch, lead_column
from runtime.kernels import arrange, lookup_positions, merge_order


class ArrangedBatch:
    __slots__ = ("lead", "key", "val", "time", "diff")

    def __init__(self, lead, key, val, time, diff):
        self.lead = lead
        self.key = key
        self.val = val
        self.time = time
        self.diff = diff

    def __len__(self):
        return len(self.diff)

    def __repr__(self):
        return f"ArrangedBatch(n={len(self)})"

    @staticmethod
    def empty(key_arity: int, val_arity: int, depth: int) -> "ArrangedBatch":
        z = np.zeros(0, INT)
        return ArrangedBatch(z, np.zeros((key_arity, 0), INT), np.zeros((val_arity, 0), INT), np.zeros((depth, 0), INT), z)

    @staticmethod
    def build(key: np.ndarray, val: np.ndarray, time: np.ndarray, diff: np.ndarray, lead=None) -> "ArrangedBatch":
        """Sort into arranged order and consolidate identical (key, val, time) updates."""
        if lead is None:
            lead = lead_column(key)
        lead, cols, time, diff = arrange(lead, np.concatenate([key, val], axis=0), time, diff)
        k = key.shape[0]
        return ArrangedBatch(lead, cols[:k], cols[k:], time, diff)

    @staticmethod
    def from_batch(batch: Batch, key_arity: int) -> "ArrangedBatch":
        return ArrangedBatch.build(batch.data[:key_arity], batch.data[key_arity:], batch.time, batch.diff)

    @staticmethod
    def merge(batches: list["ArrangedBatch"], advance=None) -> "ArrangedBatch":
        """One batch with the updates of all; times first mapped by `advance`.

        Advancing times leaves the (key, value) order intact, so two batches
        merge linearly.
        """
        lead = np.concatenate([b.lead for b in batches])
        key = np.concatenate([b.key for b in batches], axis=1)
        val = np.concatenate([b.val for b in batches], axis=1)
        time = np.concatenate([b.time for b in batches], axis=1)
        diff = np.concatenate([b.diff for b in batches])
        if advance is not None:
            time = advance(time)
        cols = np.concatenate([key, val], axis=0)
        if len(batches) != 2:
            lead, cols, time, diff = arrange(lead, cols, time, diff)
            k = key.shape[0]
            return ArrangedBatch(lead, cols[:k], cols[k:], time, diff)
        pos, summed = merge_order(lead, cols, time, diff, len(batches[0]))
        return ArrangedBatch(lead[pos], key[:, pos], val[:, pos], time[:, pos], summed)

    def take(self, index) -> "ArrangedBatch":
        return ArrangedBatch(self.lead[index], self.key[:, index], self.val[:, index], self.time[:, index], self.diff[index])

    def to_batch(self) -> Batch:
        return Batch(np.concatenate([self.key, self.val], axis=0), self.time, self.diff)

    def lookup(self, probe_lead: np.ndarray, probe_key: np.ndarray):
        """Pairs (probe index, position here) of updates whose key equals the probe's."""
        return lookup_positions(self.lead, self.key, probe_lead, probe_key)
