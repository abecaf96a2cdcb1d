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
from runtime.grouping import expand_ranges, run_starts, sort_rows


_NONE = np.zeros(0, dtype=np.intp)


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
        """Sort by key and consolidate identical (key, val, time) updates."""
        if keyhash is None:
            keyhash = key_hash(key)
        n = len(diff)
        if n <= 1:
            keep = diff != 0
            return ArrangedBatch(keyhash[keep], key[:, keep], val[:, keep], time[:, keep], diff[keep])
        rows = np.concatenate([key, val, time], axis=0)
        order = sort_rows(keyhash, rows)
        starts = run_starts(keyhash[order], rows[:, order])
        if len(starts) == n:
            index = order
            summed = diff[order]
            keep = summed != 0
            if keep.all():
                return ArrangedBatch(keyhash[index], key[:, index], val[:, index], time[:, index], summed)
            index, summed = index[keep], summed[keep]
            return ArrangedBatch(keyhash[index], key[:, index], val[:, index], time[:, index], summed)
        summed = np.add.reduceat(diff[order], starts)
        keep = summed != 0
        index = order[starts[keep]]
        return ArrangedBatch(keyhash[index], key[:, index], val[:, index], time[:, index], summed[keep])

    @staticmethod
    def from_batch(batch: Batch, key_arity: int) -> "ArrangedBatch":
        return ArrangedBatch.build(batch.data[:key_arity], batch.data[key_arity:], batch.time, batch.diff)

    @staticmethod
    def merge(batches: list["ArrangedBatch"], advance=None) -> "ArrangedBatch":
        """One batch with the updates of all; times first mapped by `advance`."""
        time = np.concatenate([b.time for b in batches], axis=1)
        if advance is not None:
            time = advance(time)
        return ArrangedBatch.build(
            np.concatenate([b.key for b in batches], axis=1),
            np.concatenate([b.val for b in batches], axis=1),
            time,
            np.concatenate([b.diff for b in batches]),
            keyhash=np.concatenate([b.keyhash for b in batches]),
        )

    def take(self, index) -> "ArrangedBatch":
        return ArrangedBatch(self.keyhash[index], self.key[:, index], self.val[:, index], self.time[:, index], self.diff[index])

    def to_batch(self) -> Batch:
        return Batch(np.concatenate([self.key, self.val], axis=0), self.time, self.diff)

    def lookup(self, probe_hash: np.ndarray, probe_key: np.ndarray):
        """Pairs (probe index, position here) of updates whose key equals the probe's."""
        keyhash = self.keyhash
        lo = np.searchsorted(keyhash, probe_hash, "left")
        hi = np.searchsorted(keyhash, probe_hash, "right")
        counts = hi - lo
        if not counts.any():
            return _NONE, _NONE
        if counts.max() == 1:
            owner = np.flatnonzero(counts)
            pos = lo[owner]
        else:
            owner, pos = expand_ranges(lo, hi)
        if probe_key.shape[0] > 1:
            same = np.all(probe_key[:, owner] == self.key[:, pos], axis=0)
            if not same.all():
                owner, pos = owner[same], pos[same]
        return owner, pos
