"""Arranged batches: consolidated updates sorted by the hash of their key.

An `ArrangedBatch` splits each update's data into `key` and `val` columns and
keeps `keyhash` (the key column itself for one-column keys, else a 64-bit hash
of the key columns), sorted so that all updates of one key are contiguous and
can be found with a binary search. Lookups compare the key columns too, so hash
collisions never join different keys.
"""

from __future__ import annotations

import numpy as np

from runtime.batch import INT, Batch, key_hash
from runtime.kernels import arrange_order, lookup_positions, merge_order


class ArrangedBatch:
    __slots__ = ("keyhash", "key", "val", "time", "diff")

    def __init__(self, keyhash, key, val, time, diff):
        self.keyhash = keyhash
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
    def build(key: np.ndarray, val: np.ndarray, time: np.ndarray, diff: np.ndarray, keyhash=None) -> "ArrangedBatch":
        """Sort into arranged order and consolidate identical (key, val, time) updates."""
        if keyhash is None:
            keyhash = key_hash(key)
        cols = np.concatenate([key, val], axis=0)
        pos, summed = arrange_order(keyhash, cols, time, diff)
        return ArrangedBatch(keyhash[pos], key[:, pos], val[:, pos], time[:, pos], summed)

    @staticmethod
    def from_batch(batch: Batch, key_arity: int) -> "ArrangedBatch":
        return ArrangedBatch.build(batch.data[:key_arity], batch.data[key_arity:], batch.time, batch.diff)

    @staticmethod
    def merge(batches: list["ArrangedBatch"], advance=None) -> "ArrangedBatch":
        """One batch with the updates of all; times first mapped by `advance`.

        Advancing times leaves the (key, value) order intact, so two batches
        merge linearly.
        """
        keyhash = np.concatenate([b.keyhash for b in batches])
        key = np.concatenate([b.key for b in batches], axis=1)
        val = np.concatenate([b.val for b in batches], axis=1)
        time = np.concatenate([b.time for b in batches], axis=1)
        diff = np.concatenate([b.diff for b in batches])
        if advance is not None:
            time = advance(time)
        cols = np.concatenate([key, val], axis=0)
        if len(batches) == 2:
            pos, summed = merge_order(keyhash, cols, time, diff, len(batches[0]))
        else:
            pos, summed = arrange_order(keyhash, cols, time, diff)
        return ArrangedBatch(keyhash[pos], key[:, pos], val[:, pos], time[:, pos], summed)

    def take(self, index) -> "ArrangedBatch":
        return ArrangedBatch(self.keyhash[index], self.key[:, index], self.val[:, index], self.time[:, index], self.diff[index])

    def to_batch(self) -> Batch:
        return Batch(np.concatenate([self.key, self.val], axis=0), self.time, self.diff)

    def lookup(self, probe_hash: np.ndarray, probe_key: np.ndarray):
        """Pairs (probe index, position here) of updates whose key equals the probe's."""
        return lookup_positions(self.keyhash, self.key, probe_hash, probe_key)
