"""The spine: a trace's list of batches, merged geometrically and compacted.

Batches are kept largest (oldest) first; after each insertion, while the newest
batch is at least half the size of the one before it, the two merge. This keeps
O(log n) batches and amortised O(log n) merge work per update. A merge applies
logical compaction: every time is advanced by `since`, the meet of the frontiers
of the trace's readers, and identical updates are consolidated, so updates that
cancel once their times are indistinguishable disappear.
"""

from __future__ import annotations

import numpy as np

from runtime.times import Antichain, Lattice
from runtime.trace.batch import ArrangedBatch

# Batches smaller than this merge unconditionally: tiny batches cost a numpy
# call per lookup, and merging them is cheap.
_SMALL = 64
_NONE = np.zeros(0, dtype=np.intp)


class TraceHandle:
    """One reader's view of a trace; its frontier bounds the trace's compaction."""

    __slots__ = ("trace", "frontier")

    def __init__(self, trace: "Trace", frontier: Antichain):
        self.trace = trace
        self.frontier = frontier

    def set_frontier(self, frontier: Antichain) -> None:
        if frontier != self.frontier:
            self.frontier = frontier
            self.trace._since_changed()

    def release(self) -> None:
        self.trace.handles.remove(self)
        self.trace._since_changed()


class Trace:
    def __init__(self, lattice: Lattice, key_arity: int, val_arity: int, name: str = "trace"):
        self.lattice = lattice
        self.key_arity = key_arity
        self.val_arity = val_arity
        self.name = name
        self.batches: list[ArrangedBatch] = []
        self.handles: list[TraceHandle] = []
        self.since = Antichain(lattice, [lattice.minimum()])

    def __len__(self) -> int:
        """The number of updates held (the trace's size)."""
        return sum(len(b) for b in self.batches)

    def __repr__(self):
        return f"Trace({self.name}, batches={[len(b) for b in self.batches]})"

    def new_handle(self) -> TraceHandle:
        handle = TraceHandle(self, self.since)
        self.handles.append(handle)
        return handle

    def _since_changed(self) -> None:
        if not self.handles:
            return
        since = self.handles[0].frontier
        for h in self.handles[1:]:
            since = since.meet(h.frontier)
        self.since = since

    def insert(self, batch: ArrangedBatch) -> None:
        if len(batch):
            self.batches.append(batch)
        self._maintain()

    def _maintain(self) -> None:
        batches = self.batches
        while len(batches) >= 2 and (len(batches[-2]) <= 2 * len(batches[-1]) or len(batches[-2]) < _SMALL):
            newest = batches.pop()
            batches[-1] = self._merge([batches[-1], newest])

    def _merge(self, batches: list[ArrangedBatch]) -> ArrangedBatch:
        since = self.since
        return ArrangedBatch.merge(batches, advance=lambda t: self.lattice.advance_by(t, since))

    def compact(self) -> None:
        """Merge every batch into one, fully compacted (used by tests and idle time)."""
        if self.batches:
            merged = self._merge(self.batches)
            self.batches = [merged] if len(merged) else []

    def lookup(self, probe_hash: np.ndarray, probe_key: np.ndarray):
        """All updates whose key equals a probe key: (probe index, key, val, time, diff)."""
        owners, parts = [], []
        if not len(probe_hash):
            return _NONE, ArrangedBatch.empty(self.key_arity, self.val_arity, self.lattice.depth)
        for b in self.batches:
            owner, pos = b.lookup(probe_hash, probe_key)
            if len(pos):
                owners.append(owner)
                parts.append(b.take(pos))
        if not parts:
            return _NONE, ArrangedBatch.empty(self.key_arity, self.val_arity, self.lattice.depth)
        if len(parts) == 1:
            return owners[0], parts[0]
        return np.concatenate(owners), ArrangedBatch(
            np.concatenate([p.keyhash for p in parts]),
            np.concatenate([p.key for p in parts], axis=1),
            np.concatenate([p.val for p in parts], axis=1),
            np.concatenate([p.time for p in parts], axis=1),
            np.concatenate([p.diff for p in parts]),
        )

    def contents(self) -> ArrangedBatch:
        """All updates, merged (without compaction)."""
        if not self.batches:
            return ArrangedBatch.empty(self.key_arity, self.val_arity, self.lattice.depth)
        return ArrangedBatch.merge(self.batches)
