"""The spine: a trace's list of batches, merged geometrically and compacted.

Batches are kept largest (oldest) first; after each insertion, while the newest
batch is at least half the size of the one before it, the two merge. This keeps
O(log n) batches and amortised O(log n) merge work per update. A merge applies
logical compaction: every time is advanced by `since`, the meet of the frontiers
of the trace's readers, and identical updates are consolidated, so updates that
cancel once their times are indistinguishable disappear.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from runtime.times import Antichain, Lattice
from runtime.trace.batch import ArrangedBatch
from runtime.kernels import lookup_into, merge_arranged

class Matches(NamedTuple):
    """Updates found by a lookup: the probe each matched, and its val, time, diff."""

    owner: np.ndarray
    val: np.ndarray
    time: np.ndarray
    diff: np.ndarray


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
        # Matches per probe in recent lookups: sizes the next lookup's output
        # so that it rarely has to grow (growing repeats a batch's search).
        self._fanout = 2.0

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
        while len(batches) >= 2 and len(batches[-2]) <= 2 * len(batches[-1]):
            newest = batches.pop()
            batches[-1] = self._merge([batches[-1], newest])

    def _merge(self, batches: list[ArrangedBatch]) -> ArrangedBatch:
        since = self.since
        if len(batches) == 2 and self.lattice.is_product:
            a, b = batches
            bound = np.array(since.elements, dtype=np.int64).reshape(len(since.elements), self.lattice.depth).T
            return ArrangedBatch(*merge_arranged(a.lead, a.key, a.val, a.time, a.diff, b.lead, b.key, b.val, b.time, b.diff, bound))
        return ArrangedBatch.merge(batches, advance=lambda t: self.lattice.advance_by(t, since))

    def compact(self) -> None:
        """Merge every batch into one, fully compacted (used by tests and idle time)."""
        if self.batches:
            merged = self._merge(self.batches)
            self.batches = [merged] if len(merged) else []

    def lookup(self, probe_lead: np.ndarray, probe_key: np.ndarray) -> "Matches":
        """All updates whose key equals a probe key, as `Matches`."""
        probes = len(probe_lead)
        size = 16 + int(self._fanout * 1.25 * probes) if probes and self.batches else 0
        out = self._matches(size)
        end = 0
        for b in self.batches:
            found = lookup_into(b.lead, b.key, b.val, b.time, b.diff, probe_lead, probe_key, *out, end)
            if found < 0:  # more matches than room: grow and look again
                out = self._matches(max(2 * size, -2 * found), out, end)
                size = len(out.diff)
                found = lookup_into(b.lead, b.key, b.val, b.time, b.diff, probe_lead, probe_key, *out, end)
            end = found
        if probes:
            self._fanout = 0.5 * self._fanout + 0.5 * end / probes if end <= self._fanout * probes else end / probes
        if end == len(out.diff):
            return out
        return Matches(out.owner[:end], out.val[:, :end], out.time[:, :end], out.diff[:end])

    def _matches(self, size: int, old: "Matches | None" = None, keep: int = 0) -> "Matches":
        """Room for `size` matches, holding the first `keep` of `old`."""
        out = Matches(
            np.empty(size, np.int64),
            np.empty((self.val_arity, size), np.int64),
            np.empty((self.lattice.depth, size), np.int64),
            np.empty(size, np.int64),
        )
        if keep:
            for new, was in zip(out, old):
                new[..., :keep] = was[..., :keep]
        return out

    def contents(self) -> ArrangedBatch:
        """All updates, merged (without compaction)."""
        if not self.batches:
            return ArrangedBatch.empty(self.key_arity, self.val_arity, self.lattice.depth)
        return ArrangedBatch.merge(self.batches)
